/**
 * Hostile session lines: every case is loaded through every path (`loadSession` lazy and eager, `openSessionIndex`,
 * `SessionLog.open` lazy and eager; helpers/every-path.ts), at the default read size and at a tiny one (lines span
 * reads), and every path must give the same session or the same `PantoError` code — never an untyped error.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSession, SessionLog } from '../../src/session/index.js';
import {
  compactionLine,
  customLine,
  everyPath,
  HEADER,
  type Loaded,
  messageLine,
  type Outcome,
  sameOnEveryPath,
  userJson,
} from './helpers/every-path.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-hostile-lines-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file holding `content` (lines joined with `\n` and ended with one, unless given as bytes). */
function write(content: string[] | Buffer | string): string {
  const path = join(dir, `s${n++}.jsonl`);
  writeFileSync(path, Array.isArray(content) ? `${content.join('\n')}\n` : content);
  return path;
}

const same = (actual: unknown, expected: unknown, name: string) =>
  expect(actual, name).toStrictEqual(expected);

/** Every path, at the default read size and at small reads, gives the same outcome; returns it. */
async function onEveryPath(path: string): Promise<Outcome> {
  // 5-byte reads for small files; a big one (deep nesting, 1M lines) at 64 KiB, to bound the test's time.
  const small = await sameOnEveryPath(path, same, { chunkBytes: statSync(path).size < 20_000 ? 5 : 65_536 });
  const normal = await sameOnEveryPath(path, same);
  same(
    'code' in small ? small.code : small,
    'code' in normal ? normal.code : normal,
    'chunkBytes 5 vs default',
  );
  return normal;
}

/** Every path fails with `code`, the message naming the file and `line` and matching `text`. */
async function failsEverywhere(path: string, code: string, line: number | undefined, text?: RegExp) {
  const o = await onEveryPath(path);
  expect(o).toMatchObject({ code });
  const message = (o as { message: string }).message;
  expect(message).toContain(line === undefined ? path : `${path}:${line}:`);
  if (text) expect(message).toMatch(text);
}

/** Every path loads the file; returns what it loaded. */
async function loadsEverywhere(path: string): Promise<Loaded> {
  const o = await onEveryPath(path);
  if (!('ok' in o)) throw new Error(`expected a session, got ${JSON.stringify(o)}`);
  return o.ok;
}

const texts = (loaded: Loaded) =>
  (loaded.conversation as { messages: Array<{ content: Array<{ text?: string }> | string }> }).messages.map(
    (m) => (typeof m.content === 'string' ? m.content : m.content[0]?.text),
  );

describe('duplicate JSON keys: the index reads the first occurrence, JSON.parse keeps the last', () => {
  const typeTwice = `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":${userJson('y')},"type":"custom","customType":"c","data":1}`;
  const idTwice = `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":${userJson('y')},"id":"z"}`;
  const parentTwice = `{"type":"message","id":"c","parentId":"b","timestamp":"t","message":${userJson('z')},"parentId":"a"}`;

  it.each([
    ['a second "type"', [HEADER, messageLine('a', null, 'x'), typeTwice], 3],
    [
      'a second "type", compacted file',
      [HEADER, messageLine('a', null, 'x'), typeTwice, compactionLine('c', 'b', null)],
      3,
    ],
    [
      'a second "id" naming an earlier entry',
      [HEADER, messageLine('a', null, 'x'), idTwice.replace('"z"', '"a"')],
      3,
    ],
    [
      'a second "id", compacted file',
      [HEADER, messageLine('a', null, 'x'), idTwice, compactionLine('c', 'b', null)],
      3,
    ],
    [
      'a second "parentId"',
      [HEADER, messageLine('a', null, 'x'), messageLine('b', 'a', 'y'), parentTwice],
      4,
    ],
    [
      'a second "parentId", compacted file',
      [
        HEADER,
        messageLine('a', null, 'x'),
        messageLine('b', 'a', 'y'),
        parentTwice,
        compactionLine('d', 'c', null),
      ],
      4,
    ],
  ])('%s: ERR_SESSION_FORMAT on every path, naming the line', async (_name, lines, line) => {
    await failsEverywhere(write(lines), 'ERR_SESSION_FORMAT', line, /repeats a key/);
  });

  it('a line indexed as custom that parses as a message, after the compaction: refused at load, not left out', async () => {
    const lie = `{"type":"custom","id":"m","parentId":"c","timestamp":"t","customType":"x","data":1,"type":"message","message":${userJson('hidden')}}`;
    const path = write([HEADER, messageLine('a', null, 'x'), compactionLine('c', 'a', null), lie]);
    await expect(loadSession(path)).rejects.toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    await failsEverywhere(path, 'ERR_SESSION_FORMAT', 4, /repeats a key/);
  });

  it('a repeated key in a line the index parses whole (id past the leading bytes, escaped id): last wins everywhere', async () => {
    const long = 'a'.repeat(600);
    const path = write([
      HEADER,
      messageLine(long, null, 'x'),
      `{"type":"message","id":"${'b'.repeat(600)}","parentId":"${long}","timestamp":"t","message":${userJson('y')},"id":"zz"}`,
      `{"type":"message","id":"\\u0063","parentId":"zz","timestamp":"t","message":${userJson('z')},"id":"d"}`,
      compactionLine('e', 'd', 'zz'),
    ]);
    const loaded = await loadsEverywhere(path);
    expect((loaded.entries as Array<{ id: string }>).map((e) => e.id)).toStrictEqual([long, 'zz', 'd', 'e']);
    expect(texts(loaded)).toStrictEqual(['summary', 'y', 'z']);
  });

  it('a repeated key in the header: the last one counts on every path', async () => {
    await failsEverywhere(write([`${HEADER.slice(0, -1)},"type":"other"}`]), 'ERR_SESSION_FORMAT', 1);
    const loaded = await loadsEverywhere(write([`${HEADER.slice(0, -1)},"id":"second"}`]));
    expect(loaded.header).toMatchObject({ id: 'second' });
  });
});

describe('prototype names as ids, parents, types and keys', () => {
  const clean = () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toStrictEqual(prototypeNames);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).p).toBeUndefined();
  };
  const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort();

  it('__proto__, constructor, hasOwnProperty, toString, valueOf as ids and parents: a normal session', async () => {
    const path = write([
      HEADER,
      messageLine('__proto__', null, 'x'),
      messageLine('constructor', '__proto__', 'y'),
      `{"type":"model_change","id":"toString","parentId":"constructor","timestamp":"t","model":"m2"}`,
      compactionLine('hasOwnProperty', 'toString', 'constructor'),
      messageLine('valueOf', 'hasOwnProperty', 'z'),
    ]);
    const loaded = await loadsEverywhere(path);
    expect(loaded.leafId).toBe('valueOf');
    expect(loaded.model).toBe('m2');
    expect(texts(loaded)).toStrictEqual(['summary', 'y', 'z']);
    clean();
  });

  it('__proto__ keys in data, meta, tool inputs and the header stay plain data', async () => {
    const poison = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"p":1}},"toString":5}';
    const path = write([
      `{"type":"session","version":1,"id":"h","created":"x","__proto__":{"polluted":1}}`,
      customLine('a', null, '__proto__', poison),
      `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"t","name":"n","input":${poison}}],"stopReason":"tool_use"}}`,
      `{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"tool","results":[{"type":"tool_result","toolUseId":"t","toolName":"n","isError":false,"parts":[],"meta":${poison}}]}}`,
      compactionLine('d', 'c', 'b'),
    ]);
    // Compared as JSON text: vitest's equality reads an own `__proto__` key as the prototype.
    const all = await everyPath(path);
    const texts = Object.values(all).map((o) => JSON.stringify(o));
    expect(new Set(texts).size, texts.join('\n')).toBe(1);
    const loaded = (all.eager as { ok: Loaded }).ok;
    expect(loaded.entries).toHaveLength(4);
    const custom = (loaded.entries as Array<{ data?: object }>)[0]?.data as object;
    expect(Object.getPrototypeOf(custom)).toBe(Object.prototype);
    expect(Object.hasOwn(custom, '__proto__')).toBe(true); // JSON.parse makes it an own key, not the prototype
    clean();
  });

  it('appending with prototype names: data is kept as given; branch() to a name not in the log is a typed error', async () => {
    const path = join(dir, `s${n++}.jsonl`);
    const log = await SessionLog.create(path);
    log.appendCustom('__proto__', JSON.parse('{"__proto__":{"polluted":1}}'));
    for (const id of ['__proto__', 'toString', 'constructor']) {
      expect(() => log.branch(id)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    }
    log.close();
    const loaded = await loadsEverywhere(path);
    expect(JSON.stringify((loaded.entries as Array<{ data: unknown }>)[0]?.data)).toBe(
      '{"__proto__":{"polluted":1}}',
    );
    clean();
  });
});

describe('values of the wrong type and very deep values', () => {
  const entry = (fields: string) => `{"type":"message","id":"a","parentId":null,"timestamp":"t",${fields}}`;
  it.each([
    ['an array as an entry', '[1,2]'],
    ['null as an entry', 'null'],
    ['a number as an entry', '1e999'],
    ['a number id', '{"type":"message","id":1e999,"parentId":null,"timestamp":"t","message":{}}'],
    ['an array as a message', entry('"message":[]')],
    ['null as a part', entry('"message":{"role":"user","content":[null]}')],
    ['a number as results', entry('"message":{"role":"tool","results":5}')],
    ['an array as a result', entry('"message":{"role":"tool","results":[[]]}')],
    ['a string as assistant content', entry('"message":{"role":"assistant","content":"hi"}')],
    [
      'infinite and negative-zero image sizes',
      entry(
        '"message":{"role":"user","content":[{"type":"image","mediaType":"image/png","data":"","width":1e999,"height":-0}]}',
      ),
    ],
    ['an empty id', entry('"message":{}').replace('"id":"a"', '"id":""')],
  ])('%s: ERR_SESSION_FORMAT on every path', async (_name, line) => {
    await failsEverywhere(write([HEADER, line]), 'ERR_SESSION_FORMAT', 2);
  });

  it('an array, infinite or negative-zero header version: ERR_SESSION_FORMAT', async () => {
    for (const header of [
      '[]',
      '{"type":"session","version":1e999,"id":"h","created":"x"}',
      '{"type":"session","version":-0,"id":"h","created":"x"}',
    ]) {
      await failsEverywhere(write([header]), 'ERR_SESSION_FORMAT', 1);
    }
  });

  it('huge integers and 1e999 token counts load as numbers (JSON.parse gives Infinity), same on every path', async () => {
    const line = compactionLine('c', 'a', null)
      .replace('"tokensBefore":1', '"tokensBefore":123456789012345678901234567890')
      .replace('"tokensAfter":1', '"tokensAfter":1e999');
    const loaded = await loadsEverywhere(write([HEADER, messageLine('a', null, 'x'), line]));
    expect((loaded.entries as Array<{ tokensAfter?: number }>)[1]?.tokensAfter).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  const DEPTH = 100_000;
  const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
  const deepObject = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;

  it.each([
    ['custom data', (d: string) => customLine('a', null, 'x', d)],
    [
      'a tool input',
      (d: string) =>
        `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"t","name":"n","input":{"x":${d}}}],"stopReason":"tool_use"}}`,
    ],
    [
      'tool-result meta',
      (d: string) =>
        `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"tool","results":[{"type":"tool_result","toolUseId":"t","toolName":"n","isError":false,"parts":[],"meta":{"x":${d}}}]}}`,
    ],
  ])(
    '%s nested 100k levels deep: ERR_SESSION_FORMAT naming the line on every path (checked iteratively)',
    async (_what, line) => {
      // Such a line used to load, and then `panto session` and every resumed turn died of stack overflow.
      for (const deep of [deepArray, deepObject]) {
        const path = write([
          HEADER,
          messageLine('m', null, 'x'),
          line(deep).replace('"parentId":null', '"parentId":"m"'),
        ]);
        await failsEverywhere(path, 'ERR_SESSION_FORMAT', 3, /nested deeper than 512 levels/);
        // Behind a compaction (the index path parses it only when `entries` is read): the same error then.
        const compacted = write([
          HEADER,
          line(deep),
          messageLine('m', 'a', 'x'),
          compactionLine('c', 'm', 'm'),
        ]);
        const loaded = await loadSession(compacted);
        expect(() => loaded.entries).toThrow(
          expect.objectContaining({
            code: 'ERR_SESSION_FORMAT',
            message: expect.stringContaining(`${compacted}:2: `),
          }),
        );
      }
    },
  );

  it('512 levels load; 513 do not', async () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    // The entry object is level 1, `data` level 2.
    expect(
      (await loadsEverywhere(write([HEADER, customLine('a', null, 'x', nest(511))]))).entries,
    ).toHaveLength(1);
    await failsEverywhere(
      write([HEADER, customLine('a', null, 'x', nest(512))]),
      'ERR_SESSION_FORMAT',
      2,
      /nested deeper/,
    );
  });

  it.each([
    ['a part type', `"message":{"role":"user","content":[{"type":${deepArray}}]}`],
    ['a role', `"message":{"role":${deepArray}}`],
    ['an entry type', `"message":{}`],
  ])('%s nested 100k levels deep: ERR_SESSION_FORMAT, not RangeError', async (what, fields) => {
    const line =
      what === 'an entry type'
        ? `{"id":"a","parentId":null,"timestamp":"t","type":${deepArray}}`
        : entry(fields);
    await failsEverywhere(write([HEADER, line]), 'ERR_SESSION_FORMAT', 2, /got an array/);
  });

  it('a 5 MB string as the type: the error message stays short', async () => {
    const path = write([
      HEADER,
      `{"id":"a","parentId":null,"timestamp":"t","type":"${'x'.repeat(5_000_000)}"}`,
    ]);
    const o = await onEveryPath(path);
    expect(o).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    expect((o as { message: string }).message.length).toBeLessThan(path.length + 200);
  });

  it('appending data or a tool input nested 100k levels: ERR_INVALID_ARGUMENT, nothing written', async () => {
    const path = join(dir, `s${n++}.jsonl`);
    const log = await SessionLog.create(path);
    const before = readFileSync(path);
    expect(() => log.appendCustom('x', JSON.parse(deepArray))).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_ARGUMENT',
        message: expect.stringMatching(/nested too deeply/),
      }),
    );
    expect(() =>
      log.appendMessage({
        role: 'assistant',
        content: [{ type: 'tool_call', id: 't', name: 'n', input: JSON.parse(deepObject) }],
      }),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    expect(readFileSync(path)).toStrictEqual(before);
    expect(log.size).toBe(0);
    log.appendCustom('x', 1); // the log still works
    log.close();
    expect((await loadsEverywhere(path)).entries).toHaveLength(1);
  });
});

describe('tree lies: cycles, parents and compactions that do not fit', () => {
  const a = messageLine('a', null, 'x');
  it.each([
    ['a self-parent', [HEADER, messageLine('a', 'a', 'x')], 2],
    [
      'a self-parent, compacted file',
      [HEADER, messageLine('a', 'a', 'x'), compactionLine('c', 'a', null)],
      2,
    ],
    ['a parent naming a later entry', [HEADER, messageLine('a', 'b', 'x'), messageLine('b', 'a', 'y')], 2],
    [
      'a parent cycle, compacted file',
      [HEADER, messageLine('a', 'b', 'x'), messageLine('b', 'a', 'y'), compactionLine('c', 'b', null)],
      2,
    ],
    [
      'a parent that names no entry',
      [HEADER, a, messageLine('b', 'nope', 'y'), compactionLine('c', 'b', null)],
      3,
    ],
    ['an empty-string parent', [HEADER, messageLine('a', '', 'x')], 2],
    ['a duplicate id', [HEADER, a, messageLine('a', 'a', 'y')], 3],
    ['a replacement that is not an array', [HEADER, a, compactionLine('c', 'a', null, '{"0":1}')], 3],
    ['a replacement holding null', [HEADER, a, compactionLine('c', 'a', null, '[null]')], 3],
    ['a replacement holding an array', [HEADER, a, compactionLine('c', 'a', null, '[[1]]')], 3],
    [
      'a replacement holding a bad message',
      [HEADER, a, compactionLine('c', 'a', null, '[{"role":"robot"}]')],
      3,
    ],
  ])('%s: ERR_SESSION_FORMAT on every path', async (_name, lines, line) => {
    await failsEverywhere(write(lines), 'ERR_SESSION_FORMAT', line);
  });

  it.each([
    ['itself', [HEADER, messageLine('a', null, 'x'), compactionLine('c', 'a', 'c')], 3],
    [
      'a later entry',
      [HEADER, messageLine('a', null, 'x'), compactionLine('c', 'a', 'd'), messageLine('d', 'c', 'y')],
      3,
    ],
    [
      'an entry on another branch',
      [HEADER, messageLine('a', null, 'x'), messageLine('b', null, 'y'), compactionLine('c', 'a', 'b')],
      4,
    ],
    ['no entry at all', [HEADER, messageLine('a', null, 'x'), compactionLine('c', 'a', 'ghost')], 3],
    [
      'an entry on another branch, after empty lines (before the header too)',
      [
        '',
        HEADER,
        '',
        messageLine('a', null, 'x'),
        '',
        '',
        messageLine('b', null, 'y'),
        '',
        compactionLine('c', 'a', 'b'),
      ],
      9,
    ],
  ])(
    'a compaction keeping from %s: ERR_SESSION_FORMAT on every path, naming its line',
    async (_name, lines, line) => {
      await failsEverywhere(write(lines), 'ERR_SESSION_FORMAT', line, /not on its branch/);
    },
  );

  it('a compaction keeping from a custom entry: the messages from there on are kept (pinned)', async () => {
    const path = write([
      HEADER,
      messageLine('a', null, 'x'),
      customLine('b', 'a', 'label', '1'),
      messageLine('c', 'b', 'y'),
      compactionLine('d', 'c', 'b'),
    ]);
    expect(texts(await loadsEverywhere(path))).toStrictEqual(['summary', 'y']);
  });

  it('several compactions: only the latest applies; a branch back to before them drops them all', async () => {
    const lines = [
      HEADER,
      messageLine('a', null, 'x'),
      messageLine('b', 'a', 'y'),
      compactionLine('c', 'b', 'b'),
      messageLine('d', 'c', 'z'),
      compactionLine('e', 'd', 'd', `[${userJson('summary 2')}]`),
      messageLine('f', 'e', 'w'),
    ];
    expect(texts(await loadsEverywhere(write(lines)))).toStrictEqual(['summary 2', 'z', 'w']);
    // The leaf is the last line: an older entry's new child makes the uncompacted branch current.
    expect(
      texts(await loadsEverywhere(write([...lines, messageLine('g', 'a', 'old branch')]))),
    ).toStrictEqual(['x', 'old branch']);
    // A branch from inside the compacted part of the latest branch: the first compaction applies again.
    expect(texts(await loadsEverywhere(write([...lines, messageLine('g', 'd', 'from d')])))).toStrictEqual([
      'summary',
      'y',
      'z',
      'from d',
    ]);
  });
});

describe('a writer branching on a file that lies', () => {
  const lines = [
    HEADER,
    messageLine('a', null, 'x'),
    `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":${userJson('y')},"parentId":null}`,
    messageLine('c', 'b', 'z'),
    compactionLine('d', 'c', 'c'),
    messageLine('e', 'd', 'w'),
  ];

  it('a lazily opened log loads (the lie is in history the compaction replaced); branching onto it is ERR_SESSION_FORMAT, the log stays usable', async () => {
    const path = write(lines);
    const log = await SessionLog.open(path);
    expect(texts({ conversation: log.conversation } as Loaded)).toStrictEqual(['summary', 'z', 'w']);
    expect(() => log.branch('b')).toThrow(expect.objectContaining({ code: 'ERR_SESSION_FORMAT' }));
    expect(log.leafId).toBe('e');
    log.branch('a');
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'after a' }] });
    expect(log.conversation.messages).toHaveLength(2);
    log.close();
    // The eager load (every line checked) refuses the file, naming the lying line.
    await expect(loadSession(path, { eager: true })).rejects.toMatchObject({
      code: 'ERR_SESSION_FORMAT',
      message: expect.stringContaining(`${path}:3:`),
    });
  });

  it('branching to an entry before the compaction gives what a reload gives, lazily and eagerly opened', async () => {
    const honest = write([...lines.slice(0, 2), messageLine('b', 'a', 'y'), ...lines.slice(3)]);
    for (const eager of [false, true]) {
      const copy = write(readFileSync(honest));
      const log = await SessionLog.open(copy, { eager });
      log.branch('b');
      expect(texts({ conversation: log.conversation } as Loaded)).toStrictEqual(['x', 'y']);
      log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'new' }] });
      const conversation = log.conversation;
      log.close();
      const reloaded = await loadsEverywhere(copy);
      expect(reloaded.conversation).toStrictEqual(conversation);
      expect(texts(reloaded)).toStrictEqual(['x', 'y', 'new']);
    }
  });
});

describe('bytes: BOM, NUL, CR, torn and long lines, bad UTF-8', () => {
  const a = messageLine('a', null, 'x');
  it('a UTF-8 byte order mark before the header is skipped on every path (a Windows editor adds one)', async () => {
    for (const lines of [
      [HEADER, a],
      [HEADER, a, compactionLine('c', 'a', null)],
    ]) {
      const path = write(`\ufeff${lines.join('\n')}\n`);
      const loaded = await loadsEverywhere(path);
      expect(loaded.header).toMatchObject({ id: 'h' });
      expect(loaded.entries).toHaveLength(lines.length - 1);
      // SessionLog appends after it; the file reloads the same.
      const log = await SessionLog.open(path);
      log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'more' }] });
      log.close();
      expect(readFileSync(path).subarray(0, 3)).toStrictEqual(Buffer.from([0xef, 0xbb, 0xbf]));
      expect((await loadsEverywhere(path)).entries).toHaveLength(lines.length);
    }
  });

  it('a byte order mark anywhere else is damage (ERR_SESSION_CORRUPT); a file holding only one is headerless', async () => {
    await failsEverywhere(write(`${HEADER}\n\ufeff${a}\n`), 'ERR_SESSION_CORRUPT', 2);
    const loaded = await loadsEverywhere(write(Buffer.from([0xef, 0xbb, 0xbf])));
    expect(loaded.entries).toHaveLength(0);
  });

  it('NUL bytes: a NUL line and a NUL inside an id are ERR_SESSION_CORRUPT; a NUL tail after a crash is torn', async () => {
    await failsEverywhere(write(`${HEADER}\n${a}\n\0\n`), 'ERR_SESSION_CORRUPT', 3);
    await failsEverywhere(
      write(`${HEADER}\n${messageLine('a\0', null, 'x').replace('\\u0000', '\0')}\n`),
      'ERR_SESSION_CORRUPT',
      2,
    );
    const torn = write(Buffer.concat([Buffer.from(`${HEADER}\n${a}\n`), Buffer.alloc(100)]));
    expect((await loadsEverywhere(torn)).entries).toHaveLength(1);
  });

  it('CR-only line ends: ERR_SESSION_CORRUPT everywhere, and SessionLog.open leaves the file as it was', async () => {
    const content = `${HEADER}\r${a}\r${compactionLine('c', 'a', null)}\r`;
    const path = write(content);
    await failsEverywhere(path, 'ERR_SESSION_CORRUPT', 1, /CR/);
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    expect(readFileSync(path, 'utf8')).toBe(content);
  });

  it('a last line that is no header and no JSON in a file without newlines: not a session file, left alone', async () => {
    const path = write('hello, this is some other text file without a newline');
    await failsEverywhere(path, 'ERR_SESSION_CORRUPT', 1, /not a session file/);
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    expect(readFileSync(path, 'utf8')).toBe('hello, this is some other text file without a newline');
    // A header cut short by a crash is still an empty session.
    expect((await loadsEverywhere(write('{"type":"sess'))).entries).toHaveLength(0);
  });

  it('CRLF line ends and a final line without a newline load as LF files do', async () => {
    const lines = [HEADER, a, compactionLine('c', 'a', null)];
    const lf = await loadsEverywhere(write(lines));
    expect(await loadsEverywhere(write(`${lines.join('\r\n')}\r\n`))).toStrictEqual(lf);
    const unterminated = await loadsEverywhere(write(lines.join('\n')));
    expect({ ...unterminated, warnings: [] }).toStrictEqual(lf);
    expect(unterminated.warnings).toMatchObject([{ kind: 'unterminated_line', line: 3 }]);
  });

  it('a torn line in the middle is ERR_SESSION_CORRUPT naming it, never skipped', async () => {
    const torn = '{"type":"message","id":"b","par';
    await failsEverywhere(write([HEADER, a, torn, messageLine('c', 'a', 'y')]), 'ERR_SESSION_CORRUPT', 3);
    await failsEverywhere(
      write([HEADER, a, torn, messageLine('c', 'a', 'y'), compactionLine('d', 'c', null)]),
      'ERR_SESSION_CORRUPT',
      3,
    );
  });

  it('1M empty lines: one warning per run of them (not a million objects), same on every path', async () => {
    const path = write(`${HEADER}\n${'\n'.repeat(1_000_000)}${a}\n\n${messageLine('b', 'a', 'y')}\n\r\n\n`);
    const loaded = await loadsEverywhere(path);
    expect(loaded.entries).toHaveLength(2);
    expect(loaded.warnings).toStrictEqual([
      {
        kind: 'empty_line',
        line: 2,
        message: `${path}:2: 1000000 empty lines skipped (lines 2-1000001)`,
      },
      { kind: 'empty_line', line: 1_000_003, message: `${path}:1000003: empty line skipped` },
      {
        kind: 'empty_line',
        line: 1_000_005,
        message: `${path}:1000005: 2 empty lines skipped (lines 1000005-1000006)`,
      },
    ]);
  });

  it('a line of maxLineBytes loads; one byte more is ERR_SESSION_CORRUPT on every path, at every read size', async () => {
    const lineOf = (bytes: number) => {
      const base = messageLine('b', 'a', '');
      return messageLine('b', 'a', 'y'.repeat(bytes - base.length));
    };
    const max = 300;
    for (const extra of [[], [compactionLine('c', 'b', null)]]) {
      const fits = write([HEADER, a, lineOf(max), ...extra]);
      const over = write([HEADER, a, lineOf(max + 1), ...extra]);
      for (const chunkBytes of [7, 64, max, max + 1, 4096]) {
        const ok = await sameOnEveryPath(fits, same, { maxLineBytes: max, chunkBytes });
        expect(ok).toHaveProperty('ok');
        const bad = await sameOnEveryPath(over, same, { maxLineBytes: max, chunkBytes });
        expect(bad).toMatchObject({
          code: 'ERR_SESSION_CORRUPT',
          message: expect.stringContaining(`${over}:3:`),
        });
      }
    }
  });

  it('invalid and overlong UTF-8 inside ids: read as U+FFFD with an invalid_utf8 warning, same on every path', async () => {
    for (const bad of [Buffer.from([0xff]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xe0, 0x80, 0xaf])]) {
      const id = Buffer.concat([Buffer.from('a'), bad]).toString('utf8');
      expect(id).toMatch(/^a\ufffd+$/);
      const path = write(
        Buffer.concat([
          Buffer.from(`${HEADER}\n{"type":"message","id":"a`),
          bad,
          Buffer.from(`","parentId":null,"timestamp":"t","message":${userJson('x')}}\n`),
          Buffer.from(`${compactionLine('c', id, null)}\n`),
        ]),
      );
      const o = await everyPath(path);
      const loaded = await loadsEverywhere(path);
      expect((loaded.entries as Array<{ id: string }>)[0]?.id).toBe(id);
      expect(o.lazy).toStrictEqual(o.eager);
      expect((await loadSession(path, { eager: true })).warnings.map((w) => w.kind)).toStrictEqual([
        'invalid_utf8',
      ]);
    }
  });
});
