// Host functions (`hostFunctions` option): a host's own JS functions called from Lua as panto.<name>(args), in-thread
// and with worker isolation (the worker proxies each call to the host thread; uses dist/lua/lua-worker.js).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import {
  type HostFunction,
  type HostFunctionContext,
  type HostValue,
  LuaToolSource,
} from '../../src/lua/index.js';
import type { MediaResultPart } from '../../src/tool.js';
import { ctx } from './lua-test-helpers.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c626001000000050001a5f645400000000049454e44ae426082',
  'hex',
);

/** A tool file declaring `caps` whose handler is `body`. */
const luaTool = (name: string, caps: string[], body: string) =>
  `return { name = ${JSON.stringify(name)}, description = "d", capabilities = { ${caps
    .map((c) => JSON.stringify(c))
    .join(', ')} }, handler = function(args, ctx)\n${body}\nend }\n`;

const TOOLS: Record<string, string> = {
  'stock.lua': luaTool(
    'stock',
    ['inventory_lookup'],
    `local r, err = panto.inventory_lookup({ sku = args.sku })
     if not r then return nil, err end
     return string.format("%s: %d in stock", r.sku, r.count)`,
  ),
  'image.lua': luaTool(
    'image',
    ['render'],
    `local png, err = panto.render({ w = 1 })
     if not png then return nil, err end
     return { text = "rendered " .. #png, attachments = { { data = png, media_type = "image/png" } } }`,
  ),
  'echo.lua': luaTool(
    'echo',
    ['echo'],
    `local v, err = panto.echo(args.value)
     if err then return nil, err end
     return { text = panto.json_encode(v), meta = { type = type(v), is_null = v == panto.json.null } }`,
  ),
  'bytes_in.lua': luaTool(
    'bytes_in',
    ['echo'],
    `local v = assert(panto.echo({ bin = "\\0\\255\\254abc", text = "héllo" }))
     return { text = "ok", attachments = { { data = v.bin } }, meta = { text = v.text } }`,
  ),
  'context.lua': luaTool('context', ['context'], 'return panto.json_encode(assert(panto.context()))'),
  'fails.lua': luaTool(
    'fails',
    ['throws', 'rejects'],
    `
     local a, ea = panto.throws({})
     local b, eb = panto.rejects({})
     return ea .. " | " .. eb .. " | " .. tostring(a) .. tostring(b)`,
  ),
  'hang.lua': luaTool('hang', ['never'], 'return tostring(panto.never({}))'),
  'big.lua': luaTool(
    'big',
    ['big', 'cyclic', 'weird'],
    `
     local a, ea = panto.big({})
     local b, eb = panto.cyclic({})
     local c, ec = panto.weird({})
     return table.concat({ tostring(a), ea, tostring(b), eb, tostring(c), ec }, " | ")`,
  ),
  'void.lua': luaTool('void', ['void'], 'local r = panto.void({}); return type(r) .. ":" .. tostring(r)'),
  'bad_args.lua': luaTool(
    'bad_args',
    ['echo'],
    `
     local ok1, e1 = pcall(panto.echo, 1, 2)
     local ok2, e2 = pcall(panto.echo, { f = print })
     return e1 .. " | " .. e2`,
  ),
  'undeclared.lua': luaTool('undeclared', [], 'return tostring(panto.echo({}))'),
  'reenter.lua': luaTool(
    'reenter',
    ['call_tool'],
    'return assert(panto.call_tool({ name = "stock", sku = "b" }))',
  ),
  'shared.lua': luaTool(
    'shared',
    ['shared'],
    'local v = assert(panto.shared({})); return panto.json_encode(v) .. " " .. tostring(rawequal(v.a, v.b))',
  ),
  'slow.lua': luaTool('slow', ['sleep'], 'assert(panto.sleep({ ms = args.ms })); return "slept " .. args.ms'),
};

let dir: string;
let ws: string;
const seen: Array<{ name: string; args: HostValue; ctx: HostFunctionContext }> = [];
let neverSignal: AbortSignal | null = null;

function hostFunctions(getSource: () => LuaToolSource): Record<string, HostFunction> {
  return {
    inventory_lookup: async (args) => {
      const { sku } = args as { sku: string };
      return { sku, count: sku.length * 7 };
    },
    render: () => PNG,
    echo: (args, c) => {
      seen.push({ name: 'echo', args, ctx: c });
      return args;
    },
    context: (_args, c) => ({
      toolName: c.toolName,
      toolCallId: c.toolCallId,
      workspaceRoot: c.workspaceRoot,
      aborted: c.signal.aborted,
    }),
    throws: () => {
      throw new Error('the database is down');
    },
    rejects: () => Promise.reject('plain string reason'),
    never: (_args, c) => {
      neverSignal = c.signal;
      return new Promise(() => {});
    },
    big: () => 'x'.repeat(2 * 1024 * 1024),
    cyclic: () => {
      const o: Record<string, unknown> = { a: 1 };
      o.self = o;
      return o;
    },
    weird: () => ({ f: () => 1 }),
    void: () => undefined,
    call_tool: async (args, c) => {
      const { name, sku } = args as { name: string; sku: string };
      const r = await getSource().call(name, { sku }, { ...ctx(c.workspaceRoot, `${c.toolCallId}-inner`) });
      return r.ok && r.parts[0]?.type === 'text' ? r.parts[0].text : 'failed';
    },
    shared: () => {
      const x = { x: 1 };
      return { a: x, b: x };
    },
    sleep: (args, c) =>
      new Promise((resolve) => {
        const t = setTimeout(() => resolve(true), (args as { ms: number }).ms);
        c.signal.addEventListener('abort', () => clearTimeout(t));
      }),
  };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'panto-lua-hostfn-'));
  ws = await mkdtemp(path.join(tmpdir(), 'panto-lua-hostfn-ws-'));
  for (const [name, src] of Object.entries(TOOLS)) await writeFile(path.join(dir, name), src);
});

describe.each(['thread', 'worker'] as const)('host functions (isolation: %s)', (isolation) => {
  let source: LuaToolSource;
  beforeAll(async () => {
    source = await LuaToolSource.fromDir(dir, {
      isolation,
      workspaceRoot: ws,
      hostFunctions: hostFunctions(() => source),
      budgets: { wallClockMs: 1500, maxHostValueBytes: 1024 * 1024 },
    });
    expect(source.loadErrors).toEqual([]);
  });
  afterAll(() => source.close());
  const run = (name: string, args: Record<string, unknown> = {}, id = 'c1') =>
    source.call(name, args, ctx(ws, id));

  it('calls a host function with a JSON argument and gets its result', async () => {
    expect(await run('stock', { sku: 'abc' })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'abc: 21 in stock' }],
    });
  });

  it('passes bytes both ways unchanged: a Uint8Array result is a Lua string, a non-UTF-8 string a Uint8Array', async () => {
    const r = await run('image');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.parts[0]).toEqual({ type: 'text', text: `rendered ${PNG.length}` });
    expect(Buffer.from((r.parts[1] as MediaResultPart).data).equals(PNG)).toBe(true);
    seen.length = 0;
    const b = await run('bytes_in');
    expect(b.ok).toBe(true);
    if (!b.ok) return;
    const args = seen[0]?.args as { bin: unknown; text: unknown };
    expect(args.bin).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(args.bin as Uint8Array).equals(Buffer.from([0, 255, 254, 97, 98, 99]))).toBe(true);
    expect(args.text).toBe('héllo');
    expect(
      Buffer.from((b.parts[1] as MediaResultPart).data).equals(Buffer.from([0, 255, 254, 97, 98, 99])),
    ).toBe(true);
    expect(b.meta).toEqual({ text: 'héllo' });
  });

  it('maps null, nested null, arrays and undefined by the JSON mapping', async () => {
    expect(await run('echo', { value: { a: null, list: [1, null, 3], empty: [], o: {} } })).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '{"a":null,"list":[1,null,3],"empty":[],"o":{}}' }],
      meta: { type: 'table', is_null: false },
    });
    // An argument that is null at the top is nil in Lua; echoed back it is JSON null (panto.json.null, truthy).
    expect(await run('echo', { value: null })).toMatchObject({
      ok: true,
      parts: [{ type: 'text', text: 'null' }],
      meta: { type: 'userdata', is_null: true },
    });
    expect(await run('void')).toEqual({ ok: true, parts: [{ type: 'text', text: 'boolean:true' }] });
  });

  it('gives the function a context: tool name, call id, workspace root, a live signal', async () => {
    const r = await run('context', {}, 'call-ctx');
    expect(r.ok && JSON.parse((r.parts[0] as { text: string }).text)).toEqual({
      toolName: 'context',
      toolCallId: 'call-ctx',
      workspaceRoot: ws,
      aborted: false,
    });
  });

  it('turns a throw or a rejection into nil, message', async () => {
    expect(await run('fails')).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'the database is down | plain string reason | nilnil' }],
    });
  });

  it('refuses a result over the cap, a cycle and a function with nil, err (never a silent cut)', async () => {
    const r = await run('big');
    expect(r.ok).toBe(true);
    const text = r.ok ? (r.parts[0] as { text: string }).text : '';
    expect(text).toBe(
      'nil | the result of panto.big is over the 1048576-byte cap of a host value | ' +
        'nil | the result of panto.cyclic.self refers back to itself (a cycle) | ' +
        'nil | the result of panto.weird.f is a function, which has no JSON form',
    );
  });

  it('raises for a wrong call: more than one argument, an argument with no JSON form', async () => {
    const r = await run('bad_args');
    expect(r.ok && (r.parts[0] as { text: string }).text).toBe(
      'panto.echo takes one argument (a table), got 2 | panto.echo: args.f is a function, which has no JSON form',
    );
  });

  it('ends a call whose host function never settles at the time budget, aborting its signal', async () => {
    neverSignal = null;
    const t0 = performance.now();
    const r = await run('hang');
    expect(r).toEqual({ ok: false, error: 'time budget exceeded (1500 ms, waiting for a host call)' });
    expect(performance.now() - t0).toBeLessThan(10_000);
    // The signal is the host function's: aborted once the call stopped waiting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((neverSignal as AbortSignal | null)?.aborted).toBe(true);
  });

  it('aborts the signal of a running host function when the call is aborted', async () => {
    neverSignal = null;
    const ac = new AbortController();
    const p = source.call('hang', {}, ctx(ws, 'c-abort', ac.signal));
    await new Promise((resolve) => setTimeout(resolve, 100));
    ac.abort();
    expect(await p).toEqual({ ok: false, error: 'aborted' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((neverSignal as AbortSignal | null)?.aborted).toBe(true);
  });

  it('suspends only the calling coroutine: other calls run while one waits', async () => {
    const slow = run('slow', { ms: 400 }, 's1');
    const fast = await run('stock', { sku: 'x' }, 's2');
    expect(fast).toMatchObject({ ok: true });
    expect(await slow).toEqual({ ok: true, parts: [{ type: 'text', text: 'slept 400' }] });
  });

  it('lets a host function call back into the tool source (the inner call starts once the outer Lua yielded)', async () => {
    expect(await run('reenter')).toEqual({ ok: true, parts: [{ type: 'text', text: 'b: 7 in stock' }] });
  });

  it('copies a value shared by two paths for each path (JSON semantics)', async () => {
    const r = await run('shared');
    expect(r).toEqual({ ok: true, parts: [{ type: 'text', text: '{"a":{"x":1},"b":{"x":1}} false' }] });
  });

  it('keeps an undeclared host function out of a tool', async () => {
    const r = await run('undeclared');
    expect(r).toMatchObject({
      ok: false,
      error: expect.stringContaining(
        'panto.echo is not available to this tool: declare capabilities = { "echo" } in the tool file',
      ),
    });
  });
});

describe('a time budget spent while the call is suspended names where it stands', () => {
  it('a host function that spends the budget before it answers: stopped at the line that called it', async () => {
    // In-thread, the host function's synchronous part runs inside the call's slice: the budget is gone when the call
    // suspends to wait for the answer, and the stop names the waiting line as the hook's stops do.
    const d = await mkdtemp(path.join(tmpdir(), 'panto-lua-hostfn-spent-'));
    await writeFile(
      path.join(d, 'spend.lua'),
      luaTool('spend', ['spend'], 'local x = 1\nreturn tostring(panto.spend({}))'),
    );
    const spent = await LuaToolSource.fromDir(d, {
      workspaceRoot: ws,
      hostFunctions: {
        spend: () => {
          const until = performance.now() + 150;
          while (performance.now() < until) {}
          return Promise.resolve(1);
        },
      },
      budgets: { wallClockMs: 100 },
    });
    try {
      expect(spent.loadErrors).toEqual([]);
      const r = await spent.call('spend', {}, ctx(ws, 'c1'));
      expect(r).toEqual({
        ok: false,
        error: expect.stringMatching(/^time budget exceeded \(100 ms\) at spend\.lua:\d+$/),
      });
    } finally {
      spent.close();
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('hostFunctions option checks', () => {
  const tryLoad = async (hostFunctions: unknown) => {
    try {
      await LuaToolSource.fromDir(dir, { hostFunctions: hostFunctions as Record<string, HostFunction> });
      return 'loaded';
    } catch (err) {
      return isPantoError(err, 'ERR_INVALID_ARGUMENT') ? (err as Error).message : `other: ${String(err)}`;
    }
  };

  it('refuses bad names, collisions with built-ins and non-functions', async () => {
    expect(await tryLoad({ Lookup: () => 1 })).toMatch(/'Lookup' is not a valid name/);
    expect(await tryLoad({ '9x': () => 1 })).toMatch(/'9x' is not a valid name/);
    expect(await tryLoad({ read_file: () => 1 })).toBe(
      "hostFunctions: 'read_file' collides with the built-in panto.read_file; choose another name",
    );
    expect(await tryLoad({ log: () => 1 })).toMatch(/collides with the built-in panto\.log/);
    expect(await tryLoad({ exec: () => 1 })).toMatch(/collides with the built-in panto\.exec/);
    expect(await tryLoad({ lookup: 42 })).toBe('hostFunctions.lookup must be a function');
    expect(await tryLoad([() => 1])).toMatch(/must be an object/);
  });

  it('makes a tool declaring a host function the host did not give a load error', async () => {
    const d = await mkdtemp(path.join(tmpdir(), 'panto-lua-hostfn-missing-'));
    await writeFile(path.join(d, 'a.lua'), luaTool('a', ['inventory_lookup'], 'return "x"'));
    const src = await LuaToolSource.fromDir(d, { hostFunctions: { other: () => 1 } });
    expect(src.loadErrors.map((e) => e.message)).toEqual([
      "a.lua: tool 'a': 'capabilities': unknown capability 'inventory_lookup' (known: read_file, stat, list_dir, write_file, make_dir, exec, fetch, other)",
    ]);
  });
});
