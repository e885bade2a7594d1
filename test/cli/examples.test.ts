import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';
import { repoRoot, runShell } from './run-cli.js';

let server: FakeProviderServer;
beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => {
  await server.close();
});

describe('README quick start', () => {
  it('starts with the main-job command and the test command', async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const [main, test] = block.trim().split('\n');
    expect(main).toMatch(/^npm ci && npx panto tool /);
    expect(test).toBe('npm test');
  });

  it('the main-job command runs verbatim (after its install step) and shows the tool_result Anthropic receives', async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const main = (/```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '').trim().split('\n')[0] ?? '';
    // `npm ci` already ran for this checkout (re-running it here would replace node_modules under the test runner).
    const command = main.replace(/^npm ci && /, '');
    // A first `npx panto` links this checkout into npx's cache, which runs `prepare` here: dist/ is current, so it
    // must not be rebuilt (a rebuild empties dist/ under the tests running beside this one).
    const stamp = path.join(repoRoot, 'dist', '.inputs-sha256');
    const before = await stat(stamp);
    const r = await runShell('sh', ['-c', command], { cwd: repoRoot, timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = await stat(stamp);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(r.stdout).toContain('[image] image/jpeg 2000x1500');
    expect(r.stdout).toContain('"type": "tool_result"');
    expect(r.stdout).toContain('"media_type": "image/jpeg"');
  });
});

describe('README embedding example', () => {
  it('is examples/readme-embed.ts verbatim (which tsc checks against the built package)', async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const block = /## Embedding\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const file = await readFile(path.join(repoRoot, 'examples', 'readme-embed.ts'), 'utf8');
    expect(block).toBeDefined();
    expect(file.split('\n').slice(1).join('\n')).toBe(block);
  });
});

describe('examples/embed.mjs: an agent embedded in a script', () => {
  it('runs the Lua bar chart tool and sends the rendered picture to the model', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', toolCalls: [{ id: 'call_1', name: 'bar_chart', args: { values: [3, 1, 4, 1, 5] } }] },
      { type: 'reply', text: 'Five bars; the fifth is the tallest.' },
    );
    const r = await runShell(
      process.execPath,
      [
        path.join(repoRoot, 'examples', 'embed.mjs'),
        '--api',
        'openai-responses',
        '--base-url',
        server.baseUrl('openai-responses'),
        '--model',
        'gpt-5',
        'Chart 3 1 4 1 5',
      ],
      { env: { OPENAI_API_KEY: undefined } },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Five bars; the fifth is the tallest.');
    expect(r.stderr).toContain('[bar_chart] image/png 640x360');
    const second = server.requests[before + 1]?.body as { input: Array<{ type: string; output?: unknown }> };
    const out = second.input.find((i) => i.type === 'function_call_output');
    expect(JSON.stringify(out?.output)).toContain('data:image/png;base64,');
  });
});
