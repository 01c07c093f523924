/**
 * Type-level tests of `UriTemplate`, compiled by `npm run typecheck`
 * (`tsc -b`): each `@ts-expect-error` line must fail to compile, or the build
 * fails. Nothing here runs.
 */
import { Option, Schema } from "effect"
import * as UriTemplate from "../../src/UriTemplate.ts"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const check = <T extends true>(): T => true as T

// Variables strips operators and modifiers.
check<Equals<UriTemplate.Variables<"file:///{+path}{?rev,mode}">, "path" | "rev" | "mode">>()
check<
  Equals<
    UriTemplate.Variables<"{/list*,var:3}{.ext}{#frag}{;p}{&c}{x,y}">,
    "list" | "var" | "ext" | "frag" | "p" | "c" | "x" | "y"
  >
>()
check<Equals<UriTemplate.Variables<"config://app">, never>>()
check<Equals<UriTemplate.Variables<string>, string>>()
// @ts-expect-error the operator is not part of the name
check<Equals<UriTemplate.Variables<"{+path}">, "+path">>()

const template = UriTemplate.make("file:///{+path}{?rev,mode}")
check<Equals<typeof template, UriTemplate.UriTemplate<"file:///{+path}{?rev,mode}">>>()

// expand takes the template's variables, all optional, and nothing else.
UriTemplate.expand(template, { path: "a/b", rev: "main" })
UriTemplate.expand(template, {})
// @ts-expect-error "revision" is not a variable of the template
UriTemplate.expand(template, { path: "a/b", revision: "main" })
// @ts-expect-error a value is a string, number, boolean or list of strings
UriTemplate.expand(template, { path: { nested: true } })

// match returns a record of decoded values; a variable may be absent.
const matched = UriTemplate.match(template, "file:///a/b?rev=1")
Option.map(matched, (vars): string | ReadonlyArray<string> | undefined => vars.path)
// @ts-expect-error a variable may be absent (optional query parameters)
Option.map(matched, (vars): string | ReadonlyArray<string> => vars.path)

// A server can require one schema per variable.
declare const resourceTemplate: <T extends string>(
  template: UriTemplate.UriTemplate<T>,
  variables: { readonly [K in UriTemplate.Variables<T>]: Schema.Top }
) => void
resourceTemplate(template, { path: Schema.String, rev: Schema.String, mode: Schema.String })
// @ts-expect-error "mode" is missing
resourceTemplate(template, { path: Schema.String, rev: Schema.String })
// @ts-expect-error "pth" is not a variable of the template
resourceTemplate(template, { pth: Schema.String, rev: Schema.String, mode: Schema.String })

// A typed template is still a template.
const anyTemplate: UriTemplate.UriTemplate = template
// A template parsed at runtime accepts any variable name.
UriTemplate.expand(anyTemplate, { whatever: "x" })

// A template without variable schemas needs no services.
import { Effect as Eff } from "effect"
import * as McpResourceT from "../../src/McpResource.ts"
const plain = McpResourceT.template({ uriTemplate: "x://{id}", name: "x", read: ({ id }) => Eff.succeed(id) })
const noServices: McpResourceT.McpResourceTemplate<never> = plain
void noServices
