// @ts-check
// A TypeDoc plugin for the API reference (typedoc.json, `npm run docs:api`):
// - names each module after its package and file: `core/McpServer` for
//   `packages/core/src/McpServer.ts`, so the sidebar groups modules by package;
// - the `effect-mcp` router writes one page per module at
//   `<package>/<Module>.md` (URL `/api/core/McpServer`), whatever the module
//   holds, and a namespace it exports next to it at
//   `<package>/<Module>.<Namespace>.md` (`/api/core/McpServer.Definition`);
//   everything else is an anchor on its module's page;
// - a module's intro is its file's header JSDoc (the comment before the first
//   import), which TypeDoc otherwise takes only with a `@module` tag;
// - of the declarations of one name (the Schema `const X` and its
//   `type X = typeof X.Type`, a namespace and its interface), one summary
//   serves all, as in an editor's hover: the others get it (the rule that
//   scripts/check-jsdoc.ts checks);
// - a member inherited from a dependency (an `effect` Schema class's
//   constructor) has no "Defined in" line: its file is in node_modules, which
//   the source link would send to a page that does not exist.
import {
  Comment,
  ContainerReflection,
  Converter,
  DeclarationReflection,
  ReflectionKind,
  Renderer,
  SignatureReflection
} from "typedoc"
import { ModuleRouter } from "typedoc-plugin-markdown"
import ts from "typescript"

class EffectMcpRouter extends ModuleRouter {
  /**
   * @override
   * @param {import("typedoc").Reflection} reflection
   * @returns {string}
   */
  getIdealBaseName(reflection) {
    if (reflection.kind === ReflectionKind.Module) return reflection.name
    if (reflection.kind === ReflectionKind.Namespace && reflection.parent !== undefined) {
      return `${this.getIdealBaseName(reflection.parent)}.${this.getReflectionAlias(reflection)}`
    }
    return super.getIdealBaseName(reflection)
  }
}

/** @param {import("typedoc").Reflection} reflection */
const summaryOf = (reflection) => {
  const comments = [
    reflection.comment,
    ...(reflection.isDeclaration() ? reflection.signatures ?? [] : []).map((s) => s.comment)
  ]
  return comments.find((comment) => comment !== undefined && Comment.combineDisplayParts(comment.summary).trim() !== "")
    ?.summary
}

/** @param {import("typedoc").Application} app */
export const load = (app) => {
  app.renderer.defineRouter("effect-mcp", EffectMcpRouter)
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (reflection.kind === ReflectionKind.Module) {
      reflection.name = reflection.name.replace(/^(?:packages\/)?([^/]+)\/src\//, "$1/")
      if (reflection.comment === undefined) {
        const file = context.getSymbolFromReflection(reflection)?.declarations?.find(ts.isSourceFile)
        const first = file?.statements[0]
        const comment = first !== undefined && (ts.isImportDeclaration(first) || ts.isExportDeclaration(first))
          ? context.getNodeComment(first, false)
          : undefined
        if (comment !== undefined) reflection.comment = comment
      }
    }
  })
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const reflection of Object.values(context.project.reflections)) {
      if (!reflection.isDeclaration() || summaryOf(reflection) !== undefined) continue
      const parent = reflection.parent
      /** @type {ReadonlyArray<import("typedoc").DeclarationReflection>} */
      const siblings = parent instanceof ContainerReflection ? parent.children ?? [] : []
      const summary = siblings
        .filter((sibling) => sibling !== reflection && sibling.name === reflection.name)
        .map(summaryOf)
        .find((found) => found !== undefined)
      if (summary === undefined) continue
      if (reflection.comment === undefined) reflection.comment = new Comment(Comment.cloneDisplayParts(summary))
      else reflection.comment.summary = Comment.cloneDisplayParts(summary)
    }
  })
  app.renderer.on(Renderer.EVENT_BEGIN, (event) => {
    for (const reflection of Object.values(event.project.reflections)) {
      if (reflection instanceof DeclarationReflection || reflection instanceof SignatureReflection) {
        if (reflection.sources === undefined) continue
        reflection.sources = reflection.sources.filter((source) => !source.fullFileName.includes("/node_modules/"))
      }
    }
  })
}
