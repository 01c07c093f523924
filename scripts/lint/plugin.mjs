// effect-mcp's own oxlint rules (a JS plugin: oxlint's `jsPlugins`, ESLint's rule API).
//
// They encode what the style guide asks of the published sources and the layers the
// design promises. Which files a rule applies to is said in .oxlintrc.json (its `overrides`);
// a rule only says what it forbids and what to do instead.
//
//   effect-mcp/no-async-await         `async` functions, `await`, `for await`
//   effect-mcp/no-try                 `try` statements
//   effect-mcp/no-timers              setTimeout / setInterval / setImmediate (and `globalThis.` ones)
//   effect-mcp/no-wall-clock          Date.now(), new Date() without arguments, performance.now()
//   effect-mcp/no-console             console.*
//   effect-mcp/no-barrel-import       `effect`, `@effect/x`, `@effect-mcp/x` barrels (option `allow`)
//   effect-mcp/core-no-platform       node:* / Node built-ins / platform packages, `process`, `Buffer`
//   effect-mcp/transport-no-session   McpSession, McpClientSession, McpServerSession, McpSessionRegistry,
//                                     internal/session/**
//   effect-mcp/roles-apart            McpServer, internal/server/**, McpClient, internal/client/** (option
//                                     `forbid`: ["server"] or ["client"] for the code of the other role)
//
// An import is resolved to the module it names, whichever way it is written: relative
// (`../../McpServer.ts`), or by package (`@effect-mcp/core/McpServer`); so are
// `export … from` and `import()`.
import { builtinModules } from "node:module"
import * as path from "node:path"

// -----------------------------------------------------------------------------
// Imports
// -----------------------------------------------------------------------------

/** Calls `check(sourceNode, specifier)` for every static and dynamic import and re-export. */
const importVisitor = (check) => {
  const fromSource = (node) => {
    if (node.source && typeof node.source.value === "string") check(node.source, node.source.value)
  }
  return {
    ImportDeclaration: fromSource,
    ExportNamedDeclaration: fromSource,
    ExportAllDeclaration: fromSource,
    ImportExpression(node) {
      if (node.source.type === "Literal" && typeof node.source.value === "string") check(node.source, node.source.value)
    }
  }
}

const PACKAGE_FILE = /(?:^|\/)packages\/([^/]+)\/src\/(.+)$/

/**
 * The module an import names, as `<package>:<path under src>` (`core:internal/session/engine.ts`,
 * `core:McpServer.ts`), or `undefined` for anything outside our packages.
 */
const moduleOf = (filename, specifier) => {
  if (specifier.startsWith("./") || specifier.startsWith("../")) {
    const target = path.resolve(path.dirname(filename), specifier).replaceAll("\\", "/")
    const match = PACKAGE_FILE.exec(target)
    return match === null ? undefined : `${match[1]}:${match[2]}`
  }
  const match = /^@effect-mcp\/([^/]+)(?:\/(.+))?$/.exec(specifier)
  if (match === null) return undefined
  return `${match[1]}:${match[2] === undefined ? "index.ts" : `${match[2]}.ts`}`
}

/** A rule forbidding imports of some of our modules: `forbidden` is a list of `[prefix, what]`. */
const forbidModules = ({ description, forbidden, message }) => ({
  meta: { type: "problem", docs: { description }, messages: { forbidden: message }, schema: [] },
  create(context) {
    const filename = context.filename.replaceAll("\\", "/")
    return importVisitor((node, specifier) => {
      const target = moduleOf(filename, specifier)
      if (target === undefined) return
      for (const [prefix, what] of forbidden) {
        if (target === prefix || (prefix.endsWith("/") && target.startsWith(prefix))) {
          context.report({ node, messageId: "forbidden", data: { specifier, what } })
          return
        }
      }
    })
  }
})

// -----------------------------------------------------------------------------
// Style: what the style guide asks of packages/*/src
// -----------------------------------------------------------------------------

const noAsyncAwait = {
  meta: {
    type: "problem",
    docs: { description: "No async functions, await or for await in the published sources" },
    messages: {
      async:
        "No `async` functions under packages/*/src: write an Effect (`Effect.gen`, `Effect.fnUntraced`), and wrap a promise-returning API in `Effect.tryPromise` (or `Effect.promise` when it cannot reject).",
      await:
        "No `await` under packages/*/src: inside `Effect.gen` use `yield*`; turn a promise into an Effect with `Effect.tryPromise` (or `Effect.promise`).",
      forAwait:
        "No `for await` under packages/*/src: consume an async iterable as a `Stream` (`Stream.fromAsyncIterable`) and run it with `Stream.runForEach`."
    },
    schema: []
  },
  create(context) {
    const fn = (node) => {
      if (node.async) context.report({ node, messageId: "async" })
    }
    return {
      FunctionDeclaration: fn,
      FunctionExpression: fn,
      ArrowFunctionExpression: fn,
      AwaitExpression(node) {
        context.report({ node, messageId: "await" })
      },
      ForOfStatement(node) {
        if (node.await) context.report({ node, messageId: "forAwait" })
      }
    }
  }
}

const noTry = {
  meta: {
    type: "problem",
    docs: { description: "No try statements in the published sources" },
    messages: {
      try:
        "No `try` under packages/*/src: failures are values. Use `Effect.try` (or `Result`) around code that throws, `Effect.catch*` to recover, `Effect.ensuring` / `Effect.acquireRelease` for clean-up."
    },
    schema: []
  },
  create(context) {
    return {
      TryStatement(node) {
        context.report({ node, messageId: "try" })
      }
    }
  }
}

const TIMERS = new Set(["setTimeout", "setInterval", "setImmediate"])
const GLOBAL_OBJECTS = new Set(["globalThis", "global", "window", "self"])

/** `true` when `id` names the global: no enclosing scope declares a parameter or a local of its name. */
const isGlobal = (context, id) => {
  for (let scope = context.sourceCode.getScope(id); scope !== null; scope = scope.upper) {
    const variable = scope.set.get(id.name)
    if (variable !== undefined && variable.defs.length > 0) return false
  }
  return true
}

const propertyName = (member) =>
  member.computed
    ? (member.property.type === "Literal" ? member.property.value : undefined)
    : member.property.name

const noTimers = {
  meta: {
    type: "problem",
    docs: { description: "No JavaScript timers in the published sources" },
    messages: {
      timer:
        "No `{{name}}` under packages/*/src: use `Effect.sleep`, `Effect.timeout*`, `Schedule` or `Effect.yieldNow`. They run on Effect's `Clock` (so `TestClock` drives them in tests) and are interrupted with their fiber."
    },
    schema: []
  },
  create(context) {
    const check = (node, callee) => {
      if (callee.type === "Identifier" && TIMERS.has(callee.name) && isGlobal(context, callee)) {
        context.report({ node, messageId: "timer", data: { name: callee.name } })
      } else if (
        callee.type === "MemberExpression" && callee.object.type === "Identifier" &&
        GLOBAL_OBJECTS.has(callee.object.name) && TIMERS.has(propertyName(callee)) && isGlobal(context, callee.object)
      ) {
        context.report({ node, messageId: "timer", data: { name: propertyName(callee) } })
      }
    }
    return {
      CallExpression(node) {
        check(node, node.callee)
      }
    }
  }
}

const noWallClock = {
  meta: {
    type: "problem",
    docs: { description: "No reading of the wall clock in the published sources" },
    messages: {
      now:
        "No `{{what}}` under packages/*/src: read the time from Effect's `Clock` (`Clock.currentTimeMillis`, `Clock.currentTimeNanos`, `DateTime.now`), so that `TestClock` controls it in tests.",
      newDate:
        "No `new Date()` without arguments under packages/*/src: take the time from `Clock.currentTimeMillis` (or `DateTime.now`) and build the date from it: `new Date(millis)`."
    },
    schema: []
  },
  create(context) {
    return {
      CallExpression(node) {
        const callee = node.callee
        if (
          callee.type === "MemberExpression" && callee.object.type === "Identifier" &&
          (callee.object.name === "Date" || callee.object.name === "performance") && propertyName(callee) === "now" &&
          isGlobal(context, callee.object)
        ) {
          context.report({ node, messageId: "now", data: { what: `${callee.object.name}.now()` } })
        }
      },
      NewExpression(node) {
        if (
          node.callee.type === "Identifier" && node.callee.name === "Date" && node.arguments.length === 0 &&
          isGlobal(context, node.callee)
        ) {
          context.report({ node, messageId: "newDate" })
        }
      }
    }
  }
}

const noConsole = {
  meta: {
    type: "problem",
    docs: { description: "No console in the published sources" },
    messages: {
      console:
        "No `console.{{name}}` under packages/*/src: log with `Effect.log*` (the application chooses the `Logger`), or write to the `Console` service (`effect/Console`) when printing is the point."
    },
    schema: []
  },
  create(context) {
    return {
      MemberExpression(node) {
        if (node.object.type === "Identifier" && node.object.name === "console" && isGlobal(context, node.object)) {
          context.report({ node, messageId: "console", data: { name: propertyName(node) ?? "…" } })
        }
      }
    }
  }
}

// -----------------------------------------------------------------------------
// Imports of effect by path
// -----------------------------------------------------------------------------

const BARREL = /^(effect|@effect\/[^/]+|@effect-mcp\/[^/]+)$/

const noBarrelImport = {
  meta: {
    type: "problem",
    docs: { description: "Import Effect's (and our) modules by path, never a package's barrel" },
    messages: {
      barrel:
        "Import the module by its path (`import * as Effect from \"effect/Effect\"`, `import * as McpServer from \"@effect-mcp/core/McpServer\"`), not the barrel `{{specifier}}`: a barrel loads every module of the package at start-up."
    },
    schema: [{
      type: "object",
      properties: { allow: { type: "array", items: { type: "string" } } },
      additionalProperties: false
    }]
  },
  create(context) {
    const allow = new Set(context.options[0]?.allow ?? [])
    return importVisitor((node, specifier) => {
      if (BARREL.test(specifier) && !allow.has(specifier)) {
        context.report({ node, messageId: "barrel", data: { specifier } })
      }
    })
  }
}

// -----------------------------------------------------------------------------
// Layers
// -----------------------------------------------------------------------------

const NODE_BUILTINS = new Set(builtinModules)
const PLATFORM = /^(node:|bun(:|$)|deno(:|$)|@effect\/platform-|@effect-mcp\/(?!core(\/|$)))/

const coreNoPlatform = {
  meta: {
    type: "problem",
    docs: { description: "@effect-mcp/core imports nothing from a platform" },
    messages: {
      import:
        "@effect-mcp/core runs on every runtime and imports no platform: not `{{specifier}}`. Use a Web API (fetch, URL, crypto.subtle, TextEncoder, streams) or an Effect service the platform package provides (a `Context.Service` in core, its layer in @effect-mcp/platform-node).",
      global:
        "@effect-mcp/core runs on every runtime: no `{{name}}` (a Node global). Use a Web API (`Uint8Array`, `TextEncoder`, …) or take the value as an option or a service provided by the platform package."
    },
    schema: []
  },
  create(context) {
    return {
      ...importVisitor((node, specifier) => {
        if (PLATFORM.test(specifier) || NODE_BUILTINS.has(specifier)) {
          context.report({ node, messageId: "import", data: { specifier } })
        }
      }),
      MemberExpression(node) {
        if (
          node.object.type === "Identifier" && (node.object.name === "process" || node.object.name === "Buffer") &&
          isGlobal(context, node.object)
        ) {
          context.report({ node, messageId: "global", data: { name: node.object.name } })
        }
      }
    }
  }
}

const transportNoSession = forbidModules({
  description: "A transport knows no session",
  forbidden: [
    ["core:McpSession.ts", "the session"],
    ["core:McpClientSession.ts", "the client's session"],
    ["core:McpServerSession.ts", "the server's session"],
    ["core:McpSessionRegistry.ts", "the session registry"],
    ["core:internal/session/", "the session engine"]
  ],
  message:
    "A transport knows no session: `{{specifier}}` is {{what}}. A transport only moves JSON-RPC messages (`McpTransport`: `incoming` stream, `send`); put what the session and the transport share below both (McpTransport.ts, internal/transport/) and let the session use it."
})

const ROLES = {
  server: [["core:McpServer.ts", "the server"], ["core:internal/server/", "the server"]],
  client: [["core:McpClient.ts", "the client"], ["core:internal/client/", "the client"]]
}

const rolesApart = {
  meta: {
    type: "problem",
    docs: { description: "The server and the client stay apart; the code both share imports neither" },
    messages: {
      shared:
        "internal/task, internal/session and internal/era are shared by the server and the client, so they import neither: `{{specifier}}` is {{what}}. Define the type or helper here (or in a module of neither role, such as McpTaskStore or McpSession) and have the role reuse it; code of one role only belongs in internal/server/ or internal/client/.",
      role:
        "The server and the client stay apart: `{{specifier}}` is {{what}}. Move what both need to a module of neither role (internal/task, internal/session, internal/era, or a public module such as McpSession) and import it from there."
    },
    schema: [{
      type: "object",
      properties: { forbid: { type: "array", items: { enum: ["server", "client"] } } },
      additionalProperties: false
    }]
  },
  create(context) {
    const forbid = context.options[0]?.forbid ?? ["server", "client"]
    const messageId = forbid.length === 2 ? "shared" : "role"
    const forbidden = forbid.flatMap((role) => ROLES[role])
    const filename = context.filename.replaceAll("\\", "/")
    return importVisitor((node, specifier) => {
      const target = moduleOf(filename, specifier)
      if (target === undefined) return
      const found = forbidden.find(([prefix]) =>
        target === prefix || (prefix.endsWith("/") && target.startsWith(prefix))
      )
      if (found !== undefined) context.report({ node, messageId, data: { specifier, what: found[1] } })
    })
  }
}

export default {
  meta: { name: "effect-mcp" },
  rules: {
    "no-async-await": noAsyncAwait,
    "no-try": noTry,
    "no-timers": noTimers,
    "no-wall-clock": noWallClock,
    "no-console": noConsole,
    "no-barrel-import": noBarrelImport,
    "core-no-platform": coreNoPlatform,
    "transport-no-session": transportNoSession,
    "roles-apart": rolesApart
  }
}
