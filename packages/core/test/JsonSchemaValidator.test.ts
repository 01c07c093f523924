/**
 * The JSON Schema validator: the default one (`@cfworker/json-schema`, used
 * when nothing is provided), its messages and drafts, and replacing it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import * as JsonSchemaValidator from "../src/JsonSchemaValidator.ts"

const Counter = {
  type: "object",
  properties: {
    count: { type: "integer", minimum: 0 },
    name: { type: "string", minLength: 2 },
    tags: { type: "array", items: { type: "string" } },
    owner: { $ref: "#/$defs/Person" }
  },
  required: ["count"],
  $defs: { Person: { type: "object", properties: { email: { type: "string" } }, required: ["email"] } }
}

describe("JsonSchemaValidator: the default, with nothing provided", () => {
  it.effect("a valid value has no problems", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* JsonSchemaValidator.validate(Counter, { count: 1 }), [])
      assert.deepStrictEqual(
        yield* JsonSchemaValidator.validate(Counter, { count: 0, name: "ab", tags: ["x"], owner: { email: "a@b.c" } }),
        []
      )
    }))

  it.effect("an invalid value: every problem, each naming its path", () =>
    Effect.gen(function*() {
      const problems = yield* JsonSchemaValidator.validate(Counter, {
        count: "3",
        name: "a",
        tags: ["ok", 2],
        owner: {}
      })
      assert.deepStrictEqual(problems, [
        "/count: Instance type \"string\" is invalid. Expected \"integer\".",
        "/name: String is too short (1 < 2).",
        "/tags/1: Instance type \"number\" is invalid. Expected \"string\".",
        "/owner: Instance does not have required property \"email\"."
      ])
      assert.deepStrictEqual(yield* JsonSchemaValidator.validate(Counter, {}), [
        "/: Instance does not have required property \"count\"."
      ])
    }))

  it.effect("anyOf keeps its summary next to the alternatives", () =>
    Effect.gen(function*() {
      const problems = yield* JsonSchemaValidator.validate({ anyOf: [{ type: "string" }, { type: "number" }] }, true)
      assert.isTrue(problems.length >= 2)
      assert.isTrue(problems.every((problem) => problem.startsWith("/: ")))
    }))

  it.effect("the default compiles each schema object once", () =>
    Effect.gen(function*() {
      const validator = yield* JsonSchemaValidator.JsonSchemaValidator
      const schema = { type: "string" }
      assert.strictEqual(validator.compile(schema), validator.compile(schema))
      assert.notStrictEqual(validator.compile(schema), validator.compile({ type: "string" }))
    }))
})

describe("JsonSchemaValidator: replacing it", () => {
  const everythingIsWrong = JsonSchemaValidator.layer(() => () => ["wrong"])

  it.effect("layer(compile) replaces the default", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* JsonSchemaValidator.validate(Counter, { count: 1 }), ["wrong"])
    }).pipe(Effect.provide(everythingIsWrong)))

  it.effect("layerDefault restores the default under a replacement", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* JsonSchemaValidator.validate(Counter, { count: 1 }), [])
      assert.strictEqual(
        yield* JsonSchemaValidator.JsonSchemaValidator,
        Context.get(Context.empty(), JsonSchemaValidator.JsonSchemaValidator)
      )
    }).pipe(Effect.provide(JsonSchemaValidator.layerDefault), Effect.provide(everythingIsWrong)))

  it("make compiles lazily and caches per schema object; other values are compiled each time", () => {
    const compiled: Array<unknown> = []
    const validator = JsonSchemaValidator.make((schema) => {
      compiled.push(schema)
      return () => []
    })
    assert.deepStrictEqual(compiled, [])
    const schema = { type: "object" }
    validator.compile(schema)
    validator.compile(schema)
    validator.compile(true)
    validator.compile(true)
    assert.deepStrictEqual(compiled, [schema, true, true])
  })
})

describe("JsonSchemaValidator.compile", () => {
  it("2020-12 by default: keywords next to $ref apply", () => {
    const check = JsonSchemaValidator.compile({ $defs: { S: { type: "string" } }, $ref: "#/$defs/S", maxLength: 2 })
    assert.deepStrictEqual(check("ab"), [])
    assert.strictEqual(check("abcd").length, 1)
    assert.deepStrictEqual(check(1), ["/: Instance type \"number\" is invalid. Expected \"string\"."])
  })

  it("a draft-07 schema is read as draft-07: keywords next to $ref are ignored, items may be a tuple", () => {
    const check = JsonSchemaValidator.compile({
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { S: { type: "string" } },
      $ref: "#/definitions/S",
      maxLength: 2
    })
    assert.deepStrictEqual(check("abcd"), [])
    assert.strictEqual(check(1).length, 1)
    const tuple = JsonSchemaValidator.compile({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "array",
      items: [{ type: "string" }, { type: "integer" }]
    })
    assert.deepStrictEqual(tuple(["a", 1]), [])
    assert.deepStrictEqual(tuple(["a", "b"]), ["/1: Instance type \"string\" is invalid. Expected \"integer\"."])
  })

  it("boolean schemas", () => {
    assert.deepStrictEqual(JsonSchemaValidator.compile(true)({ any: "thing" }), [])
    assert.deepStrictEqual(JsonSchemaValidator.compile(false)(1), ["/: False boolean schema."])
    const closed = JsonSchemaValidator.compile({ type: "object", properties: { a: {} }, additionalProperties: false })
    assert.deepStrictEqual(closed({ a: 1, z: 2 }), ["/: Property \"z\" does not match additional properties schema."])
  })

  it("paths escape / and ~ as JSON Pointer does", () => {
    const check = JsonSchemaValidator.compile({ type: "object", properties: { "a/b~c": { type: "string" } } })
    assert.deepStrictEqual(check({ "a/b~c": 1 }), [
      "/a~1b~0c: Instance type \"number\" is invalid. Expected \"string\"."
    ])
  })

  it("an unreadable schema reports the problem for every value instead of throwing", () => {
    for (const schema of [42, null, "string", [1]]) {
      const check = JsonSchemaValidator.compile(schema)
      const problems = check({})
      assert.strictEqual(problems.length, 1)
      assert.match(problems[0]!, /^the JSON Schema cannot be used: a JSON Schema is an object or a boolean/)
      assert.deepStrictEqual(check("anything"), problems)
    }
    const missing = JsonSchemaValidator.compile({ $ref: "#/$defs/Missing" })
    assert.strictEqual(missing({}).length, 1)
    assert.match(missing({})[0]!, /^the JSON Schema cannot be used: Unresolved \$ref "#\/\$defs\/Missing"/)
    const duplicate = JsonSchemaValidator.compile({
      $id: "https://example.com/a",
      $defs: { b: { $id: "https://example.com/a" } }
    })
    assert.match(duplicate(1)[0]!, /^the JSON Schema cannot be used: Duplicate schema URI/)
    const badPattern = JsonSchemaValidator.compile({ type: "string", pattern: "(" })
    assert.match(badPattern("x")[0]!, /^the JSON Schema cannot be used: /)
  })

  it("does not touch the caller's schema, even a frozen one", () => {
    const schema = Object.freeze({
      type: "object",
      properties: Object.freeze({ a: Object.freeze({ type: "string" }) })
    })
    const check = JsonSchemaValidator.compile(schema)
    assert.deepStrictEqual(check({ a: "x" }), [])
    assert.deepStrictEqual(check({ a: 1 }), ["/a: Instance type \"number\" is invalid. Expected \"string\"."])
    assert.deepStrictEqual(Object.getOwnPropertyNames(schema), ["type", "properties"])
  })
})
