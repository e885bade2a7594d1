import { defineConfig } from 'vitest/config';

// The MCP integration suite (npm run test:mcp): real MCP servers spawned over stdio, HTTP servers on loopback,
// hostile servers. Kept out of the unit run because spawning servers takes seconds.
export default defineConfig({
  test: {
    include: ['test/mcp/e2e/**/*.e2e.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
