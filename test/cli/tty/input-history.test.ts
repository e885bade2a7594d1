import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyPath, InputHistory, MAX_ENTRIES } from '../../../src/cli/tty/input-history.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-history-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('input history kept between runs', () => {
  it('lives under XDG_STATE_HOME (else ~/.local/state)', () => {
    expect(historyPath({ XDG_STATE_HOME: '/s' })).toBe('/s/panto/history.jsonl');
    expect(historyPath({ HOME: '/h' })).toBe('/h/.local/state/panto/history.jsonl');
  });

  it('an entry added in one run is there in the next; multi-line entries survive; repeats are not doubled', async () => {
    const file = path.join(tmp, 'a', 'history.jsonl');
    const one = InputHistory.load(file);
    one.add('first');
    one.add('two\nlines');
    one.add('two\nlines');
    expect(InputHistory.load(file).entries).toEqual(['first', 'two\nlines']);
  });

  it('damaged lines are skipped; the newest MAX_ENTRIES are kept; a huge entry lasts this run only', async () => {
    const file = path.join(tmp, 'b.jsonl');
    const lines = Array.from({ length: MAX_ENTRIES * 3 }, (_, i) => JSON.stringify(`e${i}`));
    await writeFile(file, `${lines.join('\n')}\n{broken\n42\n`);
    const h = InputHistory.load(file);
    expect(h.entries).toHaveLength(MAX_ENTRIES);
    expect(h.entries.at(-1)).toBe(`e${MAX_ENTRIES * 3 - 1}`);
    // The file was rewritten to the kept entries.
    expect((await readFile(file, 'utf8')).split('\n').filter(Boolean)).toHaveLength(MAX_ENTRIES);
    h.add('x'.repeat(100_000));
    expect(h.entries.at(-1)?.length).toBe(100_000);
    expect(InputHistory.load(file).entries.at(-1)).toBe(`e${MAX_ENTRIES * 3 - 1}`);
  });

  it('a file that cannot be written: the history lasts this run, no error', async () => {
    const dir = path.join(tmp, 'ro');
    await writeFile(path.join(tmp, 'ro'), 'a file where a directory should be');
    const h = InputHistory.load(path.join(dir, 'history.jsonl'));
    h.add('kept in memory');
    expect(h.entries).toEqual(['kept in memory']);
    await chmod(path.join(tmp, 'ro'), 0o644);
  });
});
