/**
 * Files shipped with the package are found from the package root (src/package-root.ts), wherever the code runs: from
 * src/ (these tests, under vitest) and from the bundled chunks in dist/ of a copy of the package somewhere else (what
 * an install gets). The copy has dist/, package.json and lua/ but no src/, so a lookup relative to a module's own
 * location (or falling back to the repository) would show up as a path outside the copy or a failure.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagePath, packageRoot, packageVersion } from '../src/package-root.js';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..');
let dir: string;
let version: string;

beforeAll(async () => {
  version = (JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')) as { version: string })
    .version;
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'panto-package-root-')));
  await cp(path.join(repo, 'dist'), path.join(dir, 'dist'), { recursive: true });
  await cp(path.join(repo, 'package.json'), path.join(dir, 'package.json'));
  await cp(path.join(repo, 'lua'), path.join(dir, 'lua'), { recursive: true });
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  // The copy's worker script marks that it ran (the repository's would not).
  const worker = path.join(dir, 'dist', 'lua', 'lua-worker.js');
  await writeFile(
    worker,
    `import { writeFileSync as markRan } from 'node:fs';\nmarkRan(new URL('../../worker-ran', import.meta.url), '');\n${await readFile(worker, 'utf8')}`,
  );
  await writeFile(
    path.join(dir, 'probe.mjs'),
    `import { dispatchToolCalls, LuaToolSource } from './dist/index.js';
const lua = await LuaToolSource.fromDir(LuaToolSource.builtinDir(), { isolation: 'worker', workspaceRoot: process.cwd() });
const [r] = await dispatchToolCalls([{ type: 'tool_call', id: 'c1', name: 'read', input: { path: 'package.json' } }], { tools: lua });
await lua.close();
console.log(JSON.stringify({ builtinDir: LuaToolSource.builtinDir(), tools: lua.list().map((d) => d.name), isError: r.isError === true, text: r.parts.map((p) => p.text ?? '').join('') }));`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('package root lookups', () => {
  it('from src/: the repository root, its package.json version and its lua/', () => {
    expect(packageRoot()).toBe(repo);
    expect(packageVersion()).toBe(version);
    expect(packagePath('lua')).toBe(path.join(repo, 'lua'));
  });

  it("from a copy's bundles: the copy's lua/ and Lua worker script; the read tool runs in the worker", async () => {
    const { stdout } = await run(process.execPath, ['probe.mjs'], { cwd: dir, timeout: 60_000 });
    const r = JSON.parse(stdout) as { builtinDir: string; tools: string[]; isError: boolean; text: string };
    expect(r.builtinDir).toBe(path.join(dir, 'lua'));
    expect(existsSync(path.join(dir, 'worker-ran'))).toBe(true);
    // The reading tools of the standard set (write, edit and bash need capabilities the probe does not grant).
    expect(r.tools).toEqual(['find', 'grep', 'ls', 'read']);
    expect(r.isError).toBe(false);
    expect(r.text).toContain('"name": "libpanto"');
  });

  it('moved out of its package (no libpanto package.json above it): the import works, a lookup throws ERR_INTERNAL', async () => {
    const foreign = await realpath(await mkdtemp(path.join(os.tmpdir(), 'panto-package-root-foreign-')));
    try {
      await cp(path.join(dir, 'dist'), path.join(foreign, 'dist'), { recursive: true });
      await writeFile(path.join(foreign, 'package.json'), '{"name":"someone-else","type":"module"}');
      await symlink(path.join(repo, 'node_modules'), path.join(foreign, 'node_modules'));
      await writeFile(
        path.join(foreign, 'probe.mjs'),
        `import { LuaToolSource } from './dist/index.js';
try { LuaToolSource.builtinDir(); console.log('{}'); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`,
      );
      const { stdout } = await run(process.execPath, ['probe.mjs'], { cwd: foreign, timeout: 60_000 });
      const r = JSON.parse(stdout) as { code?: string; message?: string };
      expect(r.code).toBe('ERR_INTERNAL');
      expect(r.message).toContain(path.join(foreign, 'dist'));
      expect(r.message).toContain('not found');
    } finally {
      await rm(foreign, { recursive: true, force: true });
    }
  });

  it("from a copy's bin: panto --version prints the package version", async () => {
    const { stdout } = await run(process.execPath, [path.join(dir, 'dist', 'cli', 'main.js'), '--version'], {
      cwd: dir,
    });
    expect(stdout.trim()).toBe(version);
  });
});
