/**
 * `textInFile`: a large session's long texts stay in the file and are read when a part's `text` is read. The loaded
 * session must be indistinguishable from one loaded with every text in memory (values, JSON, spread, structured
 * clone, deep equality, serializers), and a file that no longer holds the loaded bytes is a typed error, never other
 * text. The size threshold is set to 0 here so small files take the path the default keeps for files of 64 MiB+.
 */
import {
  appendFileSync,
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
import { afterAll, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/compaction/estimate-tokens.js';
import type { Message, TextPart } from '../../src/conversation.js';
import { PantoError } from '../../src/errors.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import { isFileTextPart } from '../../src/session/file-text.js';
import { type LoadedSession, loadSession, SessionLog } from '../../src/session/index.js';
import { literalLength } from '../../src/session/text-literals.js';
import { hostileTextLines, mulberry32 } from './helpers/hostile-text-lines.js';
import { everyKindOfMessage } from './helpers/sample-conversation.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-text-in-file-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALWAYS = { minFileBytes: 0, minTextBytes: 8 };
const PROSE = 'Ünïcödé prose — 日本語 "quoted" \\ back\\slash\ttab\nnewline \u2028 😀 end. ';

const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

/** The file-backed text parts of `session`'s conversation. */
function fileParts(session: { conversation: { messages: Message[] } }): TextPart[] {
  const out: TextPart[] = [];
  for (const m of session.conversation.messages) {
    const parts =
      m.role === 'user' || m.role === 'assistant'
        ? m.content
        : m.role === 'tool'
          ? m.results.flatMap((r) => r.parts)
          : [];
    for (const p of parts) if (isFileTextPart(p)) out.push(p as TextPart);
  }
  return out;
}

function thrown(fn: () => unknown): { code?: string; message: string } | undefined {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  return undefined;
}

/** A session of every kind of message plus long texts of every awkward character class. */
async function writeSession(path: string, extra = 0): Promise<void> {
  const log = await SessionLog.create(path, { model: 'm' });
  for (const m of everyKindOfMessage()) log.appendMessage(m);
  for (let i = 0; i < 20 + extra; i++) {
    log.appendMessage(say(`${PROSE.repeat(1 + (i % 5))}${i}`));
    log.appendMessage({
      role: 'assistant',
      content: [
        { type: 'text', text: PROSE.repeat(2) },
        { type: 'tool_call', id: `c${i}`, name: 'read', input: { path: `f${i}`, text: PROSE } },
      ],
      stopReason: 'tool_use',
    });
    log.appendMessage({
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: `c${i}`,
          toolName: 'read',
          parts: [
            { type: 'text', text: 'short' },
            { type: 'text', text: `${PROSE}${i}` },
          ],
          isError: false,
        },
      ],
    });
  }
  log.close();
}

describe('a session loaded with texts in the file equals the one loaded in memory', () => {
  it('same values, JSON, spread, structured clone and serialized request, on every loading path', async () => {
    const path = file();
    await writeSession(path);
    const plain = await loadSession(path, { textInFile: false });
    for (const options of [{}, { eager: true }] as const) {
      const lazy = await loadSession(path, { ...options, textInFile: ALWAYS });
      expect(fileParts(lazy).length).toBeGreaterThan(60);
      expect(lazy.conversation).toEqual(plain.conversation);
      expect(JSON.stringify(lazy.entries)).toBe(JSON.stringify(plain.entries));
      expect(structuredClone(lazy.conversation)).toEqual(plain.conversation);
      const part = fileParts(lazy)[0] as TextPart;
      expect({ ...part }).toEqual({ type: 'text', text: part.text });
      expect(Object.keys(part)).toEqual(['type', 'text']);
      expect(JSON.stringify(toAnthropicMessages(lazy.conversation, 'claude-sonnet-4-5').body)).toBe(
        JSON.stringify(toAnthropicMessages(plain.conversation, 'claude-sonnet-4-5').body),
      );
    }
  });

  it('the default leaves a small file entirely in memory', async () => {
    const path = file();
    await writeSession(path);
    expect(fileParts(await loadSession(path))).toEqual([]);
    expect(fileParts(await loadSession(path, { textInFile: { minTextBytes: 8 } }))).toEqual([]);
  });

  it('short texts and parts with extra keys stay in memory', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say('tiny'));
    log.appendMessage({
      role: 'user',
      content: [{ type: 'text', text: PROSE, extra: 1 } as unknown as TextPart],
    });
    log.close();
    const s = await loadSession(path, { textInFile: { minFileBytes: 0, minTextBytes: 5 } });
    expect(fileParts(s)).toEqual([]);
  });

  it('assigning text makes a plain string property', async () => {
    const path = file();
    await writeSession(path);
    const s = await loadSession(path, { textInFile: ALWAYS });
    const part = fileParts(s)[0] as TextPart;
    part.text = 'replaced';
    expect(isFileTextPart(part)).toBe(false);
    expect(part.text).toBe('replaced');
    expect(Object.getOwnPropertyDescriptor(part, 'text')).toMatchObject({
      value: 'replaced',
      writable: true,
    });
  });

  it('SessionLog.open: the conversation reads from the file it appends to, across its own appends and repairs', async () => {
    const path = file();
    await writeSession(path);
    // A torn last line: open cuts it (a repair: the file shrinks past the loaded bytes, then grows again).
    appendFileSync(path, '{"type":"message","id":"torn');
    const plain = await loadSession(path, { textInFile: false });
    const log = await SessionLog.open(path, { textInFile: ALWAYS });
    expect(fileParts(log).length).toBeGreaterThan(60);
    for (let i = 0; i < 5; i++) log.appendMessage(say(`more ${PROSE}`));
    expect(log.conversation.messages.slice(0, plain.conversation.messages.length)).toEqual(
      plain.conversation.messages,
    );
    log.close();
  });
});

describe('what reads the file and what does not', () => {
  it('token estimates use the length known from the load: the file is not read', async () => {
    const path = file();
    await writeSession(path);
    const plain = await loadSession(path, { textInFile: false });
    const s = await loadSession(path, { textInFile: ALWAYS });
    await new Promise((r) => setImmediate(r));
    rmSync(path);
    expect(estimateTokens(s.conversation.messages)).toBe(estimateTokens(plain.conversation.messages));
    expect(thrown(() => (fileParts(s)[0] as TextPart).text)?.code).toBe('ERR_SESSION_CHANGED');
  });

  it.runIf(process.platform === 'linux')(
    'one descriptor per event-loop turn, closed on the next',
    async () => {
      const path = file();
      await writeSession(path);
      const s = await loadSession(path, { textInFile: ALWAYS });
      await new Promise((r) => setImmediate(r));
      const open = () => readdirSync('/proc/self/fd').length;
      const before = open();
      for (const part of fileParts(s)) expect(typeof part.text).toBe('string');
      expect(open()).toBe(before + 1);
      await new Promise((r) => setImmediate(r));
      expect(open()).toBe(before);
    },
  );
});

describe('a file that no longer holds the loaded bytes: ERR_SESSION_CHANGED, never other text', () => {
  const loaded = async (): Promise<{ path: string; s: LoadedSession; part: TextPart }> => {
    const path = file();
    await writeSession(path);
    const s = await loadSession(path, { textInFile: ALWAYS });
    const part = fileParts(s)[0] as TextPart;
    // Reads in a later turn open the file again (one descriptor serves one event-loop turn).
    await new Promise((r) => setImmediate(r));
    return { path, s, part };
  };
  const nextTurn = () => new Promise((r) => setImmediate(r));

  it('appending (an agent still writing) is not a change', async () => {
    const { path, part } = await loaded();
    const before = part.text;
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'custom', id: 'x1', parentId: null, customType: 'k' })}\n`,
    );
    await nextTurn();
    expect(part.text).toBe(before);
  });

  it('removed, replaced, shortened, rewritten in place', async () => {
    const cases: Array<[string, (path: string) => void]> = [
      ['removed', (p) => rmSync(p)],
      [
        'replaced',
        (p) => {
          const copy = `${p}.new`;
          writeFileSync(copy, readFileSync(p));
          renameSync(copy, p);
        },
      ],
      ['shortened', (p) => truncateSync(p, 100)],
      [
        'rewritten in place',
        (p) => {
          const st = statSync(p);
          writeFileSync(p, readFileSync(p, 'utf8').replaceAll('日', '月')); // same size: both are 3 bytes
          utimesSync(p, st.atime, new Date(st.mtimeMs + 5000));
        },
      ],
    ];
    for (const [what, change] of cases) {
      const { path, part } = await loaded();
      change(path);
      await nextTurn();
      const err = thrown(() => part.text);
      expect(err, what).toBeInstanceOf(PantoError);
      expect(err?.code, what).toBe('ERR_SESSION_CHANGED');
    }
  });

  it('a text edited through the path while the file grew (fstat sees an append): the CRC-32 catches it', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage(say(`hello ${PROSE}`));
    log.close();
    const s = await loadSession(path, { textInFile: { minFileBytes: 0, minTextBytes: 0 } });
    const part = fileParts(s)[0] as TextPart;
    writeFileSync(path, `${readFileSync(path, 'utf8').replace('"hello', '"jello')}\n`); // same text length, one byte more
    await new Promise((r) => setImmediate(r));
    expect(thrown(() => part.text)?.code).toBe('ERR_SESSION_CHANGED');
  });

  it('bytes that no longer hold the literal (same size and mtime kept) fail the length or shape check', async () => {
    const { path, part } = await loaded();
    const st = statSync(path);
    const bytes = readFileSync(path);
    // Shift every byte of the file by one position: same size, every literal broken.
    const shifted = Buffer.concat([Buffer.from(' '), bytes.subarray(0, bytes.length - 1)]);
    writeFileSync(path, shifted);
    utimesSync(path, st.atime, st.mtime);
    await nextTurn();
    expect(thrown(() => part.text)?.code).toBe('ERR_SESSION_CHANGED');
  });
});

describe('hostile lines: the same session or the same error as with every text in memory', () => {
  it('generated lines with repeated and escaped keys, odd values and broken literals', async () => {
    const random = mulberry32(11);
    const { key, message } = hostileTextLines(random, PROSE);
    const outcomes: Record<string, number> = {};
    let backed = 0;
    for (let c = 0; c < 300; c++) {
      const path = file();
      const lines = [
        JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' }),
      ];
      let parent: string | null = null;
      for (let i = 0; i < 3; i++) {
        const id = `e${i}`;
        const msgs = Array.from({ length: random() < 0.8 ? 1 : 2 }, message).map(
          (m) => `"${key('message')}":${m}`,
        );
        const type = random() < 0.85 ? 'message' : 'custom","customType":"k';
        lines.push(
          `{"type":"${type}","id":"${id}","parentId":${JSON.stringify(parent)},"timestamp":"2026-01-01T00:00:00Z",${msgs.join(',')}}`,
        );
        parent = id;
      }
      writeFileSync(path, `${lines.join('\n')}\n`);
      const load = async (textInFile: false | typeof ALWAYS) => {
        try {
          const s = await loadSession(path, { eager: true, textInFile });
          backed += fileParts(s).length;
          return { json: JSON.stringify({ c: s.conversation, e: s.entries }) };
        } catch (err) {
          return { code: (err as PantoError).code, message: (err as Error).message };
        }
      };
      const got = await load({ minFileBytes: 0, minTextBytes: 8 });
      outcomes[got.code ?? 'ok'] = (outcomes[got.code ?? 'ok'] ?? 0) + 1;
      expect(got, `case ${c}`).toEqual(await load(false));
    }
    // Not vacuous: many cases load (with file-backed parts), many fail on a bad line.
    expect(outcomes.ok ?? 0).toBeGreaterThan(60);
    expect((outcomes.ERR_SESSION_CORRUPT ?? 0) + (outcomes.ERR_SESSION_FORMAT ?? 0)).toBeGreaterThan(30);
    expect(backed).toBeGreaterThan(100);
    if (process.env.DIAG) console.log(outcomes, backed);
  });
});

describe('literalLength measures a literal as JSON.parse decodes it, or refuses what JSON.parse refuses', () => {
  it('random literals at every alignment: ASCII, 2/3/4-byte UTF-8, escapes, control bytes, backslash runs', () => {
    let seed = 5;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    const pieces = [
      'a',
      'Z',
      ' ',
      'é',
      '日',
      '😀',
      '\\n',
      '\\"',
      '\\\\',
      '\\u00e9',
      '\\ud83d\\ude00',
      '\\u12',
      '\\x',
      '\u0001',
      '\u001f',
      '\\',
      '~',
    ];
    let refused = 0;
    for (let n = 0; n < 4000; n++) {
      let body = '';
      const len = Math.floor(random() * 40);
      for (let k = 0; k < len; k++)
        body += pieces[Math.floor(random() * (random() < 0.9 ? 6 : pieces.length))];
      // The scan gives a literal's bounds by its real closing quote: a body with a quote that is not escaped, or that
      // ends in an escaping backslash, has other bounds (not a case literalLength is given).
      if (/(^|[^\\])(\\\\)*"/.test(body) || /(^|[^\\])\\(\\\\)*$/.test(body)) continue;
      const literal = `"${body}"`;
      const pad = Math.floor(random() * 8);
      const buf = Buffer.concat([Buffer.alloc(pad, 0x20), Buffer.from(literal), Buffer.alloc(8, 0x20)]);
      let expected: number;
      try {
        expected = (JSON.parse(literal) as string).length;
      } catch {
        expected = -1;
        refused++;
      }
      expect(literalLength(buf, pad, pad + Buffer.byteLength(literal)), literal).toBe(expected);
    }
    expect(refused).toBeGreaterThan(100);
  });
});

describe('textInFile options are checked', () => {
  it('bad values are ERR_INVALID_ARGUMENT', async () => {
    const path = file();
    await writeSession(path);
    for (const bad of [null, 3, { minFileBytes: -1 }, { minTextBytes: Number.NaN }, { minFileBytes: '1' }]) {
      await expect(loadSession(path, { textInFile: bad as never })).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
      });
    }
  });
});
