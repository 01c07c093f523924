/**
 * `NodeJsonSchemaValidator` is now an alias of core's default validator
 * (tested in core's JsonSchemaValidator.test.ts): providing it keeps working.
 */
import { JsonSchemaValidator } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"

describe("NodeJsonSchemaValidator (deprecated alias)", () => {
  it("compile is core's default compile", () => {
    assert.strictEqual(NodeJsonSchemaValidator.compile, JsonSchemaValidator.compile)
    assert.deepStrictEqual(NodeJsonSchemaValidator.compile({ type: "integer" })("1"), [
      "/: Instance type \"string\" is invalid. Expected \"integer\"."
    ])
  })

  it.effect("layer provides the default validator, even under a replacement", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* JsonSchemaValidator.validate({ type: "integer" }, 1), [])
      assert.deepStrictEqual(yield* JsonSchemaValidator.validate({ type: "integer" }, "1"), [
        "/: Instance type \"string\" is invalid. Expected \"integer\"."
      ])
    }).pipe(
      Effect.provide(NodeJsonSchemaValidator.layer),
      Effect.provide(JsonSchemaValidator.layer(() => () => ["replaced"]))
    ))
})
