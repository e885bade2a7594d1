/**
 * `panto chat --uploads --store STORE` and `panto session ID --store STORE --delete-uploads`, end to end through the
 * built CLI against a loopback Anthropic Messages stream and Files API (test/helpers/fake-files-api.ts), for any
 * store (a folder of JSONL files in the unit run, a PostgreSQL URL in test/postgres/): the session in the store
 * records the upload; the delete removes it at the provider with the key that uploaded it only, records that in the
 * store, and a second run finds nothing left.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPanto } from '../cli/run-cli.js';
import { type FakeFilesApi, startFilesServer } from '../helpers/fake-files-api.js';
import type { FakeProviderServer } from '../helpers/fake-provider-server.js';

const env = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
  MY_KEY: 'test-key',
};

export function describeCliStoreUploads(name: string, store: () => string): void {
  let server: FakeProviderServer;
  let files: FakeFilesApi;
  let tmp: string;
  beforeAll(async () => {
    ({ server, files } = await startFilesServer());
    tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-cli-store-uploads-'));
    await copyFile(new URL('../fixtures/media/png-rgb.png', import.meta.url), path.join(tmp, 'cat.png'));
  });
  afterAll(async () => {
    await server.close();
    await rm(tmp, { recursive: true, force: true });
  });

  describe(`panto session ID --store --delete-uploads (${name})`, () => {
    it('deletes what a --uploads chat in the store uploaded, with the right key only, and records it there', async () => {
      server.enqueue(
        files.guard({ type: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'cat.png' } }] }),
        files.guard({ type: 'reply', text: 'A cat.' }),
      );
      const chat = await runPanto(
        [
          'chat',
          '--provider',
          'anthropic',
          '--base-url',
          server.baseUrl('anthropic-messages'),
          '--api-key-env',
          'MY_KEY',
          '--uploads',
          '--workspace',
          tmp,
          '--store',
          store(),
        ],
        { cwd: tmp, stdin: 'look\n/exit\n', env },
      );
      expect(chat.code).toBe(0);
      expect(chat.stdout).toContain('A cat.');
      const id = /session (\S+)/.exec(chat.stderr.split('session saved: ').at(-1) ?? '')?.[1] as string;
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      const uploaded = [...files.files.keys()];
      expect(uploaded).toHaveLength(1);
      const fileId = uploaded[0] as string;

      const session = (args: string[], extra: Record<string, string> = {}) =>
        runPanto(['session', id, '--store', store(), ...args], { cwd: tmp, env: { ...env, ...extra } });

      const entries = await session(['--entries']);
      expect(entries.code).toBe(0);
      expect(entries.stdout).toMatch(/upload \(anthropic-messages @ .*: 1 uploaded, 0 removed\)/);

      // Another key: kept, listed, nothing deleted.
      const wrong = await session(['--delete-uploads', '--api-key-env', 'OTHER'], { OTHER: 'someone-else' });
      expect(wrong.code).toBe(0);
      expect(wrong.stdout).toContain('deleted 0 files');
      expect(wrong.stdout).toContain(`kept: ${fileId}`);
      expect(files.files.has(fileId)).toBe(true);

      const del = await session(['--delete-uploads', '--api-key-env', 'MY_KEY']);
      expect(del.code).toBe(0);
      expect(del.stdout).toContain('deleted 1 file');
      expect(files.files.has(fileId)).toBe(false);
      expect(files.deletes).toContain(fileId);
      const after = await session(['--entries']);
      expect(after.stdout).toMatch(/upload \(anthropic-messages @ .*: 0 uploaded, 1 removed\)/);
      const again = await session(['--delete-uploads', '--api-key-env', 'MY_KEY']);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('deleted 0 files');

      // An unknown id is a plain error, not a crash.
      const missing = await runPanto(['session', 'no-such-id', '--store', store(), '--delete-uploads'], {
        cwd: tmp,
        env,
      });
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/no session no-such-id/);
      expect(missing.stderr).not.toMatch(/\n\s+at /);
    });
  });
}
