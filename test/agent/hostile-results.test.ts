/**
 * Hostile tool outcomes through `dispatchToolCalls`: a source breaking the `CallResult` contract, recursive schemas
 * meeting deeply nested arguments, `__proto__` keys in arguments. Each call must end as exactly one result the model
 * can read (never a rejection, never a malformed part stored in the conversation) and `Object.prototype` stays clean.
 */

import { describe, expect, it } from 'vitest';
import type { StoredPart, TextPart, ToolCallBlock, ToolResultBlock } from '../../src/conversation.js';
import { defineTool } from '../../src/tool.js';
import { type CallResult, StaticToolSource, type ToolSource } from '../../src/tool-source.js';
import { dispatchToolCalls } from '../../src/tools/index.js';
import { validateArgs } from '../../src/tools/validate-args.js';

function call(name: string, input: Record<string, unknown> = {}, id = `${name}-1`): ToolCallBlock {
  return { type: 'tool_call', id, name, input };
}

function textOf(result: ToolResultBlock | undefined): string {
  return (result?.parts ?? [])
    .filter((p): p is TextPart => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

/** A source whose one tool `t` resolves to `out` (a value breaking the contract, typed as if it did not). */
function sourceReturning(out: unknown): ToolSource {
  return {
    name: 'hostile',
    list: () => [{ name: 't', description: 'hostile', inputSchema: { type: 'object' } }],
    call: async () => out as CallResult,
  };
}

/** Every stored part is one the conversation types allow. */
function expectWellFormedParts(parts: readonly StoredPart[]): void {
  for (const p of parts) {
    if (p.type === 'text') expect(typeof p.text).toBe('string');
    else {
      expect(typeof p.data).toBe('string');
      expect(p.data.length).toBeGreaterThan(0);
    }
  }
}

describe('a tool source breaking the CallResult contract', () => {
  const cases: Array<[string, unknown]> = [
    [
      'a part of unknown type',
      {
        ok: true,
        parts: [
          { type: 'text', text: 'a' },
          { type: 'audio', data: 'x' },
        ],
      },
    ],
    ['a text part whose text is a number', { ok: true, parts: [{ type: 'text', text: 42 }] }],
    ['a media part whose data is a string', { ok: true, parts: [{ type: 'media', data: 'iVBORw0KGgo=' }] }],
    ['a null part', { ok: true, parts: [null] }],
    ['parts that are not an array', { ok: true, parts: 'hello' }],
    ['no parts at all', { ok: true }],
    ['undefined', undefined],
    ['an error that is not a string', { ok: false, error: { code: 1 } }],
  ];
  it.each(cases)('%s: one error result the model can read, nothing malformed stored', async (_, out) => {
    const [result] = await dispatchToolCalls([call('t')], { tools: sourceReturning(out) });
    expect(result?.toolUseId).toBe('t-1');
    expect(result?.isError).toBe(true);
    expectWellFormedParts(result?.parts ?? []);
    expect(textOf(result)).toMatch(/\S/);
  });
});

describe('arguments against a recursive schema', () => {
  const tree = {
    type: 'object',
    $defs: { node: { type: 'object', properties: { a: { $ref: '#/$defs/node' } } } },
    properties: { a: { $ref: '#/$defs/node' } },
  };

  it('nesting 100k levels deep is a failed check the model can read, not a RangeError', () => {
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}{}${'}'.repeat(100_000)}`) as Record<string, unknown>;
    const check = validateArgs('tree', tree, deep);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toContain('tree');
  });

  it('through dispatch: an error result naming the tool, and the tool never runs', async () => {
    let ran = false;
    const tool = defineTool({
      name: 'tree',
      description: 'walks a tree',
      inputSchema: tree as never,
      invoke: () => {
        ran = true;
        return 'ok';
      },
    });
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}{}${'}'.repeat(100_000)}`) as Record<string, unknown>;
    const [result] = await dispatchToolCalls([call('tree', deep)], { tools: new StaticToolSource([tool]) });
    expect(ran).toBe(false);
    expect(result?.isError).toBe(true);
    expect(textOf(result)).toContain('tree');
    expect(textOf(result)).not.toContain("tool source 'tools' failed");
  });

  it('a shallow tree still validates', () => {
    expect(validateArgs('tree', tree, { a: { a: { a: {} } } })).toEqual({ ok: true });
  });
});

describe('__proto__ keys in arguments', () => {
  it('validate and reach the tool as own data; Object.prototype stays clean', async () => {
    let seen: Record<string, unknown> | undefined;
    const tool = defineTool({
      name: 'obj',
      description: 'takes anything',
      inputSchema: { type: 'object', properties: { x: { type: 'object' } }, additionalProperties: true },
      invoke: (args) => {
        seen = args;
        return 'ok';
      },
    });
    const input = JSON.parse(
      '{"__proto__": {"polluted": 1}, "x": {"constructor": {"prototype": {"p2": 1}}}}',
    );
    const [result] = await dispatchToolCalls([call('obj', input)], { tools: new StaticToolSource([tool]) });
    expect(result?.isError).toBe(false);
    expect(Object.hasOwn(seen ?? {}, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).p2).toBeUndefined();
  });

  it('a schema rejecting extra keys names the __proto__ key in its message', () => {
    const input = JSON.parse('{"__proto__": {"polluted": 1}}');
    const check = validateArgs('strict', { type: 'object', additionalProperties: false }, input);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toContain('__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
