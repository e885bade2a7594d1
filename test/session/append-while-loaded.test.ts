/**
 * A session read while another writer appends to it (an agent still running): the deferred reads of a lazy load
 * (`LoadedSession.entries`), of `openSessionIndex` and of a lazily opened `SessionLog` return the entries as of the
 * load as long as the bytes they were indexed from are unchanged — the file only grew (appends by `SessionLog`, raw
 * appends, a torn tail cut off and appended after). A shrink below them, a replaced file or a rewritten line stays
 * `ERR_SESSION_CHANGED`.
 */
import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { loadSession, openSessionIndex, SessionLog } from '../../src/session/index.js';
import { compactionLine, HEADER, messageLine } from './helpers/every-path.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-session-append-'));
let n = 0;
const fresh = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

/** The error `fn` throws (or undefined). */
function thrown(fn: () => unknown): { code?: string; message: string } | undefined {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  return undefined;
}

/** A compacted session written by SessionLog (the lazy load takes the index path; `entries` reads the file later). */
async function written(): Promise<string> {
  const path = fresh();
  const log = await SessionLog.create(path, { model: 'm' });
  const first = log.appendMessage(say('one'));
  log.appendMessage(say('two'));
  log.appendCompaction({
    summary: 's',
    replacement: [say('summary')],
    firstKeptIndex: 1,
    messageCountBefore: 2,
    tokensBefore: 10,
    tokensAfter: 2,
  });
  log.appendMessage(say('three'));
  log.branch(first.id);
  log.appendMessage(say('four'));
  log.close();
  return path;
}

/** The same compacted session in raw lines, `last` the final line's bytes (no newline added). */
function rawFile(last = ''): string {
  const path = fresh();
  writeFileSync(
    path,
    `${[HEADER, messageLine('a', null, 'x'), messageLine('b', 'a', 'y'), compactionLine('c', 'b', 'b'), messageLine('d', 'c', 'z')].join('\n')}\n${last}`,
  );
  return path;
}

/** What the eager load of `bytes` (the file as it was loaded) gives: entries, conversation. */
async function asLoaded(bytes: Buffer) {
  const copy = fresh();
  writeFileSync(copy, bytes);
  const eager = await loadSession(copy, { eager: true });
  return { entries: eager.entries, conversation: eager.conversation };
}

describe('appends after a lazy load: the deferred reads return the entries as of the load', () => {
  it('loadSession (index path), then a SessionLog appends: entries are the ones loaded', async () => {
    const path = await written();
    const before = await asLoaded(readFileSync(path));
    const loaded = await loadSession(path);
    const log = await SessionLog.open(path);
    log.appendMessage(say('five'));
    log.appendMessage(say('six'));
    log.close();
    expect(thrown(() => loaded.entries)).toBeUndefined();
    expect(loaded.entries).toStrictEqual(before.entries);
    expect(loaded.conversation).toStrictEqual(before.conversation);
    // The file itself holds the new entries: loading again sees them.
    expect((await loadSession(path)).entries).toHaveLength(before.entries.length + 2);
  });

  it('raw appends (a whole line, an empty line, a torn fragment): every deferred read still works', async () => {
    const tails = [`${messageLine('e', 'd', 'w')}\n`, '\n', '{"type":"message","id":"f","par'];
    for (const tail of tails) {
      const path = rawFile();
      const original = readFileSync(path);
      const before = await asLoaded(original);
      const index = await openSessionIndex(path);
      const lazy = await loadSession(path);
      appendFileSync(path, tail);
      expect(index.readAll(), tail).toStrictEqual(before.entries);
      expect(index.readAt([0, 3]), tail).toStrictEqual([before.entries[0], before.entries[3]]);
      expect({ messages: index.conversationView().messages }, tail).toStrictEqual(before.conversation);
      expect(await index.entry('a'), tail).toStrictEqual(before.entries[0]);
      expect(lazy.entries, tail).toStrictEqual(before.entries);
    }
  });

  it('an unterminated last line: SessionLog writes its newline and appends; a raw append that extends the line does not pass', async () => {
    const path = rawFile(messageLine('e', 'd', 'w'));
    const before = await asLoaded(readFileSync(path));
    const lazy = await loadSession(path);
    expect(lazy.warnings.map((w) => w.kind)).toEqual(['unterminated_line']);
    const log = await SessionLog.open(path);
    log.appendMessage(say('after'));
    log.close();
    expect(lazy.entries).toStrictEqual(before.entries);

    const raw = rawFile(messageLine('e', 'd', 'w'));
    const index = await openSessionIndex(raw);
    appendFileSync(raw, 'xyz\n'); // the indexed last line now ends elsewhere: its bytes are not the ones indexed
    expect(thrown(() => index.readAll())?.code).toBe('ERR_SESSION_CHANGED');
  });

  it('a torn last line: SessionLog cuts it off and appends (the file may end up shorter); the entries loaded stay readable', async () => {
    const path = rawFile(
      `{"type":"message","id":"torn","parentId":"d","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"${'x'.repeat(400)}`,
    );
    const before = await asLoaded(readFileSync(path));
    const lazy = await loadSession(path);
    const index = await openSessionIndex(path);
    expect(lazy.warnings.map((w) => w.kind)).toEqual(['torn_line']);
    const sizeAtLoad = statSync(path).size;
    const log = await SessionLog.open(path);
    log.appendMessage(say('x'));
    log.close();
    expect(statSync(path).size).toBeLessThan(sizeAtLoad);
    expect(lazy.entries).toStrictEqual(before.entries);
    expect(index.readAll()).toStrictEqual(before.entries);
  });

  it('SessionLog opened lazily: an append by a writer that ignores the lock leaves its reads working', async () => {
    const path = await written();
    const before = await asLoaded(readFileSync(path));
    const log = await SessionLog.open(path);
    const first = before.entries[0]?.id as string;
    appendFileSync(path, `${messageLine('zz', first, 'foreign')}\n`);
    expect(log.entries).toStrictEqual(before.entries);
    log.branch(first);
    expect(log.conversation.messages).toStrictEqual([say('one')]);
    log.appendMessage(say('mine'));
    expect(log.conversation.messages).toStrictEqual([say('one'), say('mine')]);
    log.close();
    // The file is still a valid session: the foreign line is a branch of its own.
    const reloaded = await loadSession(path, { eager: true });
    expect(reloaded.conversation.messages).toStrictEqual([say('one'), say('mine')]);
    expect(reloaded.entries.map((e) => e.id)).toContain('zz');
  });

  it('an index opened while the file is being appended to indexes the file as it was when opened', async () => {
    const path = rawFile();
    // Enough lines that indexing takes many reads (tiny chunks); a line is appended between every two of them.
    const lines = [];
    for (let i = 0; i < 300; i++) lines.push(messageLine(`m${i}`, i === 0 ? 'd' : `m${i - 1}`, `text ${i}`));
    appendFileSync(path, `${lines.join('\n')}\n`);
    const sizeAtStart = statSync(path).size;
    let settled = false;
    const opening = openSessionIndex(path, { chunkBytes: 64 }).finally(() => {
      settled = true;
    });
    let appended = 0;
    let parent = 'm299';
    // Bounded (a reader that chases the file's end would never finish otherwise).
    while (!settled && appended < 1000) {
      await new Promise((resolve) => setImmediate(resolve));
      appendFileSync(path, `${messageLine(`n${appended}`, parent, 'late')}\n`);
      parent = `n${appended++}`;
    }
    expect(appended).toBeGreaterThan(1);
    const index = await opening;
    expect(index.fileBytes).toBeGreaterThanOrEqual(sizeAtStart);
    const all = index.readAll();
    expect(all.length).toBe(index.size);
    expect(all.slice(0, 304).map((e) => e.id)).toStrictEqual([
      'a',
      'b',
      'c',
      'd',
      ...lines.map((_, i) => `m${i}`),
    ]);
    // Indexed: the file as it was at open; what came later is not in the index.
    expect(all.length).toBeLessThan(304 + appended);
  });
});

describe('what is still a changed file: ERR_SESSION_CHANGED', () => {
  const changes: Array<[string, (path: string, original: Buffer) => void]> = [
    ['shrunk', (path, original) => truncateSync(path, original.length - 10)],
    [
      'replaced by a copy (another inode), then appended to',
      (path, original) => {
        writeFileSync(`${path}.new`, original);
        appendFileSync(`${path}.new`, '\n');
        renameSync(`${path}.new`, path);
      },
    ],
    [
      'rewritten in place, same size, a newer mtime',
      (path, original) => {
        writeFileSync(path, Buffer.from(original.toString('latin1').replace('"y"', '"Y"'), 'latin1'));
        const later = new Date(Date.now() + 5000);
        utimesSync(path, later, later);
      },
    ],
    [
      "a line's id rewritten, and a line appended",
      (path, original) => {
        writeFileSync(
          path,
          Buffer.from(
            original
              .toString('latin1')
              .replace('"id":"a"', '"id":"q"')
              .replace('"parentId":"a"', '"parentId":"q"'),
            'latin1',
          ),
        );
        appendFileSync(path, `${messageLine('e', 'd', 'w')}\n`);
      },
    ],
  ];
  for (const [what, change] of changes) {
    it(what, async () => {
      const path = rawFile();
      const original = readFileSync(path);
      const before = new Date(1_700_000_000_000);
      utimesSync(path, before, before);
      const index = await openSessionIndex(path);
      const lazy = await loadSession(path);
      change(path, original);
      for (const read of [() => index.readAll(), () => index.readAt([0]), () => lazy.entries]) {
        expect(thrown(read)?.code, what).toBe('ERR_SESSION_CHANGED');
      }
    });
  }
});
