import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { loadSession, openSessionIndex, SessionLog } from '../../src/session/index.js';
import { everyKindOfMessage } from './helpers/sample-conversation.js';

const DOC = join(dirname(fileURLToPath(import.meta.url)), '../../docs/session-format.md');
const dir = mkdtempSync(join(tmpdir(), 'panto-session-index-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

function docExample(): string {
  const match = /```jsonl\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'));
  if (!match?.[1]) throw new Error('docs/session-format.md has no jsonl example');
  const path = file();
  writeFileSync(path, match[1]);
  return path;
}

/** The index agrees with loadSession on everything both report, and every entry reads back deep-equal. */
async function expectSameAsLoad(path: string, options: { chunkBytes?: number } = {}): Promise<void> {
  const loaded = await loadSession(path, { ...options, eager: true });
  const index = await openSessionIndex(path, options);
  expect(index.header).toStrictEqual(loaded.header);
  expect(index.leafId).toBe(loaded.leafId);
  expect(index.model).toBe(loaded.model);
  expect(index.warnings).toStrictEqual(loaded.warnings);
  expect(index.ids).toStrictEqual(loaded.entries.map((e) => e.id));
  expect(index.parents).toStrictEqual(loaded.entries.map((e) => e.parentId));
  expect(index.types).toStrictEqual(loaded.entries.map((e) => e.type));
  expect(await index.conversation()).toStrictEqual(loaded.conversation);
  for (const e of loaded.entries) expect(await index.entry(e.id)).toStrictEqual(e);
  await expect(index.verify()).resolves.toBeUndefined();
  // Each entry's line ref names exactly its line: the bytes there parse to the entry.
  const bytes = readFileSync(path);
  const lineStarts = [0];
  for (let p = bytes.indexOf(10); p !== -1; p = bytes.indexOf(10, p + 1)) lineStarts.push(p + 1);
  loaded.entries.forEach((e, i) => {
    const ref = index.lineRef(i);
    expect(lineStarts[ref.line - 1]).toBe(ref.offset);
    expect(JSON.parse(bytes.toString('utf8', ref.offset, ref.offset + ref.bytes))).toStrictEqual(e);
  });
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

async function branchedLog(path: string): Promise<void> {
  const log = await SessionLog.create(path, { model: 'm-0' });
  for (const m of everyKindOfMessage()) log.appendMessage(m);
  const a = log.appendMessage(say('a'));
  log.appendModelChange({ model: 'm-1' });
  log.appendMessage(say('b'));
  log.branch(a.id);
  log.appendMessage(say('c — ünïcödé'));
  log.appendCustom('note', { any: ['json', 1] });
  log.close();
}

describe('openSessionIndex gives what loadSession gives', () => {
  it('the documented example (model change, compaction keeping earlier entries)', async () => {
    await expectSameAsLoad(docExample());
  });

  it('every message kind, a branch, a model change off the current branch, a custom entry', async () => {
    const path = file();
    await branchedLog(path);
    await expectSameAsLoad(path);
    // Lines spanning reads (tiny chunks) index the same.
    await expectSameAsLoad(path, { chunkBytes: 7 });
    const index = await openSessionIndex(path);
    expect(index.model).toBe('m-0'); // the change to m-1 is on the abandoned branch
  });

  it('a session of 2500 entries (the id table and line refs grow past their first size)', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    for (let i = 0; i < 2500; i++) {
      if (i % 1000 === 999) log.branch(log.entries[i - 500]?.id as string);
      log.appendMessage(say(`m${i}`));
    }
    log.close();
    await expectSameAsLoad(path);
    await expectSameAsLoad(path, { chunkBytes: 4096 });
    // parents and types are built once and then the same arrays (reading them per entry in a loop stays linear).
    const index = await openSessionIndex(path);
    expect(index.parents).toBe(index.parents);
    expect(index.types).toBe(index.types);
    expect(index.types.length).toBe(2500);
  });

  it('lines written in another key order, with CRLF and empty lines, are parsed whole and index the same', async () => {
    const path = file();
    await branchedLog(path);
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const reordered = lines.map((l, i) => {
      if (i === 0) return l;
      const { type, id, parentId, ...rest } = JSON.parse(l);
      return JSON.stringify({ ...rest, parentId, id, type });
    });
    writeFileSync(path, `${reordered.join('\r\n')}\r\n\r\n`);
    await expectSameAsLoad(path);
  });
});

describe('hostile files', () => {
  it('a torn last line is skipped with a warning; an unterminated but complete one is kept', async () => {
    const path = file();
    await branchedLog(path);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, `${text}{"type":"message","id":"torn","parentId":nu`);
    await expectSameAsLoad(path);
    expect((await openSessionIndex(path)).warnings.map((w) => w.kind)).toEqual(['torn_line']);
    writeFileSync(path, text.slice(0, -1));
    await expectSameAsLoad(path);
    expect((await openSessionIndex(path)).warnings.map((w) => w.kind)).toEqual(['unterminated_line']);
  });

  it('a byte order mark then a torn header reads as an empty session, like loadSession (fuzz-sessions seed 1)', async () => {
    const path = file();
    writeFileSync(
      path,
      '\ufeff{"type":"session","version":1,"id":"0000000000000000","created":"2026-01-01T00:00',
    );
    const loaded = await loadSession(path, { eager: true });
    const index = await openSessionIndex(path);
    expect(index.warnings.map((w) => w.kind)).toEqual(loaded.warnings.map((w) => w.kind));
    expect(index.warnings.map((w) => w.kind)).toEqual(['torn_line', 'no_header']);
    expect((await index.conversation()).messages).toEqual([]);
    await index.verify();
  });

  it('a 50 MB line spanning many reads reads back intact; over maxLineBytes it is ERR_SESSION_CORRUPT', async () => {
    const path = file();
    const big = `${'x'.repeat(50 * 1024 * 1024 - 7)}é—end`;
    const log = await SessionLog.create(path);
    log.appendMessage(say('before'));
    const entry = log.appendMessage(say(big));
    log.appendMessage(say('after'));
    log.close();
    const index = await openSessionIndex(path);
    const read = await index.entry(entry.id);
    expect(read.type === 'message' && read.message).toStrictEqual(say(big));
    expect((await index.conversation()).messages).toStrictEqual([say('before'), say(big), say('after')]);
    expect(await code(openSessionIndex(path, { maxLineBytes: 1024 * 1024 }))).toBe('ERR_SESSION_CORRUPT');
  });

  it('bad UTF-8 in a line reads as U+FFFD with an invalid_utf8 warning, added when that line is first read', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('one'));
    const bad = log.appendMessage(say('BAD!'));
    log.appendMessage(say('three'));
    log.close();
    const bytes = readFileSync(path);
    const at = bytes.indexOf('BAD!');
    bytes[at + 1] = 0xc3; // a lead byte followed by an ASCII byte: invalid
    bytes[at + 2] = 0x28;
    writeFileSync(path, bytes);
    const index = await openSessionIndex(path); // the line is not parsed to index it
    expect(index.ids).toHaveLength(3);
    expect(index.warnings).toStrictEqual([]);
    const read = await index.entry(bad.id);
    expect(read.type === 'message' && read.message).toStrictEqual(say('B\ufffd(!'));
    const warning = {
      kind: 'invalid_utf8',
      line: 3,
      message: `${path}:3: not valid UTF-8; each bad byte sequence was read as U+FFFD and the line loaded`,
    };
    expect(index.warnings).toStrictEqual([warning]);
    // Read again (one line, in a batch, by verify): still one warning.
    await index.entries([bad.id, index.ids[0] as string, index.ids[2] as string]);
    expect((await index.conversation()).messages[1]).toStrictEqual(say('B\ufffd(!'));
    await index.verify();
    expect(index.warnings).toStrictEqual([warning]);
    // The same bytes read by the eager loader: the same value and the same warning, at load time.
    const eager = await loadSession(path, { eager: true });
    expect(eager.warnings).toStrictEqual([warning]);
    expect(eager.entries[1]).toStrictEqual(read);
  });

  it('damaged JSON or an invalid entry in the middle is reported when read and by verify(), like loadSession', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('one'));
    const mid = log.appendMessage(say('two'));
    log.appendMessage(say('three'));
    log.close();
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('"text":"two"}', '"text":"two"'));
    const index = await openSessionIndex(path);
    expect(await code(index.entry(mid.id))).toBe('ERR_SESSION_CORRUPT');
    expect(await code(index.verify())).toBe('ERR_SESSION_CORRUPT');
    expect(await code(loadSession(path))).toBe('ERR_SESSION_CORRUPT');
    writeFileSync(
      path,
      text.replace('"role":"user","content":[{"type":"text","text":"two"}]', '"role":"robot"'),
    );
    const index2 = await openSessionIndex(path);
    expect(await code(index2.verify())).toBe('ERR_SESSION_FORMAT');
    expect(await code(loadSession(path))).toBe('ERR_SESSION_FORMAT');
  });

  it('structural damage fails at open: a duplicate id, an unknown parent, a newer header', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const a = log.appendMessage(say('one'));
    log.close();
    const text = readFileSync(path, 'utf8');
    const line = text.split('\n')[1] as string;
    writeFileSync(path, `${text + line}\n`);
    expect(await code(openSessionIndex(path))).toBe('ERR_SESSION_FORMAT');
    writeFileSync(
      path,
      `${text + line.replace(`"id":"${a.id}","parentId":null`, '"id":"z","parentId":"nope"')}\n`,
    );
    expect(await code(openSessionIndex(path))).toBe('ERR_SESSION_FORMAT');
    writeFileSync(path, text.replace('"version":1', '"version":99'));
    expect(await code(openSessionIndex(path))).toBe('ERR_SESSION_FORMAT');
  });

  it('a file changed on disk after indexing (not only appended to) is ERR_SESSION_CHANGED, never wrong data', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('one'));
    const two = log.appendMessage(say('two'));
    log.close();
    const index = await openSessionIndex(path);
    // An append leaves the indexed lines readable, as they were indexed (the new line is not in the index).
    const original = readFileSync(path);
    const conversation = await index.conversation();
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'custom', id: 'x', parentId: two.id, timestamp: 't', customType: 'c', data: 1 })}\n`,
    );
    expect(await index.entry(two.id)).toStrictEqual(two);
    expect(await index.conversation()).toStrictEqual(conversation);
    expect(index.has('x')).toBe(false);
    // A truncation into the indexed lines.
    truncateSync(path, original.length - 5);
    expect(await code(index.entry(two.id))).toBe('ERR_SESSION_CHANGED');
    expect(await code(index.conversation())).toBe('ERR_SESSION_CHANGED');
    // The same size, inode and mtime, a line's id changed in place: caught by re-checking the line's id.
    const other = 'q'.repeat(two.id.length);
    const swapped = Buffer.from(original.toString('utf8').replace(`"id":"${two.id}"`, `"id":"${other}"`));
    expect(swapped.length).toBe(original.length);
    const mtime = new Date(1_700_000_000_000);
    writeFileSync(path, swapped);
    utimesSync(path, mtime, mtime);
    const stale = await openSessionIndex(path);
    expect(stale.leafId).toBe(other);
    writeFileSync(path, original);
    utimesSync(path, mtime, mtime);
    expect(statSync(path).size).toBe(stale.fileBytes);
    expect(await code(stale.entry(other))).toBe('ERR_SESSION_CHANGED');
    expect(await code(stale.conversation())).toBe('ERR_SESSION_CHANGED');
  });
});
