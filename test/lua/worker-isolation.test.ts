// isolation: 'worker' — the Lua VM in a worker thread. Uses the built worker script (dist/lua/lua-worker.js; `npm test`
// runs build:ts first).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LuaLogEntry, LuaToolSource } from '../../src/lua/index.js';
import type { MediaResultPart, ToolUpdate } from '../../src/tool.js';
import { ctx, tool } from './lua-test-helpers.js';

let dir: string;
let ws: string;
let source: LuaToolSource;
const logs: LuaLogEntry[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'panto-lua-worker-'));
  ws = await mkdtemp(path.join(tmpdir(), 'panto-lua-worker-ws-'));
  await writeFile(path.join(ws, 'a.bin'), Buffer.from([0, 1, 2, 255]));
  const files: Record<string, string> = {
    'echo.lua': tool(
      'echo',
      'panto.log("echo " .. args.text); panto.progress("half", 0.5); return args.text',
    ),
    'attach.lua': tool(
      'attach',
      'return { text = "bytes", attachments = { { data = assert(panto.read_file("a.bin")) } }, meta = { n = 1 } }',
    ),
    'spin.lua': tool('spin', 'while true do end'),
    'stall.lua': tool('stall', 'return tostring(("a"):rep(100000):find("a*a*a*b"))'),
    'bad.lua': 'return 42',
  };
  for (const [name, src] of Object.entries(files)) await writeFile(path.join(dir, name), src);
  source = await LuaToolSource.fromDir(dir, {
    isolation: 'worker',
    workspaceRoot: ws,
    budgets: { wallClockMs: 300 },
    log: (e) => logs.push(e),
    worker: { watchdogMs: 400 },
  });
});
afterAll(() => source.close());

describe("isolation: 'worker'", () => {
  it('lists the tools and the load errors, like in-thread', () => {
    expect(source.isolation).toBe('worker');
    expect(source.list().map((d) => d.name)).toEqual(['attach', 'echo', 'spin', 'stall']);
    expect(source.loadErrors).toEqual([
      {
        file: path.join(dir, 'bad.lua'),
        message:
          'bad.lua: a tool file must return a table {name, description, parameters, handler} (or a list of them); it returned a number',
      },
    ]);
  });

  it('serves calls with logs, progress updates and transferred attachment bytes', async () => {
    const updates: ToolUpdate[] = [];
    const c = { ...ctx(ws, 'w1'), update: (u: ToolUpdate) => updates.push(u) };
    expect(await source.call('echo', { text: 'hi' }, c)).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'hi' }],
    });
    expect(updates).toEqual([{ message: 'half', progress: 0.5 }]);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'info', message: 'echo hi', tool: 'echo' }));
    const r = await source.run('attach');
    expect(r.ok && r.meta).toEqual({ n: 1 });
    const media = r.ok ? (r.parts[1] as MediaResultPart) : undefined;
    expect(Buffer.from(media?.data ?? [])).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('budgets hold inside the worker; an abort reaches it', async () => {
    expect(await source.run('spin')).toEqual({ ok: false, error: 'time budget exceeded (300 ms)' });
    const ac = new AbortController();
    const pending = source.run('spin', {}, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await pending).toEqual({ ok: false, error: 'aborted' });
  });

  it('the watchdog terminates a worker whose loop stalls, fails the calls in flight, and a new worker serves', async () => {
    const stalled = await LuaToolSource.fromDir(dir, {
      isolation: 'worker',
      workspaceRoot: ws,
      budgets: { wallClockMs: 60_000, maxBlockingMs: 60_000 },
      worker: { watchdogMs: 300 },
    });
    try {
      const stall = stalled.run('stall');
      await new Promise((r) => setTimeout(r, 100)); // the worker is now stuck inside the pattern match
      const [a, b] = await Promise.all([stall, stalled.run('echo', { text: 'queued' })]);
      expect(a).toEqual({ ok: false, error: expect.stringContaining('the Lua worker stopped answering') });
      expect(b).toEqual({ ok: false, error: expect.stringContaining('the Lua worker stopped answering') });
      expect(await stalled.run('echo', { text: 'again' })).toEqual({
        ok: true,
        parts: [{ type: 'text', text: 'again' }],
      });
    } finally {
      await stalled.close();
    }
    expect(await stalled.run('echo', { text: 'x' })).toEqual({
      ok: false,
      error: 'the Lua tool source was closed',
    });
  });
});
