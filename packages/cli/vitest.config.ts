import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["development"] },
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    exclude: ["test/utils/**", "test/fixtures/**"],
    // the tests run the built bin: build it first when it is missing or stale
    globalSetup: ["test/utils/globalSetup.ts"],
    // every CLI test runs processes that spawn servers
    testTimeout: 120_000
  }
})
