/**
 * The built `effect-mcp` run as a process (`node packages/cli/dist/bin.js`)
 * against config files naming our example server and server-everything over
 * stdio: outputs, `--json`, `--qualify`, `--server`, progress, exit codes,
 * config errors, and no server process left behind by any run.
 *
 * Every run starts Node processes: most use the example server alone, and
 * the tests run one at a time (a few runs each, concurrently).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { bin, config, processesWith, type Ran, runCli, tempDir, weatherServer } from "./utils/cli.ts"

const files = tempDir({
  "mcp.json": config,
  "example.json": { mcpServers: { example: config.mcpServers.example } },
  "dies.json": {
    mcpServers: {
      example: config.mcpServers.example,
      // dies once it has read the initialize request
      dies: {
        command: process.execPath,
        args: ["-e", "process.stdin.once('data', () => { console.error('boom: no API key'); process.exit(7) })"]
      }
    }
  },
  "dies-at-once.json": { mcpServers: { dies: { command: process.execPath, args: ["-e", "process.exit(7)"] } } },
  "missing-command.json": { mcpServers: { ghost: { command: "/nonexistent/effect-mcp-server" } } },
  "refused.json": { mcpServers: { remote: { url: "http://127.0.0.1:1/mcp" } } },
  "bad-args.json": { mcpServers: { example: { command: "node", args: "scratchpad/example-server.ts" } } },
  "bad-url.json": { mcpServers: { remote: { url: "not a url" } } },
  "neither.json": { mcpServers: { odd: { cmd: "node" } } },
  "not-json.json": "{ \"mcpServers\": ",
  "collide.json": {
    mcpServers: {
      example: config.mcpServers.example,
      rainy: { command: process.execPath, args: [weatherServer] }
    }
  },
  // ours speak both eras: example settles on the modern one, rainy is pinned legacy
  "eras.json": {
    mcpServers: {
      example: config.mcpServers.example,
      rainy: { command: process.execPath, args: [weatherServer], era: "legacy" }
    }
  },
  "bad-era.json": { mcpServers: { example: { ...config.mcpServers.example, era: "newest" } } }
})
afterAll(() => files.cleanup())

const cfg = (name = "mcp.json") => ["--config", files.path(name)]
const example = cfg("example.json")

/** The run's processes (the CLI and every server it spawned) are gone. */
const assertNothingLeft = (ran: Ran) => assert.deepStrictEqual(processesWith(ran.marker), [], "processes left behind")

const assertExit = (ran: Ran, code: number) => {
  assert.strictEqual(
    ran.code,
    code,
    `exit code ${ran.code} (signal ${ran.signal}), expected ${code}\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`
  )
  assertNothingLeft(ran)
}

const parse = (ran: Ran): any => JSON.parse(ran.stdout)

const all = <const Runs extends ReadonlyArray<Effect.Effect<Ran>>>(...runs: Runs) =>
  Effect.all(runs, { concurrency: "unbounded" })

describe("effect-mcp", () => {
  it.live("list tools: every server's tools with their server (./mcp.json by default); --json parses", () =>
    Effect.gen(function*() {
      const [human, json] = yield* all(
        runCli(["list", "tools"], { cwd: files.dir }),
        runCli(["list", "tools", "--json", ...cfg()])
      )
      assertExit(human, 0)
      const lines = human.stdout.trimEnd().split("\n")
      assert.match(lines[0]!, /^TOOL\s+SERVER\s+DESCRIPTION$/)
      assert.match(human.stdout, /^weather\s+example\s+Today's forecast for a city$/m)
      assert.match(human.stdout, /^countdown\s+example\s+Counts down/m)
      assert.match(human.stdout, /^echo\s+everything\s+Echoes back the input string$/m)
      assert.match(human.stdout, /^get-sum\s+everything\s+/m)
      // in the config's order of servers, each server's tools in name order
      const row = (name: string) => lines.findIndex((line) => line.startsWith(`${name} `))
      assert.isBelow(row("countdown"), row("weather"))
      assert.isBelow(row("weather"), row("get-sum"))
      // server-everything's "Starting default (STDIO) server..." is kept, not printed
      assert.strictEqual(human.stderr, "")

      assertExit(json, 0)
      const entries: Array<{ server: string; name: string; tool: { name: string; inputSchema: unknown } }> = parse(json)
      const pairs = entries.map(({ name, server }) => ({ name, server }))
      assert.deepInclude(pairs, { name: "weather", server: "example" })
      assert.deepInclude(pairs, { name: "get-sum", server: "everything" })
      const weather = entries.find((entry) => entry.name === "weather")!
      assert.strictEqual(weather.tool.name, "weather")
      assert.isObject(weather.tool.inputSchema)
    }))

  it.live("list resources, templates, prompts and servers, human and --json", () =>
    Effect.gen(function*() {
      const [resources, templates, prompts, promptsHuman, servers, serversHuman] = yield* all(
        runCli(["list", "resources", "--json", ...example]),
        runCli(["list", "templates", "--json", ...example]),
        runCli(["list", "prompts", "--json", ...example]),
        runCli(["list", "prompts", ...example]),
        runCli(["servers", "--json", ...cfg()]),
        runCli(["servers", ...example])
      )
      for (const ran of [resources, templates, prompts, promptsHuman, servers, serversHuman]) assertExit(ran, 0)
      assert.deepStrictEqual(parse(resources).map((entry: any) => [entry.server, entry.name, entry.resource.name]), [
        ["example", "notes://readme", "readme"]
      ])
      assert.deepStrictEqual(parse(templates).map((entry: any) => [entry.server, entry.name]), [
        ["example", "notes://{topic}{?page}"]
      ])
      assert.deepStrictEqual(
        parse(prompts).map((entry: any) => [entry.server, entry.name, entry.prompt.arguments.length]),
        [
          ["example", "explain", 2]
        ]
      )
      assert.match(promptsHuman.stdout, /^explain\s+example\s+topic, level\?\s+Explain a topic at a level$/m)
      // our example server speaks 2026-07-28; server-everything only initialize
      assert.deepStrictEqual(
        parse(servers).map((row: any) => [
          row.server,
          row.transport,
          row.status,
          row.serverInfo.name,
          row.era,
          row.protocolVersion
        ]),
        [
          ["example", "Stdio", "up", "example-server", "modern", "2026-07-28"],
          ["everything", "Stdio", "up", "mcp-servers/everything", "legacy", "2025-11-25"]
        ]
      )
      assert.match(
        serversHuman.stdout,
        /^example\s+Stdio\s+up\s+example-server 1\.0\.0\s+modern\s+2026-07-28\s+2\s+1\s+1\s+1$/m
      )
    }))

  it.live("--qualify: tools and prompts are named <server>_<name> and called by that name", () =>
    Effect.gen(function*() {
      const [listed, sum, unqualified, prompt] = yield* all(
        runCli(["list", "tools", "--qualify", "--json", ...cfg()]),
        runCli(["call", "everything_get-sum", "--qualify", "--args", "{\"a\":2,\"b\":40}", ...cfg()]),
        runCli(["call", "weather", "--qualify", "--args", "{\"city\":\"Oslo\"}", ...example]),
        runCli([
          "prompt",
          "example_explain",
          "--qualify",
          "--args",
          "{\"topic\":\"groups\",\"level\":\"expert\"}",
          ...example
        ])
      )
      assertExit(listed, 0)
      const names: Array<string> = parse(listed).map((entry: any) => entry.name)
      assert.include(names, "example_weather")
      assert.include(names, "everything_echo")
      assert.isTrue(names.every((name) => name.startsWith("example_") || name.startsWith("everything_")))
      // the declaration keeps the server's own name
      assert.strictEqual(parse(listed).find((entry: any) => entry.name === "example_weather").tool.name, "weather")
      assertExit(sum, 0)
      assert.include(sum.stdout, "42")
      // under --qualify the bare name is unknown
      assertExit(unqualified, 2)
      assert.include(unqualified.stderr, "unknown tool \"weather\"; the tools are: example_countdown, example_weather")
      assertExit(prompt, 0)
      assert.strictEqual(prompt.stdout, "user: Explain groups to an expert.\n")
    }))

  it.live("--server: only that server is connected; an unknown one is a usage error naming the known ones", () =>
    Effect.gen(function*() {
      const [only, unknown] = yield* all(
        runCli(["list", "tools", "--json", "--server", "everything", ...cfg()]),
        runCli(["list", "tools", "-s", "nope", ...cfg()])
      )
      assertExit(only, 0)
      assert.deepStrictEqual([...new Set(parse(only).map((entry: any) => entry.server))], ["everything"])
      assertExit(unknown, 2)
      assert.strictEqual(unknown.stdout, "")
      assert.strictEqual(unknown.stderr, "effect-mcp: unknown server \"nope\"; the servers are: example, everything\n")
    }))

  it.live("call: the result's content on stdout; --json: the whole result", () =>
    Effect.gen(function*() {
      const [weather, json, echo, countdown] = yield* all(
        runCli(["call", "weather", "--args", "{\"city\":\"Lisbon\"}", ...example]),
        runCli(["call", "weather", "--args", "{\"city\":\"Lisbon\"}", "--json", ...example]),
        runCli(["call", "echo", "--server", "everything", "--args", "{\"message\":\"hi\"}", ...cfg()]),
        runCli(["call", "countdown", "--no-progress", "--args", "{\"from\":2}", ...example])
      )
      assertExit(weather, 0)
      assert.strictEqual(weather.stdout, "{\"city\":\"Lisbon\",\"celsius\":21.5,\"conditions\":\"sunny\"}\n")
      assertExit(json, 0)
      assert.deepStrictEqual(parse(json).structuredContent, { city: "Lisbon", celsius: 21.5, conditions: "sunny" })
      assert.isUndefined(parse(json).isError)
      assertExit(echo, 0)
      assert.strictEqual(echo.stdout, "Echo: hi\n")
      assertExit(countdown, 0)
      assert.strictEqual(countdown.stdout, "liftoff\n[resource link notes://launch (launch notes)]\n")
      // no progress bar, and the server's own stderr (its logs) kept
      assert.strictEqual(countdown.stderr, "")
    }))

  it.live("a tool error result exits 1: its text on stderr, or the result on stdout with --json", () =>
    Effect.gen(function*() {
      const [human, json] = yield* all(
        runCli(["call", "weather", "--args", "{}", ...example]),
        runCli(["call", "weather", "--json", ...example])
      )
      assertExit(human, 1)
      assert.strictEqual(human.stdout, "")
      assert.include(
        human.stderr,
        "effect-mcp: tool weather returned an error result:\nInvalid arguments for tool weather"
      )
      assert.include(human.stderr, "city")
      assertExit(json, 1)
      const result = parse(json)
      assert.isTrue(result.isError)
      assert.include(result.content[0].text, "Invalid arguments for tool weather")
      assert.strictEqual(json.stderr, "effect-mcp: tool weather returned an error result\n")
    }))

  it.live("progress: plain bounded lines on stderr when it is not a terminal", () =>
    Effect.gen(function*() {
      const [countdown, everything] = yield* all(
        runCli(["call", "countdown", "--args", "{\"from\":4}", ...example]),
        runCli([
          "call",
          "trigger-long-running-operation",
          "--server",
          "everything",
          "--args",
          "{\"duration\":0.2,\"steps\":4}",
          ...cfg()
        ])
      )
      assertExit(countdown, 0)
      assert.strictEqual(countdown.stdout, "liftoff\n[resource link notes://launch (launch notes)]\n")
      assert.deepStrictEqual(countdown.stderr.trimEnd().split("\n"), [
        "[#####---------------] 1/4 25% 4…",
        "[##########----------] 2/4 50% 3…",
        "[###############-----] 3/4 75% 2…",
        "[####################] 4/4 100% 1…"
      ])
      assertExit(everything, 0)
      assert.include(everything.stdout, "Long running operation completed")
      assert.include(everything.stderr, "[####################] 4/4 100%")
      assert.notInclude(everything.stderr, "\r")
    }))

  it.live.skipIf(!hasScript())(
    "progress on a terminal: one line redrawn in place, erased before the output",
    () =>
      Effect.gen(function*() {
        // script(1) gives the CLI a pseudo-terminal (stdout and stderr both)
        const command = [process.execPath, bin, "call", "countdown", "--args", "'{\"from\":3}'", ...example].join(" ")
        const id = randomUUID()
        const output = yield* Effect.sync(() =>
          execFileSync("script", ["-qec", command, "/dev/null"], {
            encoding: "utf8",
            timeout: 60_000,
            env: { ...process.env, LC_EFFECT_MCP_CLI_TEST_RUN: id }
          })
        )
        assert.deepStrictEqual(processesWith(`EFFECT_MCP_CLI_TEST_RUN=${id}`), [])
        assert.include(output, "\r[#######-------------] 1/3 33% 3…\x1b[K")
        assert.include(output, "\r[####################] 3/3 100% 1…\x1b[K")
        // the line is erased, then the result printed
        assert.include(output, "\r\x1b[Kliftoff")
      })
  )

  it.live("read: a listed resource, a URI matched by a template; an unknown URI is a usage error", () =>
    Effect.gen(function*() {
      const [readme, templated, json, unknown] = yield* all(
        runCli(["read", "notes://readme", ...example]),
        runCli(["read", "notes://launch?page=2", ...example]),
        runCli(["read", "notes://readme", "--json", ...example]),
        runCli(["read", "nothing://here", ...example])
      )
      assertExit(readme, 0)
      assert.strictEqual(readme.stdout, "# Example server\n\nTry the `weather` tool.\n")
      assertExit(templated, 0)
      assert.strictEqual(templated.stdout, "Notes on launch, page 2\n")
      assertExit(json, 0)
      assert.deepStrictEqual(parse(json).contents, [
        { uri: "notes://readme", mimeType: "text/markdown", text: "# Example server\n\nTry the `weather` tool." }
      ])
      // the one server with resources answers -32002
      assertExit(unknown, 2)
      assert.include(unknown.stderr, "nothing://here")
    }))

  it.live("prompt: the messages (--json: the result); a request the server refuses exits 4", () =>
    Effect.gen(function*() {
      const [explain, json, everything, refused] = yield* all(
        runCli(["prompt", "explain", "--args", "{\"topic\":\"MCP\",\"level\":\"expert\"}", ...example]),
        runCli(["prompt", "explain", "--args", "{\"topic\":\"MCP\"}", "--json", ...example]),
        runCli(["prompt", "args-prompt", "--args", "{\"city\":\"Lisbon\"}", "--server", "everything", ...cfg()]),
        runCli(["prompt", "explain", ...example])
      )
      assertExit(explain, 0)
      assert.strictEqual(explain.stdout, "user: Explain MCP to an expert.\n")
      assertExit(json, 0)
      assert.deepStrictEqual(parse(json).messages, [
        { role: "user", content: { type: "text", text: "Explain MCP to a beginner." } }
      ])
      assertExit(everything, 0)
      assert.match(everything.stdout, /^user: .*Lisbon/)
      // the required topic is missing: the server answers -32602
      assertExit(refused, 4)
      assert.strictEqual(refused.stdout, "")
      assert.include(refused.stderr, "-32602")
      assert.include(refused.stderr, "topic")
    }))

  it.live("usage errors exit 2 with nothing on stdout", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [[], "USAGE"],
        [["list"], "USAGE"],
        [["list", "bogus"], "Unknown subcommand"],
        [["call"], "Missing required argument: tool"],
        [["list", "tools", "--bogus"], "--bogus"],
        // --args is checked before anything is started: no config needed
        [["call", "weather", "--args", "{city: 1}"], "--args is not valid JSON"],
        [["call", "weather", "--args", "[1]"], "--args must be a JSON object, got an array"],
        [["prompt", "explain", "--args", "{\"topic\":[1]}"], "prompt arguments are strings"],
        [["call", "nope", ...example], "unknown tool \"nope\"; the tools are: countdown, weather"],
        [["prompt", "nope", ...example], "unknown prompt \"nope\"; the prompts are: explain"]
      ]
      const runs = yield* Effect.forEach(cases, ([args]) => runCli(args, { cwd: files.path("..") }), {
        concurrency: 4
      })
      runs.forEach((ran, i) => {
        assertExit(ran, 2)
        assert.strictEqual(ran.stdout, "", `stdout of ${cases[i]![0].join(" ")}`)
        assert.include(ran.stderr, cases[i]![1])
      })
    }))

  it.live("config errors exit 3 and name the file, the server and the field", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["absent.json", ["absent.json: cannot be read"]],
        ["not-json.json", ["not-json.json: not valid JSON"]],
        ["bad-args.json", ["bad-args.json: server \"example\": args: Expected array"]],
        ["bad-url.json", ["bad-url.json: server \"remote\": url:", "an absolute URL"]],
        ["neither.json", ["neither.json: server \"odd\"", "\"command\"", "\"url\""]]
      ]
      const runs = yield* Effect.forEach(cases, ([file]) => runCli(["list", "tools", ...cfg(file)]), {
        concurrency: 4
      })
      runs.forEach((ran, i) => {
        assertExit(ran, 3)
        assert.strictEqual(ran.stdout, "")
        for (const part of cases[i]![1]) assert.include(ran.stderr, part)
      })
      // the default ./mcp.json, absent from the working directory
      const absent = yield* runCli(["list", "tools"], { cwd: files.path("..") })
      assertExit(absent, 3)
      assert.include(absent.stderr, "./mcp.json: cannot be read")
    }))

  it.live("connection failures exit 3 and name the server (with its stderr)", () =>
    Effect.gen(function*() {
      const [dies, diesAtOnce, missing, refused] = yield* all(
        runCli(["list", "tools", ...cfg("dies.json")]),
        runCli(["list", "tools", ...cfg("dies-at-once.json")]),
        runCli(["list", "tools", ...cfg("missing-command.json")]),
        runCli(["list", "tools", ...cfg("refused.json")])
      )
      assertExit(dies, 3)
      assert.strictEqual(dies.stdout, "")
      assert.include(dies.stderr, "server \"dies\"")
      assert.include(dies.stderr, "exited with code 7")
      assert.include(dies.stderr, "boom: no API key")
      // before the initialize request could even be written: the exit, or the failed write
      assertExit(diesAtOnce, 3)
      assert.match(diesAtOnce.stderr, /server "dies": .*(exited with code 7|EPIPE)/)
      assertExit(missing, 3)
      assert.include(missing.stderr, "server \"ghost\": could not start /nonexistent/effect-mcp-server")
      assertExit(refused, 3)
      assert.include(refused.stderr, "server \"remote\"")
      assert.include(refused.stderr, "ECONNREFUSED")
    }))

  it.live("two servers offering one tool name collide (exit 3) unless --qualify", () =>
    Effect.gen(function*() {
      const [collide, qualified] = yield* all(
        runCli(["list", "tools", ...cfg("collide.json")]),
        runCli(["call", "rainy_weather", "--qualify", "--args", "{\"city\":\"Oslo\"}", ...cfg("collide.json")])
      )
      assertExit(collide, 3)
      assert.include(collide.stderr, "tool \"weather\" of server")
      assert.include(collide.stderr, "collides")
      assert.include(collide.stderr, "(--qualify names them <server>_<name>)")
      assertExit(qualified, 0)
      assert.strictEqual(qualified.stdout, "rain in Oslo\n")
    }))

  it.live("servers shows each server's era and protocol version; --era pins every server's, over the config's", () =>
    Effect.gen(function*() {
      const [auto, legacy, modern, call, refused, badConfig, badFlag] = yield* all(
        runCli(["servers", "--qualify", "--json", ...cfg("eras.json")]),
        runCli(["servers", "--qualify", "--era", "legacy", ...cfg("eras.json")]),
        runCli(["servers", "--qualify", "--era", "modern", "--json", ...cfg("eras.json")]),
        runCli([
          "call",
          "rainy_weather",
          "--qualify",
          "--era",
          "modern",
          "--args",
          "{\"city\":\"Oslo\"}",
          ...cfg("eras.json")
        ]),
        runCli(["servers", "--server", "everything", "--era", "modern", ...cfg()]),
        runCli(["servers", ...cfg("bad-era.json")]),
        runCli(["servers", "--era", "newest", ...example])
      )
      const eras = (ran: Ran) => parse(ran).map((row: any) => [row.server, row.era, row.protocolVersion])
      // the config's: example auto (so modern), rainy legacy
      assertExit(auto, 0)
      assert.deepStrictEqual(eras(auto), [["example", "modern", "2026-07-28"], ["rainy", "legacy", "2025-11-25"]])
      // --era legacy: both over initialize
      assertExit(legacy, 0)
      const lines = legacy.stdout.trimEnd().split("\n")
      assert.match(lines[0]!, /^SERVER\s+TRANSPORT\s+STATUS\s+IMPLEMENTATION\s+ERA\s+PROTOCOL\s+TOOLS\s+/)
      assert.match(
        legacy.stdout,
        /^example\s+Stdio\s+up\s+example-server 1\.0\.0\s+legacy\s+2025-11-25\s+2\s+1\s+1\s+1$/m
      )
      assert.match(legacy.stdout, /^rainy\s+Stdio\s+up\s+rainy 1\.0\.0\s+legacy\s+2025-11-25\s+1\s+0\s+0\s+0$/m)
      // --era modern overrides rainy's "legacy", and calls go through in that era
      assertExit(modern, 0)
      assert.deepStrictEqual(eras(modern), [["example", "modern", "2026-07-28"], ["rainy", "modern", "2026-07-28"]])
      assertExit(call, 0)
      assert.strictEqual(call.stdout, "rain in Oslo\n")
      // a server that only speaks initialize refuses a pinned modern era
      assertExit(refused, 3)
      assert.include(refused.stderr, "server \"everything\": the server does not speak 2026-07-28")
      assert.include(refused.stderr, "--era auto")
      // a bad "era" in the config, or a bad --era
      assertExit(badConfig, 3)
      assert.include(badConfig.stderr, `server "example": era: Expected "auto", "modern" or "legacy", got "newest"`)
      assertExit(badFlag, 2)
      assert.strictEqual(badFlag.stdout, "")
      assert.include(badFlag.stderr, "newest")
    }))

  it.live("--help and --version print on stdout and exit 0", () =>
    Effect.gen(function*() {
      const [help, callHelp, version] = yield* all(
        runCli(["--help"]),
        runCli(["call", "--help"]),
        runCli(["--version"])
      )
      assertExit(help, 0)
      for (
        const part of [
          "servers",
          "list",
          "call",
          "read",
          "prompt",
          "--config",
          "--server",
          "--era",
          "--qualify",
          "--json"
        ]
      ) {
        assert.include(help.stdout, part)
      }
      assert.strictEqual(help.stderr, "")
      assertExit(callHelp, 0)
      assert.include(callHelp.stdout, "--args")
      assert.include(callHelp.stdout, "--no-progress")
      assertExit(version, 0)
      assert.include(version.stdout, "0.1.0")
    }))
})

function hasScript(): boolean {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}
