import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Ref, Scope } from "effect"
import * as Progress from "../src/internal/progress.ts"

const recorder = (isTTY: boolean, columns = 80) =>
  Effect.gen(function*() {
    const writes = yield* Ref.make<ReadonlyArray<string>>([])
    const sink: Progress.Sink = {
      isTTY,
      columns,
      write: (text) => Ref.update(writes, (all) => [...all, text])
    }
    return { sink, writes: Ref.get(writes) }
  })

describe("progress bar", () => {
  it("renders a bounded bar with count, percentage and message", () => {
    assert.strictEqual(
      Progress.render({ progress: 2, total: 5, message: "two" }, 80),
      "[########------------] 2/5 40% two"
    )
    assert.strictEqual(Progress.render({ progress: 7 }, 80), "[progress] 7")
    assert.strictEqual(Progress.render({ progress: 1.5, total: 3 }, 80), "[##########----------] 1.50/3 50%")
    // out-of-range values are clamped, control characters dropped
    assert.strictEqual(
      Progress.render({ progress: 9, total: 3, message: "a\nb\x1b[31m" }, 80),
      "[####################] 9/3 100% a b[31m"
    )
    // C1 controls (0x9b is CSI on some terminals) and bidi overrides from a server never reach the terminal
    assert.strictEqual(Progress.render({ progress: 1, message: "a\x9b2Jb\u202ec\x85" }, 80), "[progress] 1 a2Jbc")
    const long = Progress.render({ progress: 1, total: 2, message: "x".repeat(500) }, 40)
    assert.strictEqual(long.length, 40)
    assert.isTrue(long.endsWith("…"))
    // never longer than 200 characters, whatever the width
    assert.strictEqual(Progress.render({ progress: 1, message: "y".repeat(500) }, 10_000).length, 200)
  })

  it.effect("on a terminal: redraws one line in place and erases it when its scope closes", () =>
    Effect.gen(function*() {
      const { sink, writes } = yield* recorder(true, 40)
      const scope = yield* Scope.make()
      const bar = yield* Progress.make(sink).pipe(Scope.provide(scope))
      yield* bar.update({ progress: 1, total: 2, message: "half way there, and a long message" })
      yield* bar.update({ progress: 2, total: 2 })
      yield* Scope.close(scope, Exit.void)
      const all = yield* writes
      assert.strictEqual(all.length, 3)
      assert.isTrue(all[0]!.startsWith("\r[##########----------] 1/2 50%"))
      assert.isTrue(all[0]!.endsWith("\x1b[K"))
      // bounded by the terminal's width (minus one column)
      assert.isAtMost(all[0]!.length - "\r\x1b[K".length, 39)
      assert.strictEqual(all[2], "\r\x1b[K")
      assert.isFalse(all.some((text) => text.includes("\n")))
    }))

  it.effect("off a terminal: plain lines, only every 10 points, nothing to erase", () =>
    Effect.gen(function*() {
      const { sink, writes } = yield* recorder(false)
      const scope = yield* Scope.make()
      const bar = yield* Progress.make(sink).pipe(Scope.provide(scope))
      for (let i = 1; i <= 1000; i++) yield* bar.update({ progress: i, total: 1000 })
      yield* Scope.close(scope, Exit.void)
      const all = yield* writes
      assert.strictEqual(all.length, 11)
      assert.isTrue(all.every((line) => line.endsWith("\n") && !line.includes("\r")))
      assert.strictEqual(all[0], "[--------------------] 1/1000 0%\n")
      assert.strictEqual(all[10], "[####################] 1000/1000 100%\n")
    }))

  it.effect("off a terminal, without a total: a line each time the progress doubles", () =>
    Effect.gen(function*() {
      const { sink, writes } = yield* recorder(false)
      const bar = yield* Progress.make(sink)
      for (let i = 1; i <= 1000; i++) yield* bar.update({ progress: i })
      assert.deepStrictEqual(
        (yield* writes).map((line) => line.trim()),
        [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].map((n) => `[progress] ${n}`)
      )
      assert.strictEqual(yield* bar.written, 10)
    }))
})
