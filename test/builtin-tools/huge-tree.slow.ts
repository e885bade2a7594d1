/**
 * The standard tools on a 100k-file tree (slow: its own run, `npm run test:hostile-tools`, called by .ci/run): find
 * and grep stop at their entry or time caps with a note, inside the host's default budgets, instead of failing at the
 * budget.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/index.js';

describe('a 100k-file tree', () => {
  it('a 100k-file tree: find and grep stop at their caps with a note, inside the default budgets', async () => {
    const ws = await mkdtemp(path.join(os.tmpdir(), 'panto-huge-tree-'));
    const dir = path.join(ws, 'huge');
    await mkdir(dir);
    // 200 directories of 500 files, made by touch (a few hundred processes, not 100k writes from here).
    execFileSync(
      'bash',
      ['-c', 'for d in $(seq 0 199); do mkdir d$d && (cd d$d && touch f{0..499}.txt); done'],
      {
        cwd: dir,
      },
    );
    const plain = await LuaToolSource.fromDir([], { includeBuiltins: true, workspaceRoot: ws });
    try {
      const stopped =
        /\[the search stopped after (\d+ entries|15 s and \d+ entries); search a smaller directory \(path\)\]/;
      const found = await plain.run('find', { pattern: 'f499.txt', path: 'huge' });
      expect(found.ok).toBe(true);
      const text = found.ok ? (found.parts[0] as { text: string }).text : '';
      expect(text).toMatch(stopped);
      expect(text.split('\n').filter((l) => l.endsWith('f499.txt')).length).toBeGreaterThan(0);
      const grepped = await plain.run('grep', { pattern: 'never there', path: 'huge' });
      expect(grepped.ok).toBe(true);
      expect(grepped.ok ? (grepped.parts[0] as { text: string }).text : '').toMatch(stopped);
    } finally {
      await plain.close();
      await rm(ws, { recursive: true });
    }
  }, 240_000);
});
