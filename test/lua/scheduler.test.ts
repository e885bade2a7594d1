import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const TOOLS: Record<string, string> = {
  'reader.lua': tool(
    'reader',
    `
  local total = 0
  for i = 1, args.reads do
    local data, err = panto.read_file(args.path)
    if not data then return nil, err end
    total = total + #data
  end
  return string.format("%s:%d", ctx.tool_call_id, total)`,
  ),
  'co_reader.lua': tool(
    'co_reader',
    `
  -- host calls from inside coroutines the tool made: resume/wrap must forward the host's yields
  local gen = coroutine.wrap(function()
    for i = 1, 3 do
      local st = assert(panto.stat(args.path))
      coroutine.yield(st.size + i)
    end
  end)
  local co = coroutine.create(function(a)
    local data = assert(panto.read_file(args.path))
    local b = coroutine.yield(#data + a)
    local ok, size = pcall(function() return assert(panto.stat(args.path)).size end)
    return b + size
  end)
  local ok1, v1 = coroutine.resume(co, 100)
  local ok2, v2 = coroutine.resume(co, 1000)
  local status = coroutine.status(co)
  return table.concat({ gen(), gen(), gen(), tostring(ok1), v1, tostring(ok2), v2, status }, " ")`,
  ),
  'nested.lua': tool(
    'nested',
    `
  local inner = coroutine.wrap(function()
    local outer = coroutine.wrap(function()
      coroutine.yield(#assert(panto.read_file(args.path)))
    end)
    coroutine.yield(outer() * 2)
  end)
  return tostring(inner())`,
  ),
  'co_busy.lua': tool(
    'co_busy',
    `
  local co = coroutine.wrap(function() local n = 0; for i = 1, args.n do n = n + 1 end; coroutine.yield(n) end)
  return tostring(co())`,
  ),
  'top_yield.lua': tool('top_yield', 'coroutine.yield(1); return "x"'),
  // A file-level local shared by all calls: the waiting call parks its thread (or a coroutine of its own) there.
  'steal.lua': `
local parked
return { name = "steal", description = "test tool", capabilities = { "stat" }, handler = function(args)
  if args.park == "thread" then parked = coroutine.running() end
  if args.park == "coroutine" then
    parked = coroutine.create(function() return assert(panto.stat(args.path)).size end)
    local ok, size = coroutine.resume(parked)
    return "parked coroutine got " .. tostring(size)
  end
  if args.park then return "parked thread got " .. assert(panto.stat(args.path)).size end
  local ok, err = coroutine.resume(parked, "forged answer")
  local wrapped = pcall(coroutine.wrap(function() end))
  return tostring(ok) .. " " .. tostring(err) .. " / own wrap " .. tostring(wrapped)
end }`,
  'sort_host.lua': tool(
    'sort_host',
    'local t = {3, 1, 2}; table.sort(t, function(a, b) panto.stat(args.path); return a < b end); return "sorted"',
  ),
};

let env: Loaded;
beforeAll(async () => {
  env = await loadTools(TOOLS, { budgets: { sliceMs: 1 } });
  expect(env.source.loadErrors).toEqual([]);
  await writeFile(path.join(env.workspace, 'f.txt'), 'x'.repeat(100));
});

describe('coroutine per call', () => {
  it('runs 100 calls at once, each with several async host calls', async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        env.source.call('reader', { path: 'f.txt', reads: 5 }, ctx(env.workspace, `c${i}`)),
      ),
    );
    results.forEach((r, i) => {
      expect(r).toEqual({ ok: true, parts: [{ type: 'text', text: `c${i}:500` }] });
    });
  });

  it('interleaves: a busy call does not hold back calls that wait for the host', async () => {
    const slow = await loadTools(TOOLS, { budgets: { instructions: 1e9, sliceMs: 1 } });
    await writeFile(path.join(slow.workspace, 'f.txt'), 'x'.repeat(100));
    const order: string[] = [];
    const busy = slow.source.call('co_busy', { n: 2_000_000 }, ctx(slow.workspace)).then((r) => {
      order.push('busy');
      return r;
    });
    const quick = slow.source
      .call('reader', { path: 'f.txt', reads: 1 }, ctx(slow.workspace, 'q'))
      .then((r) => {
        order.push('quick');
        return r;
      });
    expect(await busy).toEqual({ ok: true, parts: [{ type: 'text', text: '2000000' }] });
    expect(await quick).toEqual({ ok: true, parts: [{ type: 'text', text: 'q:100' }] });
    expect(order).toEqual(['quick', 'busy']);
  });
});

describe("the tool's own coroutines", () => {
  it('forward host yields through coroutine.resume and coroutine.wrap', async () => {
    expect(await env.source.call('co_reader', { path: 'f.txt' }, ctx(env.workspace))).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '101 102 103 true 200 true 1100 dead' }],
    });
  });

  it('forward through nested coroutines', async () => {
    expect(await env.source.call('nested', { path: 'f.txt' }, ctx(env.workspace))).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '200' }],
    });
  });

  it('forward time slices (a busy coroutine still finishes)', async () => {
    expect(await env.source.call('co_busy', { n: 500_000 }, ctx(env.workspace))).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '500000' }],
    });
  });

  it("a call cannot resume another call's thread or coroutine while it waits for the host", async () => {
    for (const park of ['thread', 'coroutine']) {
      const parked = env.source.call('steal', { park, path: 'f.txt' }, ctx(env.workspace, 'parked'));
      const thief = env.source.call('steal', {}, ctx(env.workspace, 'thief'));
      expect(await thief).toEqual({
        ok: true,
        parts: [
          { type: 'text', text: 'false cannot resume a coroutine of another tool call / own wrap true' },
        ],
      });
      expect(await parked).toEqual({ ok: true, parts: [{ type: 'text', text: `parked ${park} got 100` }] });
    }
  });

  it('a top-level coroutine.yield is a clear error', async () => {
    expect(await env.source.call('top_yield', {}, ctx(env.workspace))).toEqual({
      ok: false,
      error:
        'coroutine.yield called outside a coroutine (the handler itself cannot yield; use coroutine.wrap)',
    });
  });

  it('a host call where Lua cannot yield is a clear error', async () => {
    expect(await env.source.call('sort_host', { path: 'f.txt' }, ctx(env.workspace))).toEqual({
      ok: false,
      error: expect.stringContaining('panto.stat cannot be called here'),
    });
  });
});
