import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { type LuaLogEntry, LuaToolSource } from '../../src/lua/index.js';
import { ctx } from './lua-test-helpers.js';

const MIXED = path.resolve(import.meta.dirname, '..', 'fixtures', 'lua', 'mixed');
const at = (name: string) => path.join(MIXED, name);

describe('loading tool files', () => {
  it('loads the good files and reports each broken one with file and line', async () => {
    const logs: LuaLogEntry[] = [];
    const src = await LuaToolSource.fromDir(MIXED, { log: (e) => logs.push(e) });
    expect(src.list().map((d) => d.name)).toEqual(['echo', 'no_params']);
    expect(src.loadErrors).toEqual([
      { file: at('a_syntax.lua'), line: 3, message: expect.stringMatching(/^a_syntax\.lua:3: .*near/) },
      {
        file: at('b_runtime.lua'),
        line: 3,
        message: expect.stringMatching(
          /^b_runtime\.lua: error while loading: attempt to index a nil value .*\(b_runtime\.lua:3\)$/,
        ),
      },
      {
        file: at('c_no_handler.lua'),
        message: "c_no_handler.lua: tool 'no_handler' has no 'handler' function (got nil)",
      },
      {
        file: at('d_returns_string.lua'),
        message:
          'd_returns_string.lua: a tool file must return a table {name, description, parameters, handler} (or a list of them); it returned a string',
      },
      {
        file: at('e_bad_name.lua'),
        message: "e_bad_name.lua: 'name' must be a string matching ^[a-zA-Z0-9_-]{1,64}$",
      },
      { file: at('g_duplicate.lua'), message: `tool 'echo' is already defined by ${at('f_echo.lua')}` },
    ]);
    expect(logs.filter((e) => e.level === 'error' && e.message.includes('did not load'))).toHaveLength(6);
    expect(await src.call('echo', { text: 'hi' }, ctx(MIXED))).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'hi' }],
    });
  });

  it('declares parameters as JSON Schema (a missing one is an empty object schema)', async () => {
    const src = await LuaToolSource.fromDir(MIXED);
    expect(src.list()).toEqual([
      {
        name: 'echo',
        description: 'Echo the text argument back.',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string', description: 'What to echo.' } },
          required: ['text'],
        },
      },
      { name: 'no_params', description: 'takes nothing', inputSchema: { type: 'object', properties: {} } },
    ]);
  });

  it('includeBuiltins adds the package lua/ dir (read)', async () => {
    const src = await LuaToolSource.fromDir(MIXED, { includeBuiltins: true });
    expect(src.list().map((d) => d.name)).toEqual(['read', 'echo', 'no_params']);
    expect(LuaToolSource.builtinDir()).toBe(path.resolve(import.meta.dirname, '..', '..', 'lua'));
  });

  it('unknown tool names reject with ERR_UNKNOWN_TOOL; bad options throw typed errors', async () => {
    const src = await LuaToolSource.fromDir(MIXED);
    await expect(src.call('nope', {}, ctx(MIXED))).rejects.toSatisfy((e) =>
      isPantoError(e, 'ERR_UNKNOWN_TOOL'),
    );
    await expect(LuaToolSource.fromDir(path.join(MIXED, 'missing-dir'))).rejects.toSatisfy((e) =>
      isPantoError(e, 'ERR_TOOL_LOAD'),
    );
    await expect(LuaToolSource.fromDir(MIXED, { budgets: { instructions: -1 } })).rejects.toSatisfy((e) =>
      isPantoError(e, 'ERR_INVALID_ARGUMENT'),
    );
    await expect(
      LuaToolSource.fromDir(MIXED, { workspaceRoot: path.join(MIXED, 'no-such-root') }),
    ).rejects.toSatisfy((e) => isPantoError(e, 'ERR_INVALID_ARGUMENT'));
  });

  it('a .lua symlink to a FIFO or a device, or an over-cap .lua file: one load error each, nothing blocks or is read whole', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'panto-lua-hostile-'));
    try {
      // A FIFO named *.lua is not listed (not a file); a .lua symlink to one is, and must not block the load.
      execFileSync('mkfifo', [path.join(dir, 'fifo')]);
      await symlink(path.join(dir, 'fifo'), path.join(dir, 'pipe.lua'));
      await symlink('/dev/zero', path.join(dir, 'zero.lua'));
      // Sparse: 4 MiB + 1 byte, over the cap of a tool file.
      await writeFile(path.join(dir, 'big.lua'), 'return {}\n');
      await truncate(path.join(dir, 'big.lua'), 4 * 1024 * 1024 + 1);
      const src = await LuaToolSource.fromDir(dir);
      expect(src.list()).toEqual([]);
      expect(src.loadErrors).toEqual([
        {
          file: path.join(dir, 'big.lua'),
          message: `big.lua: over the ${4 * 1024 * 1024}-byte cap of a tool file; not read`,
        },
        { file: path.join(dir, 'pipe.lua'), message: 'pipe.lua: a FIFO, not a regular file; not read' },
        {
          file: path.join(dir, 'zero.lua'),
          message: 'zero.lua: a character device, not a regular file; not read',
        },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
