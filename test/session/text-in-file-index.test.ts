/**
 * `textInFile` on the index path (a file that mentions a compaction: `loadSession`'s lazy load, `SessionLog.open`,
 * `openSessionIndex`): every line the index parses — the conversation at load, `entries`, `entry(id)`, `readAt`,
 * `branch()`, lines parsed while opening — leaves its long texts in the file, and the session is the one loaded with
 * every text in memory (JSON of conversation and entries, warnings, errors with code and message). The size
 * threshold is 0 here so small files take the path the default keeps for files of 64 MiB+.
 */
import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message, TextPart } from '../../src/conversation.js';
import type { PantoError } from '../../src/errors.js';
import { isFileTextPart } from '../../src/session/file-text.js';
import {
  type LoadedSession,
  loadSession,
  openSessionIndex,
  type SessionEntry,
  SessionLog,
} from '../../src/session/index.js';
import { hostileTextLines, mulberry32 } from './helpers/hostile-text-lines.js';
import { everyKindOfMessage } from './helpers/sample-conversation.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-text-in-file-index-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALWAYS = { minFileBytes: 0, minTextBytes: 8 };
const PROSE = 'Ünïcödé prose — 日本語 "quoted" \\ back\\slash\ttab\nnewline \u2028 😀 end. ';
const nextTurn = () => new Promise((r) => setImmediate(r));

/** The text parts of messages (user/assistant content, tool result parts). */
function textParts(messages: readonly Message[]): unknown[] {
  const out: unknown[] = [];
  for (const m of messages) {
    if (m.role === 'user' || m.role === 'assistant') out.push(...m.content);
    else if (m.role === 'tool') for (const r of m.results) out.push(...r.parts);
  }
  return out;
}

const fileBacked = (messages: readonly Message[]): number =>
  textParts(messages).filter(isFileTextPart).length;
const entryMessages = (entries: readonly SessionEntry[]): Message[] =>
  entries.flatMap((e) => (e.type === 'message' ? [e.message] : []));

/**
 * A session written by SessionLog from a seeded script: long texts of awkward characters in user, assistant and tool
 * messages, every kind of message, model changes, custom entries, branches back to earlier entries, and compactions.
 * Returns the ids written.
 */
async function generatedSession(path: string, seed: number, steps: number): Promise<string[]> {
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const long = (s: number) => `${PROSE.repeat(1 + Math.floor(random() * 3))}${s}`;
  const kinds = everyKindOfMessage();
  const log = await SessionLog.create(path, { model: 'start' });
  const ids: string[] = [];
  for (let s = 0; s < steps; s++) {
    const r = random();
    if (r < 0.2) ids.push(log.appendMessage({ role: 'user', content: [{ type: 'text', text: long(s) }] }).id);
    else if (r < 0.35)
      ids.push(
        log.appendMessage({
          role: 'assistant',
          content: [
            { type: 'text', text: long(s) },
            { type: 'tool_call', id: `c${s}`, name: 'read', input: { text: PROSE } },
            { type: 'text', text: 'short' },
          ],
          stopReason: 'tool_use',
        }).id,
      );
    else if (r < 0.45)
      ids.push(
        log.appendMessage({
          role: 'tool',
          results: [
            {
              type: 'tool_result',
              toolUseId: `c${s}`,
              toolName: 'read',
              parts: [
                { type: 'text', text: long(s) },
                { type: 'text', text: 'ok' },
              ],
              isError: false,
            },
          ],
        }).id,
      );
    else if (r < 0.52) ids.push(log.appendMessage(pick(kinds)).id);
    else if (r < 0.58) ids.push(log.appendModelChange({ model: `model-${s}`, provider: 'p' }).id);
    else if (r < 0.62) ids.push(log.appendCustom('note', { s, text: PROSE }).id);
    else if (r < 0.72 && ids.length > 0) log.branch(pick(ids));
    else {
      const count = log.conversation.messages.length;
      if (count < 2) continue;
      const first = 1 + Math.floor(random() * (count - 1));
      ids.push(
        log.appendCompaction({
          summary: `summary ${s}`,
          replacement: [{ role: 'user', content: [{ type: 'text', text: `summary ${s} ${PROSE}` }] }],
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

/** What a session shows, in JSON (file-backed texts read). */
function shown(s: LoadedSession): string {
  return JSON.stringify({
    header: s.header,
    leafId: s.leafId,
    model: s.model,
    conversation: s.conversation,
    warnings: s.warnings,
    entries: s.entries,
  });
}

describe('the index path leaves long texts in the file, and gives the same session', () => {
  it.each([1, 2, 3, 4])(
    'generated session %i: loadSession, entries, openSessionIndex reads',
    async (seed) => {
      const path = file();
      const ids = await generatedSession(path, seed, 100);
      expect(readFileSync(path, 'utf8')).toContain('"type":"compaction"');
      const plain = await loadSession(path, { textInFile: false });
      const expected = shown(plain);
      for (const chunkBytes of [undefined, 97]) {
        const s = await loadSession(path, { textInFile: ALWAYS, ...(chunkBytes ? { chunkBytes } : {}) });
        // The conversation at load, then the other lines on the first read of entries.
        expect(fileBacked(s.conversation.messages)).toBeGreaterThan(0);
        await nextTurn();
        expect(shown(s)).toBe(expected);
        expect(s.conversation).toEqual(plain.conversation);
        const all = entryMessages(s.entries);
        expect(fileBacked(all)).toBeGreaterThan(fileBacked(s.conversation.messages));
        // The conversation's messages are the entries' objects (parsed once).
        const inEntries = new Set(all);
        for (const m of s.conversation.messages) if (fileBacked([m]) > 0) expect(inEntries.has(m)).toBe(true);
      }
      // entry(id) and readAt, in any order.
      const index = await openSessionIndex(path, { textInFile: ALWAYS });
      const plainIndex = await openSessionIndex(path, { textInFile: false });
      const random = mulberry32(seed + 50);
      const some = Array.from({ length: 20 }, () => ids[Math.floor(random() * ids.length)] as string);
      let backed = 0;
      for (const id of some) {
        const e = await index.entry(id);
        if (e.type === 'message') backed += fileBacked([e.message]);
        expect(JSON.stringify(e)).toBe(JSON.stringify(await plainIndex.entry(id)));
      }
      expect(backed).toBeGreaterThan(0);
      const positions = some.map((id) => index.positionOf(id) as number).reverse();
      expect(JSON.stringify(index.readAt(positions))).toBe(JSON.stringify(plainIndex.readAt(positions)));
      expect(JSON.stringify(await index.conversation())).toBe(
        JSON.stringify(await plainIndex.conversation()),
      );
    },
  );

  it('SessionLog.open: branch() and entries read texts left in the file, through the log own appends', async () => {
    const path = file();
    const ids = await generatedSession(path, 7, 100);
    const copy = file();
    writeFileSync(copy, readFileSync(path));
    const backedLog = await SessionLog.open(path, { textInFile: ALWAYS });
    const plainLog = await SessionLog.open(copy, { textInFile: false });
    expect(fileBacked(backedLog.conversation.messages)).toBeGreaterThan(0);
    const random = mulberry32(8);
    let backed = 0;
    for (let k = 0; k < 8; k++) {
      const target = ids[Math.floor(random() * ids.length)] as string;
      backedLog.branch(target);
      plainLog.branch(target);
      await nextTurn();
      backed += fileBacked(backedLog.conversation.messages);
      expect(JSON.stringify(backedLog.conversation)).toBe(JSON.stringify(plainLog.conversation));
      expect(backedLog.model).toBe(plainLog.model);
      const m: Message = { role: 'user', content: [{ type: 'text', text: `step ${k} ${PROSE}` }] };
      backedLog.appendMessage(m);
      plainLog.appendMessage(m);
    }
    expect(backed).toBeGreaterThan(0);
    await nextTurn();
    const size = ids.length;
    expect(fileBacked(entryMessages(backedLog.entries.slice(0, size)))).toBeGreaterThan(0);
    expect(JSON.stringify(backedLog.entries.slice(0, size))).toBe(
      JSON.stringify(plainLog.entries.slice(0, size)),
    );
    backedLog.close();
    plainLog.close();
  });

  it('the default leaves a small compacted file entirely in memory', async () => {
    const path = file();
    await generatedSession(path, 3, 60);
    const s = await loadSession(path);
    expect(fileBacked(s.conversation.messages) + fileBacked(entryMessages(s.entries))).toBe(0);
    const t = await loadSession(path, { textInFile: { minTextBytes: 8 } });
    expect(fileBacked(t.conversation.messages) + fileBacked(entryMessages(t.entries))).toBe(0);
  });
});

describe('odd but loadable lines on the index path', () => {
  it('invalid UTF-8, CRLF, a line not in the leading-field form, an unterminated last line: same session', async () => {
    const path = file();
    const stamp = '"timestamp":"2026-01-01T00:00:00Z"';
    const text = JSON.stringify(PROSE);
    const msg = (id: string, parent: string | null, body: Buffer = Buffer.from(text)) =>
      Buffer.concat([
        Buffer.from(
          `{"type":"message","id":"${id}","parentId":${JSON.stringify(parent)},${stamp},"message":{"role":"user","content":[{"type":"text","text":`,
        ),
        body,
        Buffer.from('}]}}'),
      ]);
    // A long literal holding bytes that are not UTF-8.
    const bad = (what: string) =>
      Buffer.concat([
        Buffer.from(`"bad ${what} é `),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from(' pad pad"'),
      ]);
    const lines = [
      Buffer.from(JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' })),
      msg('a', null),
      // Off the branch (the compaction's parent is a): read by entries only.
      msg('b', 'a', bad('off the branch')),
      Buffer.from(
        `{"type":"compaction","id":"k","parentId":"a",${stamp},"summary":"s","replacement":[],"firstKeptEntryId":null,"tokensBefore":2,"tokensAfter":1}`,
      ),
      Buffer.concat([msg('c', 'k'), Buffer.from('\r')]),
      msg('d', 'c', bad('on the branch')),
      // Another writer's key order: parsed while opening.
      Buffer.from(
        `{"id":"e","type":"message","parentId":"d",${stamp},"message":{"role":"assistant","content":[{"text":${text},"type":"text"}],"stopReason":"end"}}`,
      ),
      msg('f', 'e'), // no newline after it
    ];
    writeFileSync(path, Buffer.concat(lines.flatMap((b, i) => (i === 0 ? [b] : [Buffer.from('\n'), b]))));
    const plain = await loadSession(path, { textInFile: false });
    const s = await loadSession(path, { textInFile: ALWAYS });
    expect(fileBacked(s.conversation.messages)).toBeGreaterThan(1);
    expect(JSON.stringify(s.conversation)).toBe(JSON.stringify(plain.conversation));
    expect(s.warnings).toEqual(plain.warnings);
    expect(fileBacked(entryMessages(s.entries))).toBeGreaterThan(2);
    expect(shown(s)).toBe(shown(plain));
    expect(s.warnings.map((w) => w.kind)).toEqual(['invalid_utf8', 'invalid_utf8', 'unterminated_line']);
  });
});

describe('a file that no longer holds the indexed bytes', () => {
  it('removed, replaced or shortened after the load: a part read fails with ERR_SESSION_CHANGED, entries too', async () => {
    for (const change of ['removed', 'replaced', 'shortened'] as const) {
      const path = file();
      await generatedSession(path, 5, 80);
      const s = await loadSession(path, { textInFile: ALWAYS });
      const part = textParts(s.conversation.messages).find(isFileTextPart) as TextPart;
      expect(part).toBeDefined();
      await nextTurn();
      if (change === 'removed') rmSync(path);
      else if (change === 'shortened') truncateSync(path, 100);
      else {
        writeFileSync(`${path}.new`, readFileSync(path));
        renameSync(`${path}.new`, path);
      }
      expect(() => part.text, change).toThrow(expect.objectContaining({ code: 'ERR_SESSION_CHANGED' }));
      // The index's own reads: a file gone is the file-system error (as before textInFile).
      const code = change === 'removed' ? 'ENOENT' : 'ERR_SESSION_CHANGED';
      expect(() => s.entries, change).toThrow(expect.objectContaining({ code }));
    }
  });

  it("the log's own repair and appends back to the size loaded are not a change", async () => {
    const path = file();
    await generatedSession(path, 9, 80);
    // The length of the custom line appended below (ids and timestamps have a fixed length).
    const probe = file();
    writeFileSync(probe, readFileSync(path));
    const before = statSync(probe).size;
    const probeLog = await SessionLog.open(probe, { textInFile: false });
    probeLog.appendCustom('k', 'pad');
    probeLog.close();
    const lineBytes = statSync(probe).size - before;
    // A torn tail exactly as long: open cuts it, the append brings the file back to the size indexed, with
    // another mtime (what a rewrite in place looks like, unless the reads know it is the log's own write).
    appendFileSync(path, `{"type":"custom","id":"torn${'x'.repeat(lineBytes - 27)}`);
    const size = statSync(path).size;
    const log = await SessionLog.open(path, { textInFile: ALWAYS });
    const parts = textParts(log.conversation.messages).filter(isFileTextPart) as TextPart[];
    expect(parts.length).toBeGreaterThan(0);
    const texts = parts.map((p) => p.text);
    await new Promise((r) => setTimeout(r, 20));
    log.appendCustom('k', 'pad');
    expect(statSync(path).size).toBe(size);
    await nextTurn();
    expect(parts.map((p) => p.text)).toEqual(texts);
    expect(fileBacked(entryMessages(log.entries))).toBeGreaterThan(0);
    log.close();
  });
});

describe('hostile lines on the index path: the same session or the same error as with every text in memory', () => {
  it('generated lines with repeated and escaped keys, odd values and broken literals, on and off the branch', async () => {
    const random = mulberry32(31);
    const { key, message } = hostileTextLines(random, PROSE);
    const stamp = '"timestamp":"2026-01-01T00:00:00Z"';
    const outcomes: Record<string, number> = {};
    let backed = 0;
    for (let c = 0; c < 200; c++) {
      const path = file();
      const lines = [
        JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' }),
        // A compaction: the file takes the index path.
        `{"type":"compaction","id":"k","parentId":null,${stamp},"summary":"s","replacement":[],"firstKeptEntryId":null,"tokensBefore":2,"tokensAfter":1}`,
      ];
      let parent = 'k';
      for (let i = 0; i < 4; i++) {
        const id = `e${i}`;
        const msgs = Array.from({ length: random() < 0.8 ? 1 : 2 }, message).map(
          (m) => `"${key('message')}":${m}`,
        );
        const type = random() < 0.85 ? 'message' : 'custom","customType":"k';
        // Escaped leading keys: a line the index parses while opening. A parent back at the compaction: off the
        // branch when later lines follow (read by entries only).
        const lead =
          random() < 0.15 ? `"\\u0074ype":"${type}","id":"${id}"` : `"type":"${type}","id":"${id}"`;
        lines.push(`{${lead},"parentId":"${parent}",${stamp},${msgs.join(',')}}`);
        parent = random() < 0.3 ? 'k' : id;
      }
      writeFileSync(path, `${lines.join('\n')}${random() < 0.1 ? '' : '\n'}`);
      const load = async (textInFile: false | typeof ALWAYS) => {
        const outcome: Record<string, unknown> = {};
        try {
          const s = await loadSession(path, { textInFile });
          if (textInFile) backed += fileBacked(s.conversation.messages);
          outcome.load = JSON.stringify({ c: s.conversation, w: s.warnings, m: s.model });
          try {
            if (textInFile) backed += fileBacked(entryMessages(s.entries));
            outcome.entries = JSON.stringify({ e: s.entries, w: s.warnings });
          } catch (err) {
            outcome.entries = { code: (err as PantoError).code, message: (err as Error).message };
          }
        } catch (err) {
          outcome.load = { code: (err as PantoError).code, message: (err as Error).message };
        }
        return outcome;
      };
      const got = await load(ALWAYS);
      const tag = (x: unknown) =>
        x === undefined ? '-' : typeof x === 'string' ? 'ok' : (x as { code: string }).code;
      const k = `${tag(got.load)}/${tag(got.entries)}`;
      outcomes[k] = (outcomes[k] ?? 0) + 1;
      expect(got, `case ${c}`).toEqual(await load(false));
    }
    // Not vacuous: many cases load (with file-backed parts), many fail at load or on entries.
    expect(outcomes['ok/ok'] ?? 0).toBeGreaterThan(30);
    const failed = Object.entries(outcomes)
      .filter(([k]) => k !== 'ok/ok')
      .reduce((a, [, v]) => a + v, 0);
    expect(failed).toBeGreaterThan(30);
    expect(backed).toBeGreaterThan(100);
    if (process.env.DIAG) console.log(outcomes, backed);
  });
});
