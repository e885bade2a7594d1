import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { fileLines } from '../../src/session-store/file-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-file-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fileLines: a JSONL file as an async iterable of its lines, read as they are taken', () => {
  it('gives every line as the session reader parses it (no CR, no byte order mark), a torn last line reported', async () => {
    const path = join(dir, 'lines.jsonl');
    writeFileSync(path, `\ufeff{"a":1}\r\n\n{"b":"ü"}\n{"c":`);
    const out: string[] = [];
    let torn: number | undefined;
    for await (const l of fileLines(path, { onEnd: (read) => (torn = read.torn?.line) })) out.push(l);
    expect(out).toStrictEqual(['{"a":1}', '{"b":"ü"}']);
    expect(torn).toBe(4);
  });

  it('a consumer that stops early stops the reading (the file is closed, nothing keeps running)', async () => {
    const path = join(dir, 'many.jsonl');
    const line = JSON.stringify({ x: 'y'.repeat(1000) });
    writeFileSync(path, `${line}\n`.repeat(20_000));
    let ended = false;
    let n = 0;
    for await (const _ of fileLines(path, { chunkBytes: 64 * 1024, onEnd: () => (ended = true) })) {
      if (++n === 10) break;
    }
    expect(n).toBe(10);
    expect(ended).toBe(false);
    // Read again whole: the stopped read left nothing behind.
    let again = 0;
    for await (const _ of fileLines(path)) again++;
    expect(again).toBe(20_000);
  });

  it('a line that is not JSON fails typed, naming its line, after the lines before it', async () => {
    const path = join(dir, 'bad.jsonl');
    writeFileSync(path, '{"a":1}\n{"b":2}\nnot json\n{"c":3}\n');
    const out: string[] = [];
    let err: unknown;
    try {
      for await (const l of fileLines(path, { chunkBytes: 4 })) out.push(l);
    } catch (e) {
      err = e;
    }
    expect(isPantoError(err) && err.code).toBe('ERR_SESSION_CORRUPT');
    expect((err as Error).message).toMatch(/:3:/);
  });

  it('a missing file fails with the system error (ENOENT)', async () => {
    await expect(fileLines(join(dir, 'none.jsonl')).next()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
