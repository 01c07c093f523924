// Checks the JSDoc of the public modules, which the API reference
// (`npm run docs:api`) is generated from:
//
// - every module has a header comment (its page's intro), and every export
//   (function, const, class, enum, interface, type alias, namespace, and the
//   members of an exported namespace) has a summary: the first paragraph of
//   its JSDoc is not empty. The members of interfaces and classes are not
//   checked. Exports tagged `@internal` (left out of the reference) are skipped.
// - every fenced code block (```ts, ```typescript or bare ```) of every
//   `@example` tag, on an export or anywhere inside it, compiles: each block is
//   written as a module of its own in a temporary directory whose
//   `tsconfig.json` is strict and resolves `@effect-mcp/*` to the packages'
//   sources (as the `development` condition does) and `effect` from
//   node_modules, and all of them are typechecked in one program. A block is
//   a complete file: it imports what it uses.
//
// The public modules are the files `packages/*/src/*.ts` (but `index.ts`) of a
// package whose `exports` map has `"./*"`, else those its `src/index.ts`
// re-exports (`export * as McpCli from "./McpCli.ts"`; the cli's `bin.ts` is
// not one), with what they re-export from `src/internal`: the entry points of
// typedoc.json.
//
//   node scripts/check-jsdoc.ts [--root DIR] [--modules FILE...] [--json FILE] [--keep]
//
// --root DIR      the repository whose packages/*/src are checked (default: this one)
// --modules FILE  check these module files instead (fixtures)
// --json FILE     also write {passed, failed, exports, examples, problems}
// --keep          keep the temporary directory of the examples
//
// One line per problem, exit code 1 if any; `N exports, N examples: ok` otherwise.
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

const repoRoot = Path.resolve(import.meta.dirname, "..")
const packages = ["core", "platform-node", "redis", "cli"]

interface Args {
  readonly root: string
  readonly modules: ReadonlyArray<string> | undefined
  readonly json: string | undefined
  readonly keep: boolean
}

const parseArgs = (argv: ReadonlyArray<string>): Args => {
  let root = repoRoot
  let modules: Array<string> | undefined
  let json: string | undefined
  let keep = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = (): string => {
      const next = argv[++i]
      if (next === undefined || next.startsWith("--")) usage(`${arg} needs a value`)
      return next
    }
    if (arg === "--root") root = Path.resolve(value())
    else if (arg === "--json") json = Path.resolve(value())
    else if (arg === "--keep") keep = true
    else if (arg === "--modules") {
      modules = []
      while (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("--")) modules.push(Path.resolve(argv[++i]!))
      if (modules.length === 0) usage("--modules needs at least one file")
    } else usage(`unknown argument ${arg}`)
  }
  return { root, modules, json, keep }
}

function usage(message: string): never {
  process.stderr.write(
    `check-jsdoc: ${message}\nusage: node scripts/check-jsdoc.ts [--root DIR] [--modules FILE...] [--json FILE] [--keep]\n`
  )
  process.exit(2)
}

const publicModules = (root: string): Array<string> => {
  const files: Array<string> = []
  for (const pkg of packages) {
    const src = Path.join(root, "packages", pkg, "src")
    const index = Path.join(src, "index.ts")
    if (!Fs.existsSync(index)) continue
    const manifest = JSON.parse(Fs.readFileSync(Path.join(root, "packages", pkg, "package.json"), "utf8"))
    if (typeof manifest.exports === "object" && manifest.exports !== null && "./*" in manifest.exports) {
      for (const name of Fs.readdirSync(src).sort()) {
        if (name.endsWith(".ts") && name !== "index.ts") files.push(Path.join(src, name))
      }
    } else {
      const text = Fs.readFileSync(index, "utf8")
      for (const match of text.matchAll(/^export \* as \w+ from "\.\/([\w.-]+\.ts)"/gm)) {
        files.push(Path.join(src, match[1]!))
      }
    }
  }
  return files
}

// the compiler options of the packages (tsconfig.json at the repository's root)
const repoCompilerOptions = (): ts.CompilerOptions => {
  const configPath = Path.join(repoRoot, "tsconfig.json")
  const read = ts.readConfigFile(configPath, ts.sys.readFile)
  if (read.error !== undefined) fatal(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, repoRoot)
  return {
    ...parsed.options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false
  }
}

function fatal(message: string): never {
  process.stderr.write(`check-jsdoc: ${message}\n`)
  process.exit(2)
}

interface Problem {
  readonly check: string // the check that failed: one may fail with several problems
  readonly file: string
  readonly line: number
  readonly name: string
  readonly message: string
}

interface Example {
  readonly file: string // the module's file, relative
  readonly name: string // Module.export
  readonly line: number // 1-based line, in the module's file, of the block's first line of code
  readonly code: string
}

const relative = (file: string): string => {
  const path = Path.relative(process.cwd(), file)
  return path === "" || path.startsWith("..") ? file : path
}

const moduleName = (file: string): string => Path.basename(file, Path.extname(file))

// --- the JSDoc of a node -----------------------------------------------------

const jsDocsOf = (node: ts.Node): ReadonlyArray<ts.JSDoc> =>
  ((node as { jsDoc?: ReadonlyArray<ts.JSDoc> }).jsDoc ?? []).filter((doc) => ts.isJSDoc(doc))

// the JSDoc nearest the declaration (a variable's is on its statement)
const ownJsDoc = (declaration: ts.Declaration): ts.JSDoc | undefined => {
  const docs = ts.getJSDocCommentsAndTags(declaration).filter((doc): doc is ts.JSDoc => ts.isJSDoc(doc))
  return docs[docs.length - 1]
}

const hasSummary = (doc: ts.JSDoc | undefined): boolean =>
  doc !== undefined && (ts.getTextOfJSDocComment(doc.comment) ?? "").trim() !== ""

const isInternal = (doc: ts.JSDoc | undefined): boolean =>
  doc?.tags?.some((tag) => tag.tagName.text === "internal") === true

// The fenced code blocks of the `@example` tags of a JSDoc comment, read from
// its text so that each keeps its line in the file.
const examplesOf = (doc: ts.JSDoc, sourceFile: ts.SourceFile): Array<{ line: number; code: string }> => {
  const startLine = sourceFile.getLineAndCharacterOfPosition(doc.getStart(sourceFile)).line
  const lines = doc.getText(sourceFile).split("\n").map((line, i) => {
    let text = line
    if (i === 0) text = text.replace(/^\s*\/\*\*/, "")
    text = text.replace(/\*\/\s*$/, "")
    if (i > 0) text = text.replace(/^\s*\* ?/, "")
    return { text, line: startLine + i + 1 }
  })
  const blocks: Array<{ line: number; code: string }> = []
  let tag: string | undefined
  let fence: { lang: string; line: number; code: Array<string> } | undefined
  for (const { line, text } of lines) {
    if (fence !== undefined) {
      if (/^\s*```\s*$/.test(text)) {
        if (tag === "example" && ["", "ts", "typescript"].includes(fence.lang)) {
          blocks.push({ line: fence.line, code: fence.code.join("\n") })
        }
        fence = undefined
      } else fence.code.push(text)
      continue
    }
    const open = /^\s*```\s*([\w-]*)/.exec(text)
    if (open !== null) {
      fence = { lang: open[1]!.toLowerCase(), line: line + 1, code: [] }
      continue
    }
    const tagMatch = /^\s*@(\w+)/.exec(text)
    if (tagMatch !== null) tag = tagMatch[1]
  }
  return blocks
}

// --- the exports of the modules ----------------------------------------------

interface Collected {
  exports: number
  readonly problems: Array<Problem>
  readonly examples: Array<Example>
}

const collect = (moduleFiles: ReadonlyArray<string>): Collected => {
  const program = ts.createProgram({ rootNames: moduleFiles, options: repoCompilerOptions() })
  const checker = program.getTypeChecker()
  const collected: Collected = { exports: 0, problems: [], examples: [] }
  const seenDocs = new Set<ts.JSDoc>()

  const addExamples = (node: ts.Node, name: string) => {
    const visit = (child: ts.Node) => {
      for (const doc of jsDocsOf(child)) {
        if (seenDocs.has(doc)) continue
        seenDocs.add(doc)
        const sourceFile = child.getSourceFile()
        for (const block of examplesOf(doc, sourceFile)) {
          collected.examples.push({ file: sourceFile.fileName, name, line: block.line, code: block.code })
        }
      }
      ts.forEachChild(child, visit)
    }
    visit(node)
  }

  const checkSymbol = (symbol: ts.Symbol, name: string, depth: number) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const declarations = (target.declarations ?? []).filter((declaration) =>
      !declaration.getSourceFile().isDeclarationFile
    )
    if (declarations.length === 0) return
    // One summary per export: of the declarations of one name (overloads, or
    // the Schema `const X` and its `type X = typeof X.Type`), one at least has
    // a summary, as the editor's hover and the reference show it for all of
    // them (scripts/typedoc-modules.mjs gives the others that summary).
    const docs = declarations.map(ownJsDoc)
    if (docs.some(isInternal)) return
    collected.exports++
    if (!docs.some(hasSummary)) {
      const first = declarations[0]!
      const sourceFile = first.getSourceFile()
      collected.problems.push({
        check: `summary ${name}`,
        file: sourceFile.fileName,
        line: sourceFile.getLineAndCharacterOfPosition(first.getStart(sourceFile)).line + 1,
        name,
        message: "no summary: the first paragraph of its JSDoc is empty"
      })
    }
    for (const declaration of declarations) {
      addExamples(ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration, name)
    }
    // the members of an exported namespace are exports too
    if (depth === 0 && target.flags & ts.SymbolFlags.Namespace && declarations.some(ts.isModuleDeclaration)) {
      for (const member of checker.getExportsOfModule(target)) checkSymbol(member, `${name}.${member.name}`, depth + 1)
    }
  }

  for (const file of moduleFiles) {
    const sourceFile = program.getSourceFile(file)
    if (sourceFile === undefined) {
      collected.problems.push({
        check: `header ${file}`,
        file,
        line: 1,
        name: moduleName(file),
        message: "cannot read the module"
      })
      continue
    }
    // the header comment, before the first statement
    const first = sourceFile.statements[0]
    const header = first === undefined ? undefined : jsDocsOf(first)[0]
    // (before an import or an `export *`, a comment can only be the file's; before a
    // declaration, only if the declaration has its own too)
    const headerIsOwn = first !== undefined && !ts.isImportDeclaration(first) && !ts.isExportDeclaration(first) &&
      jsDocsOf(first).length < 2
    if (header === undefined || headerIsOwn || !hasSummary(header)) {
      collected.problems.push({
        check: `header ${file}`,
        file,
        line: 1,
        name: moduleName(file),
        message: "no module header: the file's first comment (its page's intro) is missing or empty"
      })
    } else {
      seenDocs.add(header)
      for (const block of examplesOf(header, sourceFile)) {
        collected.examples.push({ file, name: moduleName(file), line: block.line, code: block.code })
      }
    }
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile)
    if (moduleSymbol === undefined) continue
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      checkSymbol(symbol, `${moduleName(file)}.${symbol.name}`, 0)
    }
  }
  return collected
}

// --- the examples compile ----------------------------------------------------

const exampleTsconfig = () => {
  const paths: Record<string, Array<string>> = {}
  for (const pkg of packages) {
    const src = Path.join(repoRoot, "packages", pkg, "src")
    paths[`@effect-mcp/${pkg}`] = [Path.join(src, "index.ts")]
    paths[`@effect-mcp/${pkg}/*`] = [Path.join(src, "*.ts")]
  }
  return {
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2022"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      customConditions: ["development"],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      types: ["node"],
      paths
    },
    include: ["*.ts"]
  }
}

const compileExamples = (examples: ReadonlyArray<Example>, keep: boolean): Array<Problem> => {
  if (examples.length === 0) return []
  // inside the repository, so that `effect` and `@types/node` resolve from its node_modules
  const cache = Path.join(repoRoot, "node_modules", ".cache", "check-jsdoc")
  Fs.mkdirSync(cache, { recursive: true })
  const dir = Fs.mkdtempSync(Path.join(cache, "run-"))
  const byFile = new Map<string, Example>()
  try {
    Fs.writeFileSync(Path.join(dir, "package.json"), JSON.stringify({ type: "module" }) + "\n")
    Fs.writeFileSync(Path.join(dir, "tsconfig.json"), JSON.stringify(exampleTsconfig(), null, 2) + "\n")
    examples.forEach((example, i) => {
      const file = Path.join(dir, `${String(i).padStart(3, "0")}-${example.name.replace(/[^\w.-]/g, "_")}.ts`)
      // a module of its own, even without imports
      Fs.writeFileSync(file, `${example.code}\nexport {}\n`)
      byFile.set(file, example)
    })
    const read = ts.readConfigFile(Path.join(dir, "tsconfig.json"), ts.sys.readFile)
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dir)
    const program = ts.createProgram({ rootNames: [...byFile.keys()], options: parsed.options })
    const problems: Array<Problem> = []
    for (const diagnostic of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) {
      problems.push({
        check: "tsconfig",
        file: dir,
        line: 0,
        name: "tsconfig",
        message: ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")
      })
    }
    for (const [file, example] of byFile) {
      const check = `example ${file}`
      const sourceFile = program.getSourceFile(file)
      if (sourceFile === undefined) continue
      for (
        const diagnostic of [
          ...program.getSyntacticDiagnostics(sourceFile),
          ...program.getSemanticDiagnostics(sourceFile)
        ]
      ) {
        const line = diagnostic.start === undefined
          ? 0
          : sourceFile.getLineAndCharacterOfPosition(diagnostic.start).line
        problems.push({
          check,
          file: example.file,
          line: example.line + line,
          name: example.name,
          message: `@example does not compile: TS${diagnostic.code} ${
            ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")
          }`
        })
      }
    }
    return problems
  } finally {
    if (keep) process.stderr.write(`check-jsdoc: examples kept in ${dir}\n`)
    else Fs.rmSync(dir, { recursive: true, force: true })
  }
}

// --- main ----------------------------------------------------------------------

const args = parseArgs(process.argv.slice(2))
const moduleFiles = args.modules ?? publicModules(args.root)
if (moduleFiles.length === 0) fatal(`no public modules under ${args.root}/packages/*/src`)

const collected = collect(moduleFiles)
const problems = [...collected.problems, ...compileExamples(collected.examples, args.keep)]
problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
for (const problem of problems) {
  process.stdout.write(`${relative(problem.file)}:${problem.line} ${problem.name}: ${problem.message}\n`)
}
const checks = moduleFiles.length + collected.exports + collected.examples.length
const failed = new Set(problems.map((problem) => problem.check)).size
if (args.json !== undefined) {
  Fs.writeFileSync(
    args.json,
    JSON.stringify(
      {
        passed: checks - failed,
        failed,
        modules: moduleFiles.length,
        exports: collected.exports,
        examples: collected.examples.length,
        problems: problems.map(({ check: _, ...problem }) => ({ ...problem, file: relative(problem.file) }))
      },
      null,
      2
    ) + "\n"
  )
}
if (failed > 0) {
  process.stdout.write(
    `${failed} of ${checks} checks failed (${moduleFiles.length} modules, ${collected.exports} exports, ${collected.examples.length} examples)\n`
  )
  process.exitCode = 1
} else {
  process.stdout.write(`${collected.exports} exports, ${collected.examples.length} examples: ok\n`)
}
