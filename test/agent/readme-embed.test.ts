/**
 * The README's embedding example runs as written, twice in a row, in an empty directory (no ./tools folder, the
 * session file created on the first run and resumed on the second). It runs against the built package (`npm test`
 * builds it first) and the loopback Anthropic server; the only change to the example is the provider's base URL.
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSession } from '../../src/session/load-session.js';
import { startFakeProviderServer } from '../helpers/fake-provider-server.js';
import type { Json } from './agent-helpers.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const server = await startFakeProviderServer();
const dir = await mkdtemp(join(tmpdir(), 'panto-readme-'));
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function run(script: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script], {
      cwd,
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: 'test-key',
        PANTO_README_BASE_URL: server.baseUrl('anthropic-messages'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', fail);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe('README embedding example', () => {
  it('runs twice in a row in an empty directory; the second run resumes the session', async () => {
    if (!existsSync(join(repoRoot, 'dist', 'index.js')))
      throw new Error("dist/ is missing: run 'npm run build:ts' first");
    const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
    const block = /## Embedding\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    if (block === undefined) throw new Error('README has no embedding example');
    const original = "createProvider({ api: 'anthropic-messages' })";
    expect(block).toContain(original);
    const source = block.replace(
      original,
      "createProvider({ api: 'anthropic-messages', baseUrl: process.env.PANTO_README_BASE_URL })",
    );
    const js = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    // An empty working directory; the example's script and `libpanto` (this checkout) live beside it.
    const work = join(dir, 'work');
    await mkdir(work);
    await mkdir(join(dir, 'node_modules'));
    await symlink(repoRoot, join(dir, 'node_modules', 'libpanto'), 'dir');
    const script = join(dir, 'example.mjs');
    await writeFile(script, js);

    server.enqueue({ type: 'reply', text: 'The header overlaps the menu.' });
    const first = await run(script, work);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('The header overlaps the menu.');

    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'Still overlapping.' });
    const second = await run(script, work);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('Still overlapping.');
    // The second run sent the first run's conversation: the session was resumed, not refused.
    const body = server.requests[n]?.body as Json;
    expect(JSON.stringify(body.messages)).toContain('The header overlaps the menu.');
    const session = await loadSession(join(work, 'session.jsonl'));
    expect(session.conversation.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(existsSync(join(work, 'session.jsonl.lock'))).toBe(false);
  });
});
