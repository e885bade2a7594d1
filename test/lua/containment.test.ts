// Fast representative cases of Lua host containment (issue 13). The full hostile suite, each case in a child process
// with time/RSS bounds and in both isolation modes, is scripts/test-hostile-lua.mjs (npm run test:hostile-lua).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolUpdate } from '../../src/tool.js';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const MiB = 1024 * 1024;
const run = (e: Loaded, name: string, args: Record<string, unknown> = {}) =>
  e.source.call(name, args, ctx(e.workspace));
const ok = (text: string) => ({ ok: true, parts: [{ type: 'text', text }] });

describe('metatables never run in the host', () => {
  it('a result table with a raising or looping __index is read raw: a clear tool error, no PANIC', async () => {
    const e = await loadTools({
      'a.lua': tool('raises', 'return setmetatable({}, { __index = function() error("boom") end })'),
      'b.lua': tool(
        'loops',
        'return setmetatable({ text = "raw" }, { __index = function() while true do end end })',
      ),
      'c.lua': tool(
        'err_obj',
        'error(setmetatable({ code = 7 }, { __tostring = function() error("x") end }))',
      ),
    });
    expect(await run(e, 'raises')).toEqual({
      ok: false,
      error: expect.stringContaining("result table has neither 'text' nor 'attachments'"),
    });
    expect(await run(e, 'loops')).toEqual(ok('raw'));
    expect(await run(e, 'err_obj')).toEqual({ ok: false, error: 'error object: {"code":7}' });
  });

  it('a tool file returning such a table lands in loadErrors; the other files load', async () => {
    const e = await loadTools({
      'a_bad.lua': 'return setmetatable({}, { __index = function() error("boom") end })',
      'b_loop.lua': 'return setmetatable({}, { __index = function() while true do end end })',
      'c_ok.lua': tool('fine', 'return "fine"'),
    });
    expect(e.source.list().map((d) => d.name)).toEqual(['fine']);
    expect(e.source.loadErrors.map((l) => l.message)).toEqual([
      "a_bad.lua: 'name' must be a string matching ^[a-zA-Z0-9_-]{1,64}$",
      "b_loop.lua: 'name' must be a string matching ^[a-zA-Z0-9_-]{1,64}$",
    ]);
  });
});

describe('memory budget', () => {
  it('stops s = s .. s and table growth with a clear error, before allocating', async () => {
    const e = await loadTools(
      {
        'a.lua': tool('double', 'local s = "x"; while true do s = s .. s end'),
        'b.lua': tool('grow', 'local t = {}; local i = 0; while true do i = i + 1; t[i] = { i } end'),
        'c.lua': tool('pack', 'return #string.pack("c2000000000", "")'),
        'd.lua': tool(
          'swallow',
          'while true do pcall(function() local s = "x"; while true do s = s .. s end end) end',
        ),
        'e.lua': tool('fine', 'return #(("x"):rep(1000)) .. ""'),
      },
      { budgets: { memoryBytes: 8 * MiB } },
    );
    const memory = { ok: false, error: expect.stringMatching(/^memory budget exceeded \(8388608 bytes: /) };
    expect(await run(e, 'double')).toEqual(memory);
    expect(await run(e, 'grow')).toEqual(memory);
    expect(await run(e, 'pack')).toEqual({
      ok: false,
      error:
        'memory budget exceeded (8388608 bytes: this call allocated 0 bytes and asked for 1907.3 MiB more)',
    });
    expect(await run(e, 'swallow')).toEqual(memory);
    expect(await run(e, 'fine')).toEqual(ok('1000'));
  });

  it('bytes a host function hands to Lua count too (panto.read_file)', async () => {
    const e = await loadTools(
      {
        'r.lua': tool(
          'reads',
          'local t = {}; for i = 1, 10 do t[i] = assert(panto.read_file("big.bin")) end; return "kept"',
        ),
      },
      { budgets: { memoryBytes: 4 * MiB } },
    );
    await writeFile(path.join(e.workspace, 'big.bin'), Buffer.alloc(MiB));
    expect(await run(e, 'reads')).toEqual({
      ok: false,
      error: expect.stringMatching(/^memory budget exceeded/),
    });
  });

  it('the default is 256 MiB and the option is validated', async () => {
    const { DEFAULT_BUDGETS } = await import('../../src/lua/index.js');
    expect(DEFAULT_BUDGETS.memoryBytes).toBe(256 * MiB);
    await expect(loadTools({}, { budgets: { memoryBytes: 0 } })).rejects.toThrow(/memoryBytes/);
  });
});

describe('long library functions end at the budget', () => {
  it('patterns, table.move, %q, load and error() with a huge message stop at maxBlockingMs or the time budget', async () => {
    const e = await loadTools(
      {
        'a.lua': tool('unanchored', 'return tostring(("a"):rep(100000):find("a*a*a*b"))'),
        'b.lua': tool(
          'anchored',
          'return tostring(("a"):rep(28):find("^" .. ("a?"):rep(28) .. ("a"):rep(28) .. "$"))',
        ),
        'c.lua': tool('move', 'table.move({}, 1, 1e7, 2); return "moved"'),
        'd.lua': tool('quote', 'return #string.format("%q", ("\\n"):rep(4 * 1024 * 1024))'),
        'e.lua': tool('load', 'local f = load(("x=1 "):rep(1024 * 1024)); return tostring(f ~= nil)'),
        'f.lua': tool('sortspin', 'table.sort({3, 2, 1}, function(a, b) while true do end end)'),
      },
      { budgets: { maxBlockingMs: 100, wallClockMs: 5000 } },
    );
    const blocking = {
      ok: false,
      error: expect.stringMatching(
        /ran for more than 100 ms without giving the host a turn \(maxBlockingMs\)/,
      ),
    };
    for (const name of ['unanchored', 'anchored', 'move', 'quote', 'load', 'sortspin']) {
      expect([name, await run(e, name)]).toEqual([name, blocking]);
    }
  });

  it('string.rep builds big strings in a few steps (no per-copy loop)', async () => {
    const e = await loadTools({
      'a.lua': tool(
        'rep',
        'return #("ab"):rep(3000000, ",") .. " " .. ("ab"):rep(3, ",") .. " " .. ("x"):rep(4)',
      ),
    });
    expect(await run(e, 'rep')).toEqual(ok('8999999 ab,ab,ab xxxx'));
  });
});

describe('caps on everything that leaves Lua', () => {
  it('error text, return nil, <big>, print/panto.log lines and meta strings are cut at maxTextBytes', async () => {
    const e = await loadTools(
      {
        'a.lua': tool('err', 'error(("x"):rep(5000), 0)'),
        'b.lua': tool('nilbig', 'return nil, ("y"):rep(5000)'),
        'c.lua': tool('log', 'panto.log(("l"):rep(5000)); print(("p"):rep(5000)); return "logged"'),
        'd.lua': tool('meta', 'return { text = "t", meta = { blob = ("m"):rep(5000) } }'),
        'e.lua': tool('progress', 'panto.progress(("g"):rep(5000)); return "p"'),
      },
      { budgets: { maxTextBytes: 100 } },
    );
    expect(await run(e, 'err')).toEqual({
      ok: false,
      error: `${'x'.repeat(100)}\n[message truncated: 5000 bytes, the cap is 100]`,
    });
    expect(await run(e, 'nilbig')).toEqual({
      ok: false,
      error: `${'y'.repeat(100)}\n[message truncated: 5000 bytes, the cap is 100]`,
    });
    expect(await run(e, 'log')).toEqual(ok('logged'));
    const lines = e.logs.filter((l) => l.level === 'info').map((l) => l.message);
    expect(lines).toEqual([
      `${'l'.repeat(100)}\n[log line truncated: 5000 bytes, the cap is 100]`,
      `${'p'.repeat(100)}\n[log line truncated: 5000 bytes, the cap is 100]`,
    ]);
    const updates: ToolUpdate[] = [];
    const c = { ...ctx(e.workspace), update: (u: ToolUpdate) => updates.push(u) };
    expect(await e.source.call('progress', {}, c)).toEqual(ok('p'));
    expect(updates).toEqual([
      { message: `${'g'.repeat(100)}\n[progress message truncated: 5000 bytes, the cap is 100]` },
    ]);
    expect(await run(e, 'meta')).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 't' }],
      meta: { blob: `${'m'.repeat(100)}\n[meta.blob truncated: 5000 bytes, the cap is 100]` },
    });
  });
});

describe('fairness', () => {
  it('the time budget counts a call’s own run time: 8 calls of ~0.15 s each finish under a 1 s budget', async () => {
    const e = await loadTools(
      { 'w.lua': tool('work', 'local n = 0; for i = 1, args.n do n = n + 1 end; return "done"') },
      { budgets: { wallClockMs: 1000, instructions: 2e9 }, maxConcurrentCalls: 8 },
    );
    // Calibrate: loop count for ~0.15 s of one call alone (after a warm-up). Together the 8 calls need ~1.2 s of wall
    // time, which a budget counted from submission would not allow.
    await run(e, 'work', { n: 1_000_000 });
    const t0 = performance.now();
    expect(await run(e, 'work', { n: 1_000_000 })).toEqual(ok('done'));
    const n = Math.round((1_000_000 * 150) / Math.max(1, performance.now() - t0));
    const results = await Promise.all(Array.from({ length: 8 }, () => run(e, 'work', { n })));
    expect(results).toEqual(Array.from({ length: 8 }, () => ok('done')));
  });

  it('calls beyond maxConcurrentCalls wait in a queue (FIFO) and an abort while queued ends the call', async () => {
    const e = await loadTools(
      { 'w.lua': tool('slow', 'local n = 0; for i = 1, 3e5 do n = n + 1 end; return args.tag') },
      { maxConcurrentCalls: 1 },
    );
    const ac = new AbortController();
    const order: string[] = [];
    const first = run(e, 'slow', { tag: 'a' }).then((r) => order.push(r.ok ? 'a' : 'a-failed'));
    const queued = e.source.call('slow', { tag: 'b' }, ctx(e.workspace, 'c2', ac.signal));
    const third = run(e, 'slow', { tag: 'c' }).then((r) => order.push(r.ok ? 'c' : 'c-failed'));
    ac.abort();
    expect(await queued).toEqual({ ok: false, error: 'aborted before the tool started' });
    await Promise.all([first, third]);
    expect(order).toEqual(['a', 'c']);
  });

  it('the event loop keeps turning while 10 busy calls run (10 ms timer fires between slices)', async () => {
    const e = await loadTools(
      { 'spin.lua': tool('spin', 'while true do end') },
      { budgets: { wallClockMs: 150 }, maxConcurrentCalls: 10 },
    );
    let ticks = 0;
    let ticksBeforeFirstEnd = -1;
    const timer = setInterval(() => ticks++, 10);
    const calls = Array.from({ length: 10 }, () => run(e, 'spin'));
    void Promise.race(calls).then(() => {
      ticksBeforeFirstEnd = ticks;
    });
    const results = await Promise.all(calls);
    clearInterval(timer);
    expect(results).toEqual(
      Array.from({ length: 10 }, () => ({
        ok: false,
        error: expect.stringMatching(/^time budget exceeded \(150 ms\) at \w+\.lua:\d+$/),
      })),
    );
    // The timer ran while all ten were still busy (the stall itself is measured by bench:lua and the hostile suite).
    expect(ticksBeforeFirstEnd).toBeGreaterThan(1);
  });
});
