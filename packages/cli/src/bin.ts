#!/usr/bin/env node
/**
 * The `effect-mcp` executable: `McpCli.main` over this process's arguments,
 * with logs on stderr and the exit code of its failure.
 *
 * @since 0.1.0
 */
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import * as McpCli from "./McpCli.ts"

NodeMcpRuntime.runMain(McpCli.main(process.argv.slice(2)))
