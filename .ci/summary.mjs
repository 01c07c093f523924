// Prints `N passed, N failed` from vitest's JSON report and exits non-zero when
// anything failed (a failed typecheck, given as the second argument, counts as one).
// A third argument names the conformance report (`npm run conformance -- --json FILE`,
// `{passed, failed}` counted in checks), a fourth the pack check's report
// (`npm run pack:check -- --json FILE`, `{passed, failed, checks}`, one per check);
// their counts are added, and a missing or unreadable one counts as one failure.
import { existsSync, readFileSync } from "node:fs"

const [report, priorStatus = "0", conformanceReport, packReport] = process.argv.slice(2)
let passed = 0
let failed = priorStatus === "0" ? 0 : 1
if (report !== undefined && existsSync(report)) {
  const json = JSON.parse(readFileSync(report, "utf8"))
  passed += json.numPassedTests ?? 0
  failed += (json.numFailedTests ?? 0) + (json.numRuntimeErrorTestSuites ?? 0)
  if ((json.numTotalTests ?? 0) === 0) failed += 1
} else {
  failed += 1
}
const addReport = (label, path) => {
  if (path === undefined) return
  const counts = existsSync(path) ? readCounts(path) : undefined
  if (counts === undefined) {
    console.log(`${label}: no report at ${path}`)
    failed += 1
  } else {
    console.log(`${label}: ${counts.passed} passed, ${counts.failed} failed`)
    for (const check of counts.checks ?? []) if (check.ok === false) console.log(`  failed: ${check.name}`)
    passed += counts.passed
    failed += counts.failed
  }
}
addReport("conformance", conformanceReport)
addReport("pack", packReport)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)

function readCounts(path) {
  try {
    const json = JSON.parse(readFileSync(path, "utf8"))
    return Number.isInteger(json.passed) && Number.isInteger(json.failed) ? json : undefined
  } catch {
    return undefined
  }
}
