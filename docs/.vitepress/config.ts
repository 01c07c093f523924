import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type DefaultTheme, defineConfig } from "vitepress"

// The API reference is generated (`npm run docs:api`: TypeDoc into docs/api/, with its sidebar);
// the site builds without it, with an empty API sidebar.
const apiSidebarFile = fileURLToPath(new URL("../api/typedoc-sidebar.json", import.meta.url))
const apiSidebar: Array<DefaultTheme.SidebarItem> = existsSync(apiSidebarFile)
  ? JSON.parse(readFileSync(apiSidebarFile, "utf8"))
  : []

const guides: Array<DefaultTheme.SidebarItem> = [
  {
    text: "Getting started",
    items: [
      { text: "Installation", link: "/getting-started/installation" },
      { text: "Quick start", link: "/getting-started/quick-start" },
      { text: "Your first client", link: "/getting-started/first-client" }
    ]
  },
  {
    text: "Servers",
    items: [
      { text: "Writing a server", link: "/guides/server" },
      { text: "Tools, resources, prompts", link: "/guides/tools-resources-prompts" },
      { text: "Both eras", link: "/guides/eras" },
      { text: "Tasks", link: "/guides/tasks" },
      { text: "Extensions: Skills, MCP Apps", link: "/guides/extensions" }
    ]
  },
  {
    text: "Clients",
    items: [
      { text: "A client", link: "/guides/client" },
      { text: "Many servers: McpGroup", link: "/guides/group" },
      { text: "The gateway: McpGateway", link: "/guides/gateway" },
      { text: "The effect-mcp command", link: "/guides/cli" },
      { text: "Agents with effect/ai", link: "/guides/agents" }
    ]
  },
  {
    text: "Running it",
    items: [
      { text: "Transports", link: "/guides/transports" },
      { text: "Serving over HTTP", link: "/guides/http" },
      { text: "Deploy", link: "/guides/deploy" },
      { text: "Authorization (OAuth 2.1)", link: "/guides/authorization" },
      { text: "Testing", link: "/guides/testing" },
      { text: "Production and bundling", link: "/guides/production" },
      { text: "Many replicas on Redis", link: "/guides/replicas" }
    ]
  },
  {
    text: "Concepts",
    items: [
      { text: "The design", link: "/concepts/design" },
      { text: "The eras, inside", link: "/concepts/eras" }
    ]
  },
  {
    text: "Reference",
    items: [
      { text: "Packages", link: "/reference/packages" },
      { text: "This repository", link: "/reference/repository" },
      { text: "Conformance", link: "/reference/conformance" },
      { text: "Performance", link: "/reference/performance" },
      { text: "API reference", link: "/api/" }
    ]
  }
]

export default defineConfig({
  title: "effect-mcp",
  description:
    "The Model Context Protocol for Effect: servers and clients as Layers, both eras, tested with TestClock.",
  // the site's own icon (a browser asks for /favicon.ico otherwise: a failed request)
  head: [["link", { rel: "icon", type: "image/svg+xml", href: "/favicon.svg" }]],
  cleanUrls: true,
  lastUpdated: false,
  // a dead link fails the build (VitePress's default; never turned off)
  ignoreDeadLinks: false,
  markdown: { theme: { light: "github-light", dark: "github-dark" } },
  themeConfig: {
    nav: [
      { text: "Guide", link: "/getting-started/quick-start", activeMatch: "^/(getting-started|guides|concepts)/" },
      { text: "Reference", link: "/reference/packages", activeMatch: "^/reference/" },
      { text: "API reference", link: "/api/", activeMatch: "^/api/" }
    ],
    sidebar: {
      "/getting-started/": guides,
      "/guides/": guides,
      "/concepts/": guides,
      "/reference/": guides,
      "/api/": [{ text: "API reference", link: "/api/" }, ...apiSidebar]
    },
    outline: { level: [2, 3] },
    search: { provider: "local" },
    logo: "/favicon.svg",
    socialLinks: [{ icon: "github", link: "https://github.com/effect-mcp/effect-mcp" }],
    footer: { message: "Released under the MIT License." }
  },
  vite: {
    // the local search index and the API pages make large chunks; they are loaded on demand
    build: { chunkSizeWarningLimit: 100_000 }
  }
})
