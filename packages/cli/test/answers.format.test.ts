/**
 * The format of `--answers` and the check of an answer against a requested
 * form (answers.ts), and the URLs a URL elicitation may show (questions.ts).
 */
import type { McpSchema } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as Answers from "../src/internal/answers.ts"
import * as Questions from "../src/internal/questions.ts"

const form: McpSchema.ElicitRequestedSchema = {
  type: "object",
  properties: {
    email: { type: "string", format: "email" },
    born: { type: "string", format: "date" },
    site: { type: "string", format: "uri", maxLength: 30 },
    at: { type: "string", format: "date-time" },
    size: { type: "number", minimum: 0.5, maximum: 2 },
    count: { type: "integer", default: 3 },
    ok: { type: "boolean" },
    pick: { type: "string", enum: ["a", "b"], default: "zz" },
    many: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, minItems: 1, default: ["a"] }
  },
  required: ["email"]
}

const check = (content: Record<string, unknown>) => Answers.checkContent(form, content)

describe("--answers", () => {
  it("one answer for every elicitation, or a list in order; an object without action is an accept's content", () => {
    assert.deepStrictEqual(Result.getOrThrow(Answers.parseAnswers("{\"a\":1}")), {
      _tag: "Every",
      answer: { action: "accept", content: { a: 1 } }
    })
    const list = Answers.parseAnswers("[{\"action\":\"decline\"},{\"action\":\"accept\"},{\"action\":\"cancel\"}]")
    assert.isTrue(Result.isSuccess(list))
    const next = Answers.source(Result.getOrThrow(list))
    assert.deepStrictEqual(next(), { answer: { action: "decline" }, index: 0 })
    assert.deepStrictEqual(next(), { answer: { action: "accept", content: {} }, index: 1 })
    assert.deepStrictEqual(next(), { answer: { action: "cancel" }, index: 2 })
    assert.deepStrictEqual(next(), { answer: undefined, index: 3 })
  })

  it("refuses what is not an answer", () => {
    const problem = (text: string) => {
      const parsed = Answers.parseAnswers(text)
      return Result.isFailure(parsed) ? parsed.failure.description : "parsed"
    }
    assert.include(problem("nope"), "--answers is not valid JSON")
    assert.include(problem("\"yes\""), "the answer must be a JSON object, got \"yes\"")
    assert.include(problem("[[]]"), "answer 1 must be a JSON object, got []")
    assert.include(problem("{\"action\":\"decline\",\"content\":{}}"), "is a decline, which has no \"content\"")
    assert.include(
      problem("{\"action\":\"accept\",\"content\":[1]}"),
      "the \"content\" of the answer must be a JSON object"
    )
  })
})

describe("a form's answer", () => {
  it("fills the defaults that fit, and checks formats, bounds, integers, choices and required fields", () => {
    assert.deepStrictEqual(
      Result.getOrThrow(check({ email: "ada@example.com", born: "1815-12-10", size: 1.5, ok: false })),
      { email: "ada@example.com", born: "1815-12-10", size: 1.5, count: 3, ok: false, many: ["a"] }
    )
    const problems = check({
      born: "1815-02-30",
      site: "not a uri",
      at: "yesterday",
      size: 3,
      count: 1.5,
      ok: "yes",
      pick: "c",
      many: ["a", "a"],
      extra: true
    })
    assert.isTrue(Result.isFailure(problems))
    assert.deepStrictEqual(Result.isFailure(problems) ? problems.failure : [], [
      "\"extra\" is not a field of the form (its fields: email, born, site, at, size, count, ok, pick, many)",
      "\"email\" is required",
      "\"born\" is not a date (YYYY-MM-DD)",
      "\"site\" is not a URI (e.g. https://example.com)",
      "\"at\" is not a date and time (e.g. 2026-07-28T12:00:00Z)",
      "\"size\" is more than 2",
      "\"count\" expected an integer, got 1.5",
      "\"ok\" expected true or false, got \"yes\"",
      "\"pick\" expected one of \"a\", \"b\", got \"c\"",
      "\"many\" has a choice twice"
    ])
    const long = check({ email: "x@y.z", site: "https://example.com/a/very/long/path/indeed" })
    assert.deepStrictEqual(Result.isFailure(long) ? long.failure : [], ["\"site\" is longer than 30 characters"])
  })

  it("knows every kind of field of 2025-11-25", () => {
    assert.deepStrictEqual(
      Answers.fieldOf({ type: "string", oneOf: [{ const: "r", title: "Red" }] }),
      { _tag: "Single", choices: [{ value: "r", title: "Red" }], default: undefined }
    )
    assert.deepStrictEqual(
      Answers.fieldOf({ type: "string", enum: ["c", "d"], enumNames: ["Cats", "Dogs"], default: "d" }),
      { _tag: "Single", choices: [{ value: "c", title: "Cats" }, { value: "d", title: "Dogs" }], default: "d" }
    )
    assert.deepStrictEqual(
      Answers.fieldOf({ type: "array", items: { anyOf: [{ const: "x", title: "Ex" }] }, maxItems: 1 }),
      { _tag: "Multi", choices: [{ value: "x", title: "Ex" }], default: undefined, minItems: undefined, maxItems: 1 }
    )
    assert.strictEqual(Answers.fieldOf({ type: "integer" })._tag, "Number")
    assert.strictEqual(Answers.fieldOf({ type: "boolean" })._tag, "Boolean")
    assert.strictEqual(Answers.fieldOf({ type: "string" })._tag, "String")
  })
})

describe("a URL elicitation's URL", () => {
  it("only http: and https: URLs are shown, escapes percent-encoded", () => {
    assert.strictEqual(Questions.safeUrl("https://example.com/a?b=c")?.href, "https://example.com/a?b=c")
    assert.strictEqual(Questions.safeUrl("http://127.0.0.1:8080/")?.href, "http://127.0.0.1:8080/")
    assert.strictEqual(Questions.safeUrl("https://example.com/\x1b[2J")?.href, "https://example.com/%1B[2J")
    for (const url of ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "vscode://x", "not a url"]) {
      assert.isUndefined(Questions.safeUrl(url), url)
    }
  })
})
