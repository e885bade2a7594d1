// Tool-author ergonomics (issue 13): calling a tool directly, empty schema arrays, the JSON mapping, strict globals,
// error messages, library faults, capabilities.
import { describe, expect, it } from 'vitest';
import { dispatchToolCalls } from '../../src/tools/index.js';
import { ALL_CAPABILITIES, ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const run = (e: Loaded, name: string, args: Record<string, unknown> = {}) =>
  e.source.call(name, args, ctx(e.workspace));
const ok = (text: string) => ({ ok: true, parts: [{ type: 'text', text }] });

describe('calling a tool directly', () => {
  it('source.run(name, args, options) builds the context; source.call takes a ToolContext', async () => {
    const e = await loadTools({
      'a.lua': tool('hello', 'return "hi " .. args.who .. " " .. ctx.tool_call_id'),
    });
    expect(await e.source.run('hello', { who: 'you' }, { toolCallId: 'x1' })).toEqual(ok('hi you x1'));
    expect(await e.source.call('hello', { who: 'me' }, ctx(e.workspace, 'x2'))).toEqual(ok('hi me x2'));
  });
});

describe('schemas', () => {
  it('required = {} (and other array keywords) become [] at load, so calls validate', async () => {
    const e = await loadTools({
      'a.lua': `return { name = "noreq", description = "d",
        parameters = { type = "object", properties = { required = { type = "object", properties = {} } },
                       required = {} },
        handler = function(args) return "ok" end }`,
    });
    expect(e.source.list()[0]?.inputSchema).toEqual({
      type: 'object',
      properties: { required: { type: 'object', properties: {} } },
      required: [],
    });
    const [res] = await dispatchToolCalls([{ type: 'tool_call', id: 'c1', name: 'noreq', input: {} }], {
      tools: e.source,
      workspaceRoot: e.workspace,
    });
    expect(res?.isError).toBe(false);
  });
});

describe('the JSON mapping', () => {
  it('round-trips nulls (panto.json.null), __proto__ keys, empty arrays; refuses 1 vs "1" collisions', async () => {
    const e = await loadTools({
      'a.lua': tool('rt', 'return panto.json_encode(panto.json_decode(args.text))'),
      'b.lua': tool('collide', 'return panto.json_encode({ [1] = "a", ["1"] = "b", x = 1 })'),
      'c.lua': tool(
        'null',
        'local v = panto.json_decode("[1,null,3]"); return tostring(v[2] == panto.json.null) .. " " .. #v',
      ),
      'd.lua': tool(
        'arr',
        'return panto.json_encode({ empty = panto.json.array(), obj = {}, seq = { 1, 2 } })',
      ),
      'e.lua': tool('argnull', 'return tostring(args.a) .. " " .. tostring(args.list[2] == panto.json.null)'),
      'e2.lua': tool(
        'nestednull',
        'return tostring(args.obj.a == panto.json.null) .. " " .. panto.json_encode(args.obj) .. " " .. tostring(args.top)',
      ),
      'f.lua': tool(
        'protected',
        'local ok = pcall(setmetatable, panto.json.array(), {}); return getmetatable(args.list) .. " " .. tostring(ok)',
      ),
    });
    for (const text of [
      '[1,null,3]',
      '{"__proto__":1,"a":null}',
      '[]',
      '{"1":[1],"a":[[]]}',
      '[{"b":null}]',
    ]) {
      expect(await run(e, 'rt', { text })).toEqual(ok(text));
    }
    expect(await run(e, 'collide')).toEqual({
      ok: false,
      error:
        'panto.json_encode: value has both the number key 1 and the string key "1"; they would be one JSON key',
    });
    expect(await run(e, 'null')).toEqual(ok('true 3'));
    expect(await run(e, 'arr')).toEqual(ok('{"empty":[],"obj":{},"seq":[1,2]}'));
    // Tool arguments: an object member that is null is absent (nil); null inside an array keeps its place.
    expect(await run(e, 'argnull', { a: null, list: [1, null, 3] })).toEqual(ok('nil true'));
    // Deeper than the top level, a null member keeps its key: {"obj":{"a":null}} is obj.a == panto.json.null.
    expect(await run(e, 'nestednull', { obj: { a: null, b: { c: null } }, top: null })).toEqual(
      ok('true {"a":null,"b":{"c":null}} nil'),
    );
    // The array marker is shared by every tool, so it is protected.
    expect(await run(e, 'protected', { list: [] })).toEqual(ok('json.array false'));
  });
});

describe('globals', () => {
  it('a handler cannot create globals (strict): a forgotten local cannot mix concurrent calls', async () => {
    const e = await loadTools({
      'a.lua': `counter = 0
        return { name = "g", description = "d", handler = function(args)
          counter = counter + 1
          if args.leak then result = args.leak end
          return tostring(counter)
        end }`,
    });
    expect(await run(e, 'g')).toEqual(ok('1'));
    expect(await run(e, 'g', { leak: 'x' })).toEqual({
      ok: false,
      error: expect.stringMatching(/^assignment to undeclared global 'result' .*\(a\.lua:4\)$/),
    });
  });
});

describe('error messages', () => {
  it('return nil, {code=1} names the object; positions are not doubled; library faults are Lua errors', async () => {
    const e = await loadTools({
      'errs.lua': `return { name = "errs", description = "d", handler = function(args)
        if args.k == "obj" then return nil, { code = 1 } end
        if args.k == "num" then return nil, 42 end
        if args.k == "rethrow" then
          local ok, err = pcall(function() error("inner") end)
          error(err)
        end
        if args.k == "time" then return tostring(os.time({ year = 1e9, month = 1, day = 1 })) end
        if args.k == "char" then return string.char(256) end
        if args.k == "caught" then
          local ok, err = pcall(string.char, 256)
          return "caught: " .. tostring(ok)
        end
      end }`,
    });
    expect(await run(e, 'errs', { k: 'obj' })).toEqual({ ok: false, error: 'error object: {"code":1}' });
    expect(await run(e, 'errs', { k: 'num' })).toEqual({ ok: false, error: '42' });
    expect(await run(e, 'errs', { k: 'rethrow' })).toEqual({ ok: false, error: 'inner (errs.lua:5)' });
    expect(await run(e, 'errs', { k: 'time' })).toEqual({
      ok: false,
      error: expect.stringMatching(/^a Lua library function failed: /),
    });
    expect(await run(e, 'errs', { k: 'char' })).toEqual({
      ok: false,
      error: expect.stringMatching(/^a Lua library function failed: /),
    });
    expect(await run(e, 'errs', { k: 'caught' })).toEqual(ok('caught: false'));
  });
});

describe('capabilities', () => {
  it('declared and granted host APIs are present; undeclared ones are absent with a clear error', async () => {
    const e = await loadTools({
      'a.lua': `return { name = "reader", description = "d", capabilities = { "read_file" },
        handler = function() return type(panto.read_file) .. " " .. tostring(rawget(panto, "list_dir")) end }`,
      'b.lua': `return { name = "none", description = "d", handler = function() return panto.read_file("x") end }`,
      'c.lua': tool('all', 'return type(panto.list_dir) .. type(panto.stat)'),
    });
    expect(await run(e, 'reader')).toEqual(ok('function nil'));
    expect(await run(e, 'none')).toEqual({
      ok: false,
      error:
        'panto.read_file is not available to this tool: declare capabilities = { "read_file" } in the tool file ' +
        '(the host must grant it) (b.lua:1)',
    });
    expect(await run(e, 'all')).toEqual(ok('functionfunction'));
  });

  it('no capability is available while the file loads (top-level code)', async () => {
    const e = await loadTools({
      'a.lua': `local data = panto.read_file("x")
        return { name = "a", description = "d", capabilities = { "read_file" }, handler = function() end }`,
    });
    expect(e.source.loadErrors.map((l) => l.message)).toEqual([
      expect.stringContaining('a.lua: error while loading: panto.read_file is not available to this tool'),
    ]);
  });

  it('a file asking for a capability the host does not grant, or an unknown one, does not load', async () => {
    const e = await loadTools(
      {
        'a.lua': `return { name = "a", description = "d", capabilities = ${ALL_CAPABILITIES}, handler = function() end }`,
        'b.lua': `return { name = "b", description = "d", capabilities = { "shell" }, handler = function() end }`,
        'b2.lua': `return { name = "b2", description = "d", capabilities = { "exec" }, handler = function() end }`,
        'c.lua': `return { name = "c", description = "d", capabilities = { "stat" }, handler = function() return "c" end }`,
      },
      { capabilities: ['stat'] },
    );
    expect(e.source.list().map((d) => d.name)).toEqual(['c']);
    expect(e.source.loadErrors.map((l) => l.message)).toEqual([
      "a.lua: tool 'a': 'capabilities': the host does not grant 'read_file' (granted: stat)",
      "b.lua: tool 'b': 'capabilities': unknown capability 'shell' (known: read_file, stat, list_dir, write_file, make_dir, exec, fetch)",
      "b2.lua: tool 'b2': 'capabilities': the host does not grant 'exec' (granted: stat)",
    ]);
  });
});
