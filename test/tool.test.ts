import { describe, expect, it } from 'vitest';
import { isPantoError } from '../src/errors.js';
import { defineTool, normalizeToolOutput, type ResultPart } from '../src/tool.js';

const schema = { type: 'object', properties: {} };

describe('defineTool', () => {
  it('returns the tool itself, typed', () => {
    const invoke = (args: { n: number }) => `n=${args.n}`;
    const tool = defineTool<{ n: number }>({
      name: 'count_up',
      description: 'd',
      inputSchema: schema,
      invoke,
    });
    expect(tool.name).toBe('count_up');
    expect(tool.invoke).toBe(invoke);
  });

  it.each([
    ['a name providers reject', { name: 'has space', description: 'd', inputSchema: schema }, /must match/],
    ['a name longer than 64', { name: 'x'.repeat(65), description: 'd', inputSchema: schema }, /must match/],
    [
      'a non-object schema',
      { name: 'ok', description: 'd', inputSchema: { type: 'string' } },
      /type 'object'/,
    ],
    ['a missing schema', { name: 'ok', description: 'd', inputSchema: undefined }, /inputSchema/],
    ['a non-string description', { name: 'ok', description: 3, inputSchema: schema }, /description/],
  ])('throws ERR_INVALID_ARGUMENT for %s', (_what, decl, message) => {
    try {
      defineTool({
        ...(decl as { name: string; description: string; inputSchema: { type: string } }),
        invoke: () => '',
      });
      expect.unreachable();
    } catch (err) {
      expect(isPantoError(err, 'ERR_INVALID_ARGUMENT')).toBe(true);
      expect((err as Error).message).toMatch(message);
    }
  });

  it('throws when invoke is not a function', () => {
    expect(() =>
      defineTool({
        name: 'ok',
        description: 'd',
        inputSchema: schema,
        invoke: 'nope' as unknown as () => string,
      }),
    ).toThrow(/invoke must be a function/);
  });
});

describe('normalizeToolOutput', () => {
  const bytes = new Uint8Array([1, 2, 3]);

  it('turns a string into one text part', () => {
    expect(normalizeToolOutput('hello')).toEqual({ parts: [{ type: 'text', text: 'hello' }] });
  });

  it('keeps parts in order and passes media bytes by reference', () => {
    const parts: ResultPart[] = [
      { type: 'text', text: 'a' },
      { type: 'media', data: bytes, mediaType: 'image/png', name: 'x.png' },
      { type: 'text', text: 'b' },
    ];
    const out = normalizeToolOutput(parts);
    expect(out.parts).toEqual(parts);
    expect((out.parts[1] as { data: Uint8Array }).data).toBe(bytes);
  });

  it('keeps meta from {parts, meta}', () => {
    expect(normalizeToolOutput({ parts: [], meta: { path: '/a' } })).toEqual({
      parts: [],
      meta: { path: '/a' },
    });
    expect(normalizeToolOutput({ parts: [] })).toEqual({ parts: [] });
  });

  it.each([
    ['a number', 42, /tool returned a number/],
    ['null', null, /tool returned null/],
    ['an object without parts', { text: 'x' }, /an object with keys \[text\]/],
    [
      'a part of unknown type',
      [{ type: 'image', data: 'abc' }],
      /part 0 is an object with keys \[type, data\]/,
    ],
    ['media with base64 instead of bytes', [{ type: 'media', data: 'aGk=' }], /part 0/],
    [
      'media with a non-string hint',
      [{ type: 'media', data: bytes, mediaType: 5 }],
      /part 0 has mediaType a number/,
    ],
    ['media with a non-string name', [{ type: 'media', data: bytes, name: {} }], /part 0 has name/],
    ['a hole', [{ type: 'text', text: 'a' }, undefined], /part 1 is undefined/],
    ['meta that is not a plain object', { parts: [], meta: [1] }, /meta as an array/],
  ])('throws a TypeError naming the problem for %s', (_what, value, message) => {
    expect(() => normalizeToolOutput(value as never)).toThrow(TypeError);
    expect(() => normalizeToolOutput(value as never)).toThrow(message);
  });
});
