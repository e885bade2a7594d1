/**
 * Importing the public entry must not load the heavy dependencies of features the host may never use (the MCP SDK
 * with zod, the fengari Lua VM, Ajv, node:http); each loads when its feature is first used, and the feature then
 * works. Runs the built entry (dist/index.js) in a child process so the module graph is a fresh one; the child is
 * test/fixtures/import/lazy-child.mjs. Pins behaviour only — the import's time and memory are measured by
 * `npm run bench:import`.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const child = path.join(repo, 'test', 'fixtures', 'import', 'lazy-child.mjs');
const syncServerChild = path.join(repo, 'test', 'fixtures', 'import', 'sync-server-child.mjs');
const mediaChild = path.join(repo, 'test', 'fixtures', 'import', 'media-child.mjs');
const run = promisify(execFile);

interface Loaded {
  packages: string[];
  builtins: string[];
}
interface ChildReport {
  atImport: Loaded;
  afterLua: Loaded;
  afterMcp: Loaded;
  luaText: string;
  invalid: { isError: boolean; text: string };
  sameSdkInstance: boolean;
  started: string[];
  mcpText: string;
  mcpIsError: boolean;
}

/** Packages that only a feature needs, never the import. */
const HEAVY = [
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/core',
  '@modelcontextprotocol/sdk',
  'zod',
  'fengari',
  'ajv',
  'ajv-formats',
  'hono',
  'cross-spawn',
];

let report: ChildReport;

beforeAll(async () => {
  if (!existsSync(path.join(repo, 'dist', 'index.js')))
    throw new Error("dist is missing: run 'npm run build:ts'");
  const { stdout } = await run(process.execPath, [child], { cwd: repo, timeout: 60_000 });
  report = JSON.parse(stdout) as ChildReport;
});

describe('importing libpanto', () => {
  it('loads none of the heavy packages and no node:http', () => {
    for (const name of HEAVY) expect(report.atImport.packages).not.toContain(name);
    expect(report.atImport.builtins).not.toContain('node:http');
  });

  it('loads fengari and Ajv when a Lua tool is loaded and dispatched, and the tool runs', () => {
    expect(report.afterLua.packages).toEqual(expect.arrayContaining(['fengari', 'ajv']));
    expect(report.afterLua.packages).not.toContain('@modelcontextprotocol/client');
    expect(report.afterLua.packages).not.toContain('@modelcontextprotocol/server');
    expect(report.luaText).toBe('This is a simple text response for testing.');
    // Argument validation still runs (Ajv loaded synchronously inside the dispatch).
    expect(report.invalid.isError).toBe(true);
    expect(report.invalid.text).toMatch(/at \/steps: must be integer \(rule: type\)/);
  });

  it('loads the MCP SDK when MCP is used, and a server and client work over loopback HTTP', () => {
    expect(report.afterMcp.packages).toEqual(
      expect.arrayContaining(['@modelcontextprotocol/client', '@modelcontextprotocol/server']),
    );
    expect(report.afterMcp.packages).not.toContain('@modelcontextprotocol/sdk');
    expect(report.afterMcp.builtins).toContain('node:http');
    // createMcpServer (synchronous) returns the same SDK Server class an ESM import of the SDK gives.
    expect(report.sameSdkInstance).toBe(true);
    expect(report.started).toEqual(['local']);
    expect(report.mcpIsError).toBe(false);
    expect(report.mcpText).toBe('This is a simple text response for testing.');
  });
});

describe('createMcpServer as the first MCP use (synchronous SDK load)', () => {
  // Default Node ≥ 20.19: require() of the SDK's ESM files (the instances import() gives). Without require(esm)
  // (Node 22.0–22.11, or --no-experimental-require-module): the SDK's CommonJS build. Same behaviour either way.
  for (const flags of [[], ['--no-experimental-require-module']]) {
    it(`serves list and call over an SDK transport${flags.length ? ' (no require(esm))' : ''}`, async () => {
      const { stdout } = await run(process.execPath, [...flags, syncServerChild], {
        cwd: repo,
        timeout: 60_000,
      });
      const r = JSON.parse(stdout);
      expect(r.requireModule).toBe(flags.length === 0);
      expect(r.sameSdkInstance).toBe(r.requireModule);
      expect(r.tools).toEqual(['echo']);
      expect(r.ok).toEqual({ content: [{ type: 'text', text: 'hi' }] });
      expect(r.invalid.isError).toBe(true);
      expect(r.invalid.content[0].text).toMatch(/at \/s: must be string \(rule: type\), received 5/);
      expect(r.unknown).toEqual({ code: -32602 });
    });
  }
});

describe("importing the media entry 'libpanto/media'", () => {
  it('loads only media modules, processes an image, and shares its instances with libpanto', async () => {
    const { stdout } = await run(process.execPath, [mediaChild], { cwd: repo, timeout: 60_000 });
    const r = JSON.parse(stdout);
    // dist/ is bundled (rolldown.config.mjs): the files loaded carry, per their source maps, only the media
    // modules and what they import (errors, the package-root lookup); no agent/provider/session/lua/mcp code.
    expect(r.atImport.sources).toContain('src/media/process-media.ts');
    for (const file of r.atImport.sources)
      expect(file).toMatch(/^src\/(media\/|errors\.ts$|package-root\.ts$)/);
    // A file without a map holds no code of ours: the entry facade (re-exports of the media chunk).
    expect(r.atImport.unmapped).toEqual(['dist/media/index.js']);
    // The facade and one chunk: Node's ESM loader costs ~100 kB of RSS per module (bench:import measures it).
    expect(r.atImport.own).toHaveLength(2);
    for (const name of HEAVY) expect(r.atImport.packages).not.toContain(name);
    expect(r.processed).toEqual({ mediaType: 'image/png', width: 1, height: 1 });
    expect(r.sameInstances).toBe(true);
    expect(r.mediaExports).toEqual(
      expect.arrayContaining([
        'processMedia',
        'probeMedia',
        'sniffMedia',
        'MediaError',
        'setMediaMemoryLimit',
      ]),
    );
  });
});
