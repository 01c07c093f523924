/**
 * The stdio client transport: a spawned server process, its stdin and stdout
 * as newline-delimited JSON, its stderr forwarded or captured, its exit turned
 * into a transport error, and the shutdown sequence of the MCP lifecycle
 * (close stdin → wait → SIGTERM → wait → SIGKILL) applied to its whole
 * process tree.
 *
 * Built on `node:child_process` directly: the sequence above, the exit status
 * (code or signal), the stderr tail and the tree walk all need the raw child.
 *
 * @internal
 */
import * as McpError from "@effect-mcp/core/McpError"
import * as McpTransport from "@effect-mcp/core/McpTransport"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as NodeChildProcess from "node:child_process"
import type * as NodeMcpStdio from "../NodeMcpStdio.ts"
import * as Environment from "./environment.ts"
import * as LineWriter from "./lineWriter.ts"
import * as ProcessTree from "./processTree.ts"

const POLL_MILLIS = 25

const millisOf = (input: Duration.Input | undefined, fallback: number): number =>
  input === undefined ? fallback : Duration.toMillis(Duration.fromInputUnsafe(input))

/** The last `max` bytes written to stderr. */
const makeTail = (max: number) => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  return {
    push: (chunk: Uint8Array) => {
      if (max <= 0) return
      chunks.push(chunk)
      size += chunk.length
      while (size - chunks[0]!.length >= max) size -= chunks.shift()!.length
    },
    text: (): string => {
      const bytes = Buffer.concat(chunks)
      const text = bytes.subarray(Math.max(0, bytes.length - max)).toString("utf8")
      // a character cut in two at the start decodes as U+FFFD
      return text.replace(/^\uFFFD+/, "")
    }
  }
}

const lastLine = (text: string): string | undefined => {
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  const last = lines[lines.length - 1]
  return last === undefined ? undefined : last.length > 200 ? `${last.slice(0, 200)}…` : last
}

const describeCommand = (options: NodeMcpStdio.ClientOptions) => [options.command, ...(options.args ?? [])].join(" ")

/** @internal */
export const makeClient = Effect.fnUntraced(function*(
  options: NodeMcpStdio.ClientOptions
): Effect.fn.Return<NodeMcpStdio.StdioClient, McpError.McpError, Scope.Scope> {
  const stderrMode = options.stderr ?? "forward"
  const piped = stderrMode === "forward" || stderrMode === "capture"
  const closeTimeout = millisOf(options.shutdown?.closeTimeout, 2_000)
  const termTimeout = millisOf(options.shutdown?.termTimeout, 2_000)
  const killTimeout = millisOf(options.shutdown?.killTimeout, 1_000)
  const exitGrace = millisOf(options.exitGrace, 250)
  const tail = makeTail(options.stderrTailBytes ?? 8 * 1024)
  // decoded as read; the session takes what it can at once (McpTransport.makeNdjsonInbox)
  const inbox = yield* McpTransport.makeNdjsonInbox({ maxLineBytes: options.maxLineBytes })
  const started = yield* Deferred.make<void, McpError.McpError>()
  const exited = yield* Deferred.make<NodeMcpStdio.ExitStatus>()
  const closed = yield* Deferred.make<void>()
  const stdoutEnded = yield* Deferred.make<void>()
  let status: NodeMcpStdio.ExitStatus | undefined
  let closing = false
  let tracker: ProcessTree.Tracker | undefined

  // onStderr runs on a fiber of its own, fed in order; it is drained before
  // the transport's scope finishes closing
  const onStderr = options.onStderr
  const stderrTexts = yield* Queue.unbounded<string, Cause.Done>()
  if (onStderr !== undefined && piped) {
    const drainer = yield* Stream.fromQueue(stderrTexts).pipe(
      Stream.runForEach((text) => Effect.catchCause(onStderr(text), () => Effect.void)),
      Effect.forkScoped({ startImmediately: true })
    )
    yield* Effect.addFinalizer(() => Effect.andThen(Queue.end(stderrTexts), Fiber.await(drainer)))
  }
  const decoder = new TextDecoder()

  // listeners go on in the same tick as the spawn: its events come on later ticks
  const listen = (child: NodeChildProcess.ChildProcess): NodeChildProcess.ChildProcess => {
    child.once("spawn", () => {
      tracker = ProcessTree.makeTracker(child.pid!, ProcessTree.startTimeOf(child.pid!))
      Deferred.doneUnsafe(started, Effect.void)
    })
    child.on("error", (cause) => {
      Deferred.doneUnsafe(
        started,
        Effect.fail(McpError.transport(`could not start ${describeCommand(options)}: ${cause.message}`, { cause }))
      )
    })
    child.once("exit", (code, signal) => {
      status = { code, signal }
      Deferred.doneUnsafe(exited, Effect.succeed(status))
    })
    child.once("close", () => Deferred.doneUnsafe(closed, Effect.void))
    child.stdin?.on("error", () => {
      // EPIPE and the like: reported by the write that failed, and by the exit
    })
    child.stdout?.on("data", (chunk: Uint8Array) => {
      inbox.push(chunk)
    })
    child.stdout?.once("end", () => Deferred.doneUnsafe(stdoutEnded, Effect.void))
    child.stdout?.once("close", () => Deferred.doneUnsafe(stdoutEnded, Effect.void))
    child.stdout?.on("error", () => Deferred.doneUnsafe(stdoutEnded, Effect.void))
    child.stderr?.on("data", (chunk: Uint8Array) => {
      tail.push(chunk)
      if (stderrMode === "forward") process.stderr.write(chunk)
      if (onStderr !== undefined) Queue.offerUnsafe(stderrTexts, decoder.decode(chunk, { stream: true }))
    })
    child.stderr?.on("error", () => {
      // the process's exit reports what matters
    })
    return child
  }

  const spawn = Effect.sync(() =>
    Result.try({
      try: () =>
        listen(NodeChildProcess.spawn(options.command, options.args ?? [], {
          cwd: options.cwd,
          env: mergeEnv(options),
          stdio: ["pipe", "pipe", piped ? "pipe" : stderrMode],
          // POSIX: a session and process group of its own, to signal as a whole
          detached: process.platform !== "win32",
          windowsHide: true
        })),
      catch: (cause) =>
        McpError.transport(`could not start ${describeCommand(options)}: ${McpError.messageOf(cause)}`, { cause })
    })
  ).pipe(Effect.flatMap(Effect.fromResult))

  const exitError = (): McpError.McpError => {
    const pid = child.pid ?? "?"
    const base = status === undefined
      ? `the server process (pid ${pid}) closed its stdout`
      : status.signal !== null
      ? `the server process (pid ${pid}) was killed by ${status.signal}`
      : `the server process (pid ${pid}) exited with code ${status.code}`
    const stderr = piped ? tail.text() : undefined
    const last = stderr === undefined ? undefined : lastLine(stderr)
    const extra: { exitCode?: number; signal?: string; stderr?: string } = {}
    if (status !== undefined && status.code !== null) extra.exitCode = status.code
    if (status !== undefined && status.signal !== null) extra.signal = status.signal
    if (stderr !== undefined) extra.stderr = stderr
    return McpError.transport(last === undefined ? base : `${base}: ${last}`, extra)
  }

  // ---------------------------------------------------------------------------
  // shutdown: close stdin → wait → SIGTERM → wait → SIGKILL, on the whole tree
  // ---------------------------------------------------------------------------

  const leaderExited = () => status !== undefined

  // waits until the leader has exited and no member of its tree is left, up to
  // `millis`; `true` once they are gone. The polls fall on the clock's ticks of
  // POLL_MILLIS, the same for every client, so that the clients closing at once
  // poll at the same moments and share each read of the process table.
  const awaitGone = (tree: ProcessTree.Tracker, millis: number) =>
    Effect.gen(function*() {
      const deadline = (yield* Clock.currentTimeMillis) + millis
      for (let round = 0; round <= Math.ceil(millis / POLL_MILLIS) + 2; round++) {
        if (leaderExited() && (yield* tree.scan).length === 0) return true
        const now = yield* Clock.currentTimeMillis
        const left = deadline - now
        if (left <= 0) return false
        const pause = Effect.sleep(Math.min(left, POLL_MILLIS - (now % POLL_MILLIS)))
        yield* leaderExited() ? pause : Effect.raceFirst(Deferred.await(exited), pause)
      }
      return false
    })

  const awaitLeader = (millis: number) =>
    leaderExited() ? Effect.void : Effect.raceFirst(Deferred.await(exited), Effect.sleep(millis))

  // the frames of one turn go to the child's stdin in one write; a write
  // that fails means the child is going away (see `send`)
  let writeFailure: unknown = undefined
  let stdinOf: NodeChildProcess.ChildProcess["stdin"] = null
  const writer = LineWriter.make((chunk) => {
    const stdin = stdinOf
    if (stdin === null || !stdin.writable) return
    stdin.write(chunk, (error) => {
      if (error !== null && error !== undefined) writeFailure = error
    })
  })

  const terminate = (child: NodeChildProcess.ChildProcess) =>
    Effect.gen(function*() {
      const tree = tracker
      if (tree === undefined) return // never started
      if (!leaderExited()) yield* tree.scan // the tree while it is whole: an exiting parent orphans its children
      writer.flush()
      child.stdin?.end()
      yield* awaitLeader(closeTimeout)
      if (process.platform === "win32") {
        if (!leaderExited()) {
          yield* Effect.sync(() =>
            NodeChildProcess.execFile("taskkill", ["/pid", String(child.pid), "/T", "/F"], { windowsHide: true })
          )
          yield* awaitLeader(termTimeout)
        }
        return
      }
      const stages: ReadonlyArray<readonly [NodeJS.Signals, number]> = [["SIGTERM", termTimeout], [
        "SIGKILL",
        killTimeout
      ]]
      for (const [signal, millis] of stages) {
        const alive = yield* tree.scan
        if (alive.length === 0 && leaderExited()) return
        yield* tree.signal(signal)
        if (!leaderExited()) child.kill(signal)
        if (yield* awaitGone(tree, millis)) return
      }
    })

  const release = (child: NodeChildProcess.ChildProcess) =>
    Effect.sync(() => {
      closing = true
    }).pipe(
      Effect.andThen(terminate(child)),
      // the rest of its output, unless a descendant that escaped holds the pipes
      Effect.andThen(Effect.raceFirst(Deferred.await(closed), Effect.sleep(exitGrace))),
      Effect.ensuring(Effect.sync(() => {
        // let go of our ends of the pipes
        child.stdin?.destroy()
        child.stdout?.destroy()
        child.stderr?.destroy()
        inbox.fail(McpError.closed("transport closed"))
      }))
    )

  const child = yield* Effect.acquireRelease(spawn, release)
  yield* Deferred.await(started)

  // the child exited, or closed its stdout: once what it wrote is read (or
  // after a grace period), `incoming` fails with the exit status
  yield* Effect.raceFirst(Deferred.await(exited), Deferred.await(stdoutEnded)).pipe(
    Effect.andThen(Effect.raceFirst(Deferred.await(closed), Effect.sleep(exitGrace))),
    Effect.andThen(Effect.sync(() => inbox.fail(exitError()))),
    Effect.forkScoped({ startImmediately: true })
  )

  stdinOf = child.stdin
  const writeError = (cause: unknown) =>
    leaderExited()
      ? exitError()
      : McpError.transport(`could not write to the server's stdin: ${McpError.messageOf(cause)}`, { cause })

  return {
    pid: child.pid!,
    incoming: inbox.incoming,
    send: (frame) =>
      Effect.callback<void, McpError.McpError>((resume) => {
        const stdin = child.stdin
        if (writeFailure !== undefined) {
          // the child may still be exiting: give it the grace period, so the error carries its exit status
          return resume(
            Effect.raceFirst(Deferred.await(exited), Effect.sleep(exitGrace)).pipe(
              Effect.andThen(Effect.suspend(() => Effect.fail(writeError(writeFailure))))
            )
          )
        }
        if (closing || stdin === null || !stdin.writable) {
          resume(Effect.fail(leaderExited() && !closing ? exitError() : McpError.closed("transport closed")))
          return
        }
        // resume as soon as the frame is queued (waiting for each write's
        // callback costs a round through the event loop per call); a full
        // buffer waits for `drain`. A write that fails afterwards means the
        // child is going away: `incoming` then fails with its exit status.
        writer.write(McpTransport.encodeLine(frame))
        if (!stdin.writableNeedDrain) return resume(Effect.void)
        // a full buffer waits for `drain`; a pipe that breaks meanwhile never
        // drains, so its `close` ends the wait too
        const settle = (effect: Effect.Effect<void, McpError.McpError>) => () => {
          stdin.off("drain", onDrain)
          stdin.off("close", onClose)
          resume(effect)
        }
        const onDrain = settle(Effect.void)
        const onClose = settle(Effect.suspend(() => Effect.fail(writeError(writeFailure ?? new Error("stdin closed")))))
        stdin.once("drain", onDrain)
        stdin.once("close", onClose)
        return Effect.sync(() => {
          stdin.off("drain", onDrain)
          stdin.off("close", onClose)
        })
      }),
    exitStatus: Effect.sync(() => status),
    awaitExit: Deferred.await(exited),
    stderrTail: Effect.sync(() => piped ? tail.text() : "")
  }
})

/**
 * The child's environment: this process's (all of it with `inheritEnv`, else
 * the default set) with `env` laid over it; `undefined` removes a variable.
 */
const mergeEnv = (options: NodeMcpStdio.ClientOptions): NodeJS.ProcessEnv => {
  const merged: NodeJS.ProcessEnv = options.inheritEnv === true
    ? { ...process.env }
    : Environment.defaultEnvironment(process.env, process.platform)
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete merged[key]
    else merged[key] = value
  }
  return merged
}
