import { Validator } from "@cfworker/json-schema"
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { toObjectJsonSchema } from "../src/internal/jsonSchema/tool.ts"
import * as McpSchema from "../src/McpSchema.ts"

const validator = (schema: object) => new Validator(schema, "2020-12", false)
const accepts = (schema: object, value: unknown) => {
  const result = validator(schema).validate(value)
  assert.isTrue(result.valid, `expected ${JSON.stringify(value)} to be valid: ${JSON.stringify(result.errors)}`)
}
const rejects = (schema: object, value: unknown) =>
  assert.isFalse(validator(schema).validate(value).valid, `expected ${JSON.stringify(value)} to be invalid`)

interface Category {
  readonly name: string
  readonly children: ReadonlyArray<Category>
}
const Category = Schema.Struct({
  name: Schema.String,
  children: Schema.Array(Schema.suspend((): Schema.Codec<Category> => Category))
}).annotate({ identifier: "Category" })

describe("toObjectJsonSchema", () => {
  it("nested structs, arrays and optional keys", () => {
    const schema = toObjectJsonSchema(Schema.Struct({
      user: Schema.Struct({ name: Schema.String, email: Schema.optionalKey(Schema.String) }),
      tags: Schema.Array(Schema.String),
      note: Schema.optionalKey(Schema.String)
    }))
    assert.deepStrictEqual(schema, {
      type: "object",
      properties: {
        user: {
          type: "object",
          properties: { name: { type: "string" }, email: { type: "string" } },
          required: ["name"],
          additionalProperties: true
        },
        tags: { type: "array", items: { type: "string" } },
        note: { type: "string" }
      },
      required: ["user", "tags"],
      additionalProperties: true
    })
    assert.isTrue(Schema.is(McpSchema.Tool)({ name: "t", inputSchema: schema }))
    accepts(schema, { user: { name: "Ada" }, tags: [] })
    accepts(schema, { user: { name: "Ada", email: "a@b.c" }, tags: ["x"], note: "n" })
    rejects(schema, { tags: [] })
    rejects(schema, { user: {}, tags: [] })
    rejects(schema, { user: { name: "Ada" }, tags: [1] })
    rejects(schema, { user: { name: "Ada" }, tags: [], note: 3 })
  })

  it("literal unions become enums, struct unions anyOf", () => {
    const schema = toObjectJsonSchema(Schema.Struct({
      role: Schema.Literals(["admin", "user"]),
      shape: Schema.Union([
        Schema.Struct({ kind: Schema.Literal("circle"), radius: Schema.Finite }),
        Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Finite })
      ])
    }))
    assert.deepStrictEqual(schema.properties?.role, { type: "string", enum: ["admin", "user"] })
    const shape = schema.properties?.shape as { anyOf: ReadonlyArray<unknown> }
    assert.strictEqual(shape.anyOf.length, 2)
    accepts(schema, { role: "admin", shape: { kind: "circle", radius: 1 } })
    rejects(schema, { role: "root", shape: { kind: "circle", radius: 1 } })
    rejects(schema, { role: "user", shape: { kind: "triangle" } })
  })

  it("Schema.Finite is a number, Schema.Int an integer; Schema.Number is the trap", () => {
    const schema = toObjectJsonSchema(Schema.Struct({ x: Schema.Finite, n: Schema.Int, trap: Schema.Number }))
    assert.deepStrictEqual(schema.properties?.x, { type: "number" })
    assert.strictEqual(schema.properties?.n?.type, "integer")
    assert.deepStrictEqual(schema.properties?.trap, {
      anyOf: [{ type: "number" }, { type: "string", enum: ["Infinity", "-Infinity", "NaN"] }]
    })
    accepts(schema, { x: 1.5, n: 2, trap: 1 })
    accepts(schema, { x: 1.5, n: 2, trap: "NaN" })
    rejects(schema, { x: "1.5", n: 2, trap: 1 })
    rejects(schema, { x: 1.5, n: 2.5, trap: 1 })
  })

  it("carries title and description annotations", () => {
    const schema = toObjectJsonSchema(
      Schema.Struct({
        city: Schema.String.annotate({ description: "City name" }),
        days: Schema.Int.annotate({ title: "Days", description: "How many days" })
      }).annotate({ title: "Forecast", description: "Forecast arguments" })
    )
    assert.strictEqual(schema.title, "Forecast")
    assert.strictEqual(schema.description, "Forecast arguments")
    assert.deepStrictEqual(schema.properties?.city, { type: "string", description: "City name" })
    assert.strictEqual(schema.properties?.days?.title, "Days")
    assert.strictEqual(schema.properties?.days?.description, "How many days")
  })

  it("inlines a root reference (identifier, Schema.Class) and drops the unused definition", () => {
    const schema = toObjectJsonSchema(
      Schema.Struct({ a: Schema.String }).annotate({ identifier: "Args", description: "the args" })
    )
    assert.deepStrictEqual(schema, {
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
      additionalProperties: true,
      description: "the args"
    })
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Finite, y: Schema.Finite }) {}
    const point = toObjectJsonSchema(Point)
    assert.strictEqual(point.type, "object")
    assert.deepStrictEqual(point.required, ["x", "y"])
    assert.isUndefined(point.$defs)
    assert.isUndefined(point.$ref)
    assert.isUndefined(point.$schema)
  })

  it("keeps shared definitions under $defs", () => {
    const Address = Schema.Struct({ street: Schema.String }).annotate({ identifier: "Address" })
    const schema = toObjectJsonSchema(Schema.Struct({ home: Address, work: Schema.optionalKey(Address) }))
    assert.deepStrictEqual(schema.properties, { home: { $ref: "#/$defs/Address" }, work: { $ref: "#/$defs/Address" } })
    assert.deepStrictEqual(Object.keys(schema.$defs as object), ["Address"])
    accepts(schema, { home: { street: "Main" } })
    rejects(schema, { home: { street: 1 } })
  })

  it("a recursive root stays a $defs reference below the inlined root", () => {
    const schema = toObjectJsonSchema(Category)
    assert.strictEqual(schema.type, "object")
    assert.isUndefined(schema.$ref)
    assert.deepStrictEqual(schema.properties?.children, { type: "array", items: { $ref: "#/$defs/Category" } })
    assert.deepStrictEqual(Object.keys(schema.$defs as object), ["Category"])
    const tree = { name: "a", children: [{ name: "b", children: [{ name: "c", children: [] }] }] }
    accepts(schema, tree)
    rejects(schema, { name: "a", children: [{ name: "b", children: [{ name: 3, children: [] }] }] })
    rejects(schema, { name: "a", children: [{ name: "b" }] })
  })

  it("a recursive field", () => {
    const schema = toObjectJsonSchema(Schema.Struct({ root: Category, depth: Schema.Int }))
    assert.deepStrictEqual(schema.properties?.root, { $ref: "#/$defs/Category" })
    accepts(schema, { root: { name: "a", children: [] }, depth: 1 })
    rejects(schema, { root: { name: "a", children: [{ name: "b", children: [1] }] }, depth: 1 })
  })

  it("onExcessProperty: error closes the objects", () => {
    const schema = toObjectJsonSchema(Schema.Struct({ a: Schema.String }), { onExcessProperty: "error" })
    assert.strictEqual(schema.additionalProperties, false)
    accepts(schema, { a: "x" })
    rejects(schema, { a: "x", b: 1 })
  })

  it("dies on a non-object root", () => {
    assert.throws(() => toObjectJsonSchema(Schema.String), /must describe a JSON object/)
    assert.throws(() => toObjectJsonSchema(Schema.Array(Schema.String)), /must describe a JSON object/)
    assert.throws(
      () =>
        toObjectJsonSchema(Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String })])),
      /must describe a JSON object/
    )
  })
})
