/**
 * The answers to a server's elicitations: the format of `--answers JSON`, the
 * fields of a requested form (what each asks for), and the check of an
 * answer against the form before it is sent.
 *
 * `--answers` is one answer, used for every elicitation, or a JSON array of
 * answers used one per elicitation, in the order they come (once it runs out,
 * elicitations are declined). An answer is a JSON object:
 *
 * - `{"action":"decline"}` or `{"action":"cancel"}`;
 * - `{"action":"accept","content":{...}}`: accept, with these field values;
 * - any other object (no `"action"` key): the field values of an accept,
 *   `{"name":"Ada","age":36}`.
 *
 * A URL elicitation takes the action of its answer (an object of field
 * values accepts it).
 *
 * @internal
 */
import type * as McpSchema from "@effect-mcp/core/McpSchema"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Failures from "./failures.ts"

// -----------------------------------------------------------------------------
// --answers
// -----------------------------------------------------------------------------

/** One answer of `--answers`. */
export type Answer =
  | { readonly action: "accept"; readonly content: Readonly<Record<string, unknown>> }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/** `--answers`: the same answer every time, or answers in order. */
export type Answers =
  | { readonly _tag: "Every"; readonly answer: Answer }
  | { readonly _tag: "InOrder"; readonly answers: ReadonlyArray<Answer> }

const ACTIONS = ["accept", "decline", "cancel"] as const

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

const parseAnswer = (value: unknown, where: string): Result.Result<Answer, Failures.CliFailure> => {
  if (!Predicate.isObject(value) || Array.isArray(value)) {
    return Result.fail(Failures.usage(`--answers: ${where} must be a JSON object, got ${shown(value)}`))
  }
  const record = value as Readonly<Record<string, unknown>>
  if (!("action" in record)) return Result.succeed({ action: "accept", content: record })
  const action = record.action
  if (action !== "accept" && action !== "decline" && action !== "cancel") {
    return Result.fail(Failures.usage(
      `--answers: ${where} has "action" ${shown(action)}; it is one of ${ACTIONS.map((a) => `"${a}"`).join(", ")}`
    ))
  }
  const extra = Object.keys(record).filter((key) => key !== "action" && key !== "content")
  if (extra.length > 0) {
    return Result.fail(Failures.usage(
      `--answers: ${where} has "action" and ${extra.map((key) => `"${key}"`).join(", ")}: an answer with "action" ` +
        `has only "content" besides (field values go in "content", or in an object without "action")`
    ))
  }
  if (action !== "accept") {
    return record.content === undefined
      ? Result.succeed({ action })
      : Result.fail(Failures.usage(`--answers: ${where} is a ${action}, which has no "content"`))
  }
  const content = record.content ?? {}
  if (!Predicate.isObject(content) || Array.isArray(content)) {
    return Result.fail(
      Failures.usage(`--answers: the "content" of ${where} must be a JSON object, got ${shown(content)}`)
    )
  }
  return Result.succeed({ action: "accept", content: content as Readonly<Record<string, unknown>> })
}

/** The text of `--answers` (see the module's header). */
export const parseAnswers = (text: string): Result.Result<Answers, Failures.CliFailure> => {
  const parsed = Result.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      Failures.usage(`--answers is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  })
  return Result.flatMap(parsed, (value): Result.Result<Answers, Failures.CliFailure> => {
    if (!Array.isArray(value)) {
      return Result.map(parseAnswer(value, "the answer"), (answer) => ({ _tag: "Every", answer }))
    }
    const answers: Array<Answer> = []
    for (const [index, item] of value.entries()) {
      const answer = parseAnswer(item, `answer ${index + 1}`)
      if (Result.isFailure(answer)) return Result.fail(answer.failure)
      answers.push(answer.success)
    }
    return Result.succeed({ _tag: "InOrder", answers })
  })
}

/**
 * Hands out the answers: the same one each time, or the next of the list
 * (`undefined` once it ran out).
 */
export const source = (answers: Answers): () => { readonly answer: Answer | undefined; readonly index: number } => {
  let next = 0
  return () => {
    const index = next++
    return answers._tag === "Every"
      ? { answer: answers.answer, index }
      : { answer: answers.answers[index], index }
  }
}

// -----------------------------------------------------------------------------
// The fields of a form
// -----------------------------------------------------------------------------

/** One choice of an enum field: its value and its label. */
export interface Choice {
  readonly value: string
  readonly title: string
}

/** What a form field asks for. */
export type Field =
  | { readonly _tag: "String"; readonly schema: McpSchema.StringSchema }
  | { readonly _tag: "Number"; readonly schema: McpSchema.NumberSchema; readonly integer: boolean }
  | { readonly _tag: "Boolean"; readonly schema: McpSchema.BooleanSchema }
  | { readonly _tag: "Single"; readonly choices: ReadonlyArray<Choice>; readonly default: string | undefined }
  | {
    readonly _tag: "Multi"
    readonly choices: ReadonlyArray<Choice>
    readonly default: ReadonlyArray<string> | undefined
    readonly minItems: number | undefined
    readonly maxItems: number | undefined
  }

/** A field of a form, with its name, label and whether it must be answered. */
export interface FormField {
  readonly name: string
  readonly title: string | undefined
  readonly description: string | undefined
  readonly required: boolean
  readonly field: Field
}

/** What a field schema asks for: a string, a number, a boolean, one choice or several. */
export const fieldOf = (schema: McpSchema.PrimitiveSchemaDefinition): Field => {
  if (schema.type === "array") {
    const items = schema.items
    const choices = "anyOf" in items
      ? items.anyOf.map((option) => ({ value: option.const, title: option.title }))
      : items.enum.map((value) => ({ value, title: value }))
    return {
      _tag: "Multi",
      choices,
      default: schema.default,
      minItems: schema.minItems,
      maxItems: schema.maxItems
    }
  }
  if (schema.type === "boolean") return { _tag: "Boolean", schema }
  if (schema.type === "number" || schema.type === "integer") {
    return { _tag: "Number", schema, integer: schema.type === "integer" }
  }
  if ("oneOf" in schema && schema.oneOf !== undefined) {
    return {
      _tag: "Single",
      choices: schema.oneOf.map((option) => ({ value: option.const, title: option.title })),
      default: schema.default
    }
  }
  if ("enum" in schema && schema.enum !== undefined) {
    const names = "enumNames" in schema ? schema.enumNames : undefined
    return {
      _tag: "Single",
      choices: schema.enum.map((value, index) => ({ value, title: names?.[index] ?? value })),
      default: schema.default
    }
  }
  return { _tag: "String", schema: schema as McpSchema.StringSchema }
}

/** The fields of a form, in the order of its `properties`. */
export const fieldsOf = (schema: McpSchema.ElicitRequestedSchema): ReadonlyArray<FormField> => {
  const required = new Set(schema.required ?? [])
  return Object.entries(schema.properties).map(([name, property]) => ({
    name,
    title: property.title,
    description: property.description,
    required: required.has(name),
    field: fieldOf(property)
  }))
}

// -----------------------------------------------------------------------------
// Checking an answer
// -----------------------------------------------------------------------------

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/

const validDate = (text: string): boolean => {
  const match = DATE.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

const validUri = (text: string): boolean => SCHEME.test(text) && Result.isSuccess(Result.try(() => new URL(text)))

const checkFormat = (format: McpSchema.StringSchema["format"], text: string): string | undefined => {
  switch (format) {
    case "email":
      return EMAIL.test(text) ? undefined : "is not an email address"
    case "uri":
      return validUri(text) ? undefined : "is not a URI (e.g. https://example.com)"
    case "date":
      return validDate(text) ? undefined : "is not a date (YYYY-MM-DD)"
    case "date-time":
      return DATE_TIME.test(text) && !Number.isNaN(new Date(text).getTime())
        ? undefined
        : "is not a date and time (e.g. 2026-07-28T12:00:00Z)"
    default:
      return undefined
  }
}

const choiceList = (choices: ReadonlyArray<Choice>): string => choices.map((choice) => shown(choice.value)).join(", ")

/** What is wrong with a value for a field, or `undefined`. */
export const checkValue = (field: Field, value: unknown): string | undefined => {
  switch (field._tag) {
    case "String": {
      if (typeof value !== "string") return `expected a string, got ${shown(value)}`
      const { format, maxLength, minLength } = field.schema
      if (minLength !== undefined && value.length < minLength) return `is shorter than ${minLength} characters`
      if (maxLength !== undefined && value.length > maxLength) return `is longer than ${maxLength} characters`
      return checkFormat(format, value)
    }
    case "Number": {
      if (typeof value !== "number" || !Number.isFinite(value)) {
        return `expected ${field.integer ? "an integer" : "a number"}, got ${shown(value)}`
      }
      if (field.integer && !Number.isInteger(value)) return `expected an integer, got ${value}`
      const { maximum, minimum } = field.schema
      if (minimum !== undefined && value < minimum) return `is less than ${minimum}`
      if (maximum !== undefined && value > maximum) return `is more than ${maximum}`
      return undefined
    }
    case "Boolean":
      return typeof value === "boolean" ? undefined : `expected true or false, got ${shown(value)}`
    case "Single":
      return typeof value === "string" && field.choices.some((choice) => choice.value === value)
        ? undefined
        : `expected one of ${choiceList(field.choices)}, got ${shown(value)}`
    case "Multi": {
      if (!Array.isArray(value)) return `expected a list of ${choiceList(field.choices)}, got ${shown(value)}`
      const wrong = value.find((item) =>
        typeof item !== "string" || !field.choices.some((choice) => choice.value === item)
      )
      if (wrong !== undefined) return `${shown(wrong)} is not one of ${choiceList(field.choices)}`
      if (new Set(value).size !== value.length) return "has a choice twice"
      if (field.minItems !== undefined && value.length < field.minItems) {
        return `needs at least ${field.minItems} choices`
      }
      if (field.maxItems !== undefined && value.length > field.maxItems) {
        return `takes at most ${field.maxItems} choices`
      }
      return undefined
    }
  }
}

/** The default of a field, when it has one that fits it. */
export const defaultOf = (field: Field): McpSchema.ElicitValue | undefined => {
  const value = field._tag === "String" || field._tag === "Number" || field._tag === "Boolean"
    ? field.schema.default
    : field.default
  return value === undefined || checkValue(field, value) !== undefined
    ? undefined
    : Array.isArray(value)
    ? [...value]
    : value
}

/**
 * The content of an accept checked against the form: the fields it left out
 * filled with their defaults, every value fitting its field, every required
 * field answered, no field the form does not have. Fails with the problems,
 * one per field.
 */
export const checkContent = (
  schema: McpSchema.ElicitRequestedSchema,
  content: Readonly<Record<string, unknown>>
): Result.Result<Record<string, McpSchema.ElicitValue>, ReadonlyArray<string>> => {
  const fields = fieldsOf(schema)
  const problems: Array<string> = []
  const names = new Set(fields.map((field) => field.name))
  for (const key of Object.keys(content)) {
    if (!names.has(key)) {
      problems.push(
        `"${key}" is not a field of the form (${
          fields.length === 0 ? "it has none" : `its fields: ${fields.map((field) => field.name).join(", ")}`
        })`
      )
    }
  }
  const checked: Record<string, McpSchema.ElicitValue> = {}
  for (const { field, name, required } of fields) {
    const value = content[name] ?? defaultOf(field)
    if (value === undefined || value === null) {
      if (required) problems.push(`"${name}" is required`)
      continue
    }
    const problem = checkValue(field, value)
    if (problem !== undefined) problems.push(`"${name}" ${problem}`)
    else checked[name] = value as McpSchema.ElicitValue
  }
  return problems.length === 0 ? Result.succeed(checked) : Result.fail(problems)
}
