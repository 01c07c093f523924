/**
 * MCP over stdio (newline-delimited JSON), both sides: this process's stdin
 * and stdout as a server's transport ({@link layer}, {@link runServer}), and
 * a spawned server process as a client's ({@link layerClient},
 * {@link makeClient}), whose process tree is shut down with the scope.
 *
 * ```ts
 * NodeMcpStdio.runServer(McpServer.register(weather).pipe(Layer.provideMerge(McpServer.layer(info))))
 * McpClient.layer({ clientInfo }).pipe(Layer.provide(NodeMcpStdio.layerClient({ command: "npx", args: ["-y", "a-server"] })))
 * ```
 *
 * @since 0.1.0
 */
/// <reference types="node" preserve="true" />
import * as McpError from "@effect-mcp/core/McpError"
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpTransport from "@effect-mcp/core/McpTransport"
import * as Console from "effect/Console"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as InternalConsole from "./internal/console.ts"
import * as Environment from "./internal/environment.ts"
import * as LineWriter from "./internal/lineWriter.ts"
import * as NodeMcpRuntime from "./NodeMcpRuntime.ts"

// -----------------------------------------------------------------------------
// Server side
// -----------------------------------------------------------------------------

/**
 * The transport over the `Stdio` service in context.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = Effect.gen(function*() {
  const stdio = yield* Stdio.Stdio
  return yield* McpTransport.makeNdjson({
    input: stdio.stdin.pipe(Stream.mapError((cause) => McpError.transport("stdin failed", { cause }))),
    output: stdio.stdout({ endOnDone: false }).pipe(
      Sink.mapError((cause) => McpError.transport("stdout failed", { cause }))
    )
  })
})

// This process's stdin, read directly: chunks are decoded as they arrive and
// the session takes what it can at once (`McpTransport.makeNdjsonInbox`). The
// stream is paused again when the scope closes, so the process can exit.
const readStdin = (maxLineBytes: number | undefined) =>
  Effect.flatMap(McpTransport.makeNdjsonInbox({ maxLineBytes }), (inbox) => {
    const stdin = process.stdin
    let ended = false
    const onData = (chunk: Uint8Array) => inbox.push(chunk)
    const onEnd = () => {
      if (ended) return
      ended = true
      inbox.end()
    }
    const onError = (cause: unknown) => inbox.fail(McpError.transport("stdin failed", { cause }))
    return Effect.as(
      Effect.acquireRelease(
        Effect.sync(() => {
          stdin.on("data", onData)
          stdin.once("end", onEnd)
          stdin.once("close", onEnd)
          stdin.on("error", onError)
          if (stdin.readableEnded) onEnd()
        }),
        () =>
          Effect.sync(() => {
            stdin.off("data", onData)
            stdin.off("end", onEnd)
            stdin.off("close", onEnd)
            stdin.off("error", onError)
            stdin.pause()
          })
      ),
      inbox.incoming
    )
  })

// This process's stdout, written directly: on Linux a pipe write is
// synchronous, so the frames of one turn cost one write call (see
// `internal/lineWriter.ts`) and no fiber hop; a full buffer waits for
// `drain`, and closing writes what is queued and waits (briefly) for what is
// buffered.
// Frames reach the real stdout while other output is redirected to stderr.
const makeProcess = (redirectConsole: boolean, maxLineBytes: number | undefined) =>
  Effect.gen(function*() {
    if (redirectConsole) yield* InternalConsole.redirect
    const stdout = process.stdout
    const writer = LineWriter.make((chunk) => {
      if (!stdout.destroyed && !stdout.writableEnded) InternalConsole.writeProtocol(chunk)
    })
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        // a client that went away makes writes fail with EPIPE: the session ends with stdin
        const ignore = () => {}
        stdout.on("error", ignore)
        return ignore
      }),
      (ignore) =>
        Effect.callback<void>((resume) => {
          writer.flush()
          if (stdout.writableLength === 0 || stdout.destroyed) return resume(Effect.void)
          stdout.once("drain", () => resume(Effect.void))
        }).pipe(
          Effect.timeoutOrElse({ duration: "1 second", orElse: () => Effect.void }),
          Effect.ensuring(Effect.sync(() => stdout.off("error", ignore)))
        )
    )
    const incoming = yield* readStdin(maxLineBytes)
    return McpTransport.McpTransport.of({
      incoming,
      send: (frame) =>
        Effect.callback<void, McpError.McpError>((resume) => {
          if (stdout.destroyed || stdout.writableEnded) return resume(Effect.fail(McpError.closed("stdout closed")))
          // written with the other frames of this turn, in one write call
          writer.write(McpTransport.encodeLine(frame))
          if (!stdout.writableNeedDrain) return resume(Effect.void)
          // a full buffer waits for `drain`; a pipe that breaks meanwhile never drains
          const settle = (effect: Effect.Effect<void, McpError.McpError>) => () => {
            stdout.off("drain", onDrain)
            stdout.off("close", onClose)
            resume(effect)
          }
          const onDrain = settle(Effect.void)
          const onClose = settle(Effect.fail(McpError.closed("stdout closed")))
          stdout.once("drain", onDrain)
          stdout.once("close", onClose)
          return Effect.sync(() => {
            stdout.off("drain", onDrain)
            stdout.off("close", onClose)
          })
        })
    })
  })

/**
 * Options of the server side of stdio ({@link layerWith}, {@link runServer}).
 *
 * @category models
 * @since 0.2.0
 */
export interface ServerOptions {
  /**
   * While the transport lasts, send everything else written to stdout to
   * stderr: `globalThis.console.log`/`info`/`debug` (and its other stdout
   * methods), Effect's `Console` (which writes through it), and
   * `process.stdout.write` by any code but the transport. `globalThis.console`
   * and `process.stdout.write` are restored when the scope closes. Default
   * `true`; `false` leaves stdout alone (one stray line there corrupts the
   * JSON-RPC stream).
   */
  readonly redirectConsole?: boolean | undefined
  /**
   * The longest accepted line (one JSON-RPC message) in bytes. A longer one
   * is answered `-32700` (id `null`) and the next line is read normally.
   * Default 64 MiB (`McpTransport.DEFAULT_MAX_LINE_BYTES`).
   */
  readonly maxLineBytes?: number | undefined
}

/**
 * The process's stdin/stdout transport, with `options`.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerWith = (options?: ServerOptions): Layer.Layer<McpTransport.McpTransport> =>
  Layer.effect(McpTransport.McpTransport, makeProcess(options?.redirectConsole !== false, options?.maxLineBytes))

/**
 * The process's stdin/stdout transport; while it lasts, other output to
 * stdout goes to stderr (see {@link ServerOptions.redirectConsole}).
 *
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<McpTransport.McpTransport> = layerWith()

const serveOver = (
  transport: Layer.Layer<McpTransport.McpTransport>
): Effect.Effect<void, never, McpServer.McpServer> =>
  Effect.gen(function*() {
    const session = yield* McpServer.serve
    yield* session.awaitClose
  }).pipe(
    Effect.scoped,
    Effect.provide(transport),
    Effect.withSpan("NodeMcpStdio.serve")
  )

/**
 * Serves one connection over this process's stdin and stdout with the
 * `McpServer` in context, until the client closes stdin (what was read before
 * is still answered). Other output to stdout goes to stderr meanwhile (see
 * {@link ServerOptions.redirectConsole}).
 *
 * @category running
 * @since 0.1.0
 */
export const serve: Effect.Effect<void, never, McpServer.McpServer> = serveOver(layer)

/**
 * Options of {@link runServer}.
 *
 * @category running
 * @since 0.1.0
 */
export interface RunServerOptions extends ServerOptions {
  /**
   * Forward the handlers' own `Effect.log*` calls to the client as
   * `notifications/message` (`McpServer.layerLogger`). Default `true`.
   */
  readonly forwardLogs?: boolean | undefined
}

/**
 * The one-liner of a stdio server: builds the server layer, serves stdin and
 * stdout until the client closes stdin, and exits 0. Runs as the process's
 * main fiber (`NodeMcpRuntime.runMain`: logs go to stderr, SIGINT and SIGTERM
 * interrupt). A layer that fails to build exits 1. From the start (the
 * server layer's construction included) to the end, output to stdout by
 * anything but the transport (`console.log`, Effect's `Console`,
 * `process.stdout.write`) goes to stderr, unless `redirectConsole` is
 * `false`.
 *
 * @category running
 * @since 0.1.0
 */
export const runServer = <E>(server: Layer.Layer<McpServer.McpServer, E>, options?: RunServerOptions): void => {
  const redirect = options?.redirectConsole !== false
  const program = serveOver(layerWith({ redirectConsole: redirect, maxLineBytes: options?.maxLineBytes })).pipe(
    Effect.provide(options?.forwardLogs === false ? server : Layer.merge(server, McpServer.layerLogger))
  )
  NodeMcpRuntime.runMain(
    redirect
      ? Effect.scoped(
        Effect.andThen(
          InternalConsole.redirect,
          Effect.provideService(program, Console.Console, InternalConsole.toStderr())
        )
      )
      : program
  )
}

// -----------------------------------------------------------------------------
// Client side
// -----------------------------------------------------------------------------

/**
 * How the child's stderr is handled:
 *
 * - `"forward"` (default): read, copied to this process's stderr as it
 *   arrives, and its tail kept for errors;
 * - `"capture"`: read and kept (its tail for errors, every chunk to
 *   `onStderr`), not shown;
 * - `"inherit"`: the child writes to this process's stderr itself (no tail);
 * - `"ignore"`: discarded (no tail).
 *
 * @category client
 * @since 0.1.0
 */
export type StderrMode = "forward" | "capture" | "inherit" | "ignore"

/**
 * The delays of the shutdown sequence run when the transport's scope closes.
 *
 * @category client
 * @since 0.1.0
 */
export interface ShutdownOptions {
  /** How long the server has to exit after its stdin is closed. Default 2 s. */
  readonly closeTimeout?: Duration.Input | undefined
  /** How long the tree has to exit after SIGTERM. Default 2 s. */
  readonly termTimeout?: Duration.Input | undefined
  /** How long to wait for the tree to disappear after SIGKILL. Default 1 s. */
  readonly killTimeout?: Duration.Input | undefined
}

/**
 * What to spawn and how.
 *
 * @category client
 * @since 0.1.0
 */
export interface ClientOptions {
  /** The executable, looked up on PATH (no shell). */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly cwd?: string | undefined
  /**
   * Laid over the environment the child inherits; a value `undefined` removes
   * a variable. The child inherits {@link defaultEnvironment} (PATH, HOME,
   * locale, ...), not this process's other variables (tokens, keys): set
   * `inheritEnv` to pass them all.
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Inherit this process's whole environment instead of {@link defaultEnvironment}. Default `false`. */
  readonly inheritEnv?: boolean | undefined
  /** Default `"forward"`. */
  readonly stderr?: StderrMode | undefined
  /** Receives the child's stderr as text, chunk by chunk, in order (modes `"forward"` and `"capture"`). */
  readonly onStderr?: ((text: string) => Effect.Effect<void>) | undefined
  /** How much of the end of stderr is kept for errors, in bytes. Default 8 KiB. */
  readonly stderrTailBytes?: number | undefined
  readonly shutdown?: ShutdownOptions | undefined
  /**
   * After the child exits, how long to wait for the rest of its stdout and
   * stderr before `incoming` fails (pipes held open by a descendant would
   * otherwise delay it). Also, after the child closes its stdout, how long it
   * has to exit before `incoming` fails without an exit status. Default 250 ms.
   */
  readonly exitGrace?: Duration.Input | undefined
  /**
   * The longest accepted line (one message from the server) in bytes; a
   * longer one is answered `-32700` (a call it answered waits for its
   * timeout) and the next line is read normally.
   * Default 64 MiB (`McpTransport.DEFAULT_MAX_LINE_BYTES`).
   */
  readonly maxLineBytes?: number | undefined
}

/**
 * The part of this process's environment a stdio child inherits unless
 * `inheritEnv` is set: on POSIX `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`,
 * `TERM`, `TMPDIR`, `TZ`, `LANG`, `LANGUAGE` and every `LC_*`; on Windows
 * `PATH`, `PATHEXT`, `APPDATA`, `LOCALAPPDATA`, `HOMEDRIVE`, `HOMEPATH`,
 * `USERPROFILE`, `USERNAME`, `USERDOMAIN`, `COMPUTERNAME`, `TEMP`, `TMP`,
 * `SYSTEMDRIVE`, `SYSTEMROOT`, `WINDIR`, `COMSPEC`, `PROGRAMDATA`,
 * `PROGRAMFILES`, `PROGRAMFILES(X86)`, `PROGRAMW6432`, `COMMONPROGRAMFILES`,
 * `PROCESSOR_ARCHITECTURE`, `NUMBER_OF_PROCESSORS` and `OS`. Values that
 * start with `()` (exported shell functions) are left out.
 *
 * @category client
 * @since 0.2.0
 */
export const defaultEnvironment = (): Record<string, string> =>
  Environment.defaultEnvironment(process.env, process.platform)

/**
 * How the child exited: a `code`, or the `signal` that killed it.
 *
 * @category client
 * @since 0.1.0
 */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

type TransportService = McpTransport.McpTransport["Service"]

/**
 * The stdio client transport, with its child process.
 *
 * @category client
 * @since 0.1.0
 */
export interface StdioClient extends TransportService {
  readonly pid: number
  /** How the child exited, if it has. */
  readonly exitStatus: Effect.Effect<ExitStatus | undefined>
  /** Waits for the child to exit. */
  readonly awaitExit: Effect.Effect<ExitStatus>
  /** The end of the child's stderr (`""` in modes `"inherit"` and `"ignore"`). */
  readonly stderrTail: Effect.Effect<string>
}

/**
 * Spawns a server and returns the transport over its stdin and stdout, for as
 * long as the scope lasts. Fails with a `TransportError` when the command
 * cannot be started. When the child exits or crashes, `incoming` fails at
 * once with a `TransportError` carrying the exit code (or the signal) and the
 * tail of its stderr, which fails every pending call. Closing the scope shuts
 * it down as the MCP lifecycle asks: close its stdin, wait, SIGTERM, wait,
 * SIGKILL, for its whole process tree (the child runs in a process group and
 * session of its own, and descendants are followed through their parents, so
 * `npx` or `sh -c` wrappers leave nothing behind).
 *
 * @category client
 * @since 0.1.0
 */
export const makeClient: (options: ClientOptions) => Effect.Effect<StdioClient, McpError.McpError, Scope.Scope> = Effect
  .fn("NodeMcpStdio.makeClient")(function*(options: ClientOptions) {
    // the client's machinery (`node:child_process`) is loaded with the first client, not with this module
    const Internal = yield* Effect.promise(() => import("./internal/stdioClient.ts"))
    return yield* Internal.makeClient(options)
  })

/**
 * A spawned server as the `McpTransport` of a client layer.
 *
 * @category client
 * @since 0.1.0
 */
export const layerClient = (options: ClientOptions): Layer.Layer<McpTransport.McpTransport, McpError.McpError> =>
  Layer.effect(McpTransport.McpTransport, makeClient(options))
