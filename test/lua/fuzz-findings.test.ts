/**
 * Regression tests for what test/fuzz/fuzz-lua.mjs found, each the fuzzer's input shrunk by hand (seed and case in the
 * test name). Real fengari, real LuaToolSource, small budgets.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const MAX_TEXT = 4096;
/** The note capText appends after cut text: `\n[what truncated: N bytes, the cap is M]`. */
const NOTE = /\n\[[a-z. ]+ truncated: \d+ bytes( as text)?, the cap is 4096\]$/;

/** UTF-8 size of `text` without its truncation note. */
function bodyBytes(text: string): number {
  return Buffer.byteLength(text.replace(NOTE, ''));
}

describe('fuzz findings: text of invalid UTF-8 stays within maxTextBytes (seed 3 case 358)', () => {
  let loaded: Loaded;
  beforeAll(async () => {
    loaded = await loadTools(
      {
        'bad-utf8.lua': tool(
          'bad_utf8',
          `
  local s = ("\\xff"):rep(args.n)
  if args.where == "result" then return s end
  if args.where == "error" then error(s, 0) end
  if args.where == "nil-err" then return nil, s end
  if args.where == "meta" then return { text = "m", meta = { s = s } } end
  if args.where == "log" then panto.log(s); return "logged" end
  if args.where == "progress" then panto.progress(s); return "progressed" end
`,
        ),
      },
      { budgets: { maxTextBytes: MAX_TEXT } },
    );
  });
  afterAll(() => loaded.source.close());

  const run = (where: string, n: number, update?: (u: { message?: string }) => void) =>
    loaded.source.call('bad_utf8', { where, n }, { ...ctx(loaded.workspace), update: update ?? (() => {}) });

  it('a returned string of 4096 invalid bytes (under the cap as bytes) is cut to 4096 bytes of text', async () => {
    const r = await run('result', MAX_TEXT);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const part = r.parts[0];
    expect(part?.type).toBe('text');
    const text = part?.type === 'text' ? part.text : '';
    expect(bodyBytes(text)).toBeLessThanOrEqual(MAX_TEXT);
    expect(text).toMatch(/\n\[output truncated: 12288 bytes as text, the cap is 4096\]$/);
  });

  it('a longer string of invalid bytes is cut to the cap too', async () => {
    const r = await run('result', 3 * MAX_TEXT);
    const text = r.ok && r.parts[0]?.type === 'text' ? r.parts[0].text : '';
    expect(bodyBytes(text)).toBeLessThanOrEqual(MAX_TEXT);
    expect(text).toMatch(/\[output truncated: 12288 bytes, the cap is 4096\]$/);
  });

  it('error messages, nil-err messages and meta strings of invalid bytes stay within the cap', async () => {
    for (const where of ['error', 'nil-err']) {
      const r = await run(where, MAX_TEXT);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(bodyBytes(r.error)).toBeLessThanOrEqual(MAX_TEXT);
    }
    const m = await run('meta', MAX_TEXT);
    expect(m.ok).toBe(true);
    if (m.ok) expect(bodyBytes(String(m.meta?.s))).toBeLessThanOrEqual(MAX_TEXT);
  });

  it('log lines and progress messages of invalid bytes stay within the cap', async () => {
    const r = await run('log', MAX_TEXT);
    expect(r.ok).toBe(true);
    const line = loaded.logs.find((e) => e.level === 'info' && e.message.startsWith('\ufffd'));
    expect(line).toBeDefined();
    expect(bodyBytes(line?.message ?? '')).toBeLessThanOrEqual(MAX_TEXT);
    const messages: string[] = [];
    await run('progress', MAX_TEXT, (u) => messages.push(u.message ?? ''));
    expect(messages).toHaveLength(1);
    expect(bodyBytes(messages[0] ?? '')).toBeLessThanOrEqual(MAX_TEXT);
  });
});

describe('fuzz findings: a budget overrun inside an instruction after a recovered error (seed 3 case 353)', () => {
  // The fuzzer's case: many pcalls, then an overrun in the middle of an instruction. Shrunk: a pcall recovers (the
  // thread continues in fengari's `unroll`), then the memory budget runs out inside `..` (a JS exception from the
  // accounting hook, with the frame full). fengari could not push its native-error handler, and lua_resume failed
  // its own assertion: "internal error in the Lua host: assertion failed". The string size that puts the overrun
  // exactly there depends on fengari's accounting, so the test walks a window of sizes around the edge.
  let loaded: Loaded;
  beforeAll(async () => {
    loaded = await loadTools(
      {
        'edge.lua': tool(
          'edge',
          `
  pcall(error, "recovered")
  local s = ("x"):rep(args.n)
  local ok, e = pcall(os.time, { year = 1e9, month = 1, day = 1 })
  return "survived " .. tostring(ok) .. " " .. tostring(e)
`,
        ),
      },
      { budgets: { memoryBytes: 256 * 1024 } },
    );
  });
  afterAll(() => loaded.source.close());

  it('ends with the memory budget message (or survives) at every size near the edge, never a VM assertion', async () => {
    const errors = new Set<string>();
    let survived = 0;
    for (let n = 129_900; n <= 130_400; n += 4) {
      const r = await loaded.source.call('edge', { n }, ctx(loaded.workspace));
      if (r.ok) survived++;
      else errors.add(r.error.replace(/[\d.]+ (bytes|MiB)/g, 'N $1'));
    }
    expect(survived).toBeGreaterThan(0);
    expect([...errors]).toEqual([
      'memory budget exceeded (N bytes: this call allocated N bytes and asked for N bytes more)',
    ]);
  });
});

describe('review finding: meta keys and truncation notes stay within maxTextBytes', () => {
  let loaded: Loaded;
  beforeAll(async () => {
    loaded = await loadTools(
      {
        'meta-keys.lua': tool(
          'meta_keys',
          `
  if args.kind == "long-key" then
    return { text = "m", meta = { [("k"):rep(1e5)] = ("\\xff"):rep(10) } }
  end
  if args.kind == "long-path" then
    -- Keys at the cap, nested: the path to the innermost string is ~40 KB.
    local k = ("k"):rep(4096)
    return { text = "m", meta = { [k] = { [k] = { [k] = { [k] = { [k] = { [k] = { [k] = { [k] = { [k] = { s = ("\\xff"):rep(4096) } } } } } } } } } } }
  end
  if args.kind == "key-at-cap" then
    return { text = "m", meta = { [("k"):rep(4096)] = 1 } }
  end
`,
        ),
      },
      { budgets: { maxTextBytes: MAX_TEXT } },
    );
  });
  afterAll(() => loaded.source.close());

  const run = (kind: string) => loaded.source.call('meta_keys', { kind }, ctx(loaded.workspace));

  it('a key longer than the cap is refused with a note naming its size (was 504,175 bytes of meta)', async () => {
    const r = await run('long-key');
    expect(r).toEqual({
      ok: false,
      error: expect.stringContaining('meta has a key of 100000 bytes; keys are at most 4096 bytes'),
    });
    if (!r.ok) expect(Buffer.byteLength(r.error)).toBeLessThan(1000);
  });

  it('a key at the cap is kept', async () => {
    const r = await run('key-at-cap');
    expect(r.ok && r.meta).toEqual({ ['k'.repeat(MAX_TEXT)]: 1 });
  });

  it('the truncation note quotes at most 200 characters of the path', async () => {
    const r = await run('long-path');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    let node: unknown = r.meta;
    for (let i = 0; i < 9; i++) node = (node as Record<string, unknown>)['k'.repeat(MAX_TEXT)];
    const s = (node as { s: string }).s;
    const note = s.slice(s.lastIndexOf('\n['));
    expect(note).toMatch(/^\n\[meta\.k+\.\.\.k+\.s truncated: 12288 bytes as text, the cap is 4096\]$/);
    expect(note.length).toBeLessThan(260);
    expect(Buffer.byteLength(JSON.stringify(r.meta))).toBeLessThan(10 * MAX_TEXT + 2000);
  });
});
