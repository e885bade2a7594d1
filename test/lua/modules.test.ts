// Shared code: require("name") loads lib/name.lua beside the tool files, sandboxed and budgeted like tool code,
// cached per VM; and a file may return a list of tools.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/index.js';
import { ctx } from './lua-test-helpers.js';

const FILES: Record<string, string> = {
  'lib/util.lua': `
    local M = {}
    loads = (loads or 0) + 1
    function M.loads() return loads end
    function M.shout(s) return s:upper() .. "!" end
    function M.size(p) return #assert(panto.read_file(p)) end
    return M`,
  'lib/text/wrap.lua': 'return { wrap = function(s) return "[" .. s .. "]" end }',
  'lib/nothing.lua': 'local x = 1',
  'lib/cyc_a.lua': 'return require("cyc_b")',
  'lib/cyc_b.lua': 'return require("cyc_a")',
  'lib/bad.lua': 'local t = nil\nreturn t.field',
  'lib/syntax.lua': 'return {',
  'lib/loop.lua': 'while true do end',
  'lib/leak.lua': 'return { set = function() leaked = 1 end }',
  'a.lua': `
    local util = require("util")
    local wrap = require("text.wrap")
    return { name = "a", description = "d", capabilities = { "read_file" }, handler = function(args)
      local again = require("util")
      return table.concat({ util.shout("hi"), wrap.wrap("x"), tostring(again == util), tostring(util.loads()),
        tostring(util.size("f.txt")), tostring(require("nothing")) }, " ")
    end }`,
  'b.lua': `
    local util = require("util")
    return { name = "b", description = "d", handler = function() return tostring(util.size("f.txt")) end }`,
  'c.lua': `
    return { name = "c", description = "d", handler = function(args)
      local ok, err = pcall(require, args.name)
      local ok2, err2 = pcall(require, args.name)
      return tostring(ok) .. " " .. tostring(err) .. " | " .. tostring(err2)
    end }`,
  'd.lua': `return { name = "d", description = "d", handler = function()
      local ok, err = pcall(require("leak").set)
      return tostring(ok) .. " " .. err
    end }`,
  'multi.lua': `
    local shared = require("util")
    return {
      { name = "m1", description = "d", capabilities = { "read_file" }, handler = function() return tostring(#assert(panto.read_file("f.txt"))) end },
      { name = "m2", description = "d", handler = function() return tostring(panto.read_file("f.txt")) end },
      { name = "m3", description = "d", capabilities = { "read_file" }, handler = function() return tostring(shared.size("f.txt")) end },
      { name = 42 },
      "not a table",
    }`,
};

let dir: string;
let ws: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'panto-lua-modules-'));
  ws = await mkdtemp(path.join(tmpdir(), 'panto-lua-modules-ws-'));
  await mkdir(path.join(dir, 'lib', 'text'), { recursive: true });
  for (const [name, src] of Object.entries(FILES)) await writeFile(path.join(dir, name), src);
  await writeFile(path.join(ws, 'f.txt'), '12345');
});

describe.each(['thread', 'worker'] as const)('require (isolation: %s)', (isolation) => {
  let source: LuaToolSource;
  beforeAll(async () => {
    source = await LuaToolSource.fromDir(dir, {
      isolation,
      workspaceRoot: ws,
      budgets: { wallClockMs: 500 },
    });
  });
  const run = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await source.call(name, args, ctx(ws));
    return r.ok ? (r.parts[0] as { text: string }).text : `ERR ${r.error}`;
  };

  it("loads lib modules once per VM (dotted names are subdirectories), with the caller's capabilities", async () => {
    expect(await run('a')).toBe('HI! [x] true 1 5 true');
    // A module's panto has the capabilities of the tool calling it: b did not declare read_file.
    expect(await run('b')).toMatch(
      /^ERR panto\.read_file is not available to this tool: declare capabilities = \{ "read_file" \}/,
    );
  });

  it('gives clear errors naming the file: missing, cycle, failing, syntax, a loop at load; failures are not cached', async () => {
    expect(await run('c', { name: 'nope' })).toBe(
      `false module 'nope' not found: no nope.lua in ${path.join(dir, 'lib')}, ${path.resolve('lua', 'lib')} | ` +
        `module 'nope' not found: no nope.lua in ${path.join(dir, 'lib')}, ${path.resolve('lua', 'lib')}`,
    );
    expect(await run('c', { name: 'cyc_a' })).toMatch(
      /^false error loading module lib\/cyc_b\.lua: require cycle: lib\/cyc_a\.lua -> lib\/cyc_b\.lua -> lib\/cyc_a\.lua \|/,
    );
    expect(await run('c', { name: 'bad' })).toBe(
      "false error loading module lib/bad.lua: lib/bad.lua:2: attempt to index a nil value (local 't') | " +
        "error loading module lib/bad.lua: lib/bad.lua:2: attempt to index a nil value (local 't')",
    );
    expect(await run('c', { name: 'syntax' })).toMatch(/^false require: lib\/syntax\.lua:1: .*expected/);
    expect(await run('c', { name: '../secret' })).toMatch(
      /^false require: '\.\.\/secret' is not a module name/,
    );
    expect(await run('c', { name: 'loop' })).toBe('ERR time budget exceeded (500 ms)');
  });

  it("seals a module's globals after it loaded", async () => {
    expect(await run('d')).toMatch(/^false lib\/leak\.lua:1: assignment to undeclared global 'leaked'/);
  });

  it('loads every tool of a file returning a list; each keeps its own capabilities', async () => {
    expect(source.list().map((d) => d.name)).toEqual(['a', 'b', 'c', 'd', 'm1', 'm2', 'm3']);
    expect(source.loadErrors.map((e) => e.message)).toEqual([
      "multi.lua: tools[4]: 'name' must be a string matching ^[a-zA-Z0-9_-]{1,64}$",
      'multi.lua: tools[5] must be a tool table, got string',
    ]);
    expect(await run('m1')).toBe('5');
    expect(await run('m2')).toMatch(/^ERR panto\.read_file is not available to this tool/);
    expect(await run('m3')).toBe('5');
  });
});
