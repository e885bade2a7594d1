/**
 * Hostile pass over `textInFile` (file-text.ts, text-literals.ts, the `prepare` hook of jsonl-reader.ts): every case
 * below either loads to exactly the session `textInFile: false` gives (JSON of conversation and entries, key order
 * included, and the warnings) or fails with exactly its error (code and message), on both loading paths and with
 * chunks small enough that lines span them; and a file-backed text read after the file changed is the loaded text or
 * `ERR_SESSION_CHANGED`, never other text. Heavy cases (a 64 MiB text, a million short texts) are in
 * `text-in-file-heavy.mjs`, run by name.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
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
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message, TextPart } from '../../src/conversation.js';
import { PantoError } from '../../src/errors.js';
import { isFileTextPart } from '../../src/session/file-text.js';
import { type LoadedSession, loadSession, SessionLog } from '../../src/session/index.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-text-in-file-hostile-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALWAYS = { minFileBytes: 0, minTextBytes: 8 };
const nextTurn = () => new Promise((r) => setImmediate(r));
const HEADER = JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' });
const LONG = 'Ünïcödé — 日本語 "q" \\ 😀 long enough text';

/** A message entry line whose `message` is the raw JSON `message`. */
const line = (id: string, parent: string | null, message: string, type = 'message'): string =>
  `{"type":"${type}","id":"${id}","parentId":${JSON.stringify(parent)},"timestamp":"2026-01-01T00:00:00Z","message":${message}}`;
/** A user message whose one text part's `text` is the raw JSON `literal`. */
const userText = (literal: string) => `{"role":"user","content":[{"type":"text","text":${literal}}]}`;

/** Every part of every message's text places (content, and results' parts). */
function allParts(s: { conversation: { messages: Message[] } }): unknown[] {
  const out: unknown[] = [];
  for (const m of s.conversation.messages) {
    if (m.role === 'user' || m.role === 'assistant') out.push(...m.content);
    else if (m.role === 'tool') for (const r of m.results) out.push(...r.parts);
  }
  return out;
}
const backedCount = (s: { conversation: { messages: Message[] } }) =>
  allParts(s).filter(isFileTextPart).length;

type Outcome = { json: string; backed: number } | { code?: string; message: string };

async function outcome(path: string, options: Parameters<typeof loadSession>[1]): Promise<Outcome> {
  let s: LoadedSession;
  try {
    s = await loadSession(path, options);
  } catch (err) {
    return { code: (err as PantoError).code, message: (err as Error).message };
  }
  let json: string;
  try {
    json = JSON.stringify({ c: s.conversation, e: s.entries, w: s.warnings });
  } catch (err) {
    json = `stringify threw ${(err as Error).name}: ${(err as Error).message}`;
  }
  return { json, backed: backedCount(s) };
}

/**
 * Loads `content` with every text in memory and with texts in the file, eager and lazy, with the default chunk and
 * `chunkBytes` 64 and 7: each outcome must match the in-memory one of its path. Returns the eager in-memory outcome
 * and the most parts left in the file.
 */
async function parity(
  content: string | Buffer,
  minTextBytes = 8,
  chunks: ReadonlyArray<number | undefined> = [undefined, 64, 7],
  eagers: readonly boolean[] = [true, false],
): Promise<{ plain: Outcome; backed: number }> {
  const path = file();
  writeFileSync(path, content);
  const strip = (o: Outcome) => ('json' in o ? o.json : o);
  let backed = 0;
  let plain: Outcome | undefined;
  for (const eager of eagers) {
    const want = await outcome(path, { textInFile: false, eager });
    plain ??= want;
    for (const chunkBytes of chunks) {
      const opts = {
        eager,
        textInFile: { minFileBytes: 0, minTextBytes },
        ...(chunkBytes ? { chunkBytes } : {}),
      };
      const got = await outcome(path, opts);
      expect(strip(got), JSON.stringify(opts)).toEqual(strip(want));
      if ('backed' in got) backed = Math.max(backed, got.backed);
    }
  }
  if (plain === undefined) throw new Error('unreachable');
  return { plain, backed };
}

const session = (...lines: string[]) => `${HEADER}\n${lines.join('\n')}\n`;

describe('the byte scanner agrees with JSON.parse', () => {
  it('lines spanning chunks and longer than a chunk, CRLF, a BOM before the header', async () => {
    const lines = Array.from({ length: 12 }, (_, i) =>
      line(`e${i}`, i === 0 ? null : `e${i - 1}`, userText(JSON.stringify(LONG.repeat(1 + (i % 4)) + i))),
    );
    expect((await parity(session(...lines))).backed).toBe(12);
    expect((await parity(session(...lines).replaceAll('\n', '\r\n'))).backed).toBe(12);
    expect((await parity(`\ufeff${session(...lines)}`)).backed).toBe(12);
    expect((await parity(`\ufeff${session(...lines)}`.replaceAll('\n', '\r\n'))).backed).toBe(12);
    // A torn (unterminated) last line that parses, and one that does not.
    expect((await parity(session(...lines).slice(0, -1))).backed).toBe(12);
    const torn = await parity(session(...lines).slice(0, -20));
    expect(torn.backed).toBe(11);
  });

  it('escaped keys and values: \\u, \\/, surrogate pairs, lone surrogates, 4-byte UTF-8', async () => {
    const literals = [
      '"\\u0041\\u00e9\\u65e5 escaped \\/ slash \\/ and more padding"',
      '"\\ud83d\\ude00 pair, then a lone \\ud800 and \\udfff, padded out"',
      '"😀😀😀😀😀 four-byte 𝄞𝄞 and more 😀"',
      '"\\uD83D\\uDE00 upper-case hex escapes, long enough"',
    ];
    const lines = literals.map((lit, i) => line(`e${i}`, i === 0 ? null : `e${i - 1}`, userText(lit)));
    // Keys written with escapes, at every level of the text place.
    lines.push(
      '{"type":"message","id":"k","parentId":"e3","timestamp":"t","\\u006dessage":{"role":"tool","r\\u0065sults":[{"type":"tool_result","toolUseId":"c","toolName":"t","isError":false,"p\\u0061rts":[{"t\\u0079pe":"text","\\u0074\\u0065\\u0078\\u0074":"escaped keys all the way down, padded"}]}]}}',
    );
    const { plain, backed } = await parity(session(...lines));
    expect('json' in plain).toBe(true);
    expect(backed).toBe(5);
  });

  it('invalid UTF-8 in a text stays in memory, with the same U+FFFD text and invalid_utf8 warning', async () => {
    const good = line('e0', null, userText(JSON.stringify(LONG)));
    const [before, after] = line(
      'e1',
      'e0',
      userText('"bad @@ bytes, long enough to be left in the file"'),
    ).split('@@');
    const bad = Buffer.concat([
      Buffer.from(before as string),
      Buffer.from([0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
      Buffer.from(after as string),
    ]);
    const content = Buffer.concat([Buffer.from(`${HEADER}\n${good}\n`), bad, Buffer.from('\n')]);
    const { plain, backed } = await parity(content);
    expect('json' in plain && plain.json).toContain('invalid_utf8');
    expect(backed).toBe(1); // the valid line's text only
  });

  it('texts of minTextBytes-1 and minTextBytes bytes', async () => {
    const min = 20;
    const lines = [
      line('a', null, userText(JSON.stringify('x'.repeat(min - 1)))),
      line('b', 'a', userText(JSON.stringify('y'.repeat(min)))),
      line('c', 'b', userText(JSON.stringify('é'.repeat(min / 2)))), // 20 bytes, 10 units
      line('d', 'c', userText(`"${'\\n'.repeat(min / 2 - 1)}z"`)), // 19 bytes
    ];
    const { backed } = await parity(session(...lines), min);
    expect(backed).toBe(2);
    // minTextBytes 0: even empty texts become file-backed, and read back as ''.
    const zero = await parity(session(line('a', null, userText('""'))), 0);
    expect(zero.backed).toBe(1);
  });

  it('backslash runs before the closing quote', async () => {
    const literals = [
      '"a long text ending in two backslashes \\\\"',
      '"a long text ending in four backslashes \\\\\\\\"',
      '"a long text with an escaped quote \\" then \\\\\\" then end"',
      '"\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"',
    ];
    const lines = literals.map((lit, i) => line(`e${i}`, i === 0 ? null : `e${i - 1}`, userText(lit)));
    const { backed } = await parity(session(...lines));
    expect(backed).toBe(4);
    // An odd run: the quote is escaped, the line is not valid JSON: the same error.
    const broken = await parity(session(line('x', null, userText('"odd run of backslashes here \\\\\\"'))));
    expect(broken.plain).toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
  });

  it('numbers, true, false, null, objects and arrays where a text is expected', async () => {
    const values = [
      '12345678901234567890',
      'true',
      'false',
      'null',
      '{"text":"nested text, long enough"}',
      '["a long string in an array"]',
      '-1.5e300',
    ];
    const lines = values.map((v, i) => line(`e${i}`, i === 0 ? null : `e${i - 1}`, userText(v)));
    const { plain } = await parity(session(...lines));
    // The first such part refuses the entry, with the same message as in memory.
    expect(plain).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    for (const [i, v] of values.entries()) {
      const one = await parity(session(line(`e${i}`, null, userText(v))), 8, [7]);
      expect(one.backed).toBe(0);
    }
  });

  it('repeated keys at every level: the last value wins, as in JSON.parse', async () => {
    const L = (s: string) => JSON.stringify(`${s} ${LONG}`);
    const cases = [
      // The part's text repeated: long then short, short then long, long then number, long then long.
      userText(`${L('first')},"text":"short"`),
      `{"role":"user","content":[{"type":"text","text":"x","text":${L('second')}}]}`,
      `{"role":"user","content":[{"text":${L('first')},"type":"text","text":5}]}`,
      `{"role":"user","content":[{"text":${L('first')},"type":"text","text":${L('again')}}]}`,
      // content repeated; the earlier one held the long text.
      `{"role":"user","content":[{"type":"text","text":${L('dropped')}}],"content":[{"type":"text","text":""}]}`,
      `{"role":"user","content":[{"type":"text","text":${L('dropped')}}],"content":[{"type":"text","text":${L('kept')}}]}`,
      // results and parts repeated.
      `{"role":"tool","results":[{"type":"tool_result","toolUseId":"c","toolName":"t","isError":false,"parts":[{"type":"text","text":${L('p1')}}],"parts":[{"type":"text","text":"short"}]}],"results":[{"type":"tool_result","toolUseId":"c","toolName":"t","isError":false,"parts":[{"type":"text","text":""}]}]}`,
      `{"role":"tool","results":[{"type":"tool_result","toolUseId":"c","toolName":"t","isError":false,"parts":[{"type":"text","text":${L('p1')}}]}],"results":[{"type":"tool_result","toolUseId":"c","toolName":"t","isError":false,"parts":[{"type":"text","text":${L('p2')}}]}]}`,
      // role repeated: a tool's parts under a message that ends up a user message (and back).
      `{"role":"tool","content":[{"type":"text","text":${L('c')}}],"role":"user"}`,
      `{"role":"user","content":[{"type":"text","text":${L('c')}}],"role":"tool","results":[]}`,
    ];
    for (const [i, m] of cases.entries()) {
      const lines = [
        line('a', null, m),
        // The whole message repeated (the first one's texts are dropped by JSON.parse).
        line('a', null, `${m},"message":${cases[(i + 1) % cases.length]}`),
        // A top-level key repeated after the message.
        `${line('a', null, m).slice(0, -1)},"type":"custom","customType":"k","data":{}}`,
      ];
      for (const l of lines) await parity(session(l), 8, [7], [true]); // the lazy path runs the same reader
    }
  });

  it('many parts whose text keys repeat in turn (records replaced out of order)', async () => {
    const L = (i: number) => JSON.stringify(`${i} ${LONG}`);
    const parts = Array.from({ length: 60 }, (_, i) => {
      const v = [
        `{"type":"text","text":${L(i)}}`,
        `{"type":"text","text":${L(i)},"text":${L(i + 1000)}}`,
        `{"type":"text","text":${L(i)},"text":"s"}`,
        `{"text":${L(i)},"type":"text","text":7,"text":${L(i + 2000)}}`,
      ];
      return v[i % 4];
    });
    const m = `{"role":"user","content":[${parts.join(',')}],"content":[${parts.slice(0, 30).reverse().join(',')}]}`;
    const tool = `{"role":"tool","results":[${Array.from({ length: 5 }, (_, j) => `{"type":"tool_result","toolUseId":"c${j}","toolName":"t","isError":false,"parts":[${parts.slice(j * 10, j * 10 + 10).join(',')}],"parts":[${parts.slice(j, j + 7).join(',')}]}`).join(',')}]}`;
    const { backed } = await parity(
      session(line('a', null, m), line('b', 'a', tool)),
      8,
      [undefined, 7],
      [true],
    );
    // The kept (last) containers: 30 content parts and 5 x 7 result parts; those whose last text is "s" (i % 4 === 2:
    // 7 of the content parts, 9 of the result parts) stay in memory.
    expect(backed).toBe(30 - 7 + 35 - 9);
  });

  it('a line nested 100k levels deep: no stack overflow, the same outcome', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const parts = [
      `{"role":"user","content":[{"type":"text","text":${JSON.stringify(LONG)},"x":${deep}}]}`,
      `{"role":"user","content":[{"type":"text","text":${JSON.stringify(LONG)}}],"deep":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
    ];
    for (const m of parts) {
      const path = file();
      writeFileSync(path, session(line('a', null, m)));
      const plain = await outcome(path, { textInFile: false, eager: true });
      const inFile = await outcome(path, { textInFile: ALWAYS, eager: true });
      expect('json' in inFile ? inFile.json : inFile).toEqual('json' in plain ? plain.json : plain);
    }
  });
  it('lines that close more than they open, or are a bare string: the same error, nothing kept per level', async () => {
    // Found by this pass: the scan kept state at negative depths (a 6 MB line of "],": 18 s and 600 MB of heap
    // instead of 0.3 s); it now stops at the first extra close and keeps state for depths 0-5 only (the 6 MB line
    // is in text-in-file-heavy.mjs; these small ones check the outcome).
    const bodies = [
      '],'.repeat(50_000),
      ']{'.repeat(50_000),
      `{"message":{"role":"user","content":[{"type":"text","text":${JSON.stringify(LONG)}}]}}]]{"x":1}`,
      `]]{"type":"message","id":"a","parentId":null,"timestamp":"t","message":${userText(JSON.stringify(LONG))}}`,
      JSON.stringify(LONG),
      `${JSON.stringify(LONG)},${JSON.stringify(LONG)}`,
    ];
    for (const body of bodies) {
      const { plain } = await parity(session(body), 8, [undefined], [true]);
      expect(plain).toMatchObject({ code: expect.stringMatching(/^ERR_SESSION_(CORRUPT|FORMAT)$/) });
    }
  });
});

describe('reads after the load', () => {
  const loaded = async (): Promise<{ path: string; part: TextPart; text: string; s: LoadedSession }> => {
    const path = file();
    const texts = ['first', 'second', 'third'].map((w) => `${w}: ${LONG.repeat(3)}`);
    writeFileSync(
      path,
      session(
        ...texts.map((t, i) => line(`e${i}`, i === 0 ? null : `e${i - 1}`, userText(JSON.stringify(t)))),
      ),
    );
    utimesSync(path, 1_700_000_000, 1_700_000_000);
    const s = await loadSession(path, { textInFile: ALWAYS });
    const part = allParts(s)[1] as TextPart;
    expect(isFileTextPart(part)).toBe(true);
    await nextTurn();
    return { path, part, text: texts[1] as string, s };
  };
  const changed = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(PantoError);
      expect((err as PantoError).code).toBe('ERR_SESSION_CHANGED');
      return (err as Error).message;
    }
    throw new Error('expected ERR_SESSION_CHANGED');
  };
  /** Repeats `change` until the file's ctime differs from `before` (a coarse clock can give the same tick): the
   * rewrite is then surely another write than the load's. */
  const untilCtimeMoves = async (path: string, before: number, change: () => void) => {
    for (;;) {
      change();
      if (statSync(path).ctimeMs !== before) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('extended: fine; truncated into a literal: changed; removed, renamed over: changed', async () => {
    let { path, part, text } = await loaded();
    appendFileSync(path, `${line('x', 'e2', userText(JSON.stringify(LONG)))}\n`);
    await nextTurn();
    expect(part.text).toBe(text);

    ({ path, part, text } = await loaded());
    const bytes = readFileSync(path);
    truncateSync(path, bytes.indexOf('second') + 3);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/shrank/);

    ({ path, part } = await loaded());
    rmSync(path);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/cannot be opened \(ENOENT\)/);

    ({ path, part } = await loaded());
    writeFileSync(`${path}.new`, readFileSync(path));
    renameSync(`${path}.new`, path);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/replaced/);
  });

  it('rewritten in place at the same size: a new mtime, or the old mtime restored with one character swapped', async () => {
    let { path, part, text } = await loaded();
    const st = statSync(path);
    await untilCtimeMoves(path, st.ctimeMs, () => {
      writeFileSync(path, readFileSync(path, 'utf8').replace('second', 'SECOND'));
    });
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/rewritten in place/);

    // The mtime put back: size, mtime, length and quotes all match; the literal's CRC-32 tells (found by this test:
    // the read returned the swapped text when only the file's identity was compared).
    ({ path, part, text } = await loaded());
    const before = statSync(path);
    await untilCtimeMoves(path, before.ctimeMs, () => {
      writeFileSync(path, readFileSync(path, 'utf8').replace('second', 'sceond'));
      utimesSync(path, 1_700_000_000, 1_700_000_000);
    });
    expect(statSync(path).mtimeMs).toBe(before.mtimeMs);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/no longer hold/);
    expect(text).toContain('second');
  });

  it('a FIFO or a directory put at the path', async () => {
    let { path, part } = await loaded();
    rmSync(path);
    execFileSync('mkfifo', [path]);
    await nextTurn();
    // O_NONBLOCK: the open of a FIFO without a writer returns at once, and fstat refuses it.
    expect(changed(() => part.text)).toMatch(/no longer a regular file/);

    ({ path, part } = await loaded());
    rmSync(path);
    mkdirSync(path);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/no longer a regular file|cannot be opened/);
  });

  it.skipIf(process.getuid?.() === 0)('the file made unreadable', async () => {
    const { path, part } = await loaded();
    chmodSync(path, 0);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/cannot be opened \(EACCES\)/);
  });

  it('a change in the same turn as a read: the descriptor of that turn still reads the loaded inode', async () => {
    // Replaced or removed after a read in the same turn: the open descriptor reads the old file, the loaded text.
    let { path, part, text, s } = await loaded();
    const other = allParts(s)[2] as TextPart;
    expect(part.text).toBe(text);
    writeFileSync(`${path}.new`, 'x');
    renameSync(`${path}.new`, path);
    expect(other.text).toContain('third');
    rmSync(path);
    expect(part.text).toBe(text);
    await nextTurn();
    expect(changed(() => part.text)).toMatch(/ENOENT/);

    // Truncated in the same turn: the descriptor sees the short file: changed, not other text.
    ({ path, part, text } = await loaded());
    expect(part.text).toBe(text);
    truncateSync(path, 10);
    expect(changed(() => part.text)).toMatch(/no longer hold/);

    // Rewritten in place within the turn (the descriptor is not checked again): the literal's own checks apply —
    // another length, and (the same length, one character swapped) another CRC-32.
    ({ path, part, text } = await loaded());
    expect(part.text).toBe(text);
    writeFileSync(path, readFileSync(path, 'utf8').replace('second: ', 'second:\\u0041'));
    expect(changed(() => part.text)).toMatch(/no longer hold/);
    ({ path, part, text } = await loaded());
    expect(part.text).toBe(text);
    writeFileSync(path, readFileSync(path, 'utf8').replace('second', 'sceond'));
    expect(changed(() => part.text)).toMatch(/no longer hold/);
  });
});

describe('concurrency', () => {
  it('SessionLog.open, many appends, reads in the same and later turns', async () => {
    const path = file();
    const w = await SessionLog.create(path);
    for (let i = 0; i < 10; i++)
      w.appendMessage({ role: 'user', content: [{ type: 'text', text: `${i} ${LONG}` }] });
    w.close();
    const log = await SessionLog.open(path, { textInFile: ALWAYS });
    const parts = allParts(log) as TextPart[];
    expect(parts.filter(isFileTextPart).length).toBe(10);
    for (let i = 0; i < 200; i++) {
      log.appendMessage({
        role: 'assistant',
        content: [{ type: 'text', text: `${i} ${LONG}` }],
        stopReason: 'end',
      });
      expect(parts[i % 10]?.text).toBe(`${i % 10} ${LONG}`);
      if (i % 50 === 0) await nextTurn();
    }
    await nextTurn();
    expect(parts.map((p) => p.text)).toEqual(Array.from({ length: 10 }, (_, i) => `${i} ${LONG}`));
    // Appending the loaded messages again (their texts are read to be written).
    log.appendMessage(log.conversation.messages[0] as Message);
    log.close();
    const again = await loadSession(path, { textInFile: false });
    expect(JSON.stringify(again.conversation.messages.at(-1))).toBe(
      JSON.stringify(log.conversation.messages[0]),
    );
  });

  it('another process appending while the parts are read', async () => {
    const path = file();
    const w = await SessionLog.create(path);
    for (let i = 0; i < 5; i++)
      w.appendMessage({ role: 'user', content: [{ type: 'text', text: `${i} ${LONG}` }] });
    w.close();
    const s = await loadSession(path, { textInFile: ALWAYS });
    const parts = allParts(s) as TextPart[];
    const add = line('z', null, userText(JSON.stringify(LONG))).replace('"parentId":null', '"parentId":"zz"');
    const r = spawnSync(process.execPath, [
      '-e',
      `const fs=require('fs');for(let i=0;i<50;i++)fs.appendFileSync(${JSON.stringify(path)},${JSON.stringify(`${add}\n`)})`,
    ]);
    expect(r.status).toBe(0);
    await nextTurn();
    expect(parts.map((p) => p.text)).toEqual(Array.from({ length: 5 }, (_, i) => `${i} ${LONG}`));
  });

  it('SessionLog repairs a torn tail while an earlier loadSession result is alive', async () => {
    const path = file();
    const w = await SessionLog.create(path);
    for (let i = 0; i < 5; i++)
      w.appendMessage({ role: 'user', content: [{ type: 'text', text: `${i} ${LONG}` }] });
    w.close();
    appendFileSync(path, '{"type":"message","id":"torn"'); // a torn last line
    const s = await loadSession(path, { textInFile: ALWAYS });
    const parts = allParts(s) as TextPart[];
    expect(parts.filter(isFileTextPart).length).toBe(5);
    const log = await SessionLog.open(path, { textInFile: ALWAYS });
    expect(log.warnings.map((x) => x.kind)).toContain('repaired');
    await nextTurn();
    // Cut back to the loaded bytes' end: the old result still reads its texts.
    expect(parts.map((p) => p.text)).toEqual(Array.from({ length: 5 }, (_, i) => `${i} ${LONG}`));
    // Appends that bring the file back to exactly its size at the load: taken for an in-place rewrite (a false
    // alarm, never other text); a larger file is fine again.
    const size = statSync(path).size;
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'x' }] });
    log.close();
    expect(statSync(path).size).not.toBe(size);
    await nextTurn();
    expect(parts[0]?.text).toBe(`0 ${LONG}`);
  });
});

describe('what a host does with a file-backed part', () => {
  const one = async () => {
    const path = file();
    writeFileSync(path, session(line('a', null, userText(JSON.stringify(LONG)))));
    const s = await loadSession(path, { textInFile: ALWAYS });
    const plain = await loadSession(path, { textInFile: false });
    const part = allParts(s)[0] as TextPart;
    expect(isFileTextPart(part)).toBe(true);
    return { s, plain, part, want: { type: 'text', text: LONG } };
  };

  it('structuredClone, JSON, spread, Object.assign, for...in, Object.entries, toStrictEqual', async () => {
    const { s, plain, part, want } = await one();
    expect(structuredClone(part)).toStrictEqual(want);
    expect(structuredClone(s.conversation)).toStrictEqual(structuredClone(plain.conversation));
    expect(JSON.stringify(part)).toBe(JSON.stringify(want));
    expect({ ...part }).toStrictEqual(want);
    expect(Object.assign({}, part)).toStrictEqual(want);
    const keys: string[] = [];
    for (const k in part) keys.push(k);
    expect(keys).toEqual(['type', 'text']);
    expect(Object.entries(part)).toEqual(Object.entries(want));
    // The symbol property that locates the text is not enumerable: deep equality ignores it.
    expect(part).toStrictEqual(want);
    expect(s.conversation).toStrictEqual(plain.conversation);
    expect(Object.getOwnPropertySymbols(part).length).toBe(1);
  });

  it('postMessage of the conversation to a worker', async () => {
    const { s, plain } = await one();
    const worker = new Worker(
      'require("worker_threads").parentPort.on("message", (m) => { require("worker_threads").parentPort.postMessage(JSON.stringify(m)); })',
      { eval: true },
    );
    try {
      const back = await new Promise<string>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage(s.conversation);
      });
      expect(back).toBe(JSON.stringify(plain.conversation));
    } finally {
      await worker.terminate();
    }
  });

  it('assignment after Object.freeze, Object.seal and Object.preventExtensions behaves as on a plain part', async () => {
    const attempt = (p: { text: string }) => {
      try {
        p.text = 'new';
        return { ok: p.text, keys: Object.keys(p) };
      } catch (err) {
        return { error: `${(err as Error).name}: ${(err as Error).message}` };
      }
    };
    const locks: ReadonlyArray<<T>(o: T) => T> = [Object.freeze, Object.seal, Object.preventExtensions];
    for (const lock of locks) {
      const { part, want } = await one();
      const got = attempt(lock(part as { text: string }));
      expect(got, lock.name).toEqual(attempt(lock({ ...want } as { text: string })));
      expect(JSON.stringify(part), lock.name).toBe(
        JSON.stringify(lock === Object.freeze ? want : { ...want, text: 'new' }),
      );
      expect(isFileTextPart(part), lock.name).toBe(lock === Object.freeze);
    }
  });
});

describe('descriptors', () => {
  const fds = () => readdirSync('/proc/self/fd').length;
  it.skipIf(process.platform !== 'linux')(
    'one descriptor per turn, closed on the next, also when a read throws',
    async () => {
      const path = file();
      writeFileSync(
        path,
        session(
          ...[0, 1, 2].map((i) =>
            line(`e${i}`, i ? `e${i - 1}` : null, userText(JSON.stringify(`${i} ${LONG}`))),
          ),
        ),
      );
      const s = await loadSession(path, { textInFile: ALWAYS });
      const parts = allParts(s) as TextPart[];
      await nextTurn();
      const before = fds();
      for (let k = 0; k < 50; k++) for (const p of parts) expect(p.text).toContain(LONG);
      expect(fds()).toBe(before + 1);
      await nextTurn();
      expect(fds()).toBe(before);
      // A read that throws (the bytes changed under the open descriptor): still closed on the next turn.
      expect((parts[0] as TextPart).text).toContain(LONG);
      truncateSync(path, 5);
      expect(() => (parts[1] as TextPart).text).toThrow(PantoError);
      expect(fds()).toBe(before + 1);
      await nextTurn();
      expect(fds()).toBe(before);
      // A refused open (the file shrank) leaves nothing open.
      expect(() => (parts[1] as TextPart).text).toThrow(/shrank/);
      expect(fds()).toBe(before);
      await nextTurn();
    },
  );
});
