import { describe, expect, it } from "@effect/vitest"
import * as LineWriter from "../src/internal/lineWriter.ts"

const lines = (n: number) => Array.from({ length: n }, (_, i) => `{"id":${i}}\n`)

describe("internal/lineWriter", () => {
  it("writes the lines of one turn in one write, in order, after the turn", async () => {
    const writes: Array<string> = []
    const writer = LineWriter.make((chunk) => writes.push(chunk))
    for (const line of lines(5)) writer.write(line)
    expect(writes).toEqual([])
    await Promise.resolve()
    expect(writes).toEqual([lines(5).join("")])
  })

  it("a long burst goes out every BATCH_LINES lines, the rest after the turn", async () => {
    const writes: Array<string> = []
    const writer = LineWriter.make((chunk) => writes.push(chunk))
    const all = lines(2 * LineWriter.BATCH_LINES + 3)
    for (const line of all) writer.write(line)
    expect(writes.length).toBe(2)
    await Promise.resolve()
    expect(writes.length).toBe(3)
    expect(writes.join("")).toBe(all.join(""))
    expect(writes.map((chunk) => chunk.split("\n").length - 1)).toEqual([
      LineWriter.BATCH_LINES,
      LineWriter.BATCH_LINES,
      3
    ])
  })

  it("flush writes what is queued at once; nothing is written twice", async () => {
    const writes: Array<string> = []
    const writer = LineWriter.make((chunk) => writes.push(chunk))
    writer.write("a\n")
    writer.flush()
    expect(writes).toEqual(["a\n"])
    await Promise.resolve()
    expect(writes).toEqual(["a\n"])
  })
})
