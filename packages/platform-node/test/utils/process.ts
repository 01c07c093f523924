/**
 * Facts about processes that tests check after a scope closes.
 */
import { readFileSync } from "node:fs"

/** Whether a process exists and is not a zombie. */
export const isRunning = (pid: number): boolean => {
  if (process.platform === "linux") {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0]
      return state !== "Z" && state !== "X"
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
