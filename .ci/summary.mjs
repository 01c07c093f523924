// Prints `N passed, N failed` from vitest's JSON report and exits non-zero when
// anything failed (a failed typecheck, given as the second argument, counts as one).
// A third argument names the conformance report (`npm run conformance -- --json FILE`,
// `{passed, failed}` counted in checks); its counts are added, and a missing or
// unreadable one counts as one failure.
import { existsSync, readFileSync } from "node:fs"

const [report, priorStatus = "0", conformanceReport] = process.argv.slice(2)
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
if (conformanceReport !== undefined) {
  const conformance = existsSync(conformanceReport) ? readConformance(conformanceReport) : undefined
  if (conformance === undefined) {
    console.log(`conformance: no report at ${conformanceReport}`)
    failed += 1
  } else {
    console.log(`conformance: ${conformance.passed} passed, ${conformance.failed} failed`)
    passed += conformance.passed
    failed += conformance.failed
  }
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)

function readConformance(path) {
  try {
    const json = JSON.parse(readFileSync(path, "utf8"))
    return Number.isInteger(json.passed) && Number.isInteger(json.failed) ? json : undefined
  } catch {
    return undefined
  }
}
