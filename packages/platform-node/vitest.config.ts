import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["development"] },
  test: { name: "platform-node", include: ["test/**/*.test.ts"], exclude: ["test/utils/**"] }
})
