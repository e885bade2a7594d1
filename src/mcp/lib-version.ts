/** The package version, read once from package.json (two levels above both src/mcp and dist/mcp). */

import { createRequire } from 'node:module';

export const LIB_VERSION: string = (
  createRequire(import.meta.url)('../../package.json') as { version: string }
).version;
