import { assert, describe, it } from "@effect/vitest"
import { Option, Result } from "effect"
import * as UriTemplate from "../src/UriTemplate.ts"

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------

// The variables of RFC 6570 §3.2.
const rfc: Record<string, UriTemplate.Value> = {
  count: ["one", "two", "three"],
  dom: ["example", "com"],
  dub: "me/too",
  hello: "Hello World!",
  half: "50%",
  var: "value",
  who: "fred",
  base: "http://example.com/home/",
  path: "/foo/bar",
  list: ["red", "green", "blue"],
  v: "6",
  x: "1024",
  y: "768",
  empty: "",
  empty_keys: [],
  undef: undefined
}

const expands = (cases: ReadonlyArray<readonly [string, string]>) => {
  for (const [template, expected] of cases) {
    assert.strictEqual(UriTemplate.expand(UriTemplate.make(template), rfc), expected, template)
  }
}

const matches = (template: string, uri: string) =>
  Option.getOrUndefined(UriTemplate.match(UriTemplate.make(template), uri))

/** Expands the values, matches the result and checks the values come back. */
const roundTrip = (template: string, values: Record<string, string | ReadonlyArray<string>>, uri: string) => {
  const t = UriTemplate.make(template)
  const expanded = UriTemplate.expand(t, values)
  assert.strictEqual(expanded, uri, `expand ${template}`)
  assert.deepStrictEqual(Option.getOrUndefined(UriTemplate.match(t, expanded)), values, `match ${template}`)
}

const parseError = (template: string): string => {
  const result = UriTemplate.parse(template)
  if (Result.isSuccess(result)) return assert.fail(`expected "${template}" to be rejected`)
  return result.failure
}

// -----------------------------------------------------------------------------
// Parsing
// -----------------------------------------------------------------------------

describe("UriTemplate.parse", () => {
  it("splits literals and expressions and lists variables once, in order", () => {
    const t = UriTemplate.make("file:///{+path}{?rev,mode}{&rev}")
    assert.strictEqual(t.source, "file:///{+path}{?rev,mode}{&rev}")
    assert.deepStrictEqual(t.variables, ["path", "rev", "mode"])
    assert.deepStrictEqual(t.parts, [
      { _tag: "Literal", value: "file:///" },
      { _tag: "Expression", operator: "+", variables: [{ name: "path", explode: false, prefix: undefined }] },
      {
        _tag: "Expression",
        operator: "?",
        variables: [
          { name: "rev", explode: false, prefix: undefined },
          { name: "mode", explode: false, prefix: undefined }
        ]
      },
      { _tag: "Expression", operator: "&", variables: [{ name: "rev", explode: false, prefix: undefined }] }
    ])
    assert.isTrue(UriTemplate.isUriTemplate(t))
  })

  it("reads modifiers", () => {
    const t = UriTemplate.make("{/list*,var:3}")
    assert.deepStrictEqual((t.parts[0] as UriTemplate.Expression).variables, [
      { name: "list", explode: true, prefix: undefined },
      { name: "var", explode: false, prefix: 3 }
    ])
  })

  it("accepts a template without expressions", () => {
    const t = UriTemplate.make("config://app")
    assert.deepStrictEqual(t.variables, [])
    assert.strictEqual(UriTemplate.expand(t, {}), "config://app")
    assert.deepStrictEqual(UriTemplate.match(t, "config://app"), Option.some({}))
    assert.isTrue(Option.isNone(UriTemplate.match(t, "config://app2")))
  })

  it("rejects malformed templates with a message", () => {
    assert.include(parseError("{unclosed"), "unclosed expression at position 0")
    assert.include(parseError("a/{b/{c}"), "unclosed expression at position 2")
    assert.include(parseError("{}"), "empty expression")
    assert.include(parseError("{a b}"), `invalid variable name "a b"`)
    assert.include(parseError("x}"), `unmatched "}" at position 1`)
    assert.include(parseError("{+}"), "has no variable")
    assert.include(parseError("{a,}"), "missing variable name")
    assert.include(parseError("{=a}"), `operator "=" in expression "{=a}" at position 0 is reserved`)
    assert.include(parseError("{a:0}"), "invalid prefix length")
    assert.include(parseError("{a:10000}"), "invalid prefix length")
    assert.include(parseError("{a.}"), `invalid variable name "a."`)
    assert.include(parseError("{a b}"), `Invalid URI template "{a b}"`)
  })

  it("make dies on a malformed template", () => {
    assert.throws(() => UriTemplate.make("{unclosed"), /Invalid URI template "\{unclosed": unclosed expression/)
  })
})

// -----------------------------------------------------------------------------
// Expansion: RFC 6570 §1.2 and §3.2
// -----------------------------------------------------------------------------

describe("UriTemplate.expand", () => {
  it("RFC 6570 3.2.2 simple string expansion", () => {
    expands([
      ["{var}", "value"],
      ["{hello}", "Hello%20World%21"],
      ["{half}", "50%25"],
      ["O{empty}X", "OX"],
      ["O{undef}X", "OX"],
      ["{x,y}", "1024,768"],
      ["{x,hello,y}", "1024,Hello%20World%21,768"],
      ["?{x,empty}", "?1024,"],
      ["?{x,undef}", "?1024"],
      ["?{undef,y}", "?768"],
      ["map?{x,y}", "map?1024,768"],
      ["{var:3}", "val"],
      ["{var:30}", "value"],
      ["{list}", "red,green,blue"],
      ["{list*}", "red,green,blue"],
      ["{empty_keys}", ""],
      ["{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"]
    ])
  })

  it("RFC 6570 3.2.3 reserved expansion", () => {
    expands([
      ["{+var}", "value"],
      ["{+hello}", "Hello%20World!"],
      ["{+half}", "50%25"],
      ["{+base}index", "http://example.com/home/index"],
      ["O{+empty}X", "OX"],
      ["O{+undef}X", "OX"],
      ["{+path}/here", "/foo/bar/here"],
      ["here?ref={+path}", "here?ref=/foo/bar"],
      ["up{+path}{var}/here", "up/foo/barvalue/here"],
      ["{+x,hello,y}", "1024,Hello%20World!,768"],
      ["{+path,x}/here", "/foo/bar,1024/here"],
      ["{+path:6}/here", "/foo/b/here"],
      ["{+list}", "red,green,blue"],
      ["{+list*}", "red,green,blue"]
    ])
  })

  it("RFC 6570 3.2.4 fragment expansion", () => {
    expands([
      ["{#var}", "#value"],
      ["{#hello}", "#Hello%20World!"],
      ["{#half}", "#50%25"],
      ["foo{#empty}", "foo#"],
      ["foo{#undef}", "foo"],
      ["X{#var}", "X#value"],
      ["{#x,hello,y}", "#1024,Hello%20World!,768"],
      ["{#path,x}/here", "#/foo/bar,1024/here"],
      ["{#path:6}/here", "#/foo/b/here"],
      ["{#list}", "#red,green,blue"],
      ["{#list*}", "#red,green,blue"]
    ])
  })

  it("RFC 6570 3.2.5 label expansion with dot-prefix", () => {
    expands([
      ["{.who}", ".fred"],
      ["{.who,who}", ".fred.fred"],
      ["{.half,who}", ".50%25.fred"],
      ["www{.dom*}", "www.example.com"],
      ["X{.var}", "X.value"],
      ["X{.x,y}", "X.1024.768"],
      ["X{.empty}", "X."],
      ["X{.undef}", "X"],
      ["X{.var:3}", "X.val"],
      ["X{.list}", "X.red,green,blue"],
      ["X{.list*}", "X.red.green.blue"]
    ])
  })

  it("RFC 6570 3.2.6 path segment expansion", () => {
    expands([
      ["{/who}", "/fred"],
      ["{/who,who}", "/fred/fred"],
      ["{/half,who}", "/50%25/fred"],
      ["{/who,dub}", "/fred/me%2Ftoo"],
      ["{/var}", "/value"],
      ["{/var,empty}", "/value/"],
      ["{/var,undef}", "/value"],
      ["{/var,x}/here", "/value/1024/here"],
      ["{/var:1,var}", "/v/value"],
      ["{/list}", "/red,green,blue"],
      ["{/list*}", "/red/green/blue"],
      ["{/list*,path:4}", "/red/green/blue/%2Ffoo"]
    ])
  })

  it("RFC 6570 3.2.7 path-style parameter expansion", () => {
    expands([
      ["{;who}", ";who=fred"],
      ["{;half}", ";half=50%25"],
      ["{;empty}", ";empty"],
      ["{;v,empty,who}", ";v=6;empty;who=fred"],
      ["{;v,bar,who}", ";v=6;who=fred"],
      ["{;x,y}", ";x=1024;y=768"],
      ["{;x,y,empty}", ";x=1024;y=768;empty"],
      ["{;x,y,undef}", ";x=1024;y=768"],
      ["{;hello:5}", ";hello=Hello"],
      ["{;list}", ";list=red,green,blue"],
      ["{;list*}", ";list=red;list=green;list=blue"]
    ])
  })

  it("RFC 6570 3.2.8 form-style query expansion", () => {
    expands([
      ["{?who}", "?who=fred"],
      ["{?half}", "?half=50%25"],
      ["{?x,y}", "?x=1024&y=768"],
      ["{?x,y,empty}", "?x=1024&y=768&empty="],
      ["{?x,y,undef}", "?x=1024&y=768"],
      ["{?var:3}", "?var=val"],
      ["{?list}", "?list=red,green,blue"],
      ["{?list*}", "?list=red&list=green&list=blue"],
      ["{?undef}", ""]
    ])
  })

  it("RFC 6570 3.2.9 form-style query continuation", () => {
    expands([
      ["{&who}", "&who=fred"],
      ["{&half}", "&half=50%25"],
      ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
      ["{&x,y,empty}", "&x=1024&y=768&empty="],
      ["{&var:3}", "&var=val"],
      ["{&list}", "&list=red,green,blue"],
      ["{&list*}", "&list=red&list=green&list=blue"]
    ])
  })

  it("writes numbers and booleans with String and encodes UTF-8", () => {
    const t = UriTemplate.make("items/{id}{?draft,name}")
    assert.strictEqual(
      UriTemplate.expand(t, { id: 7, draft: true, name: "café ☕" }),
      "items/7?draft=true&name=caf%C3%A9%20%E2%98%95"
    )
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("{x}"), { x: "😀" }), "%F0%9F%98%80")
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("{x}"), { x: "\ud800" }), "%EF%BF%BD")
    // A prefix counts characters, not UTF-16 units.
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("{x:2}"), { x: "😀😀😀" }), "%F0%9F%98%80%F0%9F%98%80")
  })

  it("keeps %XX triplets in reserved expansion and encodes a lone %", () => {
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("{+x}"), { x: "a%20b%zz[1]" }), "a%20b%25zz[1]")
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("{x}"), { x: "a%20b" }), "a%2520b")
  })

  it("encodes what a literal may not contain", () => {
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("my file/{x}"), { x: "1" }), "my%20file/1")
  })

  it("ignores values that are not own properties", () => {
    assert.strictEqual(UriTemplate.expand(UriTemplate.make("{constructor}x"), {}), "x")
  })
})

// -----------------------------------------------------------------------------
// Matching
// -----------------------------------------------------------------------------

describe("UriTemplate.match", () => {
  it("round-trips a simple variable", () => {
    roundTrip("users/{id}", { id: "42" }, "users/42")
    roundTrip("repos/{owner}/{repo}/issues/{n}", { owner: "effect", repo: "mcp", n: "7" }, "repos/effect/mcp/issues/7")
  })

  it("round-trips reserved expansion", () => {
    roundTrip("file:///{+path}", { path: "src/a b/index.ts" }, "file:///src/a%20b/index.ts")
    roundTrip("repo/{+path}/blob", { path: "a/b/c" }, "repo/a/b/c/blob")
  })

  it("round-trips query parameters", () => {
    roundTrip("search{?q,lang}", { q: "hello world", lang: "en" }, "search?q=hello%20world&lang=en")
    roundTrip(
      "file:///{+path}{?rev,mode}",
      { path: "a/b.ts", rev: "main", mode: "raw" },
      "file:///a/b.ts?rev=main&mode=raw"
    )
    roundTrip("items{?page}{&size}", { page: "2", size: "50" }, "items?page=2&size=50")
    roundTrip("items{?tag*}", { tag: ["a", "b c"] }, "items?tag=a&tag=b%20c")
  })

  it("matches query parameters in any order, absent when missing", () => {
    const t = UriTemplate.make("file:///{+path}{?rev,mode}")
    assert.deepStrictEqual(
      UriTemplate.match(t, "file:///a/b?mode=raw&rev=1"),
      Option.some({ path: "a/b", mode: "raw", rev: "1" })
    )
    assert.deepStrictEqual(UriTemplate.match(t, "file:///a/b?mode=raw"), Option.some({ path: "a/b", mode: "raw" }))
    assert.deepStrictEqual(UriTemplate.match(t, "file:///a/b"), Option.some({ path: "a/b" }))
    assert.deepStrictEqual(UriTemplate.match(t, "file:///a/b?"), Option.some({ path: "a/b" }))
    assert.deepStrictEqual(UriTemplate.match(t, "file:///a/b?other=1&rev="), Option.some({ path: "a/b", rev: "" }))
    assert.deepStrictEqual(matches("items{?page}{&size}", "items?size=5"), { size: "5" })
    assert.deepStrictEqual(matches("search?fixed=yes{&x}", "search?fixed=yes&x=1"), { x: "1" })
  })

  it("round-trips path segments", () => {
    roundTrip("api{/version,resource}", { version: "v1", resource: "users" }, "api/v1/users")
    roundTrip("api{/segments*}", { segments: ["a", "b c", "d"] }, "api/a/b%20c/d")
    assert.deepStrictEqual(matches("api{/version,resource}", "api/v1"), { version: "v1" })
    assert.deepStrictEqual(matches("api{/version,resource}", "api"), {})
    assert.isUndefined(matches("api{/version,resource}", "api/v1/users/extra"))
  })

  it("round-trips labels", () => {
    roundTrip("files/{name}{.ext}", { name: "report", ext: "pdf" }, "files/report.pdf")
    roundTrip("host{.dom*}", { dom: ["example", "com"] }, "host.example.com")
    assert.deepStrictEqual(matches("files/{name}{.ext}", "files/report"), { name: "report" })
  })

  it("round-trips fragments", () => {
    roundTrip("doc/{id}{#section}", { id: "1", section: "intro/part 2" }, "doc/1#intro/part%202")
    assert.deepStrictEqual(matches("doc/{id}{#section}", "doc/1"), { id: "1" })
    assert.deepStrictEqual(matches("doc/{id}{#section}", "doc/1#"), { id: "1", section: "" })
  })

  it("round-trips several variables in one expression", () => {
    roundTrip("map?{x,y}", { x: "1024", y: "768" }, "map?1024,768")
    roundTrip("{+path,x}/here", { path: "/foo/bar", x: "1024" }, "/foo/bar,1024/here")
    roundTrip("X{.x,y}", { x: "1024", y: "768" }, "X.1024.768")
    roundTrip("{;x,y}", { x: "1024", y: "768" }, ";x=1024;y=768")
    roundTrip("{?x,y}{#frag}", { x: "1", y: "2", frag: "top" }, "?x=1&y=2#top")
  })

  it("round-trips percent-encoded characters", () => {
    roundTrip("notes/{title}", { title: "a/b c" }, "notes/a%2Fb%20c")
    roundTrip("notes/{title}", { title: "50% ☕?#&=" }, "notes/50%25%20%E2%98%95%3F%23%26%3D")
    roundTrip("q{?text}", { text: "a&b=c d" }, "q?text=a%26b%3Dc%20d")
  })

  it("decodes what a client sent unencoded, and never fails on bad encoding", () => {
    assert.deepStrictEqual(matches("tags/{tag}", "tags/a,b"), { tag: "a,b" })
    assert.deepStrictEqual(matches("notes/{title}", "notes/50%"), { title: "50%" })
    assert.deepStrictEqual(matches("notes/{title}", "notes/%FF"), { title: "\ufffd" })
  })

  it("returns none for a URI that does not fit", () => {
    const t = UriTemplate.make("users/{id}")
    assert.isTrue(Option.isNone(UriTemplate.match(t, "users/1/extra")))
    assert.isTrue(Option.isNone(UriTemplate.match(t, "user/1")))
    assert.isTrue(Option.isNone(UriTemplate.match(t, "users/")))
    assert.isTrue(Option.isNone(UriTemplate.match(t, "users/1?x=1")))
    assert.isTrue(Option.isNone(UriTemplate.match(t, "xusers/1")))
    assert.isTrue(Option.isNone(UriTemplate.match(UriTemplate.make("file:///{+path}"), "file:///")))
    assert.isTrue(Option.isNone(UriTemplate.match(UriTemplate.make("repo/{+path}/blob"), "repo/a/b/tree")))
    assert.isTrue(Option.isNone(UriTemplate.match(UriTemplate.make("a.{x}"), "abc")))
    assert.isFalse(UriTemplate.test(t, "users"))
    assert.isTrue(UriTemplate.test(t, "users/1"))
  })

  it("leaves room for what follows a reserved variable", () => {
    assert.deepStrictEqual(matches("file:///{+path}.md", "file:///docs/a.b/readme.md"), { path: "docs/a.b/readme" })
    // An optional part after a reserved variable takes what it can.
    assert.deepStrictEqual(matches("{+base}{/rest}", "http://x/y"), { base: "http://x", rest: "y" })
    assert.deepStrictEqual(matches("{+base}{/rest}", "http://x/"), { base: "http://x", rest: "" })
  })

  it("matches a template parsed at runtime", () => {
    const parsed = UriTemplate.parse("db://{table}/{+key}")
    assert.isTrue(Result.isSuccess(parsed))
    if (Result.isSuccess(parsed)) {
      assert.deepStrictEqual(
        UriTemplate.match(parsed.success, "db://users/a/b"),
        Option.some({ table: "users", key: "a/b" })
      )
    }
  })
})
