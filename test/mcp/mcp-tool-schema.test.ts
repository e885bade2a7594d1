import { describe, expect, it } from 'vitest';
import { validateArgs } from '../../src/agent/validate-args.js';
import { MAX_DESCRIPTION_CHARS, safeDescription, safeInputSchema } from '../../src/mcp/mcp-tool-schema.js';

const EVIL = '^(a|a)*$';

describe('safeInputSchema', () => {
  it('moves every regex keyword, however nested, into a description; a property NAMED pattern stays', () => {
    const raw = {
      type: 'object',
      properties: {
        s: { type: 'string', pattern: EVIL, description: 'a name.' },
        pattern: { type: 'string' },
        list: { type: 'array', items: { type: 'string', pattern: EVIL } },
        either: { anyOf: [{ type: 'string', pattern: EVIL }, { type: 'number' }] },
        map: {
          type: 'object',
          patternProperties: { '^(x+)+$': { type: 'string' } },
          additionalProperties: false,
        },
        keys: { type: 'object', propertyNames: { pattern: EVIL } },
      },
      $defs: { d: { type: 'string', pattern: EVIL } },
    };
    const out = safeInputSchema(raw);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(JSON.stringify(out.schema)).not.toMatch(/"pattern(Properties)?":"/);
    const props = out.schema.properties as Record<string, Record<string, unknown>>;
    expect(props.s).toEqual({
      type: 'string',
      description: `a name. Must match the regular expression ${EVIL} (checked by the server).`,
    });
    expect(props.pattern).toEqual({ type: 'string' });
    expect(props.map).toEqual({
      type: 'object',
      description: 'Property names matching ^(x+)+$ are allowed (checked by the server).',
    });
    // The argument validator now finishes at once on input that would have backtracked for hours.
    const attack = `${'a'.repeat(40)}!`;
    const args = { s: attack, list: [attack], either: attack, map: { [`${'x'.repeat(40)}!`]: 'v' } };
    expect(validateArgs('t', out.schema, args)).toEqual({ ok: true });
    expect(validateArgs('t', out.schema, { s: 1 })).toMatchObject({ ok: false });
  });

  it('keeps __proto__ keys as plain data and leaves the prototype alone', () => {
    const raw = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","pattern":"x"}}}');
    const out = safeInputSchema(raw);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const props = out.schema.properties as object;
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
    expect(Object.keys(props)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });

  it('refuses a schema nested deeper than 64 levels or over 256 KiB of JSON; a non-object becomes the empty object schema', () => {
    const deep = JSON.parse(
      `${'{"type":"object","properties":{"x":'.repeat(10_000)}{}${'}}'.repeat(10_000)}`,
    );
    expect(safeInputSchema(deep)).toEqual({
      ok: false,
      problem: 'its input schema nests deeper than 64 levels',
    });
    const big = { type: 'object', properties: { s: { type: 'string', description: 'd'.repeat(300_000) } } };
    expect(safeInputSchema(big)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/over the limit of 262144/),
    });
    expect(safeInputSchema({ type: 'string' })).toEqual({ ok: true, schema: { type: 'object' } });
    expect(safeInputSchema('nope')).toEqual({ ok: true, schema: { type: 'object' } });
    expect(safeInputSchema([1])).toEqual({ ok: true, schema: { type: 'object' } });
  });
});

describe('safeDescription', () => {
  it('cuts a description over the limit and says how long it was', () => {
    expect(safeDescription('short')).toBe('short');
    const cut = safeDescription('L'.repeat(1_000_000));
    expect(cut).toBe(`${'L'.repeat(MAX_DESCRIPTION_CHARS)}… [description cut: 1000000 characters]`);
  });
});
