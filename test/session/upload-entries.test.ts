/**
 * The `upload` entry (docs/session-format.md): appended and checked, read on both load paths and by the lazy index
 * (only its lines), over every branch; a damaged one names its line; a file without any loads as before.
 */

import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { loadSession, SessionLog, type UploadInput } from '../../src/session/index.js';
import { leadingText } from '../../src/session/leading-fields.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-upload-entries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);

const scope = { api: 'openai-responses', baseUrl: 'https://api.openai.com/v1', account: 'fedcba9876543210' };
const record = (id: string, sha = 'cd'.repeat(32)): UploadInput => ({
  ...scope,
  files: [{ sha256: sha, id, mediaType: 'image/png', bytes: 1234 }],
});
const say = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });

describe('upload entries', () => {
  it('are appended in the leading-field form, never join the conversation, and round-trip', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('one'));
    const entry = log.appendUpload(record('file-abc'));
    log.appendMessage(say('two'));
    log.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(leadingText(lines[2] as string)).toEqual({
      type: 'upload',
      id: entry.id,
      parentId: entry.parentId,
    });
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toEqual([say('one'), say('two')]);
    expect(loaded.entries[1]).toEqual(entry);
  });

  it('are read over every branch, and after a lazy open only their lines are parsed', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const first = log.appendMessage(say('root'));
    log.appendUpload(record('file-a', 'aa'.repeat(32)));
    log.appendMessage(say('branch one'));
    log.branch(first.id);
    log.appendUpload(record('file-b', 'bb'.repeat(32)));
    log.appendMessage(say('branch two'));
    log.appendCompaction({
      summary: 's',
      replacement: [say('summary')],
      firstKeptIndex: 1,
      messageCountBefore: 2,
      tokensBefore: 10,
      tokensAfter: 5,
    });
    log.close();
    // A damaged line on the other branch: the lazy open and uploadEntries never read it.
    const text = readFileSync(path, 'utf8').split('\n');
    const damaged = text.findIndex((l) => l.includes('branch one'));
    text[damaged] = (text[damaged] as string).replace('"role":"user"', '"role":"nobody"');
    writeFileSync(path, text.join('\n'));
    const lazy = await SessionLog.open(path);
    const uploads = await lazy.uploadEntries();
    expect(uploads.map((u) => u.files?.[0]?.id)).toEqual(['file-a', 'file-b']);
    lazy.appendUpload({ ...scope, removed: ['file-a'] });
    expect((await lazy.uploadEntries()).map((u) => u.removed ?? [])).toEqual([[], [], ['file-a']]);
    expect(() => lazy.entries).toThrow(/role must be/);
    lazy.close();
  });

  it('an append with a bad field writes nothing and names the field', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const bad: Array<[unknown, RegExp]> = [
      [
        { ...scope, files: [{ sha256: 'xyz', id: 'f', mediaType: 'image/png', bytes: 1 }] },
        /sha256 must be 64 hex/,
      ],
      [
        { ...scope, files: [{ sha256: 'aa'.repeat(32), id: '', mediaType: 'image/png', bytes: 1 }] },
        /id must be/,
      ],
      [
        { ...scope, files: [{ sha256: 'aa'.repeat(32), id: 'f', mediaType: 'image/png', bytes: -1 }] },
        /bytes/,
      ],
      [{ ...scope, account: '' }, /account must be/],
      [{ ...scope }, /needs files or removed/],
      [{ ...scope, removed: [1] }, /removed\[0\] must be a string/],
    ];
    for (const [value, message] of bad) {
      let caught: unknown;
      try {
        log.appendUpload(value as UploadInput);
      } catch (err) {
        caught = err;
      }
      expect(isPantoError(caught, 'ERR_INVALID_ARGUMENT')).toBe(true);
      expect((caught as Error).message).toMatch(message);
    }
    expect(log.size).toBe(0);
    log.close();
  });

  it('a damaged upload line is ERR_SESSION_FORMAT naming the line, on both paths', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('x'));
    log.close();
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'upload', id: 'u1', parentId: null, timestamp: 't', ...scope, files: [{ sha256: 'no' }] })}\n`,
    );
    for (const eager of [true, false]) {
      const err = await loadSession(path, { eager }).catch((e: unknown) => e);
      expect(isPantoError(err, 'ERR_SESSION_FORMAT')).toBe(true);
      expect((err as Error).message).toMatch(/:3: entry\.files\[0\]\.sha256 must be 64 hex digits/);
    }
  });
});
