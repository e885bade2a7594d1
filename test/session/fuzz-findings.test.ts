/**
 * Findings of the generative fuzzer (test/fuzz/fuzz-sessions.mjs), each the exact input it found, shrunk by hand, loaded
 * through every path (helpers/every-path.ts): every path must give the same session or the same `PantoError` code.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HEADER, messageLine, sameOnEveryPath } from './helpers/every-path.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-fuzz-findings-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(lines: string[]): string {
  const path = join(dir, `s${n++}.jsonl`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const expectEqual = (actual: unknown, expected: unknown, name: string) =>
  expect(actual, `${name} differs from the eager load`).toEqual(expected);

describe('fuzz findings: a line that is not valid JSON and fails a link check gives one code on every path', () => {
  // Seed 1, mutation flip: one byte of `"content":[` became `"content">[` on a line whose parent is also missing. The
  // one-pass reader parses first (ERR_SESSION_CORRUPT); the index read the line's leading fields only and reported
  // the parent (ERR_SESSION_FORMAT).
  const brokenJson = (id: string, parent: string | null) =>
    messageLine(id, parent, 'answer').replace('"content":[', '"content">[');

  it.each([
    ['a missing parent', [HEADER, brokenJson('a', 'missing')]],
    ['a self-parent', [HEADER, brokenJson('a', 'a')]],
    ['a repeated id', [HEADER, messageLine('a', null, 'x'), brokenJson('a', 'a')]],
    [
      'a forward parent',
      [HEADER, messageLine('a', null, 'x'), brokenJson('b', 'c'), messageLine('c', 'b', 'y')],
    ],
  ])('%s', async (_name, lines) => {
    const path = write(lines);
    for (const options of [{}, { chunkBytes: 16 }]) {
      const o = await sameOnEveryPath(path, expectEqual, options);
      expect(o).toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    }
  });

  it('a line that is valid JSON with a missing parent stays ERR_SESSION_FORMAT on every path', async () => {
    const path = write([HEADER, messageLine('a', 'missing', 'x')]);
    for (const options of [{}, { chunkBytes: 16 }]) {
      expect(await sameOnEveryPath(path, expectEqual, options)).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    }
  });
});
