/**
 * `panto chat --uploads` and `panto session FILE --delete-uploads`, the built CLI against a loopback Anthropic
 * Messages stream and Files API (test/helpers/fake-files-api.ts): the picture is uploaded once and referenced, the
 * session file records it, and the delete removes it at the provider and records that — with the key that uploaded
 * it only.
 */

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileRefs, startFilesServer } from '../helpers/fake-files-api.js';
import { runPanto } from './run-cli.js';

const { server, files } = await startFilesServer();
const tmp = mkdtempSync(path.join(tmpdir(), 'panto-cli-uploads-'));
afterAll(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
copyFileSync(new URL('../fixtures/media/png-rgb.png', import.meta.url), path.join(tmp, 'cat.png'));

const env = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
  MY_KEY: 'test-key',
};

describe('panto chat --uploads / panto session --delete-uploads', () => {
  it('uploads the screenshot once, references it, records it; --delete-uploads deletes it with the right key only', async () => {
    const sessionFile = path.join(tmp, 'up.jsonl');
    const from = server.requests.length;
    server.enqueue(
      files.guard({ type: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'cat.png' } }] }),
      files.guard({ type: 'reply', toolCalls: [{ id: 'c2', name: 'read', args: { path: 'cat.png' } }] }),
      files.guard({ type: 'reply', text: 'Same picture twice.' }),
    );
    const base = ['--provider', 'anthropic', '--base-url', server.baseUrl('anthropic-messages')];
    const r = await runPanto(
      ['chat', ...base, '--api-key-env', 'MY_KEY', '--uploads', '--workspace', tmp, '--session', sessionFile],
      { cwd: tmp, stdin: 'look twice\n/exit\n', env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Same picture twice.');
    expect(files.uploads.filter((u) => u.mediaType === 'image/png')).toHaveLength(1);
    const id = [...files.files.keys()][0] as string;
    expect(r.stderr).toContain(`[uploaded image/png`);
    const reqs = server.requests.slice(from);
    expect(reqs).toHaveLength(3);
    expect(fileRefs(reqs[2]?.body)).toEqual([id, id]);
    expect(readFileSync(sessionFile, 'utf8')).toContain(`"type":"upload"`);

    // Without the key that uploaded it: kept, listed, nothing deleted.
    const wrong = await runPanto(['session', sessionFile, '--delete-uploads', '--api-key-env', 'OTHER'], {
      env: { ...env, OTHER: 'someone-else' },
    });
    expect(wrong.code).toBe(0);
    expect(wrong.stdout).toContain('deleted 0 files');
    expect(wrong.stdout).toContain(`kept: ${id}`);
    expect(files.files.has(id)).toBe(true);

    const del = await runPanto(['session', sessionFile, '--delete-uploads', '--api-key-env', 'MY_KEY'], {
      env,
    });
    expect(del.code).toBe(0);
    expect(del.stdout).toContain('deleted 1 file');
    expect(files.files.has(id)).toBe(false);
    expect(files.deletes).toContain(id);
    const entries = await runPanto(['session', sessionFile, '--entries'], { env });
    expect(entries.stdout).toMatch(/upload \(anthropic-messages @ .*: 0 uploaded, 1 removed\)/);
    // A second run finds nothing left to delete.
    const again = await runPanto(['session', sessionFile, '--delete-uploads', '--api-key-env', 'MY_KEY'], {
      env,
    });
    expect(again.stdout).toContain('deleted 0 files');
  });

  it('"uploads": true in the config file uploads as --uploads does; --no-uploads sends the bytes inline', async () => {
    const config = path.join(tmp, 'config.json');
    writeFileSync(config, JSON.stringify({ uploads: true }));
    const base = ['--provider', 'anthropic', '--base-url', server.baseUrl('anthropic-messages')];
    const chat = async (extra: string[], session: string) => {
      const before = files.uploads.length;
      server.enqueue(
        files.guard({ type: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'cat.png' } }] }),
        files.guard({ type: 'reply', text: 'A cat.' }),
      );
      const r = await runPanto(
        [
          'chat',
          ...base,
          '--api-key-env',
          'MY_KEY',
          ...extra,
          '--workspace',
          tmp,
          '--session',
          path.join(tmp, session),
        ],
        { cwd: tmp, stdin: 'look\n/exit\n', env: { ...env, PANTO_CONFIG: config } },
      );
      expect(r.code).toBe(0);
      return files.uploads.length - before;
    };
    expect(await chat([], 'config-on.jsonl')).toBe(1);
    expect(await chat(['--no-uploads'], 'flag-off.jsonl')).toBe(0);
    writeFileSync(config, JSON.stringify({ uploads: 'yes' }));
    const bad = await runPanto(['chat', ...base, '--workspace', tmp], {
      cwd: tmp,
      stdin: '',
      env: { ...env, PANTO_CONFIG: config },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'uploads' must be true or false");
  });
});
