/**
 * Elicitation: the server asks the user, through the client, for input. Form
 * mode (2025-06-18) sends a restricted JSON Schema; URL mode (2025-11-25)
 * sends the user to a URL out of band.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { Meta, RequestMeta } from "./base.ts"
import { CreateTaskResult, TaskMetadata } from "./tasks.ts"

// -----------------------------------------------------------------------------
// Primitive schemas
// -----------------------------------------------------------------------------

const Absent = (message: string) => Schema.optionalKey(Schema.Never.annotate({ message }))

/**
 * A string field. `default` is new in 2025-11-25. A `type: "string"` schema
 * with `enum` or `oneOf` is an enum schema, not this.
 *
 * @category schemas
 * @since 0.1.0
 */
export const StringSchema = Schema.Struct({
  type: Schema.Literal("string"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  minLength: Schema.optionalKey(Schema.Int),
  maxLength: Schema.optionalKey(Schema.Int),
  format: Schema.optionalKey(Schema.Literals(["email", "uri", "date", "date-time"])),
  default: Schema.optionalKey(Schema.String),
  enum: Absent("`enum` belongs to an enum schema: an array of strings"),
  oneOf: Absent("`oneOf` belongs to a titled enum schema: an array of { const, title }")
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type StringSchema = typeof StringSchema.Type

/**
 * A number or integer field. `default` is new in 2025-11-25. The spec's
 * generated JSON Schema types `minimum`, `maximum` and `default` as integers;
 * any finite number is accepted here, since a `number` field may have
 * fractional bounds.
 *
 * @category schemas
 * @since 0.1.0
 */
export const NumberSchema = Schema.Struct({
  type: Schema.Literals(["number", "integer"]),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  minimum: Schema.optionalKey(Schema.Finite),
  maximum: Schema.optionalKey(Schema.Finite),
  default: Schema.optionalKey(Schema.Finite)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type NumberSchema = typeof NumberSchema.Type

/**
 * A boolean field.
 *
 * @category schemas
 * @since 0.1.0
 */
export const BooleanSchema = Schema.Struct({
  type: Schema.Literal("boolean"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  default: Schema.optionalKey(Schema.Boolean)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type BooleanSchema = typeof BooleanSchema.Type

/**
 * One option of a titled enum: its value and its display label.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TitledEnumOption = Schema.Struct({
  const: Schema.String,
  title: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type TitledEnumOption = typeof TitledEnumOption.Type

/**
 * Single choice among plain values (2025-11-25).
 *
 * @category schemas
 * @since 0.1.0
 */
export const UntitledSingleSelectEnumSchema = Schema.Struct({
  type: Schema.Literal("string"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  enum: Schema.Array(Schema.String),
  default: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type UntitledSingleSelectEnumSchema = typeof UntitledSingleSelectEnumSchema.Type

/**
 * Single choice among labelled values, as `oneOf: [{ const, title }]`
 * (2025-11-25).
 *
 * @category schemas
 * @since 0.1.0
 */
export const TitledSingleSelectEnumSchema = Schema.Struct({
  type: Schema.Literal("string"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  oneOf: Schema.Array(TitledEnumOption),
  default: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type TitledSingleSelectEnumSchema = typeof TitledSingleSelectEnumSchema.Type

/**
 * A single-choice enum, untitled or titled.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SingleSelectEnumSchema = Schema.Union([UntitledSingleSelectEnumSchema, TitledSingleSelectEnumSchema])

/**
 * @category schemas
 * @since 0.1.0
 */
export type SingleSelectEnumSchema = typeof SingleSelectEnumSchema.Type

/**
 * Multiple choice among plain values: an array whose `items` carry the
 * `enum` (2025-11-25).
 *
 * @category schemas
 * @since 0.1.0
 */
export const UntitledMultiSelectEnumSchema = Schema.Struct({
  type: Schema.Literal("array"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  minItems: Schema.optionalKey(Schema.Int),
  maxItems: Schema.optionalKey(Schema.Int),
  items: Schema.Struct({
    type: Schema.Literal("string"),
    enum: Schema.Array(Schema.String)
  }),
  default: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type UntitledMultiSelectEnumSchema = typeof UntitledMultiSelectEnumSchema.Type

/**
 * Multiple choice among labelled values: an array whose `items` carry
 * `anyOf: [{ const, title }]` (2025-11-25).
 *
 * @category schemas
 * @since 0.1.0
 */
export const TitledMultiSelectEnumSchema = Schema.Struct({
  type: Schema.Literal("array"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  minItems: Schema.optionalKey(Schema.Int),
  maxItems: Schema.optionalKey(Schema.Int),
  items: Schema.Struct({
    anyOf: Schema.Array(TitledEnumOption)
  }),
  default: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type TitledMultiSelectEnumSchema = typeof TitledMultiSelectEnumSchema.Type

/**
 * A multiple-choice enum, untitled or titled.
 *
 * @category schemas
 * @since 0.1.0
 */
export const MultiSelectEnumSchema = Schema.Union([UntitledMultiSelectEnumSchema, TitledMultiSelectEnumSchema])

/**
 * @category schemas
 * @since 0.1.0
 */
export type MultiSelectEnumSchema = typeof MultiSelectEnumSchema.Type

/**
 * The 2025-06-18 enum: `enum` values with optional parallel `enumNames`
 * labels (non-standard JSON Schema). Deprecated in 2025-11-25 in favour of
 * {@link TitledSingleSelectEnumSchema}; `default` was added there.
 *
 * @category schemas
 * @since 0.1.0
 */
export const LegacyTitledEnumSchema = Schema.Struct({
  type: Schema.Literal("string"),
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  enum: Schema.Array(Schema.String),
  enumNames: Schema.optionalKey(Schema.Array(Schema.String)),
  default: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type LegacyTitledEnumSchema = typeof LegacyTitledEnumSchema.Type

/**
 * Any enum field: single or multiple choice, or the legacy form.
 *
 * @category schemas
 * @since 0.1.0
 */
export const EnumSchema = Schema.Union([
  UntitledSingleSelectEnumSchema,
  TitledSingleSelectEnumSchema,
  UntitledMultiSelectEnumSchema,
  TitledMultiSelectEnumSchema,
  LegacyTitledEnumSchema
])

/**
 * @category schemas
 * @since 0.1.0
 */
export type EnumSchema = typeof EnumSchema.Type

/**
 * One field of an elicitation form: a string, number, boolean or enum schema
 * (no nesting).
 *
 * @category schemas
 * @since 0.1.0
 */
export const PrimitiveSchemaDefinition = Schema.Union([
  StringSchema,
  NumberSchema,
  BooleanSchema,
  UntitledSingleSelectEnumSchema,
  TitledSingleSelectEnumSchema,
  UntitledMultiSelectEnumSchema,
  TitledMultiSelectEnumSchema,
  LegacyTitledEnumSchema
]).annotate({ expected: "a string, number, boolean or enum field schema" })

/**
 * @category schemas
 * @since 0.1.0
 */
export type PrimitiveSchemaDefinition = typeof PrimitiveSchemaDefinition.Type

/**
 * The form of a form-mode elicitation: a flat object schema whose properties
 * are {@link PrimitiveSchemaDefinition}s.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitRequestedSchema = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String),
  type: Schema.Literal("object"),
  properties: Schema.Record(Schema.String, PrimitiveSchemaDefinition),
  required: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitRequestedSchema = typeof ElicitRequestedSchema.Type

// -----------------------------------------------------------------------------
// Requests and results
// -----------------------------------------------------------------------------

/**
 * Params of a form-mode `elicitation/create`. `mode` is absent before
 * 2025-11-25 and optional after.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitRequestFormParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  task: Schema.optionalKey(TaskMetadata),
  mode: Schema.optionalKey(Schema.Literal("form")),
  message: Schema.String,
  requestedSchema: ElicitRequestedSchema
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitRequestFormParams = typeof ElicitRequestFormParams.Type

/**
 * Params of a URL-mode `elicitation/create` (2025-11-25): the client sends
 * the user to `url`; `elicitationId` is opaque and unique per server.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitRequestURLParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  task: Schema.optionalKey(TaskMetadata),
  mode: Schema.Literal("url"),
  message: Schema.String,
  elicitationId: Schema.String,
  url: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitRequestURLParams = typeof ElicitRequestURLParams.Type

/**
 * Params of `elicitation/create`: form mode or URL mode.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitRequestParams = Schema.Union([ElicitRequestFormParams, ElicitRequestURLParams])

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitRequestParams = typeof ElicitRequestParams.Type

/**
 * A value submitted for one form field. String arrays (multi-select) are new
 * in 2025-11-25.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean, Schema.Array(Schema.String)])

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitValue = typeof ElicitValue.Type

/**
 * The user's answer: `accept` (with `content` in form mode), `decline` or
 * `cancel`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  action: Schema.Literals(["accept", "decline", "cancel"]),
  content: Schema.optionalKey(Schema.Record(Schema.String, ElicitValue))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitResult = typeof ElicitResult.Type

/**
 * Params of `notifications/elicitation/complete`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ElicitationCompleteNotificationParams = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  elicitationId: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ElicitationCompleteNotificationParams = typeof ElicitationCompleteNotificationParams.Type

/**
 * The `data` of a `-32042` error: the URL-mode elicitations the user must
 * complete before the request can succeed (2025-11-25).
 *
 * @category schemas
 * @since 0.1.0
 */
export const URLElicitationRequiredErrorData = Schema.StructWithRest(
  Schema.Struct({ elicitations: Schema.Array(ElicitRequestURLParams) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/**
 * @category schemas
 * @since 0.1.0
 */
export type URLElicitationRequiredErrorData = typeof URLElicitationRequiredErrorData.Type

/**
 * The error object of a "URL elicitation required" error response
 * (code `-32042`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const URLElicitationRequiredError = Schema.Struct({
  code: Schema.Literal(-32042),
  message: Schema.String,
  data: URLElicitationRequiredErrorData
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type URLElicitationRequiredError = typeof URLElicitationRequiredError.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `elicitation/create`. Form mode needs the client's `elicitation`
 * capability (`{}` counts as form support), URL mode `elicitation.url`. A
 * request with a `task` param is {@link ElicitTask}.
 *
 * @category methods
 * @since 0.1.0
 */
export const Elicit = McpMethod.request({
  name: "elicitation/create",
  params: ElicitRequestParams,
  result: ElicitResult,
  from: "server",
  capability: (params) =>
    params.mode === "url"
      ? McpMethod.clientCapability("elicitation", "url")
      : McpMethod.clientCapability("elicitation")
})

/**
 * `elicitation/create` with a `task` param (2025-11-25, experimental):
 * answered with a `CreateTaskResult`. The same wire method as {@link Elicit},
 * declared apart so that each has one result type.
 *
 * @category methods
 * @since 0.1.0
 */
export const ElicitTask = McpMethod.withResult(Elicit, CreateTaskResult)

/**
 * `notifications/elicitation/complete`: a URL-mode elicitation finished. Its
 * capability is the client's `elicitation.url` (the server has no
 * elicitation capability of its own).
 *
 * @category methods
 * @since 0.1.0
 */
export const ElicitationComplete = McpMethod.notification({
  name: "notifications/elicitation/complete",
  params: ElicitationCompleteNotificationParams,
  from: "server",
  capability: McpMethod.clientCapability("elicitation", "url")
})
