/**
 * The conformance server's skills, for the `sep-2640-skills-*` server
 * scenarios of `@modelcontextprotocol/conformance` 0.2.0-alpha.12 (the
 * `io.modelcontextprotocol/skills` extension, SEP-2640): a catalog loaded
 * from memory and served with `McpSkills.extension`. The scenarios discover
 * what to check: the directory one uses the FIRST listed skill
 * (`skill://acme/pdf-processing`, whose root holds the subfolders
 * `references` and `scripts`); pages of 2 exercise `nextCursor` on
 * `skills/list` and on `resources/directory/read`.
 */
import { McpServer, McpSkills } from "@effect-mcp/core"
import { Effect, Layer } from "effect"

const PDF_PROCESSING = `---
name: pdf-processing
description: Extract text and tables from PDF files, fill in forms, and merge documents.
license: Apache-2.0
compatibility: Requires pdftk and Python 3.11
allowed-tools: Bash(pdftk:*) Read
metadata:
  author: example-org
  version: "1.2"
---
# PDF processing

1. Read [the forms guide](references/FORMS.md) before filling a form.
2. Extract text with \`scripts/extract.py\`.
`

export const FILES: Readonly<Record<string, string | Uint8Array>> = {
  "acme/pdf-processing/SKILL.md": PDF_PROCESSING,
  "acme/pdf-processing/references/FORMS.md": "# Forms\n\nFill every field; leave signatures blank.\n",
  "acme/pdf-processing/references/REFERENCE.md": "# Reference\n\nThe pdftk commands used by this skill.\n",
  "acme/pdf-processing/scripts/extract.py": "import sys\nprint(open(sys.argv[1], 'rb').read()[:4])\n",
  "code-review/SKILL.md":
    "---\nname: code-review\ndescription: Review a diff for bugs, style and missing tests.\n---\n# Code review\n\nRead the diff twice.\n",
  "docs-writer/SKILL.md":
    "---\nname: docs-writer\ndescription: Write user documentation from a feature description.\n---\n# Docs\n\nStart with an example.\n",
  "docs-writer/templates/page.md": "# {{title}}\n"
}

/** The skills extension, registered with the server in context while the layer lasts. */
export const layer: Layer.Layer<never, unknown, McpServer.McpServer> = Layer.unwrap(
  Effect.map(
    McpSkills.load(McpSkills.memoryFiles(FILES), { pageSize: 2, strict: true, dynamic: ["docs-writer"] }),
    (catalog) => McpServer.register(McpSkills.extension(catalog))
  )
)
