/**
 * Hostile files: paths that are not regular files, and files that change between `openSessionIndex` (or a lazy
 * `loadSession`) and the reads it defers. Each gets a typed error, never a hang, an untyped error or stale data.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSession, openSessionIndex, SessionLog } from '../../src/session/index.js';
import { compactionLine, everyPath, HEADER, messageLine } from './helpers/every-path.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-hostile-files-'));
let n = 0;
const fresh = () => join(dir, `f${n++}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A compacted session (the lazy load takes the index path and defers the lines before the compaction). */
function compacted(): string {
  const path = `${fresh()}.jsonl`;
  writeFileSync(
    path,
    `${[
      HEADER,
      messageLine('a', null, 'x'),
      messageLine('b', 'a', 'y'),
      compactionLine('c', 'b', 'b'),
      messageLine('d', 'c', 'z'),
    ].join('\n')}\n`,
  );
  return path;
}

const fifoSupported = process.platform !== 'win32';

describe('a path that is not a regular file: ERR_INVALID_ARGUMENT before anything is read', () => {
  const expectRefused = async (path: string, kind: RegExp) => {
    const all = await everyPath(path, { maxLineBytes: 1 << 16 });
    for (const [name, o] of Object.entries(all)) {
      expect(o, name).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', message: expect.stringMatching(kind) });
      expect((o as { message: string }).message, name).toContain(path);
    }
    await expect(SessionLog.openOrCreate(path)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect(existsSync(`${path}.lock`)).toBe(false); // the writer's lock was released
  };

  it('a directory', async () => {
    const path = fresh();
    mkdirSync(path);
    await expectRefused(path, /is a directory/);
  });

  it.runIf(fifoSupported)('a FIFO with no writer: refused at once, no load blocks on it', async () => {
    const path = fresh();
    execFileSync('mkfifo', [path]);
    await expectRefused(path, /is a FIFO/);
  });

  it.runIf(process.platform === 'linux')(
    '/dev/zero and /dev/null: refused, not read without end',
    async () => {
      for (const path of ['/dev/zero', '/dev/null']) {
        for (const o of Object.values(await everyPath(path))) {
          expect(o).toMatchObject({
            code: 'ERR_INVALID_ARGUMENT',
            message: expect.stringMatching(/character device/),
          });
        }
      }
    },
  );

  it('a symlink to a session file loads as the file does', async () => {
    const target = compacted();
    const link = fresh();
    symlinkSync(target, link);
    const direct = await loadSession(target, { eager: true });
    for (const o of Object.values(await everyPath(link))) {
      expect(o).toMatchObject({ ok: { leafId: 'd', conversation: direct.conversation } });
    }
  });
});

describe('the file changes after the index was made', () => {
  // An append alone is not a change: the indexed bytes still read (append-while-loaded.test.ts).
  it('truncated, or replaced by a copy with the same size and mtime: ERR_SESSION_CHANGED on the next read', async () => {
    const changes: Array<[string, (path: string) => void]> = [
      ['truncated', (path) => truncateSync(path, statSync(path).size - 10)],
      [
        'replaced (rename) by a copy with the same bytes and mtime',
        (path) => {
          const st = statSync(path);
          const copy = `${path}.new`;
          writeFileSync(copy, readFileSync(path));
          utimesSync(copy, st.atime, st.mtime);
          renameSync(copy, path);
        },
      ],
    ];
    for (const [what, change] of changes) {
      const path = compacted();
      const index = await openSessionIndex(path);
      const lazy = await loadSession(path);
      expect(lazy.conversation.messages).toHaveLength(3);
      change(path);
      for (const read of [
        () => index.readAll(),
        () => index.readAt([0]),
        () => index.conversationView(),
        () => lazy.entries,
      ]) {
        expect(read, what).toThrow(expect.objectContaining({ code: 'ERR_SESSION_CHANGED' }));
      }
      await expect(index.entry('a'), what).rejects.toMatchObject({ code: 'ERR_SESSION_CHANGED' });
    }
  });

  it.runIf(fifoSupported)(
    'replaced by a FIFO or a directory: ERR_SESSION_CHANGED, no read blocks',
    async () => {
      for (const make of [(p: string) => execFileSync('mkfifo', [p]), (p: string) => mkdirSync(p)]) {
        const path = compacted();
        const index = await openSessionIndex(path);
        const lazy = await loadSession(path);
        rmSync(path);
        make(path);
        expect(() => index.readAll()).toThrow(expect.objectContaining({ code: 'ERR_SESSION_CHANGED' }));
        expect(() => lazy.entries).toThrow(expect.objectContaining({ code: 'ERR_SESSION_CHANGED' }));
      }
    },
  );

  it('deleted: the file-system error (ENOENT) propagates, as documented', async () => {
    const path = compacted();
    const index = await openSessionIndex(path);
    rmSync(path);
    expect(() => index.readAll()).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});
