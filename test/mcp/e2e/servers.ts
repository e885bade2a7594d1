/** Paths of the real MCP servers (devDependencies) and of our fixtures, for the MCP integration suite. */

import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const pkgDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

export const EVERYTHING = path.join(pkgDir('@modelcontextprotocol/server-everything'), 'dist/index.js');
export const FILESYSTEM = path.join(pkgDir('@modelcontextprotocol/server-filesystem'), 'dist/index.js');
export const BROKEN = fileURLToPath(new URL('../../fixtures/mcp/broken-server.mjs', import.meta.url));
export const LUA_TOOLS = fileURLToPath(new URL('../../fixtures/mcp/lua/', import.meta.url));
export const LUA_BIG = fileURLToPath(new URL('../../fixtures/mcp/lua-big/', import.meta.url));
export const PANTO_CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
export const HOSTILE = fileURLToPath(new URL('../../fixtures/mcp/hostile-server.mjs', import.meta.url));
