// Prints `N passed, N failed` from vitest's JSON report and exits non-zero when
// anything failed (a failed typecheck, given as the second argument, counts as one).
import { existsSync, readFileSync } from "node:fs"

const [report, priorStatus = "0"] = process.argv.slice(2)
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
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
