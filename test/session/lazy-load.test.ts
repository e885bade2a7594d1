/**
 * Lazy loading (`loadSession`, `SessionLog.open`): what the index-based open returns equals the eager load, the lines
 * it does not need stay unparsed until asked for, and a file that changes or lies is a typed error, never wrong data.
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
import { type LoadedSession, loadSession, SessionLog } from '../../src/session/index.js';
import { seededRandom } from '../helpers/media-corruption.js';
import { everyKindOfMessage } from './helpers/sample-conversation.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-session-lazy-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const answer = (text: string, i: number): Message => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'end',
  usage: { inputTokens: 100 + i, outputTokens: 10 + i },
  model: `m-${i % 3}`,
});

/** The error `fn` throws (or undefined). */
function thrown(fn: () => unknown): { code?: string; message: string } | undefined {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  return undefined;
}

/**
 * A session written by SessionLog from a seeded script: messages of every kind, model changes, custom entries,
 * branches back to random earlier entries, and compactions of the current conversation. Returns the ids written.
 */
async function generatedSession(path: string, seed: number, steps: number): Promise<string[]> {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const kinds = everyKindOfMessage();
  const log = await SessionLog.create(path, { model: 'start-model' });
  const ids: string[] = [];
  for (let s = 0; s < steps; s++) {
    const r = random();
    if (r < 0.45) ids.push(log.appendMessage(s % 2 ? answer(`a${s} ünï`, s) : say(`u${s} 日本`)).id);
    else if (r < 0.55) ids.push(log.appendMessage(pick(kinds)).id);
    else if (r < 0.62) ids.push(log.appendModelChange({ model: `model-${s}`, provider: 'p' }).id);
    else if (r < 0.68) ids.push(log.appendCustom('note', { s, nested: [1, 'x', null] }).id);
    else if (r < 0.78 && ids.length > 0) log.branch(pick(ids));
    else {
      const count = log.conversation.messages.length;
      if (count < 2) continue;
      const first = 1 + Math.floor(random() * (count - 1));
      ids.push(
        log.appendCompaction({
          summary: `summary ${s}`,
          replacement: [say(`summary ${s}`)],
          firstKeptIndex: first,
          messageCountBefore: count,
          tokensBefore: 1000 + s,
          tokensAfter: 100 + s,
        }).id,
      );
    }
  }
  log.close();
  return ids;
}

/** Everything the lazy load reports equals the eager load's, `entries` included (read last). */
function expectSameSession(lazy: LoadedSession, eager: LoadedSession): void {
  expect(lazy.header).toStrictEqual(eager.header);
  expect(lazy.leafId).toBe(eager.leafId);
  expect(lazy.model).toBe(eager.model);
  expect(lazy.warnings).toStrictEqual(eager.warnings);
  expect(lazy.conversation).toStrictEqual(eager.conversation);
  expect(lazy.entries).toStrictEqual(eager.entries);
  expect(lazy.entries).toBe(lazy.entries); // cached: the same array on every read
}

describe('lazy and eager loads agree', () => {
  it.each([1, 2, 3, 4, 5, 6])('generated session %i: branches, compactions, model changes', async (seed) => {
    const path = file();
    const ids = await generatedSession(path, seed, 120);
    expect(readFileSync(path, 'utf8')).toContain('"type":"compaction"');
    const eager = await loadSession(path, { eager: true });
    expectSameSession(await loadSession(path), eager);
    // Tiny reads: lines span chunks.
    expectSameSession(await loadSession(path, { chunkBytes: 97 }), eager);
    // The writer's lazy open: same state; branching to any entry resolves as the eager log does.
    const lazyLog = await SessionLog.open(path);
    expect(lazyLog.conversation).toStrictEqual(eager.conversation);
    expect(lazyLog.model).toBe(eager.model);
    expect(lazyLog.leafId).toBe(eager.leafId);
    const random = seededRandom(seed + 100);
    for (let k = 0; k < 5; k++) {
      const target = ids[Math.floor(random() * ids.length)] as string;
      lazyLog.branch(target);
      const added = lazyLog.appendMessage(say(`after branch ${k}`));
      expect(added.parentId).toBe(target);
    }
    const conversation = lazyLog.conversation;
    const model = lazyLog.model;
    lazyLog.close();
    const reloaded = await loadSession(path, { eager: true });
    expect(reloaded.conversation).toStrictEqual(conversation);
    expect(reloaded.model).toBe(model);
    const eagerOpened = await SessionLog.open(path, { eager: true });
    expect(eagerOpened.entries).toStrictEqual(reloaded.entries);
    eagerOpened.close();
  });

  it('SessionLog lazy and eager opens of the same file behave alike through branches and appends', async () => {
    const path = file();
    const ids = await generatedSession(path, 21, 100);
    const copy = file();
    writeFileSync(copy, readFileSync(path));
    const lazy = await SessionLog.open(path);
    const eager = await SessionLog.open(copy, { eager: true });
    const random = seededRandom(22);
    for (let k = 0; k < 8; k++) {
      expect(lazy.conversation).toStrictEqual(eager.conversation);
      expect(lazy.model).toBe(eager.model);
      if (k === 0) expect(lazy.leafId).toBe(eager.leafId); // appended ids are random: equal only before
      expect(lazy.size).toBe(eager.size);
      const target = ids[Math.floor(random() * ids.length)] as string;
      lazy.branch(target);
      eager.branch(target);
      if (k % 2) {
        lazy.appendModelChange({ model: `switch-${k}` });
        eager.appendModelChange({ model: `switch-${k}` });
      } else {
        lazy.appendMessage(say(`step ${k}`));
        eager.appendMessage(say(`step ${k}`));
      }
    }
    // The file's entries are equal; the appended ones differ only in their random ids and times.
    expect(lazy.entries.slice(0, ids.length)).toStrictEqual(eager.entries.slice(0, ids.length));
    const appended = (log: SessionLog) =>
      log.entries.slice(ids.length).map((e) => ({ ...e, id: '', parentId: '', timestamp: '' }));
    expect(appended(lazy)).toStrictEqual(appended(eager));
    lazy.close();
    eager.close();
  });

  it('SessionLog.entries: lazy, then kept up to date by appends; conversation messages are the same objects', async () => {
    const path = file();
    await generatedSession(path, 11, 60);
    const log = await SessionLog.open(path);
    const before = log.conversation.messages;
    const all = log.entries;
    const appended = log.appendCustom('after', 1);
    expect(log.entries).toBe(all);
    expect(all.at(-1)).toBe(appended);
    // The conversation's messages were parsed once, at open: entries shares them.
    const parsed = new Set(
      all.flatMap((e) => (e.type === 'message' ? [e.message] : e.type === 'compaction' ? e.replacement : [])),
    );
    for (const m of before) expect(parsed.has(m)).toBe(true);
    log.close();
    expect((await loadSession(path, { eager: true })).entries).toStrictEqual(all);
  });

  it('tail repairs and warnings match the eager load (torn, unterminated, empty lines, no header)', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('one'));
    log.appendMessage(say('two'));
    log.close();
    const text = readFileSync(path, 'utf8');
    const cases = [
      `${text}{"type":"message","id":"torn`,
      text.slice(0, -1),
      text.replace('\n', '\n\n'),
      '',
      '{"type":"session","vers',
      text.replace(/\n/g, '\r\n'),
    ];
    for (const content of cases) {
      writeFileSync(path, content);
      const eager = await loadSession(path, { eager: true });
      const lazy = await loadSession(path);
      expect({ ...lazy.header, id: '', created: '' }).toStrictEqual({ ...eager.header, id: '', created: '' });
      expect(lazy.warnings).toStrictEqual(eager.warnings);
      expect(lazy.conversation).toStrictEqual(eager.conversation);
      expect(lazy.entries).toStrictEqual(eager.entries);
      const opened = await SessionLog.open(path);
      expect(opened.warnings.slice(0, eager.warnings.length)).toStrictEqual(
        eager.warnings.map((w) => (w.kind === 'no_header' ? { ...w } : w)),
      );
      opened.appendMessage(say('appended'));
      expect(opened.entries.at(-1)?.type).toBe('message');
      opened.close();
      const after = await loadSession(path, { eager: true });
      expect(after.warnings.filter((w) => w.kind !== 'empty_line')).toEqual([]);
      expect(after.conversation.messages.at(-1)).toStrictEqual(say('appended'));
    }
  });
});

describe('a compacted session is resumed without parsing the history it replaced', () => {
  /** A session whose first messages a compaction replaced; the line of `damaged` is then cut short in place. */
  async function compactedWithDamagedHistory(): Promise<{ path: string; line: number }> {
    const path = file();
    const log = await SessionLog.create(path, { model: 'm' });
    for (let i = 0; i < 20; i++) log.appendMessage(i % 2 ? answer(`old ${i}`, i) : say(`old ${i}`));
    compactWithSummary(log, 18, 20);
    log.appendMessage(say('new'));
    log.close();
    // Line 5 (entry 4, replaced): keep its leading fields, break its JSON and its UTF-8.
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[4] = `${(lines[4] as string).slice(0, 90)}\u00ff`;
    const bytes = Buffer.from(lines.join('\n'), 'utf8');
    const at = bytes.indexOf(Buffer.from('\u00ff', 'utf8'));
    bytes[at + 1] = 0x28; // invalid UTF-8 too
    writeFileSync(path, bytes);
    return { path, line: 5 };
  }

  it('loadSession and SessionLog.open succeed; the damage is reported when entries are read', async () => {
    const { path, line } = await compactedWithDamagedHistory();
    const expected = [say('summary'), say('old 18'), answer('old 19', 19), say('new')];
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual(expected);
    const err = thrown(() => loaded.entries);
    expect(err?.code).toBe('ERR_SESSION_CORRUPT');
    expect(err?.message).toContain(`${path}:${line}:`);
    // A failed read is not cached: it fails again the same way.
    expect(thrown(() => loaded.entries)?.code).toBe('ERR_SESSION_CORRUPT');
    await expect(loadSession(path, { eager: true })).rejects.toMatchObject({ code: 'ERR_SESSION_CORRUPT' });

    const log = await SessionLog.open(path);
    expect(log.conversation.messages).toStrictEqual(expected);
    log.appendMessage(say('more'));
    expect(thrown(() => log.entries)?.code).toBe('ERR_SESSION_CORRUPT');
    log.close();
    await expect(SessionLog.open(path, { eager: true })).rejects.toMatchObject({
      code: 'ERR_SESSION_CORRUPT',
    });
  });
});

describe('a file changed after a lazy open', () => {
  /**
   * m0, then m1..m5 and a custom entry off the current branch (not parsed by a lazy load), then m6. The custom
   * entry's data is the string "compaction", so the file's end mentions one: the load takes the index path.
   */
  async function plain(): Promise<string> {
    const path = file();
    const log = await SessionLog.create(path);
    const first = log.appendMessage(say('m0'));
    for (let i = 1; i < 6; i++) log.appendMessage(say(`m${i}`));
    log.appendCustom('note', 'compaction');
    log.branch(first.id);
    log.appendMessage(say('m6'));
    log.close();
    return path;
  }

  // An append alone is not a change (append-while-loaded.test.ts); the same append after a truncation is.
  it('loadSession: a truncation (then an append), a rewrite in place, a replaced file: ERR_SESSION_CHANGED', async () => {
    const path = await plain();
    const original = readFileSync(path);
    const changes: Array<() => void> = [
      () => {
        truncateSync(path, original.length - 10);
        appendFileSync(path, 'x'.repeat(20)); // past the old end, but the loaded bytes no longer end a line there
      },
      () => truncateSync(path, original.length - 10),
      () => {
        // Same size, an id rewritten, the old mtime put back.
        const before = new Date(1_700_000_000_000);
        utimesSync(path, before, before);
        const text = original.toString('latin1');
        const id = [...text.matchAll(/"id":"([0-9a-f]+)"/g)][3]?.[1] as string; // m2's (0 is the header's)
        writeFileSync(
          path,
          Buffer.from(text.replace(`"id":"${id}"`, `"id":"${'f'.repeat(id.length)}"`), 'latin1'),
        );
        utimesSync(path, before, before);
      },
      () => {
        writeFileSync(`${path}.new`, original);
        renameSync(`${path}.new`, path);
      },
    ];
    for (const change of changes) {
      writeFileSync(path, original);
      if (change === changes[2]) {
        const before = new Date(1_700_000_000_000);
        utimesSync(path, before, before);
      }
      const loaded = await loadSession(path);
      change();
      expect(thrown(() => loaded.entries)?.code).toBe('ERR_SESSION_CHANGED');
    }
  });

  it('a spread or JSON.stringify of a lazily loaded session does not read the file (entries is not enumerable)', async () => {
    const path = await plain();
    const loaded = await loadSession(path);
    truncateSync(path, 10);
    const copy = { ...loaded };
    expect(Object.keys(copy)).not.toContain('entries');
    expect(JSON.parse(JSON.stringify(loaded))).toMatchObject({ leafId: loaded.leafId });
    expect(thrown(() => loaded.entries)?.code).toBe('ERR_SESSION_CHANGED');
  });

  it('SessionLog: its own appends are fine; a truncation by another writer is ERR_SESSION_CHANGED', async () => {
    const path = await plain();
    const log = await SessionLog.open(path);
    const first = log.entries[0]?.id as string;
    log.appendMessage(say('mine'));
    log.branch(first); // reads the file's old entries again: still the file this log wrote
    log.appendMessage(say('mine too'));
    expect(log.conversation.messages).toStrictEqual([say('m0'), say('mine too')]);
    expect(log.entries.flatMap((e) => (e.type === 'message' ? [e.message] : []))).toStrictEqual(
      ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'mine', 'mine too'].map(say),
    );
    log.close();

    const reopened = await SessionLog.open(path);
    const ids = readFileSync(path, 'utf8').match(/"id":"[0-9a-f]+"/g) ?? [];
    truncateSync(path, statSync(path).size - 1); // a writer that ignores the lock
    expect(thrown(() => reopened.entries)?.code).toBe('ERR_SESSION_CHANGED');
    expect(thrown(() => reopened.branch((ids[2] as string).slice(6, -1)))?.code).toBe('ERR_SESSION_CHANGED');
    reopened.close();
  });
});

describe('hostile files stay bounded and typed on the lazy path', () => {
  it('a line longer than maxLineBytes, a parent cycle or forward reference, a duplicate id: fail at open', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('x'.repeat(50_000)));
    log.close();
    await expect(loadSession(path, { maxLineBytes: 4096, chunkBytes: 1024 })).rejects.toMatchObject({
      code: 'ERR_SESSION_CORRUPT',
      message: expect.stringMatching(/:2: line is longer than maxLineBytes/),
    });
    const head = readFileSync(path, 'utf8').split('\n')[0] as string;
    const line = (id: string, parentId: string | null) =>
      `${JSON.stringify({ type: 'message', id, parentId, timestamp: 't', message: say(id) })}\n`;
    for (const [body, pattern] of [
      [line('a', 'a'), /:2: parentId a does not name an earlier entry/],
      [line('a', 'b') + line('b', 'a'), /:2: parentId b does not name an earlier entry/],
      [line('a', null) + line('a', null), /:3: duplicate entry id a/],
    ] as const) {
      writeFileSync(path, `${head}\n${body}`);
      await expect(loadSession(path)).rejects.toMatchObject({
        code: 'ERR_SESSION_FORMAT',
        message: expect.stringMatching(pattern),
      });
      await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    }
  });

  it('a line whose leading fields lie (a repeated key later in it) is ERR_SESSION_FORMAT when read', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const a = log.appendMessage(say('a'));
    log.appendMessage(say('b'));
    log.branch(a.id);
    log.appendMessage(say('c'));
    log.appendCustom('note', 'compaction'); // the probe sees "compaction": the index path
    log.close();
    const lines = readFileSync(path, 'utf8').split('\n');
    // Line 3 ("b", off the current branch) says parent a up front, and parent "nowhere" at its end.
    lines[2] = `${(lines[2] as string).slice(0, -1)},"parentId":"nowhere"}`;
    writeFileSync(path, lines.join('\n'));
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual([say('a'), say('c')]);
    const err = thrown(() => loaded.entries);
    expect(err?.code).toBe('ERR_SESSION_FORMAT');
    expect(err?.message).toMatch(/:3: .*repeats a key/);
    // With no compaction in sight the one-pass path parses it at load: the same error, then.
    lines.splice(4, 1);
    writeFileSync(path, lines.join('\n'));
    await expect(loadSession(path)).rejects.toMatchObject({
      code: 'ERR_SESSION_FORMAT',
      message: expect.stringMatching(/:3: .*repeats a key/),
    });
    await expect(loadSession(path, { eager: true })).rejects.toMatchObject({ code: 'ERR_SESSION_FORMAT' });
  });

  it('a compaction that keeps from an entry off its branch fails at open when it is current', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const a = log.appendMessage(say('a'));
    log.appendMessage(say('b'));
    log.close();
    const line = JSON.stringify({
      type: 'compaction',
      id: 'c',
      parentId: a.id,
      timestamp: 't',
      summary: 's',
      replacement: [],
      firstKeptEntryId: 'nope',
      tokensBefore: 1,
      tokensAfter: 1,
    });
    appendFileSync(path, `${line}\n`);
    await expect(loadSession(path)).rejects.toMatchObject({
      code: 'ERR_SESSION_FORMAT',
      message: /keeps from entry nope/,
    });
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    await expect(loadSession(path, { eager: true })).rejects.toMatchObject({ code: 'ERR_SESSION_FORMAT' });
  });
});

/**
 * Which path a default (lazy) load took, seen from outside: after the one-pass load every entry is in memory, so a
 * change to the file afterwards is never noticed; after the index path, reading `entries` finds the file changed.
 * Loads a copy of `path` (the copy is then replaced).
 */
async function pathTaken(path: string): Promise<'one pass' | 'index'> {
  const copy = file();
  writeFileSync(copy, readFileSync(path));
  const loaded = await loadSession(copy);
  // Replaced by another file with the same bytes (an append would not do: the entries loaded are still readable).
  writeFileSync(`${copy}.new`, readFileSync(path));
  renameSync(`${copy}.new`, copy);
  const err = thrown(() => loaded.entries);
  if (err === undefined) return 'one pass';
  expect(err.code).toBe('ERR_SESSION_CHANGED');
  return 'index';
}

/** Lazy loadSession and SessionLog.open equal the eager load of `path` (warnings compared after `entries`). */
async function expectLikeEager(path: string, options: { chunkBytes?: number } = {}): Promise<LoadedSession> {
  const eager = await loadSession(path, { ...options, eager: true });
  const lazy = await loadSession(path, options);
  expect(lazy.header).toStrictEqual(eager.header);
  expect(lazy.leafId).toBe(eager.leafId);
  expect(lazy.model).toBe(eager.model);
  expect(lazy.conversation).toStrictEqual(eager.conversation);
  expect(lazy.entries).toStrictEqual(eager.entries);
  expect(lazy.warnings).toStrictEqual(eager.warnings);
  const copy = file();
  writeFileSync(copy, readFileSync(path));
  const log = await SessionLog.open(copy, options);
  expect(log.conversation).toStrictEqual(eager.conversation);
  expect(log.model).toBe(eager.model);
  expect(log.leafId).toBe(eager.leafId);
  expect(log.entries).toStrictEqual(eager.entries);
  const own = log.warnings
    .filter((w) => w.kind !== 'repaired')
    .map((w) => ({ ...w, message: w.message.replace(copy, path) }));
  expect(own).toStrictEqual(eager.warnings);
  log.close();
  return eager;
}

/** A compaction appended through `log` whose summary message is `say('summary')`. */
function compactWithSummary(log: SessionLog, firstKeptIndex: number, messageCountBefore: number): void {
  log.appendCompaction({
    summary: 's',
    replacement: [say('summary')],
    firstKeptIndex,
    messageCountBefore,
    tokensBefore: 2,
    tokensAfter: 1,
  });
}

/** A compaction line in SessionLog's form, or with its type spelled with `\u` escapes (the same JSON value). */
function compactionLine(
  id: string,
  parentId: string,
  firstKeptEntryId: string | null,
  escaped = false,
): string {
  const line = JSON.stringify({
    type: 'compaction',
    id,
    parentId,
    timestamp: 't',
    summary: 's',
    replacement: [say('summary')],
    firstKeptEntryId,
    tokensBefore: 10,
    tokensAfter: 5,
  });
  return `${escaped ? line.replace('"compaction"', '"\\u0063ompaction"') : line}\n`;
}

describe('a default load with no compaction in sight parses in one pass', () => {
  async function plainLog(path: string, count: number): Promise<string[]> {
    const log = await SessionLog.create(path, { model: 'm' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(log.appendMessage(i % 2 ? answer(`a${i}`, i) : say(`u${i} 日本`)).id);
    log.close();
    return ids;
  }

  it('a never-compacted file: one pass, the same session as the eager load, also with tiny reads', async () => {
    const path = file();
    await plainLog(path, 50);
    expect(await pathTaken(path)).toBe('one pass');
    await expectLikeEager(path);
    await expectLikeEager(path, { chunkBytes: 61 });
  });

  it('the word in message text (JSON-escaped quotes) does not count; a "compaction" string value does', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('{"type":"compaction","id":"x","parentId":null} and "compaction" and compaction'));
    log.appendMessage(answer('the compaction entry type', 1));
    log.close();
    expect(await pathTaken(path)).toBe('one pass');
    await expectLikeEager(path);
    // A tool input whose value is the bare string: the probe says yes, the index path loads the same session.
    const reopened = await SessionLog.open(path);
    reopened.appendMessage({
      role: 'assistant',
      content: [{ type: 'tool_call', id: 'c1', name: 'set', input: { mode: 'compaction' } }],
    });
    reopened.close();
    expect(await pathTaken(path)).toBe('index');
    await expectLikeEager(path);
  });

  it('a compaction the probe cannot see (type spelled with \\u escapes): the one pass resolves it, no handover', async () => {
    for (const current of [true, false]) {
      const path = file();
      const ids = await plainLog(path, 12);
      // On the current branch (applies), or on a branch the leaf is not on (does not).
      appendFileSync(path, compactionLine('cx', ids[11] as string, ids[9] as string, true));
      const after = JSON.stringify({
        type: 'message',
        id: 'after',
        parentId: current ? 'cx' : ids[5],
        timestamp: 't',
        message: say('after'),
      });
      appendFileSync(path, `${after}\n`);
      expect(await pathTaken(path)).toBe('one pass');
      const eager = await expectLikeEager(path);
      expect(eager.conversation.messages[0]).toStrictEqual(current ? say('summary') : say('u0 日本'));
    }
  });

  it('a compaction on another branch: index path, the current branch resolves as the eager load does', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const first = log.appendMessage(say('root'));
    log.appendMessage(say('old branch'));
    compactWithSummary(log, 1, 2);
    log.branch(first.id);
    log.appendMessage(say('new branch'));
    log.close();
    expect(await pathTaken(path)).toBe('index');
    const eager = await expectLikeEager(path);
    expect(eager.conversation.messages).toStrictEqual([say('root'), say('new branch')]);
  });

  it('a compaction megabytes before the end (several probe reads): the index path, never the one pass', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('replaced history'));
    compactWithSummary(log, 1, 1);
    // ~3 MiB after the compaction: the probe reads 1 MiB at a time from the end, overlapping by the marker's length.
    for (let i = 0; i < 48; i++) log.appendMessage(say(`${i} ${'x'.repeat(64 * 1024)}`));
    log.close();
    expect(await pathTaken(path)).toBe('index');
    const eager = await expectLikeEager(path);
    expect(eager.conversation.messages[0]).toStrictEqual(say('summary'));
    expect(eager.conversation.messages).toHaveLength(49);
  });

  it('the probe sees "compaction" across the seam of its 1 MiB reads at every offset, and nothing else', async () => {
    const step = 1024 * 1024;
    // The custom entry's value sits `tail` bytes before the file's end: d bytes past the seam of the last two reads.
    for (const [value, d, taken] of [
      ...Array.from({ length: 14 }, (_, d) => ['compaction', d - 1, 'index'] as const),
      ...[3, 6, 9].map((d) => ['compactions', d, 'one pass'] as const),
      ['xcompaction', 6, 'one pass'] as const,
    ]) {
      const path = file();
      const log = await SessionLog.create(path);
      log.appendMessage(say(`history ${'h'.repeat(step)}`));
      const note = log.appendCustom('note', value);
      log.close();
      const written = readFileSync(path, 'latin1');
      const toEnd = written.length - written.lastIndexOf(`"${value}"`);
      const line = (pad: number) =>
        `${JSON.stringify({ type: 'message', id: 'last', parentId: note.id, timestamp: 't', message: say('x'.repeat(pad)) })}\n`;
      appendFileSync(path, line(step + d - toEnd - line(0).length));
      expect(statSync(path).size - (written.length - toEnd)).toBe(step + d);
      expect(await pathTaken(path)).toBe(taken);
    }
  });

  it('a file that repeats the marker\'s core ("compactions") still has its marker seen after the repeats', async () => {
    for (const marker of [false, true]) {
      const path = file();
      const log = await SessionLog.create(path);
      log.appendMessage(say('"compactions" '.repeat(1000)));
      const note = log.appendCustom('note', marker ? 'compaction' : 'compactions');
      log.appendMessage(say('"compactions" '.repeat(100)));
      log.close();
      expect(await pathTaken(path)).toBe(marker ? 'index' : 'one pass');
      expect((await loadSession(path)).entries[1]).toMatchObject({ id: note.id });
    }
  });

  it('a damaged line off the current branch: the one pass reports it at load; on the index path, when entries is read (an appending open reads it to count usage)', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const first = log.appendMessage(say('root'));
    log.appendMessage(say('off branch'));
    log.branch(first.id);
    log.appendMessage(say('current'));
    log.close();
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    lines[2] = (lines[2] as string).replace('"text":"off branch"}', '"text":"off branch"');
    writeFileSync(path, lines.join('\n'));
    // No compaction in sight: the path is chosen once, and it parses every line.
    for (const eager of [false, true]) {
      await expect(loadSession(path, { eager })).rejects.toMatchObject({
        code: 'ERR_SESSION_CORRUPT',
        message: expect.stringContaining(`${path}:3: not valid JSON`),
      });
    }
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    // The index path (the file mentions a compaction) parses the line only when `entries` is read.
    const leaf = JSON.parse(lines[3] as string).id;
    appendFileSync(
      path,
      `{"type":"custom","id":"n","parentId":"${leaf}","timestamp":"t","customType":"n","data":"compaction"}\n`,
    );
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual([say('root'), say('current')]);
    expect(thrown(() => loaded.entries)).toMatchObject({
      code: 'ERR_SESSION_CORRUPT',
      message: expect.stringContaining(`${path}:3: not valid JSON`),
    });
    // An appending open counts every answer no compaction recorded (all of them, here): it reads the line.
    await expect(SessionLog.open(path)).rejects.toMatchObject({
      code: 'ERR_SESSION_CORRUPT',
      message: expect.stringContaining(`${path}:3: not valid JSON`),
    });
  });

  it('tail repairs and huge lines on both paths: torn, unterminated, CRLF, lines longer than a chunk', async () => {
    for (const marker of [false, true]) {
      const path = file();
      const log = await SessionLog.create(path);
      log.appendMessage(say('one'));
      // A custom "compaction" string value makes the probe choose the index path.
      if (marker) log.appendCustom('note', 'compaction');
      log.appendMessage(say(`huge ${'ü'.repeat(200_000)}`));
      log.appendMessage(say('two'));
      log.close();
      const text = readFileSync(path, 'utf8');
      for (const content of [
        `${text}{"type":"message","id":"torn`,
        text.slice(0, -1),
        text.replace(/\n/g, '\r\n'),
        text.replace('\n', '\n\n'),
      ]) {
        writeFileSync(path, content);
        expect(await pathTaken(path)).toBe(marker ? 'index' : 'one pass');
        await expectLikeEager(path, { chunkBytes: 4096 });
      }
      writeFileSync(path, text);
      for (const eager of [false, true]) {
        await expect(loadSession(path, { eager, maxLineBytes: 100_000 })).rejects.toMatchObject({
          code: 'ERR_SESSION_CORRUPT',
          message: expect.stringMatching(/:\d: line is longer than maxLineBytes/),
        });
      }
    }
  });
});

describe('bytes that are not valid UTF-8 read as U+FFFD with an invalid_utf8 warning, on every path', () => {
  /** `text` of line `line` (1-based) with its first `X` replaced by the bytes C3 28 (a cut two-byte sequence). */
  function damage(text: string, line: number): Buffer {
    const lines = text.split('\n');
    const at = (lines[line - 1] as string).indexOf('X');
    expect(at).toBeGreaterThan(0);
    const before = Buffer.from(
      `${lines.slice(0, line - 1).join('\n')}\n${(lines[line - 1] as string).slice(0, at)}`,
    );
    const after = Buffer.from(
      `${(lines[line - 1] as string).slice(at + 1)}\n${lines.slice(line).join('\n')}`,
    );
    return Buffer.concat([before, Buffer.from([0xc3, 0x28]), after]);
  }

  it('on the conversation, off the branch, in replaced history, on an unterminated last line', async () => {
    for (const compacted of [false, true]) {
      const path = file();
      const log = await SessionLog.create(path);
      const root = log.appendMessage(say('root X'));
      log.appendMessage(say('off branch X'));
      log.branch(root.id);
      log.appendMessage(say('current X'));
      log.appendMessage(say('kept X'));
      if (compacted) {
        compactWithSummary(log, 2, 3);
      }
      log.appendMessage(say('last X'));
      log.close();
      const text = readFileSync(path, 'utf8');
      const lastLine = text.split('\n').length - 1;
      // Line 2 (root: conversation, or replaced history), 3 (off branch), 5 (kept), the last line unterminated.
      for (const line of [2, 3, 5, lastLine]) {
        let bytes = damage(text, line);
        if (line === lastLine) bytes = bytes.subarray(0, bytes.length - 1);
        writeFileSync(path, bytes);
        expect(await pathTaken(path)).toBe(compacted ? 'index' : 'one pass');
        const eager = await expectLikeEager(path);
        expect(eager.warnings.filter((w) => w.kind === 'invalid_utf8')).toStrictEqual([
          {
            kind: 'invalid_utf8',
            line,
            message: `${path}:${line}: not valid UTF-8; each bad byte sequence was read as U+FFFD and the line loaded`,
          },
        ]);
        expect(JSON.stringify(eager.entries)).toContain('\ufffd(');
        // The lazy index path reports a line it parses at load at once; one it reads later, when `entries` is read.
        const lazy = await loadSession(path);
        const atLoad = lazy.warnings.filter((w) => w.kind === 'invalid_utf8').length;
        const parsedAtLoad = !compacted || line === 5 || line === lastLine;
        expect(atLoad).toBe(parsedAtLoad ? 1 : 0);
        void lazy.entries;
        expect(lazy.warnings).toStrictEqual(eager.warnings);
      }
    }
  });
});
