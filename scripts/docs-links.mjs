#!/usr/bin/env node
// Checks the links of the built docs site: `node scripts/docs-links.mjs DIST [--base /path/]`.
//
// Reads every `.html` file under DIST (VitePress's output, `cleanUrls: true`) and, for every
// `<a href>`, `<link href>` and `src`/`srcset` (scripts, images, frames, media) that stays on the
// site (relative, or root-relative under the site's `base`), checks that its target exists:
// `/guide/x` is `guide/x.html`, `/guide/` is `guide/index.html`, `/guide/x.html` and assets
// (`/assets/app.js`, `/logo.svg`) are files. A link with a `#fragment` needs an element with that
// id (or an `<a name>`) on the target page; the fragment is percent-decoded first, and `#` alone
// or `#top` is the top of the page, as browsers have it. Links to other sites are not fetched:
// `https:`, `mailto:` and `tel:` pass as written (and `data:` but in a link to follow), while
// `http:`, `javascript:`, `file:`, protocol-relative (`//host`) and any other scheme are broken
// links. `/guide` where only `guide/index.html` exists is broken too: VitePress's router finds the
// page, but a host answers the path with a redirect or, as `vitepress preview` does, with the page at
// the wrong URL, where its relative links resolve one directory up; the link needs its slash. A missing id is reported with the id that was probably meant
// when one matches it but for accents, case and punctuation. A page without an `<h1>` with text (an
// empty page) is reported too; the not-found page (`404.html`) is exempt.
//
// The site's base is read from the pages (the `src` of VitePress's `assets/app.*.js` script, which
// carries it), unless `--base` names it.
//
// Prints one line per broken link, `page → href: why` (a link broken the same way on several
// pages, as in a sidebar, is one line naming the first page and how many more), and exits 1; when
// all is well prints `N pages, N links, N anchors: ok` and exits 0. Exits 2 on a usage error (no
// DIST, or no page in it).
//
// Node's built-ins only: the scan below reads tags and their attributes, skipping comments and the
// raw text of `<script>`, `<style>`, `<textarea>` and `<title>`, which is all a link check needs.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, sep } from "node:path"

// -----------------------------------------------------------------------------
// HTML: tags, attributes, character references
// -----------------------------------------------------------------------------

const NAMED = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0" }

/** Decodes the character references of an attribute value (numeric ones, and the few names that appear in URLs and ids). */
const decodeEntities = (text) =>
  text.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return NAMED[ref] ?? whole
  })

const RAW_TEXT = new Set(["script", "style", "textarea", "title"])

/**
 * The tags of `html` in order: `{ name, attributes, start, end }` for a start tag (lower-case name,
 * attribute names lower-case and values decoded; `end` is the index after `>`), and
 * `{ name: "/h1", start, end }` for an end tag. Comments, doctypes and raw text are skipped.
 */
const scanTags = (html) => {
  const tags = []
  let at = 0
  while (at < html.length) {
    const open = html.indexOf("<", at)
    if (open === -1) break
    if (html.startsWith("<!--", open)) {
      const close = html.indexOf("-->", open + 4)
      at = close === -1 ? html.length : close + 3
      continue
    }
    if (html[open + 1] === "!" || html[open + 1] === "?") {
      const close = html.indexOf(">", open)
      at = close === -1 ? html.length : close + 1
      continue
    }
    const endTag = /^<\/([a-zA-Z][a-zA-Z0-9-]*)[^>]*>/.exec(html.slice(open, open + 200))
    if (endTag !== null) {
      tags.push({ name: `/${endTag[1].toLowerCase()}`, start: open, end: open + endTag[0].length })
      at = open + endTag[0].length
      continue
    }
    const nameMatch = /^<([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(open, open + 100))
    if (nameMatch === null) {
      at = open + 1
      continue
    }
    const name = nameMatch[1].toLowerCase()
    const attributes = new Map()
    let i = open + nameMatch[0].length
    // attributes: name, optionally = and a value (double-quoted, single-quoted or unquoted)
    for (;;) {
      while (i < html.length && /[\s/]/.test(html[i])) i++
      if (i >= html.length || html[i] === ">") break
      const attrName = /^[^\s"'>/=]+/.exec(html.slice(i, i + 200))
      if (attrName === null) {
        i++
        continue
      }
      i += attrName[0].length
      while (i < html.length && /\s/.test(html[i])) i++
      let value = ""
      if (html[i] === "=") {
        i++
        while (i < html.length && /\s/.test(html[i])) i++
        const quote = html[i]
        if (quote === "\"" || quote === "'") {
          const close = html.indexOf(quote, i + 1)
          const stop = close === -1 ? html.length : close
          value = html.slice(i + 1, stop)
          i = stop + 1
        } else {
          const unquoted = /^[^\s>]*/.exec(html.slice(i))[0]
          value = unquoted
          i += unquoted.length
        }
      }
      const key = attrName[0].toLowerCase()
      if (!attributes.has(key)) attributes.set(key, decodeEntities(value))
    }
    const end = Math.min(i + 1, html.length)
    tags.push({ name, attributes, start: open, end })
    at = end
    if (RAW_TEXT.has(name)) {
      const closing = new RegExp(`</${name}`, "gi")
      closing.lastIndex = end
      const close = closing.exec(html)
      at = close === null ? html.length : close.index
    }
  }
  return tags
}

/** The text between a start tag and its end tag (tags stripped, references decoded, zero-width spaces removed), trimmed. */
const textBetween = (html, from, to) =>
  decodeEntities(html.slice(from, to).replace(/<!--[\s\S]*?-->/g, "").replace(/<[^>]*>/g, ""))
    .replace(/[\u200b\u00a0]/g, " ")
    .trim()

/**
 * What a page holds for the check: its ids (and `<a name>`s), its `<h1>`s' text, and its links
 * (`{ attribute, tag, value }`, one per URL: a `srcset` gives one per candidate).
 */
const readPage = (html) => {
  const tags = scanTags(html)
  const ids = new Set()
  const headings = []
  const links = []
  for (let index = 0; index < tags.length; index++) {
    const tag = tags[index]
    if (tag.name.startsWith("/")) continue
    const id = tag.attributes.get("id")
    if (id !== undefined && id !== "") ids.add(id)
    if (tag.name === "a" && tag.attributes.has("name")) ids.add(tag.attributes.get("name"))
    if (tag.name === "h1") {
      const close = tags.slice(index + 1).find((other) => other.name === "/h1")
      headings.push(textBetween(html, tag.end, close === undefined ? html.length : close.start))
    }
    const href = tag.attributes.get("href")
    if (href !== undefined && (tag.name === "a" || tag.name === "area" || tag.name === "link")) {
      // a <link rel="canonical">, "alternate" or "preconnect" to another site is a URL like any other
      links.push({ tag: tag.name, attribute: "href", value: href })
    }
    const src = tag.attributes.get("src")
    if (src !== undefined && src !== "") links.push({ tag: tag.name, attribute: "src", value: src })
    const srcset = tag.attributes.get("srcset")
    if (srcset !== undefined) {
      for (const candidate of srcset.split(",")) {
        const url = candidate.trim().split(/\s+/)[0]
        if (url !== undefined && url !== "") links.push({ tag: tag.name, attribute: "srcset", value: url })
      }
    }
  }
  return { ids, headings, links }
}

// -----------------------------------------------------------------------------
// the site
// -----------------------------------------------------------------------------

/** Every file under `dir`, as paths relative to it with `/` separators, sorted. */
const listFiles = (dir) => {
  const files = []
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) files.push(relative(dir, path).split(sep).join("/"))
    }
  }
  walk(dir)
  return files.sort()
}

/** The URL path of a page: `index.html` → `/`, `guide/index.html` → `/guide/`, `guide/x.html` → `/guide/x` (clean URLs). */
const routeOf = (file) => {
  if (file === "index.html") return "/"
  if (file.endsWith("/index.html")) return `/${file.slice(0, -"index.html".length)}`
  return `/${file.slice(0, -".html".length)}`
}

/** The base the pages were built with, from the `src` of VitePress's app script (`<base>assets/app.<hash>.js`); `/` when none says. */
const detectBase = (pages) => {
  for (const page of pages.values()) {
    for (const link of page.links) {
      const match = /^(\/(?:[^?#]*\/)?)assets\/app\.[\w-]+\.js$/.exec(link.value)
      if (link.attribute === "src" && match !== null) return match[1]
    }
  }
  return "/"
}

const ALLOWED_SCHEMES = new Set(["https:", "mailto:", "tel:"])

/** Whether a fragment names the top of the page without an id (`#`, `#top`, as in the HTML standard). */
const isTop = (fragment) => fragment === "" || fragment.toLowerCase() === "top"

/** A slug-like form for suggesting the id that was probably meant: accents removed, lower case, runs of other characters as `-`. */
const loose = (text) =>
  text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

/**
 * Checks one link of `file` (at route `route`); returns `{ reason }` when it is broken, else
 * `{ internal, anchor }` saying what was checked.
 */
const checkLink = (site, file, route, link) => {
  const { value } = link
  const raw = value.trim()
  if (raw === "") return { reason: "empty URL" }
  if (raw.startsWith("//")) return { reason: "protocol-relative URL: write https://" }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw)
  if (scheme !== null) {
    const name = `${scheme[1].toLowerCase()}:`
    if (ALLOWED_SCHEMES.has(name)) return { internal: false, anchor: false }
    if (name === "data:" && link.tag !== "a" && link.tag !== "area") return { internal: false, anchor: false }
    if (name === "http:") return { reason: "an http: link (use https:, or write a local address as code)" }
    if (name === "javascript:") return { reason: "a javascript: link" }
    return { reason: `a ${name} link (only https:, mailto: and tel: leave the site)` }
  }
  let url
  try {
    url = new URL(raw, `http://site.invalid${site.base.slice(0, -1)}${route}`)
  } catch {
    return { reason: "not a valid URL" }
  }
  let path
  try {
    path = decodeURIComponent(url.pathname)
  } catch {
    return { reason: `a malformed percent-encoding in ${url.pathname}` }
  }
  if (!path.startsWith(site.base)) return { reason: `outside the site's base ${site.base}` }
  const inside = path.slice(site.base.length)
  // the target: a page (clean URL, a directory's index, or .html), else a file of the site
  let target
  if (inside === "" || inside.endsWith("/")) {
    target = `${inside}index.html`
    if (!site.pages.has(target)) {
      return { reason: `no page ${target}` }
    }
  } else if (site.pages.has(`${inside}.html`)) {
    target = `${inside}.html`
  } else if (site.files.has(inside)) {
    target = inside
  } else if (site.pages.has(`${inside}/index.html`)) {
    return { reason: `${inside}/ is a directory: link to /${inside}/ with its slash` }
  } else {
    return { reason: `no page or file ${inside}${inside.includes(".") ? "" : ` (looked for ${inside}.html)`}` }
  }
  if (url.hash === "") return { internal: true, anchor: false }
  let fragment
  try {
    fragment = decodeURIComponent(url.hash.slice(1))
  } catch {
    return { reason: `a malformed percent-encoding in ${url.hash}` }
  }
  const page = site.pages.get(target)
  if (page === undefined) return { reason: `#${fragment} on ${target}, which is not a page` }
  if (isTop(fragment) || page.ids.has(fragment)) return { internal: true, anchor: true }
  const meant = [...page.ids].find((id) => loose(id) === loose(fragment))
  return { reason: `no id "${fragment}" on ${target}${meant === undefined ? "" : ` (did you mean #${meant}?)`}` }
}

// -----------------------------------------------------------------------------
// main
// -----------------------------------------------------------------------------

const usage = (message) => {
  process.stderr.write(`${message}\nusage: node scripts/docs-links.mjs DIST [--base /path/]\n`)
  process.exit(2)
}

const args = process.argv.slice(2)
let dist
let base
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--base") base = args[++i]
  else if (args[i].startsWith("--base=")) base = args[i].slice("--base=".length)
  else if (dist === undefined) dist = args[i]
  else usage(`unexpected argument ${args[i]}`)
}
if (dist === undefined) usage("no DIST given")
if (!existsSync(dist) || !statSync(dist).isDirectory()) {
  usage(`${dist} is not a directory (build the site first: npm run docs:build)`)
}
if (base !== undefined) {
  if (base === "") usage("--base is empty")
  base = `${base.startsWith("/") ? "" : "/"}${base}${base.endsWith("/") ? "" : "/"}`
}

const files = listFiles(dist)
const pages = new Map()
for (const file of files) {
  if (file.endsWith(".html")) pages.set(file, readPage(readFileSync(join(dist, file), "utf8")))
}
if (pages.size === 0) usage(`no .html file in ${dist}`)
const site = { files: new Set(files), pages, base: base ?? detectBase(pages) }

// broken links by href and reason: the pages where each appears
const broken = new Map()
const report = (file, href, reason) => {
  const key = `${href}\u0000${reason}`
  const entry = broken.get(key) ?? { href, reason, pages: [] }
  if (!entry.pages.includes(file)) entry.pages.push(file)
  broken.set(key, entry)
}
let internal = 0
let anchors = 0
for (const [file, page] of pages) {
  const notFound = file === "404.html"
  if (!notFound && !page.headings.some((text) => text !== "")) {
    report(file, "(the page)", page.headings.length === 0 ? "no <h1>: an empty page" : "an empty <h1>")
  }
  for (const link of page.links) {
    const result = checkLink(site, file, routeOf(file), link)
    if (result.reason !== undefined) report(file, link.value, result.reason)
    else {
      if (result.internal) internal++
      if (result.anchor) anchors++
    }
  }
}

if (broken.size === 0) {
  process.stdout.write(`${pages.size} pages, ${internal} links, ${anchors} anchors: ok\n`)
} else {
  for (const { href, pages: where, reason } of broken.values()) {
    const more = where.length > 1 ? ` (and ${where.length - 1} more page${where.length > 2 ? "s" : ""})` : ""
    process.stdout.write(`${where[0]}${more} → ${href}: ${reason}\n`)
  }
  process.stdout.write(`${broken.size} broken link${broken.size === 1 ? "" : "s"} in ${pages.size} pages\n`)
  process.exitCode = 1
}
