/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): self time by
 * function, by file (package) and the inclusive time of functions in
 * effect-mcp's own sources (packages/NAME/src).
 *
 * Usage:
 *   node --conditions=development --expose-gc --cpu-prof --cpu-prof-dir=/tmp/prof \
 *     bench/inprocess.ts --only ours --concurrency 64 --calls 20000
 *   node bench/profile-summary.ts /tmp/prof/CPU.*.cpuprofile [--top 40]
 */
import { readFileSync } from "node:fs"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const args = process.argv.slice(2)
const topIndex = args.indexOf("--top")
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 40
const files = args.filter((arg, i) => !arg.startsWith("--") && (topIndex < 0 || i !== topIndex + 1))
if (files.length === 0) {
  console.error("usage: node bench/profile-summary.ts FILE.cpuprofile [--top N]")
  process.exit(2)
}

const shortUrl = (url: string): string => {
  if (url === "") return ""
  const path = url.replace(/^file:\/\//, "")
  const nodeModules = path.lastIndexOf("node_modules/")
  if (nodeModules >= 0) return path.slice(nodeModules + "node_modules/".length)
  const packages = path.indexOf("/packages/")
  if (packages >= 0) return path.slice(packages + 1)
  const bench = path.indexOf("/bench/")
  return bench >= 0 ? path.slice(bench + 1) : path
}

const bucketOf = (frame: CallFrame): string => {
  const url = shortUrl(frame.url)
  if (url === "") {
    const name = frame.functionName
    if (name === "(garbage collector)" || name === "(idle)" || name === "(program)" || name === "(root)") return name
    return "(native / V8 builtins)"
  }
  if (url.startsWith("node:")) return "node core"
  if (url.startsWith("packages/")) return url
  if (url.startsWith("effect/")) return `effect/${url.split("/").slice(-1)[0]}`
  const segments = url.split("/")
  return segments[0]!.startsWith("@") ? `${segments[0]}/${segments[1]}` : segments[0]!
}

const pct = (value: number, total: number): string => `${((100 * value) / total).toFixed(1).padStart(5)}%`

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map<number, ProfileNode>()
  for (const node of profile.nodes) byId.set(node.id, node)
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  const selfTime = new Map<number, number>()
  let total = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0
    const id = profile.samples[i]!
    selfTime.set(id, (selfTime.get(id) ?? 0) + dt)
    total += dt
  }
  const idle = [...selfTime].filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)")
    .reduce((sum, [, t]) => sum + t, 0)
  const busy = total - idle

  const byFunction = new Map<string, number>()
  const byBucket = new Map<string, number>()
  const inclusiveOurs = new Map<string, number>()
  for (const [id, time] of selfTime) {
    const frame = byId.get(id)!.callFrame
    if (frame.functionName === "(idle)") continue
    const key = `${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}:${frame.lineNumber + 1}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + time)
    const bucket = bucketOf(frame)
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + time)
    // inclusive time of our own functions: charge every distinct one on the stack once
    const seen = new Set<string>()
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const f = byId.get(cursor)!.callFrame
      const url = shortUrl(f.url)
      if (!url.startsWith("packages/")) continue
      const name = `${f.functionName || "(anonymous)"}  ${url}:${f.lineNumber + 1}`
      if (seen.has(name)) continue
      seen.add(name)
      inclusiveOurs.set(name, (inclusiveOurs.get(name) ?? 0) + time)
    }
  }

  const print = (title: string, map: Map<string, number>, limit: number) => {
    console.log(`\n${title}`)
    for (const [key, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
      console.log(`${pct(time, busy)} ${(time / 1000).toFixed(0).padStart(6)} ms  ${key}`)
    }
  }
  console.log(
    `${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (percentages are of busy time)`
  )
  print("self time by area", byBucket, 30)
  print(`top ${top} functions by self time`, byFunction, top)
  print("inclusive time of effect-mcp functions (packages/*/src)", inclusiveOurs, 40)
}
