import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallBlock } from '../../src/conversation.js';
import { LuaToolSource } from '../../src/lua/index.js';
import { dispatchToolCalls } from '../../src/tools/index.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures', 'media');

let ws: string;
let tools: LuaToolSource;
let pdf: Buffer;

beforeAll(async () => {
  ws = await mkdtemp(path.join(tmpdir(), 'panto-lua-e2e-'));
  const dir = await mkdtemp(path.join(tmpdir(), 'panto-lua-e2e-tools-'));
  await writeFile(
    path.join(dir, 'attach.lua'),
    `return { name = "attach", description = "attach a file", capabilities = { "read_file" },
      parameters = { type = "object", properties = { path = { type = "string" } }, required = { "path" } },
      handler = function(args)
        local data, err = panto.read_file(args.path)
        if not data then return nil, err end
        return { text = "attached", attachments = { { data = data, media_type = "application/pdf", name = "big.pdf" } },
                 meta = { path = args.path } }
      end }`,
  );
  await writeFile(
    path.join(dir, 'steps.lua'),
    `return { name = "steps", description = "three steps with progress",
      parameters = { type = "object", properties = {} },
      handler = function()
        for i = 1, 3 do panto.progress("step " .. i, i / 3) end
        local ok, err = pcall(panto.progress, "bad", 2)
        return "done; " .. tostring(ok) .. " " .. tostring(err)
      end }`,
  );
  tools = await LuaToolSource.fromDir(dir, { includeBuiltins: true });
  // A 10 MB PDF-like payload: a PDF header, random bytes, an EOF marker.
  pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(10 * 1024 * 1024), Buffer.from('\n%%EOF\n')]);
  await writeFile(path.join(ws, 'big.pdf'), pdf);
  await copyFile(path.join(FIXTURES, 'png-rgb.png'), path.join(ws, 'pic.png'));
  await writeFile(path.join(ws, 'notes.txt'), 'one\ntwo\n');
});

const calls = (...c: Array<[string, Record<string, unknown>]>): ToolCallBlock[] =>
  c.map(([name, input], i) => ({ type: 'tool_call', id: `t${i}`, name, input }));

describe('Lua tools through dispatchToolCalls', () => {
  it('a 10 MB attachment from Lua reaches a stored part byte-exact', async () => {
    const [res] = await dispatchToolCalls(calls(['attach', { path: 'big.pdf' }]), {
      tools,
      workspaceRoot: ws,
    });
    expect(res?.isError).toBe(false);
    expect(res?.meta).toEqual({ path: 'big.pdf' });
    const doc = res?.parts.find((p) => p.type === 'document');
    expect(doc?.type).toBe('document');
    if (doc?.type !== 'document') return;
    expect(doc.mediaType).toBe('application/pdf');
    const bytes = Buffer.from(doc.data, 'base64');
    expect(bytes.byteLength).toBe(pdf.byteLength);
    expect(Buffer.compare(bytes, pdf)).toBe(0);
  });

  it('read.lua: text, image and errors become results the model can read', async () => {
    const results = await dispatchToolCalls(
      calls(
        ['read', { path: 'notes.txt' }],
        ['read', { path: 'pic.png' }],
        ['read', { path: 'missing' }],
        ['read', {}],
      ),
      { tools, workspaceRoot: ws },
    );
    expect(results.map((r) => r.isError)).toEqual([false, false, true, true]);
    expect(results[0]?.parts).toEqual([{ type: 'text', text: '     1\tone\n     2\ttwo' }]);
    const image = results[1]?.parts.find((p) => p.type === 'image');
    expect(image).toMatchObject({ type: 'image', mediaType: 'image/png' });
    expect(results[1]?.meta).toEqual({ path: 'pic.png' });
    if (image?.type === 'image') {
      expect(Buffer.from(image.data, 'base64').subarray(0, 8)).toEqual(
        (await readFile(path.join(ws, 'pic.png'))).subarray(0, 8),
      );
    }
    expect(results[2]?.parts).toEqual([
      { type: 'text', text: expect.stringContaining('missing: no such file or directory') },
    ]);
  });

  it('panto.progress reaches the host as tool_call_update events (never the model)', async () => {
    const updates: unknown[] = [];
    const [result] = await dispatchToolCalls(calls(['steps', {}]), {
      tools,
      workspaceRoot: ws,
      onEvent: (e) => {
        if (e.type === 'tool_call_update') updates.push(e.update);
      },
    });
    expect(updates).toEqual([
      { message: 'step 1', progress: 1 / 3 },
      { message: 'step 2', progress: 2 / 3 },
      { message: 'step 3', progress: 1 },
    ]);
    expect(result?.parts).toEqual([
      { type: 'text', text: expect.stringMatching(/^done; false .*fraction must be in \[0, 1\]/) },
    ]);
  });
});
