/**
 * One server without a config: `--stdio COMMAND` or `--url URL` (with
 * `--header`, `--env`, `--inherit-env`, `--cwd`, `--name`) become a one-server config. The
 * command line is split into words as a shell would split it (quotes and
 * backslashes), but no shell is run and nothing is expanded.
 *
 * @internal
 */
import * as McpGroup from "@effect-mcp/core/McpGroup"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Failures from "./failures.ts"

// -----------------------------------------------------------------------------
// The command line of --stdio
// -----------------------------------------------------------------------------

const isBlank = (char: string): boolean => char === " " || char === "\t" || char === "\n" || char === "\r"

/** The characters a backslash escapes inside double quotes (POSIX); before any other it stays. */
const escapableInDoubleQuotes = new Set(["\"", "\\", "$", "`", "\n"])

/**
 * The words of a command line, split as a POSIX shell splits them: blanks
 * separate words; `'...'` is taken as it is; in `"..."` a backslash escapes
 * `"`, `\`, `$` and `` ` `` (before another character it stays); outside
 * quotes a backslash escapes any character; a backslash before a newline
 * joins the lines. Nothing is expanded: `$HOME`, `*`, `~`, `|`, `>` are
 * ordinary characters.
 */
export const splitCommandLine = (text: string): Result.Result<ReadonlyArray<string>, Failures.CliFailure> => {
  const words: Array<string> = []
  // undefined: between words (`''` starts an empty word)
  let word: string | undefined
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (isBlank(char)) {
      if (word !== undefined) words.push(word)
      word = undefined
      i++
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1)
      if (end === -1) return Result.fail(Failures.usage(`--stdio has an unterminated ' quote: ${text}`))
      word = (word ?? "") + text.slice(i + 1, end)
      i = end + 1
    } else if (char === "\"") {
      let quoted = ""
      let j = i + 1
      while (j < text.length && text[j] !== "\"") {
        if (text[j] === "\\" && j + 1 < text.length && escapableInDoubleQuotes.has(text[j + 1]!)) {
          if (text[j + 1] !== "\n") quoted += text[j + 1]
          j += 2
        } else {
          quoted += text[j]
          j++
        }
      }
      if (j >= text.length) return Result.fail(Failures.usage(`--stdio has an unterminated " quote: ${text}`))
      word = (word ?? "") + quoted
      i = j + 1
    } else if (char === "\\") {
      if (i + 1 >= text.length) return Result.fail(Failures.usage(`--stdio ends with a lone backslash: ${text}`))
      if (text[i + 1] !== "\n") word = (word ?? "") + text[i + 1]
      i += 2
    } else {
      word = (word ?? "") + char
      i++
    }
  }
  if (word !== undefined) words.push(word)
  return Result.succeed(words)
}

// -----------------------------------------------------------------------------
// --env and --header
// -----------------------------------------------------------------------------

/** `KEY=VALUE` flags as a record (the value may hold `=`; a later key wins). */
export const parseEnv = (
  entries: ReadonlyArray<string>
): Result.Result<Record<string, string>, Failures.CliFailure> => {
  const env: Record<string, string> = {}
  for (const entry of entries) {
    const equals = entry.indexOf("=")
    if (equals <= 0) {
      return Result.fail(Failures.usage(`--env ${JSON.stringify(entry)}: expected KEY=VALUE`))
    }
    env[entry.slice(0, equals)] = entry.slice(equals + 1)
  }
  return Result.succeed(env)
}

/** An HTTP header name (RFC 9110 token). */
const isToken = (name: string): boolean => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)

/** `Name: value` flags as a record (the value is trimmed; a later name wins, whatever its case). */
export const parseHeaders = (
  entries: ReadonlyArray<string>
): Result.Result<Record<string, string>, Failures.CliFailure> => {
  const headers: Record<string, string> = {}
  for (const entry of entries) {
    const colon = entry.indexOf(":")
    const name = colon === -1 ? "" : entry.slice(0, colon).trim()
    if (!isToken(name)) {
      return Result.fail(Failures.usage(`--header ${JSON.stringify(entry)}: expected "Name: value"`))
    }
    const value = entry.slice(colon + 1).trim()
    if (/[\r\n\0]/.test(value)) {
      return Result.fail(Failures.usage(`--header ${name}: the value holds a line break or NUL`))
    }
    for (const known of Object.keys(headers)) {
      if (known.toLowerCase() === name.toLowerCase()) delete headers[known]
    }
    headers[name] = value
  }
  return Result.succeed(headers)
}

// -----------------------------------------------------------------------------
// --url
// -----------------------------------------------------------------------------

/** An `http:` or `https:` URL. */
export const parseUrl = (text: string): Result.Result<URL, Failures.CliFailure> => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
    ? Result.succeed(url)
    : Result.fail(Failures.usage(`--url must be an http:// or https:// URL, got ${JSON.stringify(text)}`))
}

// -----------------------------------------------------------------------------
// The server's name
// -----------------------------------------------------------------------------

/** Commands that run the program named by their first argument (`node server.js`, `npx -y pkg`). */
const launchers = new Set([
  "node",
  "nodejs",
  "bun",
  "bunx",
  "deno",
  "npx",
  "pnpx",
  "tsx",
  "ts-node",
  "python",
  "python3",
  "uv",
  "uvx",
  "pipx",
  "npm",
  "pnpm",
  "yarn",
  "java",
  "ruby",
  "php",
  "dotnet",
  "docker",
  "podman"
])

/** Sub-commands of launchers, skipped when naming (`deno run x.ts`, `uv run x.py`, `npm exec pkg`). */
const verbs = new Set(["run", "exec", "x", "dlx", "tool"])

const isName = (name: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)

/** A program's short name: no directory, no extension, no `@version` of a package. */
const shortName = (word: string): string => {
  const base = word.replace(/[\\/]+$/, "").split(/[\\/]/).pop() ?? ""
  return base.replace(/@.*$/, "").replace(/\.[A-Za-z0-9]{1,4}$/, "")
}

/**
 * The name of a `--stdio` server: the program's short name, or for a
 * launcher (`node`, `npx`, `python`, `uvx`, ...) that of its first word that
 * is not an option (`node build/server.js` is `server`, `npx -y
 * @scope/pkg@1` is `pkg`); `server` when nothing fits.
 */
export const stdioName = (command: string, args: ReadonlyArray<string>): string => {
  const program = shortName(command)
  if (launchers.has(program.toLowerCase())) {
    const target = args.find((arg) => !arg.startsWith("-") && !verbs.has(arg))
    const name = target === undefined ? "" : shortName(target)
    if (isName(name)) return name
  }
  return isName(program) ? program : "server"
}

/** The name of a `--url` server: the URL's host name (`127.0.0.1`, `mcp.example.com`). */
export const urlName = (url: URL): string => {
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return isName(host) ? host : "server"
}

// -----------------------------------------------------------------------------
// The servers of a command
// -----------------------------------------------------------------------------

/** The flags that say which servers to connect to. */
export interface Flags {
  readonly config: Option.Option<string>
  readonly stdio: Option.Option<string>
  readonly url: Option.Option<string>
  readonly header: ReadonlyArray<string>
  readonly env: ReadonlyArray<string>
  readonly inheritEnv: boolean
  readonly cwd: Option.Option<string>
  readonly name: Option.Option<string>
}

/** The config file when neither `--config` nor a server flag is given. */
export const defaultConfig = "./mcp.json"

/** Where the servers come from: the config file, or the one server of `--stdio` / `--url`. */
export type Source =
  | { readonly _tag: "Config"; readonly path: string }
  | { readonly _tag: "AdHoc"; readonly name: string; readonly params: McpGroup.ServerParams }

const fromResult = Effect.fromResult

/**
 * Checks the server flags together and makes the server of `--stdio` or
 * `--url`; without either, the config (`--config`, default `./mcp.json`).
 * Every mistake is a usage error, found before anything is started.
 */
export const source = (flags: Flags): Effect.Effect<Source, Failures.CliFailure, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const stdio = Option.getOrUndefined(flags.stdio)
    const url = Option.getOrUndefined(flags.url)
    if (stdio !== undefined && url !== undefined) {
      return yield* Failures.usage("--stdio and --url cannot be used together: each names the one server to connect to")
    }
    const given = stdio !== undefined ? "--stdio" : url !== undefined ? "--url" : undefined
    if (given !== undefined && Option.isSome(flags.config)) {
      return yield* Failures.usage(
        `--config and ${given} cannot be used together: ${given} connects to one server without a config`
      )
    }
    if (url === undefined && flags.header.length > 0) {
      return yield* Failures.usage("--header goes with --url (a config file gives a server's headers in \"headers\")")
    }
    if (stdio === undefined && (flags.env.length > 0 || Option.isSome(flags.cwd))) {
      const flag = flags.env.length > 0 ? "--env" : "--cwd"
      return yield* Failures.usage(`${flag} goes with --stdio (a config file gives a server's "env" and "cwd")`)
    }
    if (stdio === undefined && flags.inheritEnv) {
      return yield* Failures.usage(`--inherit-env goes with --stdio (a config file gives a server's "inheritEnv")`)
    }
    const named = Option.getOrUndefined(flags.name)
    if (named !== undefined && given === undefined) return yield* Failures.usage("--name goes with --stdio or --url")
    if (named !== undefined && named.trim() === "") return yield* Failures.usage("--name needs a non-empty name")
    if (stdio !== undefined) return yield* local(stdio, flags, named)
    if (url !== undefined) return yield* remote(url, flags.header, named)
    return { _tag: "Config", path: Option.getOrElse(flags.config, () => defaultConfig) } as const
  })

/** The server of `--stdio`, with `--env` laid over the inherited environment (all of it with `--inherit-env`) and `--cwd`. */
const local = (stdio: string, flags: Flags, named: string | undefined) =>
  Effect.gen(function*() {
    const words = yield* fromResult(splitCommandLine(stdio))
    if (words.length === 0 || words[0] === "") {
      return yield* Failures.usage(
        "--stdio needs a command line, e.g. --stdio \"node server.js\"" +
          (words.length === 0 ? "" : ": the command is empty")
      )
    }
    const [command, ...args] = words as [string, ...Array<string>]
    const env = yield* fromResult(parseEnv(flags.env))
    const cwd = Option.getOrUndefined(flags.cwd)
    if (cwd !== undefined) {
      const fs = yield* FileSystem.FileSystem
      const isDirectory = yield* fs.stat(cwd).pipe(
        Effect.map((info) => info.type === "Directory"),
        Effect.orElseSucceed(() => false)
      )
      if (!isDirectory) return yield* Failures.usage(`--cwd ${JSON.stringify(cwd)} is not a directory`)
    }
    return {
      _tag: "AdHoc",
      name: named ?? stdioName(command, args),
      params: McpGroup.stdio(command, args, {
        ...(flags.env.length === 0 ? {} : { env }),
        ...(flags.inheritEnv ? { inheritEnv: true } : {}),
        ...(cwd === undefined ? {} : { cwd })
      })
    } as const
  })

/** The server of `--url`: Streamable HTTP (the client falls back to HTTP+SSE by itself). */
const remote = (url: string, header: ReadonlyArray<string>, named: string | undefined) =>
  Effect.gen(function*() {
    const parsed = yield* fromResult(parseUrl(url))
    const headers = yield* fromResult(parseHeaders(header))
    return {
      _tag: "AdHoc",
      name: named ?? urlName(parsed),
      params: McpGroup.http(url, header.length === 0 ? {} : { headers })
    } as const
  })
