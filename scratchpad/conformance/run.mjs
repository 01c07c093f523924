#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, the
// devDependency, via node_modules/.bin/conformance) against our server and our client, and
// the next one (@modelcontextprotocol/conformance-next, an alias of 0.2.0-alpha.12, run as
// its dist/index.js) against our server and our client:
//
//   npm run conformance [-- --only WHAT] [--out DIR] [--json FILE] [--server-url URL]
//
//   --only server       the 0.1.16 server suite (1.) alone
//   --only server-next  the alpha.12 `--requirements` runs (2.) alone, both revisions;
//                       --only server@2026-07-28 / server@2025-11-25 runs one of them
//   --only server-tasks the alpha.12 tasks-* scenarios (2b.) alone
//   --only server-skills the alpha.12 sep-2640-skills-* server scenarios (2c.) alone
//   --only gateway      the server runs (1., 2., 2b.) against the gateway (5.), the three ways;
//                       --only gateway@modern / gateway@legacy / gateway@auto one of them
//   --only server-bun   the alpha.12 `--requirements 2026-07-28` run (2.) against the web handler on Bun (6.)
//   --only server-deno  the same on Deno (6.)
//   --only server-workerd the same against the web handler as a Cloudflare Worker on workerd (7.)
//   --only client       the client scenarios (3.) alone
//   --only client-next  the alpha.12 client `--requirements 2026-07-28` scenarios (4.) alone
//   --only client-skills the alpha.12 sep-2640-client-* scenarios (4b.) alone
//   (none: everything, in that order; any other value counts one failure)
//
// 1. server: starts scratchpad/conformance/server.ts on http://127.0.0.1:<ephemeral>/mcp and
//    runs `conformance server --suite all` against it (or against --server-url, not started here);
// 2. server@REVISION, for REVISION 2026-07-28 and 2025-11-25: a fresh server (or --server-url)
//    and alpha.12's `server --requirements REVISION -o <out>/server-REVISION`. The scenarios
//    that `list --server --requirements REVISION` names under "Server scenarios" are scored;
//    the ones it names under "Run and reported, but never scored" (extension, pending,
//    added-after-release: the tasks-* extension for 2026-07-28, ...) run too and get a summary
//    line marked "(not scored: CATEGORY)", but count in no total (their checks stay in the
//    out dir); a scenario in neither list is scored; the tasks-* ones of 2b. are never
//    scored here (marked "(not scored: scored in server@tasks)" while 2b. scores them);
// 2b. server@tasks: the ten tasks-* scenarios of the io.modelcontextprotocol/tasks extension
//    (TASK_SCENARIOS; "extension", so never scored by --requirements), each run by name against
//    one fresh server (or --server-url): `server --url URL --scenario NAME -o <out>/server-tasks`
//    (at the 2026-07-28 wire). Scored unless CONFORMANCE_SCORE_TASKS=0 (then run and reported
//    as "(not scored: CONFORMANCE_SCORE_TASKS=0)", counting in no total). tasks-status-notifications
//    is a placeholder upstream (one SKIPPED check): listed as 0 passed, 0 failed, no failure;
// 2c. server@skills: the three server scenarios of the io.modelcontextprotocol/skills extension
//    (SKILLS_SCENARIOS, SEP-2640; "pending", so never scored by --requirements), each run by name
//    against one fresh server (or --server-url), as 2b. runs the tasks-* ones; always scored (the
//    fixture serves the skills of scratchpad/conformance/skills.ts); in 2. they are marked
//    "(not scored: scored in server@skills)";
// 3. client: the client `--suite all` (26 scenarios in 0.1.16, every `auth/*` one included;
//    the list comes from `conformance list --client`), with scratchpad/conformance/client.ts
//    (our McpClient + NodeMcpHttpClient + NodeMcpOAuth) as the command: every scenario but
//    sse-retry as `conformance client --scenario X`, CLIENT_CONCURRENCY at a time, then
//    sse-retry alone (its check measures the reconnection delay: 450–700 ms, load-sensitive);
// 4. client@2026-07-28: the scenarios of alpha.12's `list --client --requirements 2026-07-28`
//    (client.ts again as the command), each as `client --scenario X --spec-version 2026-07-28
//    --force`, which is how `client --requirements 2026-07-28` runs them (the same mocks, the
//    same checks), CLIENT_CONCURRENCY at a time rather than all at once (a client that takes
//    its 30 s to start on a busy machine fails its checks). Scored and unscored scenarios as
//    in 2.; scored as `--requirements` scores them: by their checks alone (a WARNING does not
//    fail, nor does the client's exit code or timeout; a runner we had to kill does).
// 4b. client@skills: the four client scenarios of the skills extension (SKILLS_CLIENT_SCENARIOS,
//    SEP-2640: no prefetch, verify digest, size and frontmatter), run as 4. runs its scenarios
//    (client.ts, `--spec-version 2026-07-28 --force`) and scored as 4. scores them; in 4. they are
//    marked "(not scored: scored in client@skills)";
// 5. gateway@ERA, for ERA modern, legacy and auto: the server runs 1., 2. and 2b. again, each
//    against a fresh scratchpad/conformance/gateway.ts (McpGateway over Streamable HTTP on
//    127.0.0.1, in front of server.ts --stdio, whose era the gateway's group pins, or probes
//    with auto); the rows are those of 1., 2. and 2b., their mode prefixed `gateway@ERA `.
// 6. bun / deno: the run 2. for 2026-07-28 against a fresh scratchpad/runtimes/conformance-server.ts
//    (the same fixture, McpHttpServer.toWebHandler on Bun.serve / Deno.serve, 127.0.0.1), run by the
//    binary of the `bun` / `deno` devDependency with the `development` condition (Deno with
//    --allow-net=127.0.0.1 and --allow-env=LOG_TOKENS,LOG_STREAM, which the `yaml` package of the
//    skills reads); the rows are those of 2., their mode prefixed `bun ` / `deno `. A binary that
//    is missing fails the run (the server does not start), it is never skipped.
// 7. workerd: the run 2. for 2026-07-28 against scratchpad/runtimes/workerd-conformance.ts (the same
//    fixture as a Cloudflare Worker: makeWorker of worker.ts, the legacy era stateless), bundled and
//    served on workerd by scratchpad/runtimes/workerd-serve.ts (rolldown with every Node built-in an
//    error, then miniflare on 127.0.0.1, no nodejs_compat; our packages from their dist/); the rows
//    are those of 2., their mode prefixed `workerd `. workerd failing to start fails the run.
//
// Everything binds 127.0.0.1: our server by its own option, the runner's mock servers through
// loopback.cjs (preloaded into the runner). Needs Node >= 22 (the runner does); `npm run` uses
// the node@22 devDependency.
//
// Output: the runner's own output for the server runs; for the client scenarios one line
// each as they end (the runner's output is kept in <out>/client/<scenario>/runner.log, or
// <out>/client@2026-07-28/..., the client's stdout/stderr next to its checks.json); then one
// line per scenario, a subtotal per run (server, server@REVISION, server@tasks, server@skills, client, client@2026-07-28, client@skills), and a closing `N passed, N failed`, counting CHECKS
// (checks.json of every scored scenario): SUCCESS passes; FAILURE fails; in client runs a
// WARNING fails too (the runner fails a client run on one), but not in client@2026-07-28.
// A scenario with no pass/fail check at all counts as one failure (the runner reports such
// a scenario as passed; server-sse-polling is one for the official SDK's server, which sends
// no priming event to the scenario's 2025-03-26 requests, while ours passes its 3 checks). A
// runner that exits non-zero or times out without a failing check counts one failure (in
// client@2026-07-28 only one that times out); so
// does a listed (scored) server scenario that left no results. --json FILE writes the tally as
// {passed, failed, warnings, scenarios: [...]} (an unscored row has `notScored: CATEGORY`).
// Exit 0 iff nothing failed.
import { spawn, spawnSync } from "node:child_process"
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..")
const conformance = join(root, "node_modules", ".bin", "conformance")
const conformanceNext = join(root, "node_modules", "@modelcontextprotocol", "conformance-next", "dist", "index.js")
const loopback = join(here, "loopback.cjs")
const node = process.execPath

/** Run alone, after the others: its check times the client's reconnection. */
const TIMING_SCENARIO = "sse-retry"
const CLIENT_CONCURRENCY = 4
const SERVER_SUITE_TIMEOUT_MS = 300_000
const CLIENT_SCENARIO_TIMEOUT_MS = 120_000
const SERVER_START_TIMEOUT_MS = 30_000
/** The spec revisions of the alpha.12 `server --requirements` runs. */
const REQUIREMENTS = ["2026-07-28", "2025-11-25"]
/** The spec revision of the alpha.12 `client --requirements` run. */
const CLIENT_REQUIREMENTS = "2026-07-28"
/** The scenarios of the tasks extension (SEP-2663), run by name in server@tasks. */
const TASK_SCENARIOS = [
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-status-notifications",
  "tasks-required-task-error",
  "tasks-mrtr-composition"
]
/** The server scenarios of the skills extension (SEP-2640), run by name in server@skills. */
const SKILLS_SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
/** The client scenarios of the skills extension (SEP-2640), run by name in client@skills. */
const SKILLS_CLIENT_SCENARIOS = [
  "sep-2640-client-no-prefetch",
  "sep-2640-client-verify-digest",
  "sep-2640-client-verify-size",
  "sep-2640-client-verify-frontmatter"
]
/** Placeholders upstream: only SKIPPED checks, which count 0/0 here rather than one failure. */
const EXPECTED_EMPTY = new Set(["tasks-status-notifications"])
/** Whether server@tasks counts in the totals: on unless CONFORMANCE_SCORE_TASKS=0. */
const SCORE_TASKS = process.env.CONFORMANCE_SCORE_TASKS !== "0"
const TASK_SCENARIO_TIMEOUT_MS = 120_000
/** The eras of the server behind the gateway (5.): pinned, or probed. */
const GATEWAY_ERAS = ["modern", "legacy", "auto"]
/** The runtimes of 6. */
const RUNTIMES = ["bun", "deno"]
const ONLY_VALUES = [
  "server",
  "server-next",
  ...REQUIREMENTS.map((revision) => `server@${revision}`),
  "server-tasks",
  "server-skills",
  "gateway",
  ...GATEWAY_ERAS.map((era) => `gateway@${era}`),
  ...RUNTIMES.map((runtime) => `server-${runtime}`),
  "server-workerd",
  "client",
  "client-next",
  "client-skills"
]

/** What a server run starts: our server, or the gateway in front of it (5.). */
const DIRECT = { label: "", dir: "", script: "server.ts", args: [] }
const gatewayTarget = (era) => ({
  label: `gateway@${era} `,
  dir: `gateway-${era}`,
  script: "gateway.ts",
  args: ["--era", era]
})
/** The web handler on Bun's or Deno's own server (6.): `command` and its whole argument list. */
const runtimeTarget = (runtime) => {
  const entry = join(here, "..", "runtimes", "conformance-server.ts")
  const dir = join(root, "node_modules", runtime)
  const manifest = join(dir, "package.json")
  const command = runtime === "bun"
    ? join(dir, existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).bin.bun : "bin/bun.exe")
    : join(dir, process.platform === "win32" ? "deno.exe" : "deno")
  const args = runtime === "bun"
    ? ["--no-install", "--conditions=development", entry]
    : [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      "--allow-env=LOG_TOKENS,LOG_STREAM",
      "--unstable-no-legacy-abort",
      "--node-modules-dir=manual",
      "--conditions=development",
      entry
    ]
  return { label: `${runtime} `, dir: `server-${runtime}`, command, args, runtime }
}

/** The web handler as a Cloudflare Worker on workerd (7.), bundled and served by workerd-serve.ts. */
const workerdTarget = () => ({
  label: "workerd ",
  dir: "server-workerd",
  command: node,
  args: ["--conditions=development", join(here, "..", "runtimes", "workerd-serve.ts")],
  runtime: "workerd"
})

// ---------------------------------------------------------------------------
// arguments
// ---------------------------------------------------------------------------

const argv = process.argv.slice(2)
const option = (name) => {
  const index = argv.indexOf(name)
  return index >= 0 ? argv[index + 1] : undefined
}
const only = option("--only")
const jsonFile = option("--json")
const serverUrl = option("--server-url")
const out = option("--out") ?? mkdtempSync(join(tmpdir(), "effect-mcp-conformance-"))
mkdirSync(out, { recursive: true })

const log = (line) => process.stdout.write(`${line}\n`)

const finish = (tally) => {
  if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify(tally, null, 2))
  log(`${tally.passed} passed, ${tally.failed} failed`)
  process.exit(tally.failed === 0 ? 0 : 1)
}

const major = Number(process.versions.node.split(".")[0])
if (major < 22 || !existsSync(conformance)) {
  log(
    major < 22
      ? `conformance: the runner needs Node >= 22, this is ${process.version} (use npm run conformance)`
      : `conformance: ${conformance} is missing (npm ci)`
  )
  finish({ passed: 0, failed: 1, warnings: 0, scenarios: [] })
}

// ---------------------------------------------------------------------------
// processes
// ---------------------------------------------------------------------------

/**
 * Runs a command to its end, killed (whole group) after `timeoutMs`. Its output is passed
 * through, or written to the file `logFile` (the client scenarios run several at a time).
 */
const runBounded = (args, timeoutMs, logFile) =>
  new Promise((resolve) => {
    const output = logFile === undefined ? "inherit" : openSync(logFile, "w")
    const child = spawn(node, args, { cwd: root, stdio: ["ignore", output, output], detached: true })
    if (typeof output === "number") closeSync(output)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child, "SIGKILL")
    }, timeoutMs)
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? 1, signal, timedOut })
    })
  })

const killGroup = (child, signal) => {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

const runner = (args, timeoutMs, logFile, cli = conformance) =>
  runBounded(["--require", loopback, cli, ...args], timeoutMs, logFile)

/** Starts our HTTP server (or the gateway) on an ephemeral port; resolves with its URL and process. */
const startServer = (target) =>
  new Promise((resolve, reject) => {
    const child = target.command !== undefined
      ? spawn(target.command, target.args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], detached: true })
      : spawn(
        node,
        ["--conditions=development", join(here, target.script), "--port", "0", "--host", "127.0.0.1", ...target.args],
        { cwd: root, stdio: ["ignore", "pipe", "pipe"], detached: true }
      )
    let seen = ""
    const timer = setTimeout(() => {
      killGroup(child, "SIGKILL")
      reject(new Error(`the server did not report its URL within ${SERVER_START_TIMEOUT_MS} ms:\n${seen}`))
    }, SERVER_START_TIMEOUT_MS)
    const onData = (chunk) => {
      const text = chunk.toString()
      process.stderr.write(text.replace(/^/gm, "[server] "))
      if (seen.length < 100_000) seen += text
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ url: match[1], child })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the server exited (${signal ?? code}) before listening:\n${seen}`))
    })
    // a binary that is not there (6.): the server did not start
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(new Error(`the server could not be started: ${error.message}`))
    })
  })

const stopServer = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    killGroup(child, "SIGTERM")
  })

// ---------------------------------------------------------------------------
// counting
// ---------------------------------------------------------------------------

/** Every checks.json under `dir`, by scenario name (the runner's dir name minus its timestamp). */
const readScenarios = (dir, prefix) => {
  const found = []
  const walk = (current) => {
    if (!existsSync(current)) return
    for (const entry of readdirSync(current)) {
      const path = join(current, entry)
      if (statSync(path).isDirectory()) walk(path)
      else if (entry === "checks.json") {
        const name = relative(dir, current)
          .replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, "")
          .replace(prefix, "")
        found.push({ name, checks: JSON.parse(readFileSync(path, "utf8")) })
      }
    }
  }
  walk(dir)
  return found
}

const tallyScenario = (mode, name, checks) => {
  const count = (status) => checks.filter((check) => check.status === status).length
  const passed = count("SUCCESS")
  const failures = checks.filter((check) =>
    check.status === "FAILURE" || (mode === "client" && check.status === "WARNING")
  )
  const warnings = count("WARNING")
  const empty = passed + count("FAILURE") === 0
  const notes = failures.map((check) =>
    `${check.id}: ${check.errorMessage ?? check.details?.message ?? check.description}`
  )
  let failed = failures.length
  if (empty) {
    failed += 1
    notes.push("no pass/fail check at all (counted as a failure)")
  }
  return { mode, scenario: name, passed, failed, warnings, empty, notes }
}

const tally = { passed: 0, failed: 0, warnings: 0, scenarios: [] }
const add = (row) => {
  tally.scenarios.push(row)
  tally.passed += row.passed
  tally.failed += row.failed
  tally.warnings += row.warnings
}

/** A scenario that ran but is not scored (`notScored`: extension, pending, ...): listed, never counted. */
const report = (row, notScored) => tally.scenarios.push({ ...row, notScored })

/** One failure that no check recorded (the runner failed, a scenario left nothing). */
const problem = (mode, scenario, note) =>
  add({ mode, scenario, passed: 0, failed: 1, warnings: 0, empty: true, notes: [note] })

const runnerProblem = (result) =>
  result.timedOut
    ? "the runner timed out"
    : result.code !== 0
    ? `the runner exited ${result.signal ?? result.code}`
    : undefined

// ---------------------------------------------------------------------------
// server suite
// ---------------------------------------------------------------------------

const serverScenarioNames = () => {
  const listed = spawnSync(node, [conformance, "list", "--server"], { cwd: root, encoding: "utf8", timeout: 60_000 })
  return [...(listed.stdout ?? "").matchAll(/^\s+- (\S+)/gm)].map((match) => match[1])
}

/** Runs `use(url)` against a server of ours started for it (stopped after), or --server-url. */
const withServer = async (mode, use, target = DIRECT) => {
  if (serverUrl !== undefined && target === DIRECT) return use(serverUrl)
  let server
  try {
    server = await startServer(target)
  } catch (error) {
    log(String(error.message ?? error))
    return problem(mode, "(server start)", "our server did not start")
  }
  try {
    await use(server.url)
  } finally {
    await stopServer(server.child)
  }
}

const serverSuite = async (target = DIRECT) => {
  const mode = `${target.label}server`
  log(`=== conformance: ${mode}, --suite all ===`)
  const dir = join(out, target.dir, "server")
  await withServer(mode, async (url) => {
    const result = await runner(["server", "--url", url, "--suite", "all", "-o", dir], SERVER_SUITE_TIMEOUT_MS)
    const found = readScenarios(dir, /^server-/)
    const rows = found.map(({ name, checks }) => tallyScenario(mode, name, checks))
    for (const row of rows) add(row)
    for (const name of serverScenarioNames()) {
      if (!found.some((scenario) => scenario.name === name)) problem(mode, name, "no results (scenario did not run)")
    }
    const failure = runnerProblem(result)
    if (failure !== undefined && !rows.some((row) => row.failed > 0)) problem(mode, "(runner)", failure)
  }, target)
}

// ---------------------------------------------------------------------------
// server, alpha.12 --requirements REVISION
// ---------------------------------------------------------------------------

/**
 * `list --server|--client --requirements REVISION` of alpha.12: the scored scenarios of
 * `side` (the "Server scenarios" or "Client scenarios" section) and the unscored ones ("Run
 * and reported, but never scored", by category heading, e.g. `  extension (16):` then
 * `    - tasks-lifecycle [server]`).
 */
const nextScenarioNames = (side, revision) => {
  const listed = spawnSync(node, [conformanceNext, "list", `--${side}`, "--requirements", revision], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000
  })
  const scored = []
  const unscored = new Map()
  let section
  let category = "not scored"
  for (const line of (listed.stdout ?? "").split("\n")) {
    const heading = /^\s+([\w -]+?) \(\d+\):\s*$/.exec(line)
    const item = /^\s+- (\S+)(?:\s+\[(\w+)\])?/.exec(line)
    if (/^Server scenarios/.test(line)) section = "server"
    else if (/^Client scenarios/.test(line)) section = "client"
    else if (/^Run and reported, but never scored/.test(line)) section = "unscored"
    else if (/^\S/.test(line)) section = undefined
    else if (heading !== null) category = heading[1]
    else if (item === null) continue
    else if (section === side) scored.push(item[1])
    else if (section === "unscored" && (item[2] === undefined || item[2] === side)) unscored.set(item[1], category)
  }
  return { scored, unscored }
}

const nextServerRun = async (revision, target = DIRECT) => {
  const mode = `${target.label}server@${revision}`
  log(`=== conformance: ${mode} (0.2.0-alpha.12, server --requirements ${revision}) ===`)
  if (!existsSync(conformanceNext)) return problem(mode, "(runner)", `${conformanceNext} is missing (npm ci)`)
  const { scored, unscored } = nextScenarioNames("server", revision)
  if (scored.length === 0) {
    return problem(mode, "(list)", `\`list --server --requirements ${revision}\` listed no server scenario`)
  }
  const dir = join(out, target.dir, `server-${revision}`)
  await withServer(mode, async (url) => {
    const result = await runner(
      ["server", "--url", url, "--requirements", revision, "-o", dir],
      SERVER_SUITE_TIMEOUT_MS,
      undefined,
      conformanceNext
    )
    const found = readScenarios(dir, /^server-/)
    const rows = []
    // the tasks-* ones count in server@tasks alone
    const notScored = (name) =>
      SCORE_TASKS && TASK_SCENARIOS.includes(name) && target.runtime === undefined
        ? "scored in server@tasks"
        : SKILLS_SCENARIOS.includes(name) && target === DIRECT
        ? "scored in server@skills"
        : unscored.get(name)
    for (const { name, checks } of found) {
      const row = tallyScenario(mode, name, checks)
      // unscored: shown as the runner counts it (a scenario with only SKIPPED checks is no failure)
      if (notScored(name) !== undefined) report({ ...row, failed: row.failed - (row.empty ? 1 : 0) }, notScored(name))
      else {
        add(row)
        rows.push(row)
      }
    }
    for (const name of scored) {
      if (notScored(name) !== undefined) continue
      if (!found.some((scenario) => scenario.name === name)) problem(mode, name, "no results (scenario did not run)")
    }
    const failure = runnerProblem(result)
    if (failure !== undefined && !rows.some((row) => row.failed > 0)) problem(mode, "(runner)", failure)
  }, target)
}

// ---------------------------------------------------------------------------
// server, alpha.12 tasks-* scenarios by name
// ---------------------------------------------------------------------------

const tasksRun = async (target = DIRECT) => {
  const mode = `${target.label}server@tasks`
  const scoring = SCORE_TASKS ? "scored" : "not scored: CONFORMANCE_SCORE_TASKS=0"
  log(
    `=== conformance: ${mode} (0.2.0-alpha.12, server --scenario NAME, ${TASK_SCENARIOS.length} scenarios, ${scoring}) ===`
  )
  const count = (row) => SCORE_TASKS ? add(row) : report(row, "CONFORMANCE_SCORE_TASKS=0")
  await scenariosByName(mode, TASK_SCENARIOS, join(out, target.dir, "server-tasks"), count, target)
}

// ---------------------------------------------------------------------------
// server, alpha.12 sep-2640-skills-* scenarios by name
// ---------------------------------------------------------------------------

const skillsRun = async () => {
  const mode = "server@skills"
  log(`=== conformance: ${mode} (0.2.0-alpha.12, server --scenario NAME, ${SKILLS_SCENARIOS.length} scenarios) ===`)
  await scenariosByName(mode, SKILLS_SCENARIOS, join(out, "server-skills"), add, DIRECT)
}

/** Runs each of `names` by name against one fresh server (alpha.12), each row to `count`. */
const scenariosByName = async (mode, names, dir, count, target) => {
  if (!existsSync(conformanceNext)) return count(failureRow(mode, "(runner)", `${conformanceNext} is missing (npm ci)`))
  await withServer(mode, async (url) => {
    for (const name of names) {
      log(`--- ${mode}: ${name} ---`)
      const result = await runner(
        ["server", "--url", url, "--scenario", name, "-o", dir],
        TASK_SCENARIO_TIMEOUT_MS,
        undefined,
        conformanceNext
      )
      const found = readScenarios(dir, /^server-/).filter((scenario) => scenario.name === name)
      const rows = found.map(({ checks }) => {
        const row = tallyScenario(mode, name, checks)
        if (!(row.empty && EXPECTED_EMPTY.has(name))) return row
        const skipped = checks.filter((check) => check.status === "SKIPPED").length
        return {
          ...row,
          failed: row.failed - 1,
          notes: [`placeholder upstream: ${skipped} SKIPPED check(s), nothing to pass`]
        }
      })
      if (rows.length === 0) rows.push(failureRow(mode, name, "no results (scenario did not run)"))
      const failure = runnerProblem(result)
      // the runner exits non-zero on a failing check; only a failure no check recorded counts
      if (failure !== undefined && !rows.some((row) => row.failed > 0) && !EXPECTED_EMPTY.has(name)) {
        rows.push(failureRow(mode, name, failure))
      }
      for (const row of rows) count(row)
    }
  }, target)
}

const failureRow = (mode, scenario, note) => ({
  mode,
  scenario,
  passed: 0,
  failed: 1,
  warnings: 0,
  empty: true,
  notes: [note]
})

// ---------------------------------------------------------------------------
// client scenarios
// ---------------------------------------------------------------------------

const clientScenarioNames = () => {
  const listed = spawnSync(node, [conformance, "list", "--client"], { cwd: root, encoding: "utf8", timeout: 60_000 })
  return [...(listed.stdout ?? "").matchAll(/^\s+- (\S+)/gm)].map((match) => match[1])
}

/**
 * Runs one client scenario: with 0.1.16 (mode `client`), or with alpha.12 at `revision`
 * (`client --scenario X --spec-version REVISION --force`, as `--requirements` runs it).
 */
const clientScenario = async (scenario, revision, label) => {
  const mode = label ?? (revision === undefined ? "client" : `client@${revision}`)
  // the runner splits this on spaces and runs it with a shell, the server URL appended
  const command = `${node} --conditions=development ${join(here, "client.ts")}`
  const dir = join(out, mode, scenario.replace(/\//g, "_"))
  mkdirSync(dir, { recursive: true })
  const logFile = join(dir, "runner.log")
  const started = performance.now()
  const result = await runner(
    [
      "client",
      "--command",
      command,
      "--scenario",
      scenario,
      ...(revision === undefined ? [] : ["--spec-version", revision, "--force"]),
      "--timeout",
      "30000",
      "-o",
      dir
    ],
    CLIENT_SCENARIO_TIMEOUT_MS,
    logFile,
    revision === undefined ? conformance : conformanceNext
  )
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const runnerLog = readFileSync(logFile, "utf8")
  const verdict = /Passed: .*$/m.exec(runnerLog)?.[0] ?? "no result line"
  log(`  ${scenario}: ${verdict} (${seconds} s; runner output in ${logFile})`)
  const found = readScenarios(dir, /^$/)
  const rows = found.map(({ checks }) => tallyScenario(mode, scenario, checks))
  if (rows.length === 0) rows.push(tallyScenario(mode, scenario, []))
  // --requirements scores the checks alone: of the runner, only a run we had to kill counts
  const failure = revision === undefined || result.timedOut ? runnerProblem(result) : undefined
  if (failure !== undefined && !rows.some((row) => row.failed > 0)) {
    rows.push({ mode, scenario, passed: 0, failed: 1, warnings: 0, empty: true, notes: [failure] })
  }
  return rows
}

/** Runs `each` over `names`, CLIENT_CONCURRENCY at a time; resolves with the results by name. */
const pool = async (names, each) => {
  const results = new Map()
  let next = 0
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]
      results.set(name, await each(name))
    }
  }
  await Promise.all(Array.from({ length: Math.min(CLIENT_CONCURRENCY, names.length) }, worker))
  return results
}

const clientScenarios = async () => {
  const names = clientScenarioNames()
  if (names.length === 0) return problem("client", "(list)", "`conformance list --client` listed no scenario")
  const others = names.filter((name) => name !== TIMING_SCENARIO)
  log(`=== conformance: client, --suite all (${names.length} scenarios; ${TIMING_SCENARIO} alone at the end) ===`)
  // rows are added in list order
  const results = await pool(others, (scenario) => clientScenario(scenario))
  for (const name of others) for (const row of results.get(name) ?? []) add(row)
  if (names.includes(TIMING_SCENARIO)) {
    log(`=== conformance: client, ${TIMING_SCENARIO} (alone) ===`)
    for (const row of await clientScenario(TIMING_SCENARIO)) add(row)
  }
}

// ---------------------------------------------------------------------------
// client, alpha.12 --requirements 2026-07-28
// ---------------------------------------------------------------------------

const nextClientRun = async (revision) => {
  const mode = `client@${revision}`
  if (!existsSync(conformanceNext)) return problem(mode, "(runner)", `${conformanceNext} is missing (npm ci)`)
  const { scored, unscored } = nextScenarioNames("client", revision)
  if (scored.length === 0) {
    return problem(mode, "(list)", `\`list --client --requirements ${revision}\` listed no client scenario`)
  }
  const names = [...scored, ...unscored.keys()]
  log(`=== conformance: ${mode} (0.2.0-alpha.12, client --requirements ${revision}: ${names.length} scenarios) ===`)
  const results = await pool(names, (scenario) => clientScenario(scenario, revision))
  for (const name of names) {
    for (const row of results.get(name) ?? []) {
      // unscored: shown as the runner counts it (a scenario with only SKIPPED checks is no failure)
      if (SKILLS_CLIENT_SCENARIOS.includes(name)) report(row, "scored in client@skills")
      else if (unscored.has(name)) report({ ...row, failed: row.failed - (row.empty ? 1 : 0) }, unscored.get(name))
      else add(row)
    }
  }
}

// ---------------------------------------------------------------------------
// client, alpha.12 sep-2640-client-* scenarios by name
// ---------------------------------------------------------------------------

const skillsClientRun = async () => {
  const mode = "client@skills"
  if (!existsSync(conformanceNext)) return problem(mode, "(runner)", `${conformanceNext} is missing (npm ci)`)
  log(
    `=== conformance: ${mode} (0.2.0-alpha.12, client --scenario NAME, ${SKILLS_CLIENT_SCENARIOS.length} scenarios) ===`
  )
  const results = await pool(SKILLS_CLIENT_SCENARIOS, (scenario) => clientScenario(scenario, CLIENT_REQUIREMENTS, mode))
  for (const name of SKILLS_CLIENT_SCENARIOS) for (const row of results.get(name) ?? []) add(row)
}

// ---------------------------------------------------------------------------

if (only !== undefined && !ONLY_VALUES.includes(only)) {
  problem("(arguments)", `--only ${only}`, `unknown --only value (one of: ${ONLY_VALUES.join(", ")})`)
}
if (only === undefined || only === "server") await serverSuite()
for (const revision of REQUIREMENTS) {
  if (only === undefined || only === "server-next" || only === `server@${revision}`) await nextServerRun(revision)
}
if (only === undefined || only === "server-tasks") await tasksRun()
if (only === undefined || only === "server-skills") await skillsRun()
for (const era of GATEWAY_ERAS) {
  if (only !== undefined && only !== "gateway" && only !== `gateway@${era}`) continue
  const target = gatewayTarget(era)
  await serverSuite(target)
  for (const revision of REQUIREMENTS) await nextServerRun(revision, target)
  await tasksRun(target)
}
for (const runtime of RUNTIMES) {
  if (only === undefined || only === `server-${runtime}`) await nextServerRun("2026-07-28", runtimeTarget(runtime))
}
if (only === undefined || only === "server-workerd") await nextServerRun("2026-07-28", workerdTarget())
if (only === undefined || only === "client") await clientScenarios()
if (only === undefined || only === "client-next") await nextClientRun(CLIENT_REQUIREMENTS)
if (only === undefined || only === "client-skills") await skillsClientRun()

log(`=== conformance summary (results in ${out}) ===`)
for (const row of tally.scenarios) {
  const mark = row.failed > 0 ? "✗" : "✓"
  const warnings = row.warnings > 0 ? `, ${row.warnings} warnings` : ""
  const scoring = row.notScored === undefined ? "" : ` (not scored: ${row.notScored})`
  log(`${mark} ${row.mode} ${row.scenario}: ${row.passed} passed, ${row.failed} failed${warnings}${scoring}`)
  // an unscored scenario's failures are its own business (its checks.json is in the out dir)
  if (row.notScored === undefined) { for (const note of row.notes) log(`    - ${note.slice(0, 300)}`) }
}
const modes = [...new Set(tally.scenarios.map((row) => row.mode))]
for (const mode of modes) {
  const rows = tally.scenarios.filter((row) => row.mode === mode && row.notScored === undefined)
  const unscored = tally.scenarios.filter((row) => row.mode === mode && row.notScored !== undefined)
  const sum = (list, key) => list.reduce((total, row) => total + row[key], 0)
  const extra = unscored.length === 0
    ? ""
    : `; not scored: ${unscored.length} scenarios, ${sum(unscored, "passed")} passed, ${sum(unscored, "failed")} failed`
  log(`${mode}: ${rows.length} scenarios, ${sum(rows, "passed")} passed, ${sum(rows, "failed")} failed${extra}`)
}
finish(tally)
