import { beforeAll, describe, expect, it } from 'vitest';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const TOOLS: Record<string, string> = {
  'spin.lua': tool('spin', 'while true do end'),
  'pcall_spin.lua': tool('pcall_spin', "pcall(error, 'x'); while true do end"),
  'xpcall_spin.lua': tool('xpcall_spin', "xpcall(error, function(m) return m end, 'x'); while true do end"),
  'catch_all.lua': tool('catch_all', 'while true do pcall(function() while true do end end) end'),
  'co_pcall_spin.lua': tool(
    'co_pcall_spin',
    "local co = coroutine.wrap(function() pcall(error, 'x'); while true do end end); co()",
  ),
  'recurse.lua': tool('recurse', 'local function f(n) return f(n + 1) + 1 end; return tostring(f(1))'),
  'recurse_pcall.lua': tool(
    'recurse_pcall',
    'local function f() local ok, e = pcall(f); error(e, 0) end; f()',
  ),
  'rep_bomb.lua': tool('rep_bomb', 'local s = string.rep("x", 1 << 30); return #s .. ""'),
  'rep_method.lua': tool('rep_method', 'return #(("ab"):rep(100000000, ",")) .. ""'),
  'rep_ok.lua': tool('rep_ok', 'return #(("ab"):rep(1000)) .. ""'),
  'busy.lua': tool('busy', 'local n = 0; for i = 1, args.n do n = n + 1 end; return tostring(n)'),
  'pattern.lua': tool('pattern', 'return tostring(string.rep("a", args.n):find(args.p))'),
  'after_budget.lua': tool('after_budget', 'return "still alive"'),
  'xpcall_handler.lua': tool(
    'xpcall_handler',
    'xpcall(function() while true do end end, function(m) for _ = 1, 3e7 do end; print("handler finished"); return m end)',
  ),
  'rep_empty.lua': tool(
    'rep_empty',
    'return #string.rep("", math.maxinteger) .. "," .. #string.rep("", math.maxinteger, "")',
  ),
};

let env: Loaded;
beforeAll(async () => {
  env = await loadTools(TOOLS, { budgets: { instructions: 2_000_000, wallClockMs: 20_000 } });
  expect(env.source.loadErrors).toEqual([]);
});
const run = (name: string, args: Record<string, unknown> = {}, e: Loaded = env) =>
  e.source.call(name, args, ctx(e.workspace));

/** A budget error names where the tool was (`… at spin.lua:3`). */
const at = (reason: string) =>
  expect.stringMatching(new RegExp(`^${reason.replace(/[()]/g, '\\$&')} at \\w+\\.lua:\\d+$`));
const INSTRUCTIONS = { ok: false, error: at('instruction budget exceeded (2000000 Lua instructions)') };

describe('instruction budget', () => {
  it('stops an infinite loop', async () => {
    expect(await run('spin')).toEqual(INSTRUCTIONS);
  });

  it("stops pcall(error,'x'); while true do end (fengari's pcall hook bug)", async () => {
    expect(await run('pcall_spin')).toEqual(INSTRUCTIONS);
    expect(await run('xpcall_spin')).toEqual(INSTRUCTIONS);
  });

  it('stops the same inside a coroutine the tool created', async () => {
    expect(await run('co_pcall_spin')).toEqual(INSTRUCTIONS);
  });

  it('also binds the xpcall message handler that runs after the overrun', async () => {
    // The budget error is raised from inside the hook, where fengari has hooks switched off.
    expect(await run('xpcall_handler')).toEqual(INSTRUCTIONS);
    expect(env.logs.map((e) => e.message)).not.toContain('handler finished');
  });

  it('cannot be caught by pcall for good', async () => {
    expect(await run('catch_all')).toEqual(INSTRUCTIONS);
  });

  it('the host keeps serving calls afterwards', async () => {
    expect(await run('after_budget')).toEqual({ ok: true, parts: [{ type: 'text', text: 'still alive' }] });
  });
});

describe('deep recursion', () => {
  it('Lua recursion ends with a stack overflow error', async () => {
    expect(await run('recurse')).toEqual({ ok: false, error: expect.stringContaining('stack overflow') });
  });

  it('recursion through pcall ends with an error, not a crash', async () => {
    const r = await run('recurse_pcall');
    expect(r.ok).toBe(false);
    expect(await run('after_budget')).toEqual({ ok: true, parts: [{ type: 'text', text: 'still alive' }] });
  });
});

describe('string.rep cap', () => {
  it('refuses a string.rep bomb before allocating', async () => {
    expect(await run('rep_bomb')).toEqual({
      ok: false,
      error: expect.stringContaining(
        'string.rep would build 1073741824 bytes, over the sandbox cap of 67108864 bytes',
      ),
    });
    expect(await run('rep_method')).toEqual({
      ok: false,
      error: expect.stringContaining('string.rep would build 299999999 bytes'),
    });
  });

  it('an empty repetition is the empty string at any count (built without looping)', async () => {
    expect(await run('rep_empty')).toEqual({ ok: true, parts: [{ type: 'text', text: '0,0' }] });
  });

  it('allows ordinary use', async () => {
    expect(await run('rep_ok')).toEqual({ ok: true, parts: [{ type: 'text', text: '2000' }] });
  });
});

describe('wall clock and time slicing', () => {
  it('a busy tool does not freeze the event loop', async () => {
    const slow = await loadTools(TOOLS, { budgets: { instructions: 1e9 } });
    let ticks = 0;
    let ticksBeforeEnd = -1;
    const timer = setInterval(() => ticks++, 1);
    const r = await run('busy', { n: 3_000_000 }, slow).finally(() => {
      ticksBeforeEnd = ticks;
      clearInterval(timer);
    });
    expect(r).toEqual({ ok: true, parts: [{ type: 'text', text: '3000000' }] });
    expect(ticksBeforeEnd).toBeGreaterThan(1);
  });

  it('stops a loop at the wall-clock budget', async () => {
    const short = await loadTools(TOOLS, { budgets: { instructions: 1e9, wallClockMs: 100 } });
    expect(await run('spin', {}, short)).toEqual({ ok: false, error: at('time budget exceeded (100 ms)') });
  });

  it('interrupts a pattern blow-up that the instruction hook cannot see', async () => {
    const short = await loadTools(TOOLS, { budgets: { wallClockMs: 300 } });
    // ~100k start positions x ~100k steps each: minutes without the pattern watch.
    expect(await run('pattern', { n: 100_000, p: 'a*b' }, short)).toEqual({
      ok: false,
      error: 'time budget exceeded (300 ms, inside a library function)',
    });
  });

  it('refuses a pattern over a subject longer than maxPatternSubjectBytes, allows plain find', async () => {
    const capped = await loadTools(TOOLS, { budgets: { maxPatternSubjectBytes: 1000 } });
    expect(await run('pattern', { n: 2000, p: 'a*b' }, capped)).toEqual({
      ok: false,
      error: expect.stringContaining(
        'string.find: a pattern over 2000 bytes is over the sandbox cap of 1000 bytes',
      ),
    });
    expect(await run('pattern', { n: 2000, p: 'aab' }, capped)).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'nil' }],
    });
  });

  it('an abort signal stops a running call', async () => {
    const slow = await loadTools(TOOLS, { budgets: { instructions: 1e9 } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    expect(await slow.source.call('spin', {}, ctx(slow.workspace, 'c', ac.signal))).toEqual({
      ok: false,
      error: 'aborted',
    });
  });
});

describe('budgets at load time', () => {
  it('a tool file that loops at load is stopped and reported; the others load', async () => {
    const e = await loadTools(
      { 'a_loop.lua': 'while true do end', 'b_ok.lua': tool('b_ok', 'return "ok"') },
      { budgets: { instructions: 100_000 } },
    );
    expect(e.source.list().map((d) => d.name)).toEqual(['b_ok']);
    expect(e.source.loadErrors).toEqual([
      {
        file: expect.stringMatching(/a_loop\.lua$/),
        line: expect.any(Number),
        message: expect.stringMatching(
          /^a_loop\.lua: error while loading: instruction budget exceeded \(100000 Lua instructions\) at a_loop\.lua:\d+$/,
        ),
      },
    ]);
  });
});
