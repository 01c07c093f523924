// The test projects of the monorepo. vitest 5 no longer reads this file by itself:
// vitest.config.ts passes this list to `test.projects`.
export default ["packages/core", "packages/platform-node", "packages/redis", "packages/cli"]
