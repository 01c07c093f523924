/**
 * What a redis-server did, from its `INFO` counters: commands by name and
 * network bytes, read before and after a measurement of `cluster.ts` and
 * turned into per-call figures.
 */
import * as Net from "node:net"

export interface RedisStats {
  readonly commands: Readonly<Record<string, number>>
  readonly netIn: number
  readonly netOut: number
}

export const NO_STATS: RedisStats = { commands: {}, netIn: 0, netOut: 0 }

/**
 * The counters of `INFO all` (on a connection of its own, 5 s at most): calls
 * per command (`cmdstat_*`) and the network bytes. The `INFO` itself is left out.
 */
export const redisStats = (port: number): Promise<RedisStats> =>
  new Promise((resolve, reject) => {
    const socket = Net.connect(port, "127.0.0.1")
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error("redis-server: no INFO within 5 s"))
    }, 5000)
    let data = ""
    socket.setEncoding("utf8")
    socket.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.on("connect", () => socket.write("INFO all\r\n"))
    socket.on("data", (chunk: string) => {
      data += chunk
      const head = /^\$(\d+)\r\n/.exec(data)
      // INFO is ASCII: characters are bytes
      if (head === null || data.length < head[0].length + Number(head[1])) return
      clearTimeout(timer)
      socket.destroy()
      const commands: Record<string, number> = {}
      let netIn = 0
      let netOut = 0
      for (const line of data.slice(head[0].length).split("\r\n")) {
        const command = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line)
        if (command !== null && command[1] !== "info") commands[command[1]!] = Number(command[2])
        const net = /^total_net_(input|output)_bytes:(\d+)/.exec(line)
        if (net?.[1] === "input") netIn = Number(net[2])
        if (net?.[1] === "output") netOut = Number(net[2])
      }
      resolve({ commands, netIn, netOut })
    })
  })

export const perCall = (
  before: RedisStats,
  after: RedisStats,
  calls: number
): { readonly commands: Readonly<Record<string, number>>; readonly redisIn: number; readonly redisOut: number } => {
  const commands: Record<string, number> = {}
  for (const [name, count] of Object.entries(after.commands)) {
    const delta = count - (before.commands[name] ?? 0)
    if (delta > 0) commands[name] = delta / calls
  }
  return { commands, redisIn: (after.netIn - before.netIn) / calls, redisOut: (after.netOut - before.netOut) / calls }
}
