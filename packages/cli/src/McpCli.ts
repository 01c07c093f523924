/**
 * The `effect-mcp` command: a command-line MCP client over the group of
 * servers an `mcp.json` config names (`McpGroup`), or over one server given
 * by `--stdio COMMAND` or `--url URL` (a one-server group), built on `effect/cli`.
 * stdout carries only the command's output (`--json` makes it JSON); logs,
 * errors and the progress bar go to stderr; the exit code says what happened
 * ({@link ExitCode}). HTTP servers that ask for OAuth are signed in to on
 * first use (see {@link main}).
 *
 * ```sh
 * effect-mcp list tools                          # every server's tools, with their server
 * effect-mcp call weather --args '{"city":"Lisbon"}'
 * effect-mcp --stdio "node server.js" --env API_KEY=k list tools
 * effect-mcp --url http://127.0.0.1:3000/mcp -H "Authorization: Bearer t" call echo --args '{"text":"hi"}'
 * effect-mcp --url https://ci.example.com/mcp call build --no-wait   # prints a task's id
 * effect-mcp --url https://ci.example.com/mcp tasks result <id>
 * effect-mcp serve --port 8080                   # every server as one, on http://127.0.0.1:8080/mcp
 * ```
 *
 * @since 0.1.0
 */
import type * as McpGroup from "@effect-mcp/core/McpGroup"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import type * as Result from "effect/Result"
import * as Adhoc from "./internal/adhoc.ts"
import * as Commands from "./internal/commands.ts"
import * as Connect from "./internal/connect.ts"
import * as Failures from "./internal/failures.ts"

// -----------------------------------------------------------------------------
// Exit codes and failures
// -----------------------------------------------------------------------------

/**
 * The process exit codes of `effect-mcp`:
 *
 * | code | name | when |
 * | --- | --- | --- |
 * | 0 | `Ok` | the command did what it was asked |
 * | 1 | `ToolError` | `call`, `tasks result`: the tool answered with an error result (`isError: true`) |
 * | 2 | `Usage` | bad flags or arguments, `--args` that is not a JSON object, `--answers` that is not valid or does not fit a server's form, a `--root` that is not a directory, an unknown `--server`, tool, prompt or resource; `--task` on a 2025-11-25 tool without task support; `tasks list` of 2026-07-28 servers only; a task command with several servers and no `--server`; `serve` with both or neither of `--port` and `--serve-stdio`, or a `--host` beyond loopback without auth or `--allow-unauthenticated` |
 * | 3 | `Connection` | the config file is missing or invalid, a server could not be started, reached or initialized, or its connection was lost; `serve`: the front cannot listen (the port is taken) |
 * | 4 | `Request` | a server answered the request with a JSON-RPC error, or it timed out; a task failed, was cancelled, or is unknown to the server |
 * | 5 | `Auth` | authorization failed: the OAuth sign-in could not complete (refused, timed out, no usable authorization server), the auth file is unreadable, or a server refused the credentials it got |
 *
 * Interrupted (SIGINT, SIGTERM), it closes every server and exits 130;
 * `call` first cancels the task it was waiting for (best effort, 5 seconds).
 * `serve` runs until interrupted (130), or with `--serve-stdio` until its
 * client closes stdin (0).
 *
 * @category models
 * @since 0.1.0
 */
export const ExitCode: typeof Failures.ExitCode = Failures.ExitCode

/**
 * What made a command fail, named after its {@link ExitCode}.
 *
 * @category models
 * @since 0.1.0
 */
export type FailureKind = Failures.FailureKind

/**
 * The one error of the CLI: it carries the exit code (read by the runtime's
 * teardown) and a message for stderr. It is printed once by {@link run}, so
 * the runtime does not report it again.
 *
 * @category errors
 * @since 0.1.0
 */
export const CliFailure: typeof Failures.CliFailure = Failures.CliFailure

/**
 * @category errors
 * @since 0.1.0
 */
export type CliFailure = Failures.CliFailure

// -----------------------------------------------------------------------------
// Arguments
// -----------------------------------------------------------------------------

/**
 * Parses the text of `--args`: a JSON object (absent means `{}`).
 *
 * @category parsing
 * @since 0.1.0
 */
export const parseArgs: (text: string | undefined) => Result.Result<Record<string, unknown>, CliFailure> =
  Commands.parseArgs

/**
 * Parses the text of a prompt's `--args`: a JSON object whose values are
 * strings (numbers and booleans are turned into strings).
 *
 * @category parsing
 * @since 0.1.0
 */
export const parsePromptArgs: (text: string | undefined) => Result.Result<Record<string, string>, CliFailure> =
  Commands.parsePromptArgs

/**
 * Splits the command line of `--stdio` into the command and its arguments,
 * as a POSIX shell splits words: blanks separate words, `'...'` is literal,
 * in `"..."` a backslash escapes `"`, `\`, `$` and `` ` ``, outside quotes a
 * backslash escapes any character. No shell is run and nothing is expanded
 * (`$VARS`, `~`, globs; `|` and `>` are plain characters). An unterminated
 * quote or a trailing backslash is a usage error.
 *
 * @category parsing
 * @since 0.2.0
 */
export const splitCommandLine: (text: string) => Result.Result<ReadonlyArray<string>, CliFailure> =
  Adhoc.splitCommandLine

/**
 * The name hook of `--qualify`: tools and prompts are named
 * `<server>_<name>`; resources and templates keep their URIs.
 *
 * @category naming
 * @since 0.1.0
 */
export const qualify: McpGroup.NameHook = Connect.qualify

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

/**
 * The `effect-mcp` command tree (`servers`, `list tools|resources|templates|prompts`,
 * `call`, `read`, `prompt`, `tasks list|get|cancel|result`, `login`, `logout`,
 * `serve`), for embedding or testing with `Command.runWith`.
 *
 * ```sh
 * effect-mcp read notes://readme --server example
 * effect-mcp prompt explain --args '{"topic":"MCP"}' --json
 * effect-mcp login search                        # sign in to an OAuth-protected server
 * effect-mcp logout search                       # forget its OAuth tokens
 * effect-mcp --stdio "npx -y @modelcontextprotocol/server-everything stdio" servers
 * ```
 *
 * `login <server>` signs in ahead of time; `logout <server>` forgets the
 * server's tokens, so that the next connection signs in again.
 *
 * **Tasks.** A `call` the server runs as a task (2026-07-28: the server's
 * choice, for a tool that lists task support; 2025-11-25: a tool listed
 * `execution.taskSupport: "required"`, or `"optional"` with `--task`) shows
 * `task <id> <status>: <message>` on stderr at each change (text from the
 * server made safe for a terminal; on a terminal a new message redraws the
 * line), then prints the result as any call; Ctrl-C cancels the task.
 * `--no-wait` prints the task's id (`--json`: its state) and exits.
 * `tasks get <id>` shows a task's state (status, message, times, ttl, poll
 * interval), `tasks cancel <id>` cancels it, `tasks result <id>` waits and
 * prints its result (Ctrl-C stops waiting only), `tasks list` lists the
 * tasks of 2025-11-25 servers (2026-07-28 has no task list). A task's id is
 * its server's: with several servers, name one with `--server`.
 *
 * `--stdio COMMAND` (with `--env KEY=VALUE`, `--cwd DIR`) or `--url URL`
 * (with `--header "Name: value"`) replace the config by one server, named
 * after the program or the URL's host (or `--name`); `--server` is then
 * optional, as is the server of `login` and `logout`.
 *
 * **Serve.** `serve` serves the servers as one MCP server
 * (`NodeMcpGateway`; with several, tools and prompts are named
 * `<server>__<name>`) over Streamable HTTP (`--port PORT`, `--host HOST`,
 * default `127.0.0.1`) or over this process's stdio (`--serve-stdio`: stdout
 * carries only protocol frames). A host beyond loopback needs
 * `--auth-issuer URL` with `--auth-jwks-url URL` (bearer JWTs checked by
 * `NodeMcpJwtVerifier`; `--auth-audience`, `--auth-scope`, `--auth-resource`)
 * or `--allow-unauthenticated`. `--allow-tools|--deny-tools PATTERN` (and
 * `-prompts`, `-resources`) filter every server's components by their own
 * names, over the config's `"tools"`, `"prompts"` and `"resources"` filters.
 * A line on stderr says where it serves; a server that cannot connect is
 * retried while the others are served.
 *
 * **A server's questions.** Elicitation (form and URL) and sampling are
 * declared, and roots with `--root DIR` (their `file://` URIs). On a
 * terminal a form is asked field by field on stderr with effect's CLI
 * prompts (Esc or Ctrl-C cancels, a "Decline" choice declines), and a URL
 * (`http:` or `https:` only) is shown and, with `--open`, opened once
 * accepted; `--answers JSON` answers without asking (an object of field
 * values, `{"action":"decline"}`, or a list of those in order; answers that
 * do not fit the form exit 2); with neither, elicitations are declined.
 * Sampling is declined unless `--sampling-command COMMAND` answers it (the
 * params as JSON on its stdin, a `CreateMessageResult` on its stdout, within
 * `--sampling-timeout`). `serve` takes none of these flags.
 *
 * @category commands
 * @since 0.1.0
 */
export const command = Commands.command

/**
 * The version `effect-mcp --version` prints.
 *
 * @category constants
 * @since 0.1.0
 */
export const version: typeof Connect.version = Connect.version

// -----------------------------------------------------------------------------
// Running
// -----------------------------------------------------------------------------

/**
 * Help and version on stdout when asked for; help after a usage error, and
 * the errors, on stderr.
 */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.gen(function*() {
      const formatter = yield* CliOutput.Formatter
      switch (event._tag) {
        case "Help":
          return yield* event.reason === "Requested"
            ? Console.log(formatter.formatHelpDoc(event.helpDoc))
            : Console.error(formatter.formatHelpDoc(event.helpDoc))
        case "InvalidInvocation":
          yield* Console.error(formatter.formatHelpDoc(event.helpDoc))
          return yield* Console.error(formatter.formatErrors(event.errors))
        case "Version":
          return yield* Console.log(formatter.formatVersion(event.name, event.version))
      }
    })
}

/**
 * Runs `effect-mcp` with these arguments (without the node and script
 * paths). Every failure ends as a {@link CliFailure}, already printed on
 * stderr, whose exit code the runtime uses; logs below `Warn` are dropped
 * unless `--log-level` says otherwise.
 *
 * @category running
 * @since 0.1.0
 */
export const run: (
  args: ReadonlyArray<string>
) => Effect.Effect<void, CliFailure, Command.Environment> = Effect.fn("McpCli.run")(
  function*(args: ReadonlyArray<string>) {
    yield* Command.runWith(command, { version })(args).pipe(
      Effect.catch((error): Effect.Effect<never, CliFailure> => {
        if (error instanceof CliFailure) {
          return Effect.andThen(Console.error(`effect-mcp: ${error.description}`), Effect.fail(error))
        }
        if (CliError.isCliError(error)) {
          // effect/cli printed the help and the errors already
          return Effect.fail(Failures.usage(error._tag === "ShowHelp" ? "usage" : error.message))
        }
        return Effect.die(error)
      }),
      Effect.provideService(CliOutput.Presenter, presenter),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  }
)

/**
 * {@link run} with Node's services: what the `effect-mcp` bin runs under
 * `NodeMcpRuntime.runMain`.
 *
 * **OAuth.** A Streamable HTTP or HTTP+SSE server that refuses a request
 * (`401`) is signed in to with OAuth 2.1 on first use: the authorization URL
 * is printed on stderr and opened in the browser (`xdg-open`, `open`, or the
 * command in `EFFECT_MCP_BROWSER`, run with the URL as its last argument or
 * in place of a `%s` word), the browser comes back to a listener on
 * `127.0.0.1`, and the tokens are kept in the auth file (`--auth-file`, or
 * `EFFECT_MCP_AUTH_FILE`, default `$XDG_CONFIG_HOME/effect-mcp/auth.json` or
 * `~/.config/effect-mcp/auth.json`, mode 0600). Later runs reuse them and
 * refresh them silently. A server's `oauth` entry in the config can name a
 * pre-registered client (`clientId`, `clientSecret`), the `scope`, a
 * `clientMetadataUrl` and a fixed `callbackPort`; `"oauth": false` or a
 * static `Authorization` header turns it off.
 *
 * @category running
 * @since 0.1.0
 */
export const main = (args: ReadonlyArray<string>): Effect.Effect<void, CliFailure> =>
  run(args).pipe(Effect.provide(NodeServices.layer))
