/**
 * Asking at the terminal, with effect's CLI prompts drawn on stderr (stdout
 * carries only the command's output): a form elicitation field by field, and
 * the consent to a URL elicitation. Esc, Ctrl-C or Ctrl-D cancel (the
 * terminal is in raw mode while a prompt reads, so Ctrl-C is a key, not a
 * signal); the first choice of each has an explicit "Decline". Everything
 * from the server is made safe for a terminal before it is shown.
 *
 * @internal
 */
import type * as McpSchema from "@effect-mcp/core/McpSchema"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Prompt from "effect/cli/Prompt"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Terminal from "effect/Terminal"
import * as Answers from "./answers.ts"
import * as Format from "./format.ts"

/**
 * The process's terminal with its output on stderr: keys are read from stdin
 * (raw mode while a prompt reads), frames are written to stderr.
 */
export const stderrTerminal: Effect.Effect<Terminal.Terminal, never, Scope.Scope> = Effect.map(
  NodeTerminal.make(),
  (terminal) =>
    Terminal.make({
      columns: Effect.sync(() => process.stderr.columns || 80),
      rows: Effect.sync(() => process.stderr.rows || 24),
      size: terminal.size,
      readInput: terminal.readInput,
      readLine: terminal.readLine,
      display: (text) =>
        Effect.sync(() => {
          process.stderr.write(text)
        })
    })
)

/** `true` when a person can be asked: stdin and stderr are terminals. */
export const isInteractive = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

/** Server text on one line, safe for a terminal. */
export const line = (text: string): string => Format.terminal(text, { line: true })

/** A line on stderr, through the prompt's terminal. */
const say = (text: string) =>
  Effect.flatMap(Terminal.Terminal, (terminal) => Effect.orDie(terminal.display(`${text}\n`)))

type Asked<A> = Effect.Effect<A, Terminal.QuitError, Prompt.Environment>

// -----------------------------------------------------------------------------
// A form
// -----------------------------------------------------------------------------

const labelOf = (field: Answers.FormField): string => {
  const title = line(field.title ?? field.name)
  const description = field.description === undefined || field.description.trim() === ""
    ? ""
    : ` (${line(field.description)})`
  return `${title}${field.required ? "" : " [optional]"}${description}`
}

/** A text answer: a string, or a number typed as text; empty leaves an optional field out. */
const askText = (
  field: Answers.FormField,
  parse: (text: string) => Result.Result<string | number, string>,
  initial: string
): Asked<string | number | undefined> =>
  Prompt.String({
    message: labelOf(field),
    default: initial,
    validate: (text) => {
      if (text === "") return field.required ? Effect.fail("an answer is required") : Effect.succeed(text)
      const parsed = parse(text)
      if (Result.isFailure(parsed)) return Effect.fail(parsed.failure)
      const problem = Answers.checkValue(field.field, parsed.success)
      return problem === undefined ? Effect.succeed(text) : Effect.fail(problem)
    }
  }).pipe(Effect.map((text) => {
    if (text === "") return undefined
    const parsed = parse(text)
    return Result.isSuccess(parsed) ? parsed.success : undefined
  }))

const parseNumber = (integer: boolean) => (text: string): Result.Result<string | number, string> => {
  const number = Number(text.trim())
  return text.trim() === "" || !Number.isFinite(number)
    ? Result.fail(`expected ${integer ? "an integer" : "a number"}`)
    : Result.succeed(number)
}

const NO_ANSWER = "(no answer)"

/** One choice among several: the index of the chosen, or -1 for no answer. */
const askChoice = (
  field: Answers.FormField,
  titles: ReadonlyArray<string>,
  initial: number | undefined
): Asked<number> => {
  const skip = !field.required && initial === undefined
  return Prompt.Select({
    message: labelOf(field),
    choices: [
      ...titles.map((title, index) => ({ title: line(title), value: index, selected: index === initial })),
      ...(skip ? [{ title: NO_ANSWER, value: -1 }] : [])
    ]
  })
}

const askField = (form: Answers.FormField): Asked<McpSchema.ElicitValue | undefined> => {
  const field = form.field
  const initial = Answers.defaultOf(field)
  switch (field._tag) {
    case "String":
      return askText(form, Result.succeed, typeof initial === "string" ? initial : "")
    case "Number":
      return askText(form, parseNumber(field.integer), typeof initial === "number" ? String(initial) : "")
    case "Boolean":
      return Effect.map(
        askChoice(form, ["yes", "no"], initial === true ? 0 : initial === false ? 1 : undefined),
        (index) => index === -1 ? undefined : index === 0
      )
    case "Single": {
      const chosen = field.choices.findIndex((choice) => choice.value === initial)
      return Effect.map(
        askChoice(form, field.choices.map((choice) => choice.title), chosen === -1 ? undefined : chosen),
        (index) => field.choices[index]?.value
      )
    }
    case "Multi": {
      const selected = Array.isArray(initial) ? initial : []
      return Effect.map(
        Prompt.MultiSelect({
          message: `${labelOf(form)} (space selects, enter submits)`,
          choices: field.choices.map((choice) => ({
            title: line(choice.title),
            value: choice.value,
            selected: selected.includes(choice.value)
          })),
          ...(field.minItems !== undefined ? { min: field.minItems } : {}),
          ...(field.maxItems !== undefined ? { max: field.maxItems } : {})
        }),
        (values) => values.length === 0 && !form.required ? undefined : values
      )
    }
  }
}

/**
 * Asks a form field by field. The first question offers to fill it in or to
 * decline it; Esc, Ctrl-C or Ctrl-D at any question cancels it. The answer
 * is checked against the form before it is returned (a field's own check runs
 * as it is answered, and asks again).
 */
export const askForm = (
  server: string,
  params: McpSchema.ElicitRequestFormParams
): Effect.Effect<McpSchema.ElicitResult, never, Prompt.Environment> =>
  Effect.gen(function*() {
    const fields = Answers.fieldsOf(params.requestedSchema)
    yield* say(`\nserver "${line(server)}" asks: ${line(params.message)}\n(Esc or Ctrl-C cancels)`)
    const how = yield* Prompt.Select({
      message: fields.length === 0 ? "Accept?" : `Answer the form (${fields.length} fields)?`,
      choices: [
        { title: fields.length === 0 ? "Accept" : "Fill it in", value: "accept" as const },
        { title: "Decline", value: "decline" as const }
      ]
    })
    if (how === "decline") return { action: "decline" as const }
    const content: Record<string, unknown> = {}
    for (const field of fields) {
      const value = yield* askField(field)
      if (value !== undefined) content[field.name] = value
    }
    const checked = Answers.checkContent(params.requestedSchema, content)
    if (Result.isFailure(checked)) {
      yield* say(`the answers do not fit the form: ${checked.failure.join("; ")}; cancelled`)
      return { action: "cancel" as const }
    }
    return { action: "accept" as const, content: checked.success }
  }).pipe(
    Effect.catch(() => Effect.as(say("cancelled"), { action: "cancel" as const }))
  )

// -----------------------------------------------------------------------------
// A URL
// -----------------------------------------------------------------------------

/**
 * Asks whether to go to a URL (shown already): accept (opening it with
 * `open`) or decline; Esc, Ctrl-C or Ctrl-D cancels.
 */
export const askUrl = (open: boolean): Effect.Effect<"accept" | "decline" | "cancel", never, Prompt.Environment> =>
  Prompt.Select({
    message: open ? "Open it in the browser?" : "Go to it?",
    choices: [
      { title: open ? "Open it" : "Accept (open it yourself)", value: "accept" as const },
      { title: "Decline", value: "decline" as const }
    ]
  }).pipe(
    Effect.catch(() => Effect.as(say("cancelled"), "cancel" as const))
  )
