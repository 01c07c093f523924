/**
 * The fuzz suite's fake peers: a stdio child process fed raw frames (each
 * followed by a ping), its stdout read line by line, every line required to
 * be a JSON-RPC message; and the resident set size of a process.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { type Answer, isJsonRpc } from "./frames.ts"

/** A process's resident set size in bytes (Linux; `undefined` elsewhere). */
export const rssOf = (pid: number): number | undefined => {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/** A child speaking newline-delimited JSON-RPC on stdio. */
export class StdioPeer {
  readonly child: ChildProcessWithoutNullStreams
  /** Lines of stdout that were not JSON-RPC messages. */
  readonly badLines: Array<string> = []
  stderr = ""
  exited: { code: number | null; signal: string | null } | undefined
  private buffer = ""
  private messages: Array<Answer> = []
  /** Lines that were arrays of JSON-RPC messages (batch answers), not yet taken. */
  batches: Array<ReadonlyArray<Answer>> = []
  private waiters: Array<() => void> = []

  constructor(command: string, args: ReadonlyArray<string>, cwd: string) {
    this.child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] })
    this.child.stdout.setEncoding("utf8")
    this.child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk
      let end = this.buffer.indexOf("\n")
      while (end !== -1) {
        const line = this.buffer.slice(0, end)
        this.buffer = this.buffer.slice(end + 1)
        this.onLine(line)
        end = this.buffer.indexOf("\n")
      }
    })
    this.child.stderr.setEncoding("utf8")
    this.child.stderr.on("data", (chunk: string) => {
      // keep the tail only
      this.stderr = (this.stderr + chunk).slice(-20_000)
    })
    this.child.stdin.on("error", () => undefined)
    this.child.on("exit", (code, signal) => {
      this.exited = { code, signal }
      this.wake()
    })
  }

  private onLine(line: string) {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      this.badLines.push(line.slice(0, 300))
      return
    }
    if (Array.isArray(message) && message.length > 0 && message.every(isJsonRpc)) {
      // a batch answer (2025-03-26 sessions)
      this.batches.push(message)
      this.wake()
      return
    }
    if (!isJsonRpc(message)) {
      this.badLines.push(line.slice(0, 300))
      return
    }
    this.messages.push(message)
    this.wake()
  }

  private wake() {
    const waiters = this.waiters
    this.waiters = []
    for (const waiter of waiters) waiter()
  }

  /** Writes bytes, then a newline. */
  write(bytes: Uint8Array | string): void {
    this.child.stdin.write(bytes)
    this.child.stdin.write("\n")
  }

  /**
   * Waits until `until` holds for the messages received so far (or the
   * child exits, or `timeoutMs` passes): whether it held.
   */
  waitFor(until: (messages: ReadonlyArray<Answer>) => boolean, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs)
      const done = (result: boolean) => {
        clearTimeout(timer)
        resolve(result)
      }
      const check = () => {
        if (until(this.messages)) done(true)
        else if (this.exited !== undefined) done(false)
        else this.waiters.push(check)
      }
      check()
    })
  }

  /** Takes (and forgets) the batch answers received so far. */
  takeBatches(): Array<ReadonlyArray<Answer>> {
    const batches = this.batches
    this.batches = []
    return batches
  }

  /** Takes (and forgets) the messages received so far. */
  take(): Array<Answer> {
    const messages = this.messages
    this.messages = []
    return messages
  }

  /** Closes stdin and waits for the exit (SIGKILL after `timeoutMs`). */
  close(timeoutMs = 5_000): Promise<void> {
    if (this.exited !== undefined) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs)
      this.child.on("exit", () => {
        clearTimeout(timer)
        resolve()
      })
      this.child.stdin.end()
    })
  }
}

/** Whether a message is a response (not the peer's own request or notification). */
export const isResponse = (message: Answer): boolean => !("method" in message)
