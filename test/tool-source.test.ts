import { describe, expect, it } from 'vitest';
import { isPantoError } from '../src/errors.js';
import { defineTool, type Tool, type ToolContext } from '../src/tool.js';
import { errorMessage, StaticToolSource, ToolRegistry, type ToolSource } from '../src/tool-source.js';

const schema = { type: 'object', properties: {} };
const tool = (name: string, out: () => unknown = () => name): Tool =>
  defineTool({ name, description: `${name} tool`, inputSchema: schema, invoke: out as () => string });

const ctx: ToolContext = {
  signal: new AbortController().signal,
  workspaceRoot: '/tmp',
  toolCallId: 'c1',
  update: () => {},
};

function duplicateMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(isPantoError(err, 'ERR_DUPLICATE_TOOL')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected ERR_DUPLICATE_TOOL');
}

describe('StaticToolSource', () => {
  it('lists declarations without invoke and calls tools by name', async () => {
    const src = new StaticToolSource([tool('a'), tool('b')], 'mine');
    expect(src.list()).toEqual([
      { name: 'a', description: 'a tool', inputSchema: schema },
      { name: 'b', description: 'b tool', inputSchema: schema },
    ]);
    expect(await src.call('b', {}, ctx)).toEqual({ ok: true, parts: [{ type: 'text', text: 'b' }] });
  });

  it('turns a throwing tool into {ok:false, error}', async () => {
    const src = new StaticToolSource([
      tool('boom', () => {
        throw new Error('it broke');
      }),
    ]);
    expect(await src.call('boom', {}, ctx)).toEqual({ ok: false, error: 'it broke' });
  });

  it('rejects with ERR_UNKNOWN_TOOL for a name it does not have', async () => {
    await expect(new StaticToolSource([tool('a')]).call('zz', {}, ctx)).rejects.toMatchObject({
      code: 'ERR_UNKNOWN_TOOL',
    });
  });

  it('refuses a name defined twice', () => {
    expect(duplicateMessage(() => new StaticToolSource([tool('a'), tool('a')], 'mine'))).toBe(
      "tool 'a' is defined twice in source 'mine'",
    );
  });
});

describe('ToolRegistry', () => {
  const lua: ToolSource = {
    name: 'lua:/tools',
    list: () => [{ name: 'read', description: 'read a file', inputSchema: schema }],
    call: async () => ({ ok: true, parts: [{ type: 'text', text: 'from lua' }] }),
  };

  it('presents several sources as one and routes calls to the owner', async () => {
    const reg = new ToolRegistry([[tool('a')], lua]);
    expect(reg.list().map((d) => d.name)).toEqual(['a', 'read']);
    expect(reg.has('read')).toBe(true);
    expect(reg.get('a')?.description).toBe('a tool');
    expect(await reg.call('read', {}, ctx)).toEqual({
      ok: true,
      parts: [{ type: 'text', text: 'from lua' }],
    });
    expect(await reg.call('a', {}, ctx)).toEqual({ ok: true, parts: [{ type: 'text', text: 'a' }] });
    await expect(reg.call('zz', {}, ctx)).rejects.toMatchObject({ code: 'ERR_UNKNOWN_TOOL' });
  });

  it('names both sources when two offer one name, and adds nothing of the clashing source', () => {
    const reg = new ToolRegistry([lua]);
    const clash = new StaticToolSource([tool('write'), tool('read')], 'builtin');
    expect(duplicateMessage(() => reg.add(clash))).toBe(
      "tool 'read' is offered by both 'lua:/tools' and 'builtin'; rename one of them",
    );
    expect(reg.has('write')).toBe(false);
  });

  it('gives plain tool lists distinct names in clash messages', () => {
    expect(duplicateMessage(() => new ToolRegistry([[tool('a')], [tool('a')]]))).toBe(
      "tool 'a' is offered by both 'tools' and 'tools#2'; rename one of them",
    );
  });

  it('refuses a source that lists one name twice', () => {
    const twice: ToolSource = { ...lua, name: 'twice', list: () => [...lua.list(), ...lua.list()] };
    expect(duplicateMessage(() => new ToolRegistry([twice]))).toBe(
      "tool 'read' is offered twice by source 'twice'",
    );
  });
});

describe('errorMessage', () => {
  it('reads Errors, strings and other values', () => {
    expect(errorMessage(new Error('m'))).toBe('m');
    expect(errorMessage(new RangeError(''))).toBe('RangeError');
    expect(errorMessage('s')).toBe('s');
    expect(errorMessage({ a: 1 })).toBe('{"a":1}');
    expect(errorMessage(undefined)).toBe('undefined');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorMessage(cyclic)).toBe('[object Object]');
  });
});
