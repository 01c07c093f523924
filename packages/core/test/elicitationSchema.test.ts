import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { toRequestedSchema, type UnsupportedField } from "../src/internal/jsonSchema/form.ts"
import * as McpSchema from "../src/McpSchema.ts"

const isFormParams = Schema.is(McpSchema.ElicitRequestFormParams)

/** The requested schema, checked against `ElicitRequestFormParams`. */
const form = <S extends Schema.Top>(
  schema: S,
  options?: Parameters<typeof toRequestedSchema<S>>[1]
): McpSchema.ElicitRequestedSchema => {
  const result = toRequestedSchema(schema, options)
  if (Result.isFailure(result)) return assert.fail(`expected a form schema, got: ${result.failure.message}`)
  assert.isTrue(
    isFormParams({ mode: "form", message: "Please fill in", requestedSchema: result.success }),
    `not valid ElicitRequestFormParams: ${JSON.stringify(result.success)}`
  )
  return result.success
}

const field = (schema: Schema.Top) => form(Schema.Struct({ f: schema })).properties.f

const unsupported = (schema: Schema.Top): UnsupportedField => {
  const result = toRequestedSchema(schema)
  if (Result.isSuccess(result)) return assert.fail(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("toRequestedSchema", () => {
  it("strings with bounds, format and annotations", () => {
    assert.deepStrictEqual(field(Schema.String), { type: "string" })
    assert.deepStrictEqual(
      field(
        Schema.String.check(Schema.isMinCodePoints(2), Schema.isMaxLength(40)).annotate({
          title: "Name",
          description: "Your name"
        })
      ),
      { type: "string", title: "Name", description: "Your name", minLength: 2, maxLength: 40 }
    )
    assert.deepStrictEqual(field(Schema.String.annotate({ format: "email" })), { type: "string", format: "email" })
    // formats a form cannot show, and patterns, are left to decoding
    assert.deepStrictEqual(field(Schema.String.annotate({ format: "uuid" })), { type: "string" })
    assert.deepStrictEqual(field(Schema.Trimmed), { type: "string" })
  })

  it("numbers and integers with bounds", () => {
    assert.deepStrictEqual(field(Schema.Finite), { type: "number" })
    assert.deepStrictEqual(field(Schema.Number), { type: "number" })
    assert.deepStrictEqual(field(Schema.Int), { type: "integer" })
    assert.deepStrictEqual(
      field(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 }))),
      { type: "integer", minimum: 1, maximum: 10 }
    )
    assert.deepStrictEqual(field(Schema.Int.check(Schema.isGreaterThan(0))), { type: "integer", minimum: 1 })
    assert.deepStrictEqual(
      field(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0.5), Schema.isLessThanOrEqualTo(2.5))),
      { type: "number", minimum: 0.5, maximum: 2.5 }
    )
  })

  it("booleans", () => {
    assert.deepStrictEqual(field(Schema.Boolean.annotate({ title: "Subscribe" })), {
      type: "boolean",
      title: "Subscribe"
    })
  })

  it("single-choice enums: plain and titled", () => {
    assert.deepStrictEqual(field(Schema.Literals(["red", "green"])), { type: "string", enum: ["red", "green"] })
    assert.deepStrictEqual(
      field(Schema.Union([Schema.Literal("s"), Schema.Literal("m"), Schema.Literal("l")]).annotate({ title: "Size" })),
      { type: "string", title: "Size", enum: ["s", "m", "l"] }
    )
    assert.deepStrictEqual(
      field(
        Schema.Union([
          Schema.Literal("s").annotate({ title: "Small" }),
          Schema.Literal("l").annotate({ title: "Large" })
        ]).annotate({ title: "Size" })
      ),
      { type: "string", title: "Size", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] }
    )
    assert.deepStrictEqual(
      field(Schema.Enum({ Small: "s", Large: "l" })),
      { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] }
    )
  })

  it("multiple-choice enums: plain and titled", () => {
    assert.deepStrictEqual(
      field(Schema.Array(Schema.Literals(["a", "b", "c"])).check(Schema.isMinLength(1), Schema.isMaxLength(2))),
      { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, minItems: 1, maxItems: 2 }
    )
    assert.deepStrictEqual(
      field(
        Schema.Array(
          Schema.Union([Schema.Literal("a").annotate({ title: "A" }), Schema.Literal("b").annotate({ title: "B" })])
        )
      ),
      { type: "array", items: { anyOf: [{ const: "a", title: "A" }, { const: "b", title: "B" }] } }
    )
  })

  it("required vs optional", () => {
    const requested = form(Schema.Struct({
      name: Schema.String,
      nickname: Schema.optionalKey(Schema.String),
      age: Schema.optional(Schema.Int),
      agree: Schema.Boolean
    }))
    assert.deepStrictEqual(requested, {
      type: "object",
      properties: {
        name: { type: "string" },
        nickname: { type: "string" },
        age: { type: "integer" },
        agree: { type: "boolean" }
      },
      required: ["name", "agree"]
    })
    const enums = form(Schema.Struct({
      size: Schema.optional(
        Schema.Union([
          Schema.Literal("s").annotate({ title: "Small" }),
          Schema.Literal("l").annotate({ title: "Large" })
        ])
      ),
      color: Schema.optional(Schema.Literals(["red", "blue"])),
      level: Schema.optionalKey(Schema.Enum({ Low: "low", High: "high" }))
    }))
    assert.deepStrictEqual(enums.properties, {
      size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
      color: { type: "string", enum: ["red", "blue"] },
      level: { type: "string", oneOf: [{ const: "low", title: "Low" }, { const: "high", title: "High" }] }
    })
    assert.isUndefined(enums.required)
    const allOptional = form(Schema.Struct({ a: Schema.optionalKey(Schema.String) }))
    assert.isUndefined(allOptional.required)
  })

  it("defaults from annotations and from options", () => {
    const Form = Schema.Struct({
      name: Schema.String.annotate({ default: "Ada" }),
      count: Schema.Int.annotate({ default: 3 }),
      ratio: Schema.Finite,
      subscribe: Schema.optionalKey(Schema.Boolean),
      size: Schema.Literals(["s", "m"]),
      tags: Schema.Array(Schema.Literals(["x", "y"])),
      note: Schema.optional(Schema.String.annotate({ default: "none" }))
    })
    const requested = form(Form, { defaults: { ratio: 0.5, subscribe: true, size: "m", tags: ["y"], name: "Grace" } })
    assert.deepStrictEqual(requested.properties, {
      name: { type: "string", default: "Grace" },
      count: { type: "integer", default: 3 },
      ratio: { type: "number", default: 0.5 },
      subscribe: { type: "boolean", default: true },
      size: { type: "string", enum: ["s", "m"], default: "m" },
      tags: { type: "array", items: { type: "string", enum: ["x", "y"] }, default: ["y"] },
      note: { type: "string", default: "none" }
    })
  })

  it("rejects a default that does not fit its field", () => {
    const Form = Schema.Struct({ size: Schema.Literals(["s", "m"]), count: Schema.Int })
    const bad = (defaults: Record<string, unknown>) => {
      const result = toRequestedSchema(Form, { defaults: defaults as never })
      return Result.isFailure(result) ? result.failure : assert.fail("expected a failure")
    }
    assert.deepStrictEqual(bad({ size: "xl" }).field, "size")
    assert.match(bad({ size: "xl" }).message, /field "size": the default "xl" is not one of \["s","m"\]/)
    assert.match(bad({ count: 1.5 }).message, /field "count": the default 1\.5 is not an integer/)
  })

  it("rejects nested objects, arbitrary arrays and mixed unions, naming the field", () => {
    const nested = unsupported(
      Schema.Struct({ name: Schema.String, address: Schema.Struct({ street: Schema.String }) })
    )
    assert.strictEqual(nested.field, "address")
    assert.match(nested.message, /field "address": nested objects are not supported/)

    const list = unsupported(Schema.Struct({ tags: Schema.Array(Schema.String) }))
    assert.strictEqual(list.field, "tags")
    assert.match(list.message, /only arrays of string literals/)

    const mixed = unsupported(Schema.Struct({ id: Schema.Union([Schema.String, Schema.Finite]) }))
    assert.strictEqual(mixed.field, "id")

    const numeric = unsupported(Schema.Struct({ level: Schema.Literals([1, 2, 3]) }))
    assert.strictEqual(numeric.field, "level")
    assert.match(numeric.message, /numeric enums/)

    const nullable = unsupported(Schema.Struct({ name: Schema.NullOr(Schema.String) }))
    assert.strictEqual(nullable.field, "name")
  })

  it("the ElicitRequestFormParams check used above is meaningful", () => {
    const params = (requestedSchema: unknown) => isFormParams({ mode: "form", message: "m", requestedSchema })
    assert.isTrue(params({ type: "object", properties: { a: { type: "string" } } }))
    assert.isFalse(params({ type: "object", properties: { a: { type: "object" } } }))
    assert.isFalse(params({ type: "object", properties: { a: { type: "string", default: 1 } } }))
  })

  it("rejects a schema that is not a struct", () => {
    assert.isUndefined(unsupported(Schema.String).field)
    assert.isUndefined(unsupported(Schema.Record(Schema.String, Schema.String)).field)
  })

  it("accepts classes and fields with identifiers", () => {
    class Signup extends Schema.Class<Signup>("Signup")({
      email: Schema.String.annotate({ identifier: "Email", format: "email" }),
      plan: Schema.Literals(["free", "pro"]).annotate({ identifier: "Plan" })
    }) {}
    assert.deepStrictEqual(form(Signup), {
      type: "object",
      properties: { email: { type: "string", format: "email" }, plan: { type: "string", enum: ["free", "pro"] } },
      required: ["email", "plan"]
    })
  })
})
