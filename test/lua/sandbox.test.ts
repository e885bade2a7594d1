import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ctx, type Loaded, loadTools, tool } from './lua-test-helpers.js';

const ESCAPES: Record<string, string> = {
  os_execute: 'os.execute("touch PWNED")',
  os_exit: 'os.exit(1)',
  os_getenv: 'return os.getenv("HOME")',
  os_remove: 'os.remove("x")',
  os_rename: 'os.rename("a", "b")',
  os_tmpname: 'return os.tmpname()',
  io_open: 'io.open("/etc/passwd")',
  io_write: 'io.write("hello")',
  require: 'require("fs")',
  package_jspath: 'package.jspath = "./?.js"; return "set"',
  dofile: 'dofile("/etc/passwd")',
  loadfile: 'loadfile("/etc/passwd")',
  debug_sethook: 'debug.sethook()',
  debug_getregistry: 'return debug.getregistry()',
  string_dump: 'return string.dump(function() end)',
  string_dump_method: 'return ("x").dump(function() end)',
  collectgarbage: 'collectgarbage()',
  binary_chunk: `
    local f, err = load("\\27Lua\\83\\0\\25\\147\\r\\n\\26\\n")
    if f then return "loaded a binary chunk" end
    error(err, 0)`,
  binary_chunk_mode_b: `
    local f, err = load("\\27Lua\\83\\0", "x", "b")
    if f then return "loaded a binary chunk" end
    error(err, 0)`,
  string_metatable_index: 'getmetatable("").__index.upper = function() return "patched" end',
  string_metatable_set: 'setmetatable("", {})',
  load_globals: 'local f = load("return os.execute"); return f()("touch PWNED")',
};

let env: Loaded;
beforeAll(async () => {
  const files: Record<string, string> = {};
  for (const [name, body] of Object.entries(ESCAPES)) files[`${name}.lua`] = tool(name, body);
  files['probe.lua'] = tool(
    'probe',
    `
    local seen = {}
    for k in pairs(_G) do seen[#seen + 1] = k end
    table.sort(seen)
    local libs = {}
    for _, lib in ipairs({ "string", "table", "math", "utf8", "os", "coroutine", "panto" }) do
      local names = {}
      for k in pairs(_G[lib]) do names[#names + 1] = k end
      table.sort(names)
      libs[lib] = names
    end
    return { text = table.concat(seen, ","), meta = libs }`,
  );
  files['printer.lua'] = tool('printer', 'print("secret to stdout?", 1, nil, true); return "printed"');
  files['upper.lua'] = tool('upper', 'string.upper = nil; return ("abc"):upper()');
  files['upper2.lua'] = tool('upper2', 'return ("abc"):upper() .. tostring(string.upper ~= nil)');
  env = await loadTools(files);
  expect(env.source.loadErrors).toEqual([]);
});

afterEach(() => {
  vi.restoreAllMocks();
});

const run = (name: string) => env.source.call(name, {}, ctx(env.workspace));

describe('sandbox escapes fail as tool errors and the host keeps running', () => {
  for (const name of Object.keys(ESCAPES)) {
    it(name, async () => {
      const r = await run(name);
      expect(r.ok).toBe(false);
      expect(existsSync(path.join(env.workspace, 'PWNED'))).toBe(false);
      expect(existsSync(path.join(process.cwd(), 'PWNED'))).toBe(false);
    });
  }

  it('names the missing global in the error', async () => {
    expect(await run('os_execute')).toEqual({
      ok: false,
      error: expect.stringMatching(/attempt to call a nil value \(field 'execute'\) \(os_execute\.lua:\d+\)/),
    });
    // require loads only lib/*.lua modules (Lua source, sandboxed): never a host module.
    expect(await run('require')).toEqual({
      ok: false,
      error: expect.stringMatching(/^module 'fs' not found: no fs\.lua in .*lib.*\(require\.lua:\d+\)$/),
    });
    expect(await run('binary_chunk')).toEqual({
      ok: false,
      error: expect.stringContaining("attempt to load a binary chunk (mode is 't')"),
    });
    expect(await run('string_metatable_index')).toEqual({
      ok: false,
      error: expect.stringMatching(/attempt to index a (boolean|nil) value/),
    });
  });

  it('the environment holds exactly the whitelist', async () => {
    const r = await run('probe');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.parts[0]).toEqual({
      type: 'text',
      text: [
        '_G',
        '_VERSION',
        'assert',
        'coroutine',
        'error',
        'getmetatable',
        'ipairs',
        'load',
        'math',
        'next',
        'os',
        'pairs',
        'panto',
        'pcall',
        'print',
        'rawequal',
        'rawget',
        'rawlen',
        'rawset',
        'require',
        'select',
        'setmetatable',
        'string',
        'table',
        'tonumber',
        'tostring',
        'type',
        'utf8',
        'xpcall',
      ].join(','),
    });
    const meta = r.meta as Record<string, string[]>;
    expect(meta.os).toEqual(['clock', 'date', 'difftime', 'time']);
    expect(meta.string).not.toContain('dump');
    expect(meta.coroutine).toEqual(['create', 'isyieldable', 'resume', 'running', 'status', 'wrap', 'yield']);
    expect(meta.panto).toEqual([
      'json',
      'json_decode',
      'json_encode',
      'list_dir',
      'log',
      'progress',
      'read_file',
      'sniff',
      'stat',
    ]);
  });

  it('print goes to the host log, never to stdout', async () => {
    const write = vi.spyOn(process.stdout, 'write');
    const r = await run('printer');
    expect(r).toEqual({ ok: true, parts: [{ type: 'text', text: 'printed' }] });
    expect(write).not.toHaveBeenCalled();
    expect(env.logs).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'secret to stdout?\t1\tnil\ttrue', tool: 'printer' }),
    );
  });

  it("a tool's library tables are its own; string methods use a locked private table", async () => {
    expect(await run('upper')).toEqual({ ok: true, parts: [{ type: 'text', text: 'ABC' }] });
    expect(await run('upper2')).toEqual({ ok: true, parts: [{ type: 'text', text: 'ABCtrue' }] });
  });
});

describe('os.date', () => {
  it('"!" formats UTC (fengari printed the "!" and used local time)', async () => {
    const e = await loadTools({
      'date.lua': tool(
        'date',
        'return os.date("!%Y-%m-%d %H:%M:%S", 86400 * 365) .. "|" .. os.date("!*t", 0).hour',
      ),
    });
    expect(await e.source.call('date', {}, ctx(e.workspace))).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '1971-01-01 00:00:00|0' }],
    });
  });
});
