import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MediaResultPart } from '../../src/tool.js';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const TOOLS: Record<string, string> = {
  'shapes.lua': tool(
    'shapes',
    `
  local k = args.kind
  if k == "string" then return "plain text" end
  if k == "text" then return { text = "only text" } end
  if k == "meta" then return { text = "t", meta = { path = "a/b.txt", n = 3, f = 1.5, ok = true, list = {1, 2, 3}, nested = { x = "y" } } } end
  if k == "attach" then
    return { text = "two files", attachments = {
      { data = "\\0\\1\\2\\255", media_type = "image/png", name = "a.png" },
      { data = "%PDF-1.4" },
    } }
  end
  if k == "attach-only" then return { attachments = { { data = "xyz" } } } end
  if k == "all-bytes" then
    local t = {}
    for i = 0, 255 do t[#t + 1] = string.char(i) end
    return { attachments = { { data = table.concat(t) } } }
  end
  if k == "nil" then return nil end
  if k == "none" then return end
  if k == "number" then return 42 end
  if k == "boolean" then return true end
  if k == "function" then return print end
  if k == "nil-err" then return nil, "file not found: x" end
  if k == "empty" then return {} end
  if k == "no-data" then return { attachments = { { data = "ok" }, { media_type = "image/png" } } } end
  if k == "data-number" then return { attachments = { { data = 12 } } } end
  if k == "bad-text" then return { text = 5 } end
  if k == "bad-attachments" then return { attachments = "x" } end
  if k == "bad-media-type" then return { attachments = { { data = "x", media_type = true } } } end
  if k == "bad-meta" then return { text = "x", meta = "m" } end
  if k == "meta-function" then return { text = "x", meta = { f = print } } end
  if k == "meta-cycle" then local m = {}; m.self = m; return { text = "x", meta = m } end
  if k == "unknown-field" then return { txt = "typo" } end
  if k == "unknown-attachment-field" then return { attachments = { { data = "x", mediatype = "image/png" } } } end
  if k == "sparse" then return { attachments = { [1] = { data = "a" }, [3] = { data = "c" } } } end
  if k == "long-text" then return string.rep("é", 600) end
  if k == "big" then
    local parts = {}
    for i = 1, 10 * 1024 do parts[i] = args.chunk end
    return { text = "big", attachments = { { data = table.concat(parts), media_type = "application/pdf" } } }
  end
  if k == "file" then
    local data, err = panto.read_file(args.path)
    if not data then return nil, err end
    return { attachments = { { data = data } } }
  end
  if k == "error" then error("boom") end
  if k == "error-table" then error({ code = 7 }) end
  if k == "error-nolevel" then error("plain message", 0) end
  return "unknown kind"
`,
  ),
};

let env: Loaded;
const call = (args: Record<string, unknown>) => env.source.call('shapes', args, ctx(env.workspace));

beforeAll(async () => {
  // Building 15 MB in Lua is one long table.concat; on a busy shared machine it can take seconds of wall time, which
  // is not what these tests are about (maxBlockingMs is tested in containment.test.ts).
  env = await loadTools(TOOLS, {
    budgets: { maxTextBytes: 1000, maxBlockingMs: 60_000, wallClockMs: 60_000 },
  });
  expect(env.source.loadErrors).toEqual([]);
});

describe('return shapes', () => {
  it('a string is one text part', async () => {
    expect(await call({ kind: 'string' })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'plain text' }],
    });
  });

  it('{text} is one text part', async () => {
    expect(await call({ kind: 'text' })).toEqual({ ok: true, parts: [{ type: 'text', text: 'only text' }] });
  });

  it('meta is converted to JSON values and kept beside the parts', async () => {
    expect(await call({ kind: 'meta' })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 't' }],
      meta: { path: 'a/b.txt', n: 3, f: 1.5, ok: true, list: [1, 2, 3], nested: { x: 'y' } },
    });
  });

  it('attachments follow the text part, in order, with hints and names', async () => {
    const r = await call({ kind: 'attach' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.parts).toHaveLength(3);
    expect(r.parts[0]).toEqual({ type: 'text', text: 'two files' });
    const [a, b] = r.parts.slice(1) as MediaResultPart[];
    expect(a?.type).toBe('media');
    expect([...(a?.data ?? [])]).toEqual([0, 1, 2, 255]);
    expect(a?.mediaType).toBe('image/png');
    expect(a?.name).toBe('a.png');
    expect(Buffer.from(b?.data ?? []).toString('latin1')).toBe('%PDF-1.4');
    expect(b?.mediaType).toBeUndefined();
    expect(b?.name).toBeUndefined();
  });

  it('attachments without text give media parts only', async () => {
    const r = await call({ kind: 'attach-only' });
    expect(r.ok && r.parts.map((p) => p.type)).toEqual(['media']);
  });

  it('every byte value 0x00-0xFF survives', async () => {
    const r = await call({ kind: 'all-bytes' });
    const part = r.ok ? (r.parts[0] as MediaResultPart) : undefined;
    expect([...(part?.data ?? [])]).toEqual(Array.from({ length: 256 }, (_, i) => i));
  });

  it('a 10 MB binary attachment built in Lua arrives byte-exact', async () => {
    const chunk = randomBytes(1024).toString('latin1');
    // Args are JSON: pass 1 KiB of bytes as a latin1-decoded string -> Lua gets the UTF-8 of it, so compare to that.
    const r = await call({ kind: 'big', chunk });
    const part = r.ok ? (r.parts[1] as MediaResultPart) : undefined;
    const expected = Buffer.from(chunk.repeat(10 * 1024), 'utf8');
    expect(part?.data.byteLength).toBe(expected.byteLength);
    expect(Buffer.compare(Buffer.from(part?.data ?? []), expected)).toBe(0);
  });

  it('a 10 MB binary file read by Lua arrives byte-exact', async () => {
    const bytes = randomBytes(10 * 1024 * 1024);
    await writeFile(path.join(env.workspace, 'blob.bin'), bytes);
    const r = await call({ kind: 'file', path: 'blob.bin' });
    const part = r.ok ? (r.parts[0] as MediaResultPart) : undefined;
    expect(part?.data.byteLength).toBe(bytes.byteLength);
    expect(Buffer.compare(Buffer.from(part?.data ?? []), bytes)).toBe(0);
  });

  it('nil, "message" is a tool error with that message', async () => {
    expect(await call({ kind: 'nil-err' })).toEqual({ ok: false, error: 'file not found: x' });
  });

  it('text over the cap is cut with a note', async () => {
    const r = await call({ kind: 'long-text' });
    const text = r.ok && r.parts[0]?.type === 'text' ? r.parts[0].text : '';
    expect(text.startsWith('é'.repeat(500))).toBe(true);
    expect(text).toContain('[output truncated: 1200 bytes, the cap is 1000]');
    expect(text).not.toContain('\uFFFD');
  });
});

describe('bad results are exact tool errors', () => {
  const cases: Array<[string, string]> = [
    ['nil', 'handler returned nothing (nil); return a string or a table {text=..., attachments=...}'],
    ['none', 'handler returned nothing (nil); return a string or a table {text=..., attachments=...}'],
    ['number', 'handler returned a number; return a string or a table {text=..., attachments=...}'],
    ['boolean', 'handler returned a boolean; return a string or a table {text=..., attachments=...}'],
    ['function', 'handler returned a function; return a string or a table {text=..., attachments=...}'],
    [
      'empty',
      "result table has neither 'text' nor 'attachments' nor 'structured'; return a string or a table {text=..., attachments=...}",
    ],
    ['no-data', "attachments[2] has no 'data' string"],
    ['data-number', "attachments[1] has no 'data' string"],
    ['bad-text', "'text' must be a string, got number"],
    ['bad-attachments', "'attachments' must be a list (table) of attachments, got string"],
    ['bad-media-type', 'attachments[1].media_type must be a string, got boolean'],
    ['bad-meta', "'meta' must be a table, got string"],
    ['meta-function', 'meta.f is a function, which has no JSON form'],
    ['meta-cycle', 'meta.self refers back to itself (a cycle)'],
    ['unknown-field', "result table has unknown field 'txt' (expected text, attachments, meta, structured)"],
    [
      'unknown-attachment-field',
      "attachments[1] has unknown field 'mediatype' (expected data, media_type, name)",
    ],
    ['sparse', "'attachments' must be a list {a1, a2, ...} with no holes and no named keys"],
  ];
  for (const [kind, error] of cases) {
    it(`${kind}: ${error}`, async () => {
      expect(await call({ kind })).toEqual({ ok: false, error });
    });
  }

  it('a Lua error becomes "message (file:line)" and the traceback goes to the log', async () => {
    const r = await call({ kind: 'error' });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^boom \(shapes\.lua:\d+\)$/) });
    const entry = env.logs.find((e) => e.level === 'error' && e.message.includes('boom'));
    expect(entry?.traceback).toContain('stack traceback');
    expect(entry?.tool).toBe('shapes');
    expect(entry?.toolCallId).toBe('call-1');
  });

  it('error(msg, 0) gives the message alone; an error table is shown as JSON', async () => {
    expect(await call({ kind: 'error-nolevel' })).toEqual({ ok: false, error: 'plain message' });
    expect(await call({ kind: 'error-table' })).toEqual({ ok: false, error: 'error object: {"code":7}' });
  });

  it('an attachment total over the cap is an error', async () => {
    const small = await loadTools(TOOLS, { budgets: { maxAttachmentBytes: 3 } });
    const r = await small.source.call('shapes', { kind: 'attach' }, ctx(small.workspace));
    expect(r).toEqual({
      ok: false,
      error: 'attachments total more than 3 bytes (the per-call cap); attachments[1] brings it to 4',
    });
  });
});

describe('arguments', () => {
  it('arguments nested too deep to convert give an error result, not a rejection', async () => {
    let deep: Record<string, unknown> = { kind: 'string' };
    for (let i = 0; i < 100; i++) deep = { kind: 'string', inner: deep };
    expect(await call(deep)).toEqual({
      ok: false,
      error: 'internal error in the Lua host: value nested deeper than 64 levels',
    });
  });
});
