// The batched decode of readJsonl (one toString per ~48 KiB of complete lines, each line a slice parsed on its own)
// and of SessionIndex reads must give exactly what a line-by-line reader gives: the same values, the same errors with
// the same line numbers, the same torn/empty/unterminated reports. The oracle below is that line-by-line reader,
// written from the format's rules (split on the newline byte, drop one trailing CR, decode, JSON.parse).

import { isUtf8 } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { loadSession, openSessionIndex, SessionLog } from '../../src/session/index.js';
import { BATCH_BYTES, type JsonlReadOptions, readJsonl } from '../../src/session/jsonl-reader.js';
import { seededRandom } from '../helpers/media-corruption.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-session-batch-'));
let n = 0;
const file = () => join(dir, `b${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Outcome =
  | {
      values: Array<[number, unknown]>;
      emptyLines: number[];
      /** Lines that parsed but whose bytes are not valid UTF-8 (read with U+FFFD). */
      invalidUtf8: number[];
      torn?: { line: number; offset: number; bytes: number };
      unterminated: boolean;
    }
  | { error: string; message: string };

/** A line-by-line reader of `bytes`, as the reader behaved before batching (the oracle). */
function oracle(path: string, bytes: Buffer, maxLineBytes = 256 * 1024 * 1024): Outcome {
  const values: Array<[number, unknown]> = [];
  const emptyLines: number[] = [];
  const invalidUtf8: number[] = [];
  let start = 0;
  let line = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl;
    if (nl === -1 && start === bytes.length) return { values, emptyLines, invalidUtf8, unterminated: false };
    line++;
    if (end - start > maxLineBytes) {
      return {
        error: 'ERR_SESSION_CORRUPT',
        message: `${path}:${line}: line is longer than maxLineBytes (${maxLineBytes} bytes); refusing to load it`,
      };
    }
    const stop = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
    const text = bytes.toString('utf8', start, stop);
    if (text === '') {
      if (nl !== -1) emptyLines.push(line);
    } else {
      try {
        values.push([line, JSON.parse(text)]);
        if (!isUtf8(bytes.subarray(start, end))) invalidUtf8.push(line);
      } catch (err) {
        if (nl === -1) {
          return {
            values,
            emptyLines,
            invalidUtf8,
            torn: { line, offset: start, bytes: end - start },
            unterminated: false,
          };
        }
        return {
          error: 'ERR_SESSION_CORRUPT',
          message: `${path}:${line}: not valid JSON (${(err as Error).message}); the session file is damaged at this line`,
        };
      }
      if (nl === -1) return { values, emptyLines, invalidUtf8, unterminated: true };
    }
    if (nl === -1) return { values, emptyLines, invalidUtf8, unterminated: false };
    start = nl + 1;
  }
}

async function read(path: string, options: JsonlReadOptions = {}): Promise<Outcome> {
  const values: Array<[number, unknown]> = [];
  try {
    const r = await readJsonl(path, (value, line) => values.push([line, value]), options);
    return {
      values,
      // Runs of consecutive empty lines (one warning each), as the oracle's list of line numbers.
      emptyLines: r.warnings
        .filter((w) => w.kind === 'empty_line')
        .flatMap((w) => {
          const count = Number(/ (\d+) empty lines/.exec(w.message)?.[1] ?? 1);
          return Array.from({ length: count }, (_, k) => w.line + k);
        }),
      invalidUtf8: r.warnings.filter((w) => w.kind === 'invalid_utf8').map((w) => w.line),
      ...(r.torn ? { torn: r.torn } : {}),
      unterminated: r.unterminated,
    };
  } catch (err) {
    return { error: (err as { code: string }).code, message: (err as Error).message };
  }
}

/** readJsonl on `bytes` at several chunk sizes equals the oracle. */
async function expectSameAsOracle(bytes: Buffer, maxLineBytes?: number): Promise<Outcome> {
  const path = file();
  writeFileSync(path, bytes);
  const want = oracle(path, bytes, maxLineBytes);
  for (const chunkBytes of [5, 97, 4096, 200_000, undefined]) {
    const got = await read(path, {
      ...(chunkBytes ? { chunkBytes } : {}),
      ...(maxLineBytes ? { maxLineBytes } : {}),
    });
    expect(got, `chunkBytes ${chunkBytes}`).toStrictEqual(want);
  }
  return want;
}

const obj = (i: number) => `{"i":${i},"text":"naïve café — 日本語 ${'x'.repeat(i % 300)}"}`;

/** Many ~1 KB lines: several batches per chunk. */
function manyLines(count: number, line: (i: number) => string = obj): string[] {
  return Array.from({ length: count }, (_, i) => line(i));
}

describe('readJsonl batched decode equals a line-by-line reader', () => {
  it('plain lines across several batches and chunks, values and line numbers', async () => {
    const lines = manyLines(1000);
    const want = await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n`));
    expect('values' in want && want.values.length).toBe(1000);
    expect(Buffer.byteLength(lines.join('\n'))).toBeGreaterThan(2 * BATCH_BYTES);
  });

  it('a bad line in the middle of a batch is ERR_SESSION_CORRUPT naming that line', async () => {
    for (const bad of ['{"a":', '[1', '1]', '{"a":1}}', '"unterminated', 'nul']) {
      const lines = manyLines(120);
      lines[57] = bad;
      const want = await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n`));
      expect(want).toMatchObject({ error: 'ERR_SESSION_CORRUPT' });
      expect((want as { message: string }).message).toContain(':58: not valid JSON');
    }
  });

  it('lines that are only valid together never merge ([1 / 2], a string split by a newline)', async () => {
    const want = await expectSameAsOracle(Buffer.from('{"ok":1}\n[1,\n2]\n"a\nb"\n'));
    expect((want as { message: string }).message).toContain(':2: not valid JSON');
  });

  it('torn last line, unterminated complete last line, CRLF, empty and CR-only lines', async () => {
    const lines = manyLines(90);
    const torn = await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n{"i":90,"te`));
    expect(torn).toMatchObject({ torn: { line: 91 } });
    const unterminated = await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n{"last":true}`));
    expect(unterminated).toMatchObject({ unterminated: true });
    const crlf = await expectSameAsOracle(Buffer.from(`${lines.join('\r\n')}\r\n`));
    expect('values' in crlf && crlf.values.length).toBe(90);
    const withEmpty = lines.flatMap((l, i) => (i % 10 === 3 ? [l, '', '\r'] : [l]));
    const empty = await expectSameAsOracle(Buffer.from(`${withEmpty.join('\n')}\n\n`));
    expect('emptyLines' in empty && empty.emptyLines.length).toBe(19);
    // A line of two CRs keeps one: not JSON.
    const twoCr = await expectSameAsOracle(Buffer.from('{"a":1}\n\r\r\n{"b":2}\n'));
    expect(twoCr).toMatchObject({ error: 'ERR_SESSION_CORRUPT' });
  });

  it('a line longer than a batch and than a chunk; a line over maxLineBytes fails with its line number', async () => {
    const long = `{"long":"${'ü'.repeat(3 * BATCH_BYTES)}"}`;
    const lines = [...manyLines(30), long, ...manyLines(30)];
    await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n`));
    const tooLong = await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n`), 4 * BATCH_BYTES);
    expect((tooLong as { message: string }).message).toContain(':31: line is longer than maxLineBytes');
  });

  it('bad UTF-8 decodes as before, also next to the newline (cut sequences, lone continuation bytes)', async () => {
    const parts: Buffer[] = [];
    const cut = [[0xe6, 0x97], [0xf0, 0x9f, 0x98], [0xc3], [0xed, 0xa0, 0x80], [0xff], [0x80, 0x80]];
    for (let i = 0; i < 200; i++) {
      const bad = Buffer.from(cut[i % cut.length] as number[]);
      parts.push(
        Buffer.from(`{"i":${i},"s":"`),
        bad,
        Buffer.from('"}'),
        i % 3 === 0 ? Buffer.from('\r\n') : Buffer.from('\n'),
      );
      // A string value that ends right before the newline with a cut sequence is not JSON; as its own line, JSON.
      parts.push(Buffer.from(`"${'a'.repeat(i)}`), bad, Buffer.from('"\n'));
      parts.push(bad, Buffer.from('\n'));
    }
    parts.push(Buffer.from('{"end":1}\n'));
    const bytes = Buffer.concat(parts);
    // Up to the first line that is not JSON (the lone bad bytes on line 3), everything decodes the same.
    const want = await expectSameAsOracle(bytes);
    expect((want as { message: string }).message).toContain(':3: not valid JSON');
    // Without those lines, every value matches (U+FFFD where the bytes were bad).
    const text = bytes.toString('latin1').split('\n');
    const kept = Buffer.from(text.filter((_, i) => i % 3 !== 2).join('\n'), 'latin1');
    const all = await expectSameAsOracle(kept);
    expect('values' in all && all.values.length).toBe(401);
    expect(JSON.stringify(all)).toContain('\ufffd');
    // Every one of those lines holds a bad sequence: each is reported.
    expect('invalidUtf8' in all && all.invalidUtf8).toStrictEqual(
      Array.from({ length: 400 }, (_, i) => i + 1),
    );
  });

  it('a U+FFFD written as valid UTF-8 is text, not a warning; a bad byte beside it in the batch still is', async () => {
    const lines: Buffer[] = [];
    for (let i = 0; i < 300; i++) {
      const bad = i % 7 === 3;
      lines.push(
        Buffer.concat([
          Buffer.from(`{"i":${i},"s":"\u{fffd}`),
          bad ? Buffer.from([0xc3]) : Buffer.alloc(0),
          Buffer.from('"}\n'),
        ]),
      );
    }
    const got = await expectSameAsOracle(Buffer.concat(lines));
    expect('invalidUtf8' in got && got.invalidUtf8).toStrictEqual(
      Array.from({ length: 300 }, (_, i) => i + 1).filter((line) => (line - 1) % 7 === 3),
    );
    const valid = await expectSameAsOracle(Buffer.concat(lines.filter((_, i) => i % 7 !== 3)));
    expect(valid).toMatchObject({ invalidUtf8: [] });
    expect(JSON.stringify(valid)).toContain('\ufffd');
  });

  it('__proto__ keys keep JSON.parse semantics (an own property, no prototype change)', async () => {
    const lines = manyLines(100);
    lines[50] = '{"__proto__":{"polluted":true},"a":1}';
    const want = await expectSameAsOracle(Buffer.from(`${lines.join('\n')}\n`));
    const value = ('values' in want ? want.values[50]?.[1] : undefined) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('random files: valid, damaged, empty, CR and bad-UTF-8 lines at random chunk sizes', async () => {
    const random = seededRandom(16);
    const pool = [
      () => obj(Math.floor(random() * 1000)),
      () => '',
      () => '\r',
      () => `${obj(7)}\r`,
      () => '{"a":[1,2',
      () => '3]}',
      () => ' {"ws":true} ',
      () => '"\u00e9\u65e5"',
      () => `{"big":"${'z'.repeat(Math.floor(random() * 3 * BATCH_BYTES))}"}`,
      () => '\ud800',
    ];
    for (let round = 0; round < 12; round++) {
      const count = 20 + Math.floor(random() * 200);
      const lines: string[] = [];
      for (let i = 0; i < count; i++) {
        // Mostly valid lines, so that damage falls at varied depths into the file.
        const pick = random() < 0.9 ? 0 : Math.floor(random() * pool.length);
        lines.push((pool[pick] as () => string)());
      }
      const tail = random() < 0.5 ? '\n' : random() < 0.5 ? '' : '{"cut":';
      await expectSameAsOracle(Buffer.from(`${lines.join('\n')}${tail}`));
    }
  });
});

describe('SessionIndex batched reads', () => {
  const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

  async function longLog(path: string, count: number): Promise<string[]> {
    const log = await SessionLog.create(path, { model: 'm' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(log.appendMessage(say(`${i} naïve café — 日本語 ${'y'.repeat(i % 500)}`)).id);
    log.close();
    return ids;
  }

  it('conversation() and entries(ids) equal loadSession over many batches, also with CRLF', async () => {
    const path = file();
    const ids = await longLog(path, 600);
    const crlf = file();
    writeFileSync(crlf, readFileSync(path, 'utf8').replaceAll('\n', '\r\n'));
    for (const p of [path, crlf]) {
      const loaded = await loadSession(p);
      const index = await openSessionIndex(p);
      expect(await index.conversation()).toStrictEqual(loaded.conversation);
      // Any order, repeats: each in the order asked.
      const asked = [ids[599], ids[0], ids[300], ids[0], ids[301]] as string[];
      const byId = new Map(loaded.entries.map((e) => [e.id, e]));
      expect(await index.entries(asked)).toStrictEqual(asked.map((id) => byId.get(id)));
      expect(await index.entries([])).toStrictEqual([]);
      await expect(index.entries([ids[1] as string, 'nope'])).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
      });
      // The synchronous reads: positions in any order, repeats; readAll in file order; conversationView's ids.
      expect(index.readAt([599, 0, 300, 0])).toStrictEqual([599, 0, 300, 0].map((i) => loaded.entries[i]));
      expect(index.readAll()).toStrictEqual(loaded.entries);
      expect(index.conversationView().entryIds).toStrictEqual(ids);
      for (const bad of [-1, 600, 1.5]) {
        expect(() => index.readAt([0, bad])).toThrow(
          expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
        );
      }
    }
  });

  it('damaged JSON in the middle of a batch names that line; bad UTF-8 there is read as U+FFFD with a warning', async () => {
    for (const damage of ['json', 'utf8'] as const) {
      const path = file();
      await longLog(path, 300);
      const bytes = readFileSync(path);
      const lineStarts = [0];
      for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) lineStarts.push(i + 1);
      // Line 151 (entry 149): its closing brace becomes a space, or a byte of its text becomes 0xFF.
      const end = (lineStarts[151] as number) - 1;
      expect(bytes[end - 1]).toBe(0x7d);
      if (damage === 'json') bytes[end - 1] = 0x20;
      else bytes[end - 12] = 0xff;
      writeFileSync(path, bytes);
      const index = await openSessionIndex(path);
      if (damage === 'json') {
        const err = await index.conversation().catch((e: unknown) => e as Error & { code: string });
        expect(err).toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
        expect((err as Error).message).toContain(`${path}:151: not valid JSON`);
        await expect(index.verify()).rejects.toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
        // Entries before the damaged line still read.
        expect((await index.entries([index.ids[148] as string]))[0]?.id).toBe(index.ids[148]);
        continue;
      }
      const oracleValues = oracle(path, bytes);
      const conversation = await index.conversation();
      expect(index.warnings.map((w) => [w.kind, w.line])).toStrictEqual([['invalid_utf8', 151]]);
      const want = 'values' in oracleValues ? oracleValues.values.map(([, v]) => v) : [];
      const eager = await loadSession(path, { eager: true });
      expect(eager.entries).toStrictEqual(want.slice(1));
      expect(eager.warnings).toStrictEqual(index.warnings);
      expect(conversation).toStrictEqual(eager.conversation);
      expect(JSON.stringify(eager.entries[149])).toContain('\ufffd');
    }
  });
});

describe('tree checks (one id-table probe per entry, no lookup for a parent that is the previous entry)', () => {
  const header = `${JSON.stringify({ type: 'session', version: 1, id: 's', created: '2026-01-01T00:00:00.000Z' })}\n`;
  const entry = (id: string, parentId: string | null) =>
    `${JSON.stringify({
      type: 'message',
      id,
      parentId,
      timestamp: '2026-01-01T00:00:00.000Z',
      message: { role: 'user', content: [{ type: 'text', text: id }] },
    })}\n`;

  /** loadSession and openSessionIndex fail alike: ERR_SESSION_FORMAT with this line and problem. */
  async function expectBoth(lines: string[], problem: RegExp): Promise<void> {
    const path = file();
    writeFileSync(path, header + lines.join(''));
    for (const open of [loadSession, openSessionIndex]) {
      const err = await (open as (p: string) => Promise<unknown>)(path).catch((e: unknown) => e as Error);
      expect(err, open.name).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
      expect((err as Error).message, open.name).toMatch(problem);
    }
  }

  it('an entry that is its own parent, or names a later entry, is refused', async () => {
    await expectBoth([entry('a', null), entry('b', 'b')], /:3: parentId b does not name an earlier entry/);
    await expectBoth([entry('a', 'a')], /:2: parentId a does not name an earlier entry/);
    await expectBoth([entry('a', null), entry('b', 'c'), entry('c', 'a')], /:3: parentId c does not name/);
  });

  it('a duplicate id is refused before its parent is looked at, also when the parent is the previous entry', async () => {
    await expectBoth([entry('a', null), entry('b', 'a'), entry('b', 'b')], /:4: duplicate entry id b/);
    await expectBoth([entry('a', null), entry('b', 'a'), entry('a', 'ghost')], /:4: duplicate entry id a/);
  });

  it('branches (a parent that is not the previous entry) load as before', async () => {
    const path = file();
    writeFileSync(
      path,
      header + [entry('a', null), entry('b', 'a'), entry('c', 'a'), entry('d', 'c')].join(''),
    );
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages.map((m) => (m.role === 'user' ? m.content[0] : null))).toStrictEqual(
      ['a', 'c', 'd'].map((text) => ({ type: 'text', text })),
    );
    const index = await openSessionIndex(path);
    expect(await index.conversation()).toStrictEqual(loaded.conversation);
  });

  it('20,000 ids (the id table grows past its first size five times): each found where it is, duplicates refused', async () => {
    const ids = Array.from({ length: 20_000 }, (_, i) =>
      i % 3 === 0 ? `e${i}` : `${(i * 7919).toString(16)}-${i}`,
    );
    // Every 100th entry branches off an entry far back, so its parent is looked up in the table.
    const lines = ids.map((id, i) =>
      entry(id, i === 0 ? null : (ids[i % 100 === 0 ? i >> 1 : i - 1] as string)),
    );
    const path = file();
    writeFileSync(path, header + lines.join(''));
    const index = await openSessionIndex(path);
    expect(ids.every((id, i) => index.positionOf(id) === i)).toBe(true);
    expect(index.positionOf('e1')).toBeUndefined();
    expect(index.parents[19_900]).toBe(ids[9_950]);
    const eager = await loadSession(path, { eager: true });
    expect(eager.conversation).toStrictEqual(await index.conversation());
    await expectBoth(
      [...lines, entry(ids[4_321] as string, ids[19_999] as string)],
      /:20002: duplicate entry id /,
    );
    await expectBoth([...lines, entry('new', 'e1')], /:20002: parentId e1 does not name an earlier entry/);
  });
});
