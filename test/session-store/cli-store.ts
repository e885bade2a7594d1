/**
 * `panto chat --store STORE` (a new session gets an id; `--resume ID` continues it in another process) and `panto
 * session list|export|import --store STORE`, end to end through the built CLI, for any store (a folder of JSONL
 * files in the unit run, a PostgreSQL URL in test/postgres/).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runPanto } from '../cli/run-cli.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';

const workspace = path.join(repoRoot, 'examples', 'workspace');
const noKeys = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
};

export function describeCliStore(name: string, store: () => string): void {
  let server: FakeProviderServer;
  let tmp: string;
  beforeAll(async () => {
    server = await startFakeProviderServer();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-cli-store-'));
  });
  afterAll(async () => {
    await server.close();
    await rm(tmp, { recursive: true, force: true });
  });
  const chat = (args: string[], stdin: string) =>
    runPanto(
      [
        'chat',
        '--provider',
        'openai-chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--store',
        store(),
        ...args,
      ],
      { cwd: workspace, stdin, env: noKeys },
    );

  describe(`panto with --store (${name})`, () => {
    it('chat creates a session in the store, another process resumes it by id, export/import round-trip it', async () => {
      server.reset();
      server.enqueue({ type: 'reply', text: 'First answer.' });
      const first = await chat([], 'Hello there\n/exit\n');
      expect(first.code).toBe(0);
      const id = /session (\S+)/.exec(first.stderr.split('session saved: ').at(-1) ?? '')?.[1];
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      expect(first.stderr).not.toMatch(/:[^@/]*secret@/);

      server.enqueue({ type: 'reply', text: 'Second answer.' });
      const second = await chat(['--resume', id as string], 'And again?\n');
      expect(second.code).toBe(0);
      expect(second.stdout).toContain('Second answer.');
      const sent = server.requests.at(-1)?.body.messages as Array<{ role: string; content: unknown }>;
      expect(JSON.stringify(sent)).toContain('Hello there');
      expect(JSON.stringify(sent)).toContain('First answer.');

      const list = await runPanto(['session', 'list', '--store', store()], { cwd: tmp });
      expect(list.stdout).toContain(id);
      const out = path.join(tmp, `${id}.jsonl`);
      const exported = await runPanto(['session', 'export', id as string, '--store', store(), '--out', out], {
        cwd: tmp,
      });
      expect(exported.code).toBe(0);
      const lines = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThanOrEqual(5);
      // Under another id: import, then export gives the same lines.
      const copyId = `${id}-copy`;
      const renamed = [JSON.stringify({ ...JSON.parse(lines[0] as string), id: copyId }), ...lines.slice(1)];
      const copyFile = path.join(tmp, 'copy.jsonl');
      await writeFile(copyFile, `${renamed.join('\n')}\n`);
      const imported = await runPanto(['session', 'import', copyFile, '--store', store()], { cwd: tmp });
      expect(imported.code).toBe(0);
      expect(imported.stdout.trim()).toBe(copyId);
      const again = await runPanto(['session', 'export', copyId, '--store', store()], { cwd: tmp });
      expect(again.stdout.split('\n').filter(Boolean)).toStrictEqual(renamed);
      // A damaged file is refused whole, naming the line.
      await writeFile(copyFile, `${renamed[0]}\n{"type":"message", broken\n`);
      const bad = await runPanto(['session', 'import', copyFile, '--store', store()], { cwd: tmp });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/ERR_SESSION_CORRUPT|not valid JSON/);
      // An unknown id: a plain error.
      const missing = await chat(['--resume', 'nope'], '');
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/no session nope/);
    });
  });
}
