import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..', '..');
let dir: string;

// A copy of the built package with no native binary (no build/, no prebuilds/): what a user on a platform without a
// prebuild and without a compiler gets. The library must report it as data, never crash.
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'panto-no-addon-'));
  await cp(path.join(repo, 'dist'), path.join(dir, 'dist'), { recursive: true });
  await cp(path.join(repo, 'package.json'), path.join(dir, 'package.json'));
  await cp(path.join(repo, 'lua'), path.join(dir, 'lua'), { recursive: true });
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  await writeFile(
    path.join(dir, 'probe.mjs'),
    `import { defineTool, dispatchToolCalls, isPantoError, processMedia, ToolRegistry } from './dist/index.js';
const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const out = {};
try { await processMedia(png); out.process = 'resolved'; } catch (e) { out.process = isPantoError(e) ? e.code : String(e); }
const tool = defineTool({ name: 'pic', description: 'a picture', inputSchema: { type: 'object' },
  invoke: () => [{ type: 'text', text: 'here' }, { type: 'media', data: png }] });
const [r] = await dispatchToolCalls([{ type: 'tool_call', id: 'c1', name: 'pic', input: {} }], { tools: new ToolRegistry([[tool]]) });
out.isError = r.isError;
out.parts = r.parts;
console.log(JSON.stringify(out));`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('no native binary for this platform', () => {
  it('processMedia rejects with ERR_NATIVE_UNAVAILABLE and a tool turn goes on with a note', async () => {
    const { stdout } = await run(process.execPath, ['probe.mjs'], { cwd: dir });
    const out = JSON.parse(stdout) as {
      process: string;
      isError: boolean;
      parts: Array<{ type: string; text?: string }>;
    };
    expect(out.process).toBe('ERR_NATIVE_UNAVAILABLE');
    expect(out.isError).toBe(false);
    expect(out.parts[0]).toEqual({ type: 'text', text: 'here' });
    expect(out.parts[1]?.text).toBe(
      '[attachment dropped: images and PDFs cannot be processed on this host (the native media addon is not installed)]',
    );
  });
});
