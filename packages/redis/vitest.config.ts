import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["development"] },
  test: {
    name: "redis",
    include: ["test/**/*.test.ts"],
    exclude: ["test/utils/**"],
    // these tests spawn processes and servers: on a loaded 2-core machine a few take seconds
    testTimeout: 30_000
  }
})
