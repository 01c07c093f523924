/**
 * `effect-mcp` without a config: `--stdio COMMAND` against a real stdio
 * server process (a fixture that reports its environment, working directory
 * and arguments) and `--url URL` against a real Streamable HTTP server on
 * 127.0.0.1 (in this process, behind a middleware that requires an API key
 * header and records the headers it gets), both run as the built bin; the
 * flags' usage errors; and the splitting of the command line.
 */
import { McpHttpServer, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer } from "@effect-mcp/platform-node"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { mkdirSync, realpathSync } from "node:fs"
import * as Http from "node:http"
import { join } from "node:path"
import * as Adhoc from "../src/internal/adhoc.ts"
import { assertExit, type Ran, root, runCli, tempDir } from "./utils/cli.ts"

const envServer = join(root, "packages/cli/test/fixtures/env-server.ts")

/** A word quoted for `--stdio` (single quotes, `'` as `'\''`). */
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`
const node = quote(process.execPath)
const stdio = (...rest: ReadonlyArray<string>) => ["--stdio", [node, quote(envServer), ...rest].join(" ")]

const files = tempDir({})
afterAll(() => files.cleanup())

const parse = (ran: Ran): any => JSON.parse(ran.stdout)

const all = <const Runs extends ReadonlyArray<Effect.Effect<Ran>>>(...runs: Runs) =>
  Effect.all(runs, { concurrency: "unbounded" })

// -----------------------------------------------------------------------------
// The HTTP server
// -----------------------------------------------------------------------------

const echo = McpTool.make("echo", {
  description: "Echoes the text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

/**
 * A Streamable HTTP server on 127.0.0.1 and an ephemeral port, for as long
 * as the test's scope: a request without `X-Api-Key: s3cret` gets `403`;
 * `seen` records the `X-Api-Key` and `X-Trace` headers of every request.
 */
const startHttpServer = Effect.gen(function*() {
  const seen: Array<{ readonly key: string | undefined; readonly trace: string | undefined }> = []
  const mcp = McpServer.register(echo).pipe(
    Layer.provideMerge(McpServer.layer({ name: "http-echo", version: "1.0.0" }))
  )
  const app = HttpRouter.serve(McpHttpServer.layerRoute().pipe(Layer.provide(mcp)), {
    disableLogger: true,
    disableListenLog: true,
    middleware: (handle) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const key = request.headers["x-api-key"]
        seen.push({ key, trace: request.headers["x-trace"] })
        if (key !== "s3cret") return HttpServerResponse.text("no API key", { status: 403 })
        return yield* handle
      })
  }).pipe(
    Layer.provideMerge(NodeHttpServer.layerServer(() => Http.createServer(), {
      port: 0,
      host: "127.0.0.1",
      disablePreemptiveShutdown: true
    }))
  )
  const context = yield* Layer.build(app)
  const url = yield* Effect.provide(NodeMcpHttpServer.url(), context)
  return { url, seen }
})

// -----------------------------------------------------------------------------

describe("effect-mcp --stdio", () => {
  it.live("lists and calls a stdio server's tools; the command line is split like a shell would split it", () =>
    Effect.gen(function*() {
      const [human, json, argv, servers] = yield* all(
        runCli([...stdio(), "list", "tools"]),
        runCli(["list", "tools", "--json", ...stdio()]),
        runCli([...stdio(`'two words'`, "a\\ b", `"c \\"d\\" $HOME"`, "'*'", "|", ">x"), "call", "argv"]),
        runCli([...stdio(), "servers", "--json", "--era", "legacy"])
      )
      assertExit(human, 0)
      // named after the script: node is a launcher
      assert.match(human.stdout, /^TOOL\s+SERVER\s+DESCRIPTION$/m)
      assert.match(human.stdout, /^env\s+env-server\s+The value of an environment variable$/m)
      assert.match(human.stdout, /^argv\s+env-server\s+/m)
      assertExit(json, 0)
      assert.deepStrictEqual(parse(json).map((entry: any) => [entry.server, entry.name]), [
        ["env-server", "argv"],
        ["env-server", "cwd"],
        ["env-server", "env"]
      ])
      // quotes and backslashes removed, nothing expanded, no shell between
      assertExit(argv, 0)
      assert.deepStrictEqual(JSON.parse(argv.stdout), ["two words", "a b", "c \"d\" $HOME", "*", "|", ">x"])
      // --era applies to the one server
      assertExit(servers, 0)
      assert.deepStrictEqual(
        parse(servers).map((row: any) => [row.server, row.transport, row.status, row.era, row.protocolVersion]),
        [["env-server", "Stdio", "up", "legacy", "2025-11-25"]]
      )
    }))

  it.live("--inherit-env passes this process's whole environment to the server (--env still wins)", () =>
    Effect.gen(function*() {
      const parent = { ADHOC_PARENT_ONLY: "from-parent" }
      const name = `{"name":"ADHOC_PARENT_ONLY"}`
      const [without, inherited, overridden] = yield* all(
        runCli([...stdio(), "call", "env", "--args", name], { env: parent }),
        runCli([...stdio(), "--inherit-env", "call", "env", "--args", name], { env: parent }),
        runCli([...stdio(), "--inherit-env", "-e", "ADHOC_PARENT_ONLY=from-flag", "call", "env", "--args", name], {
          env: parent
        })
      )
      assertExit(without, 0)
      assert.strictEqual(without.stdout, "(unset)\n")
      assertExit(inherited, 0)
      assert.strictEqual(inherited.stdout, "from-parent\n")
      assertExit(overridden, 0)
      assert.strictEqual(overridden.stdout, "from-flag\n")
    }))

  it.live("--env sets the server's variables over what it inherits; --cwd its working directory", () =>
    Effect.gen(function*() {
      const dir = files.path("work dir")
      mkdirSync(dir)
      const [set, overrides, unset, cwd] = yield* all(
        runCli([
          ...stdio(),
          "--env",
          "ADHOC_FOO=bar=baz",
          "-e",
          "ADHOC_OTHER=1",
          "call",
          "env",
          "--args",
          `{"name":"ADHOC_FOO"}`
        ]),
        runCli([...stdio(), "--env", "ADHOC_FOO=from-flag", "call", "env", "--args", `{"name":"ADHOC_FOO"}`], {
          env: { ADHOC_FOO: "inherited" }
        }),
        runCli([...stdio(), "call", "env", "--args", `{"name":"ADHOC_FOO"}`]),
        runCli([...stdio(), "--cwd", dir, "call", "cwd"])
      )
      assertExit(set, 0)
      assert.strictEqual(set.stdout, "bar=baz\n")
      assertExit(overrides, 0)
      assert.strictEqual(overrides.stdout, "from-flag\n")
      assertExit(unset, 0)
      assert.strictEqual(unset.stdout, "(unset)\n")
      assertExit(cwd, 0)
      assert.strictEqual(cwd.stdout, `${realpathSync(dir)}\n`)
    }))

  it.live("--server is optional, and must name the one server; --name renames it (--qualify uses it)", () =>
    Effect.gen(function*() {
      const [named, unknown, renamed, qualified] = yield* all(
        runCli([...stdio(), "--server", "env-server", "call", "cwd"]),
        runCli([...stdio(), "-s", "nope", "list", "tools"]),
        runCli([...stdio(), "--name", "probe", "--server", "probe", "list", "tools", "--json"]),
        runCli([...stdio(), "--name", "probe", "--qualify", "call", "probe_env", "--args", `{"name":"NOPE_X"}`])
      )
      assertExit(named, 0)
      assert.strictEqual(named.stdout, `${root.replace(/\/$/, "")}\n`)
      assertExit(unknown, 2)
      assert.strictEqual(unknown.stderr, "effect-mcp: unknown server \"nope\"; the servers are: env-server\n")
      assertExit(renamed, 0)
      assert.deepStrictEqual([...new Set(parse(renamed).map((entry: any) => entry.server))], ["probe"])
      assertExit(qualified, 0)
      assert.strictEqual(qualified.stdout, "(unset)\n")
    }))

  it.live("a command that cannot start is a connection failure naming it (exit 3)", () =>
    Effect.gen(function*() {
      const ran = yield* runCli(["--stdio", "/nonexistent/effect-mcp-server --flag", "list", "tools"])
      assertExit(ran, 3)
      assert.strictEqual(ran.stdout, "")
      assert.include(ran.stderr, "server \"effect-mcp-server\": could not start /nonexistent/effect-mcp-server")
    }))
})

describe("effect-mcp --url", () => {
  it.live("lists and calls a Streamable HTTP server's tools, with the --header flags on every request", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* startHttpServer
      const headers = ["--header", "X-Api-Key: s3cret", "-H", "x-trace:  a:b c "]
      const [human, call, json, servers, refused] = yield* all(
        runCli(["--url", url, ...headers, "list", "tools"]),
        runCli(["--url", url, ...headers, "call", "echo", "--args", `{"text":"hi"}`]),
        runCli([
          "call",
          "echo",
          "--args",
          `{"text":"hi"}`,
          "--json",
          "--url",
          url,
          ...headers,
          "--server",
          "127.0.0.1"
        ]),
        runCli(["--url", url, ...headers, "servers", "--json", "--era", "modern"]),
        // no API key: the server answers 403
        runCli(["--url", url, "list", "tools"])
      )
      assertExit(human, 0)
      assert.match(human.stdout, /^echo\s+127\.0\.0\.1\s+Echoes the text$/m)
      assertExit(call, 0)
      assert.strictEqual(call.stdout, "hi\n")
      assertExit(json, 0)
      assert.deepStrictEqual(parse(json).content, [{ type: "text", text: "hi" }])
      assertExit(servers, 0)
      assert.deepStrictEqual(
        parse(servers).map((row: any) => [row.server, row.transport, row.serverInfo.name, row.era]),
        [["127.0.0.1", "StreamableHttp", "http-echo", "modern"]]
      )
      // every request of the four runs carried both headers, the value trimmed
      const keyed = seen.filter((request) => request.key === "s3cret")
      assert.isAtLeast(keyed.length, 4)
      assert.isTrue(keyed.every((request) => request.trace === "a:b c"), JSON.stringify(keyed))
      assertExit(refused, 3)
      assert.strictEqual(refused.stdout, "")
      assert.include(refused.stderr, "server \"127.0.0.1\"")
      assert.include(refused.stderr, "403")
      assert.isTrue(seen.some((request) => request.key === undefined))
    }))
})

describe("effect-mcp server flags: usage errors (exit 2, nothing started)", () => {
  it.live("conflicting, misplaced or malformed flags", () =>
    Effect.gen(function*() {
      const config = files.path("none.json")
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [
          ["--stdio", "node server.js", "--url", "http://127.0.0.1:1/mcp", "list", "tools"],
          "--stdio and --url cannot be used together"
        ],
        [
          ["--stdio", "node server.js", "--config", config, "list", "tools"],
          "--config and --stdio cannot be used together"
        ],
        [
          ["list", "tools", "--url", "http://127.0.0.1:1/mcp", "-c", config],
          "--config and --url cannot be used together"
        ],
        [
          ["--url", "ws://127.0.0.1:1/mcp", "list", "tools"],
          "--url must be an http:// or https:// URL, got \"ws://127.0.0.1:1/mcp\""
        ],
        [
          ["--url", "file:///etc/passwd", "list", "tools"],
          "--url must be an http:// or https:// URL, got \"file:///etc/passwd\""
        ],
        [
          ["--url", "127.0.0.1:3000/mcp", "list", "tools"],
          "--url must be an http:// or https:// URL, got \"127.0.0.1:3000/mcp\""
        ],
        [["--url", "localhost:3000/mcp", "list", "tools"], "--url must be an http:// or https:// URL"],
        [["--url", "not a url", "list", "tools"], "--url must be an http:// or https:// URL, got \"not a url\""],
        [["--stdio", "", "list", "tools"], "--stdio needs a command line"],
        [["--stdio", "  \t ", "list", "tools"], "--stdio needs a command line"],
        [
          ["--stdio", "''", "list", "tools"],
          "--stdio needs a command line, e.g. --stdio \"node server.js\": the command is empty"
        ],
        [["--stdio", "node 'server.js", "list", "tools"], "--stdio has an unterminated ' quote"],
        [["--stdio", "node server.js\\", "list", "tools"], "--stdio ends with a lone backslash"],
        [["--header", "X-Api-Key: 1", "-c", config, "list", "tools"], "--header goes with --url"],
        [["--stdio", "node server.js", "--header", "X-Api-Key: 1", "list", "tools"], "--header goes with --url"],
        [["--url", "http://127.0.0.1:1/mcp", "--env", "A=1", "list", "tools"], "--env goes with --stdio"],
        [["--cwd", "/tmp", "list", "tools"], "--cwd goes with --stdio"],
        [["--inherit-env", "-c", config, "list", "tools"], "--inherit-env goes with --stdio"],
        [["--name", "x", "list", "tools"], "--name goes with --stdio or --url"],
        [["--stdio", "node server.js", "--env", "NOEQUALS", "list", "tools"], "--env \"NOEQUALS\": expected KEY=VALUE"],
        [["--stdio", "node server.js", "--env", "=1", "list", "tools"], "--env \"=1\": expected KEY=VALUE"],
        [
          ["--url", "http://127.0.0.1:1/mcp", "-H", "no colon", "list", "tools"],
          "--header \"no colon\": expected \"Name: value\""
        ],
        [["--url", "http://127.0.0.1:1/mcp", "-H", "Bad Name: 1", "list", "tools"], "expected \"Name: value\""],
        [["--stdio", "node server.js", "--cwd", files.path("absent"), "list", "tools"], "is not a directory"],
        [["--stdio", "node server.js", "login"], "server \"server\" is not an HTTP server"],
        [["login"], "which server?"]
      ]
      const runs = yield* Effect.forEach(cases, ([args]) => runCli(args, { cwd: files.dir }), { concurrency: 6 })
      runs.forEach((ran, i) => {
        const [args, message] = cases[i]!
        assertExit(ran, 2)
        assert.strictEqual(ran.stdout, "", `stdout of ${args.join(" ")}`)
        assert.include(ran.stderr, message, `stderr of ${args.join(" ")}`)
      })
    }))

  it.live("--help exits 0 and explains the server flags", () =>
    Effect.gen(function*() {
      const [help, loginHelp] = yield* all(runCli(["--help"]), runCli(["login", "--help"]))
      assertExit(help, 0)
      for (
        const part of [
          "--stdio COMMAND",
          "--url URL",
          "--header, -H",
          "--env, -e KEY=VALUE",
          "--inherit-env",
          "--cwd DIR",
          "--name NAME"
        ]
      ) {
        assert.include(help.stdout, part)
      }
      assert.include(help.stdout, "no shell is run")
      assert.include(help.stdout, "http:// or https://")
      assert.include(help.stdout, "effect-mcp --stdio \"node server.js\" list tools")
      assert.strictEqual(help.stderr, "")
      assertExit(loginHelp, 0)
      assert.include(loginHelp.stdout, "optional with --url")
    }))
})

describe("the command line of --stdio", () => {
  const split = (text: string) => {
    const result = Adhoc.splitCommandLine(text)
    return Result.isSuccess(result) ? result.success : `error: ${result.failure.description}`
  }

  it("splits on blanks, honours quotes and backslashes, expands nothing", () => {
    assert.deepStrictEqual(split("node server.js"), ["node", "server.js"])
    assert.deepStrictEqual(split("  node\t server.js \n --port 3  "), ["node", "server.js", "--port", "3"])
    assert.deepStrictEqual(split("a'b c'd"), ["ab cd"])
    assert.deepStrictEqual(split("'' \"\" x"), ["", "", "x"])
    assert.deepStrictEqual(split(`"a \\"b\\" \\\\ \\$x \\n"`), ["a \"b\" \\ $x \\n"])
    assert.deepStrictEqual(split(`'a \\ "b"'`), [`a \\ "b"`])
    assert.deepStrictEqual(split("a\\ b \\'c \\\\"), ["a b", "'c", "\\"])
    assert.deepStrictEqual(split("a\\\nb \"c\\\nd\""), ["ab", "cd"])
    assert.deepStrictEqual(split("echo $HOME ~ * ; | > `x`"), ["echo", "$HOME", "~", "*", ";", "|", ">", "`x`"])
    assert.deepStrictEqual(split(""), [])
    assert.strictEqual(split("a 'b"), "error: --stdio has an unterminated ' quote: a 'b")
    assert.strictEqual(split("a \"b\\\""), "error: --stdio has an unterminated \" quote: a \"b\\\"")
    assert.strictEqual(split("a\\"), "error: --stdio ends with a lone backslash: a\\")
  })

  it("names the server after the program, or the script of a launcher, or the URL's host", () => {
    assert.strictEqual(Adhoc.stdioName("node", ["build/server.js"]), "server")
    assert.strictEqual(
      Adhoc.stdioName("/usr/bin/node", ["--conditions=development", "./x/weather-server.ts"]),
      "weather-server"
    )
    assert.strictEqual(
      Adhoc.stdioName("npx", ["-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"]),
      "server-everything"
    )
    assert.strictEqual(Adhoc.stdioName("uvx", ["mcp-server-fetch"]), "mcp-server-fetch")
    assert.strictEqual(Adhoc.stdioName("python3", ["-m", "mcp_server_git"]), "mcp_server_git")
    assert.strictEqual(Adhoc.stdioName("deno", ["run", "-A", "main.ts"]), "main")
    assert.strictEqual(Adhoc.stdioName("/opt/bin/my-server", ["--port", "1"]), "my-server")
    assert.strictEqual(Adhoc.stdioName("node", []), "node")
    assert.strictEqual(Adhoc.stdioName("node", ["-e", "1 + 1"]), "node")
    assert.strictEqual(Adhoc.stdioName("./$weird name", []), "server")
    assert.strictEqual(Adhoc.urlName(new URL("https://mcp.example.com/mcp")), "mcp.example.com")
    assert.strictEqual(Adhoc.urlName(new URL("http://[::1]:3000/mcp")), "server")
  })

  it("parses --header and --env", () => {
    const headers = Adhoc.parseHeaders(["Authorization: Bearer a:b", "x-a:1", "X-A: 2"])
    assert.deepStrictEqual(Result.getOrThrow(headers), { Authorization: "Bearer a:b", "X-A": "2" })
    assert.isTrue(Result.isFailure(Adhoc.parseHeaders([": x"])))
    assert.deepStrictEqual(Result.getOrThrow(Adhoc.parseEnv(["A=1", "B=", "A=x=y"])), { A: "x=y", B: "" })
  })
})
