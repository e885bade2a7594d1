import { describe, expect, it } from 'vitest';
import { MAX_DESCRIPTION_CHARS, safeDescription, safeInputSchema } from '../../src/mcp/mcp-tool-schema.js';
import { validateArgs } from '../../src/tools/validate-args.js';

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

describe('safeInputSchema: no pattern reaches Ajv by another road', () => {
  const attack = `${'a'.repeat(40)}!`;
  /** The schema JSON with the data keywords' values taken out: no `"pattern":"…"` may be left. */
  function patternsOutsideData(schema: unknown): string[] {
    const found: string[] = [];
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (typeof v === 'object' && v !== null) {
        for (const [k, x] of Object.entries(v)) {
          if (['const', 'enum', 'default', 'examples', 'example'].includes(k)) continue;
          if (k === 'pattern' && typeof x === 'string') found.push(x);
          visit(x);
        }
      }
    };
    visit(schema);
    return found;
  }

  it('walks an unknown keyword a $ref reaches, and draft-07 dependencies', () => {
    const viaRef = {
      type: 'object',
      properties: { x: { $ref: '#/x-defs/p' } },
      'x-defs': { p: { type: 'string', pattern: EVIL } },
    };
    const viaDependencies = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { x: { type: 'string' }, y: {} },
      dependencies: { y: { properties: { x: { pattern: EVIL } } }, x: ['y'] },
    };
    for (const raw of [viaRef, viaDependencies]) {
      const out = safeInputSchema(raw);
      expect(out.ok).toBe(true);
      if (!out.ok) return;
      expect(patternsOutsideData(out.schema)).toEqual([]);
      expect(validateArgs('t', out.schema, { x: attack, y: 1 })).toEqual({ ok: true });
    }
    const dep = safeInputSchema(viaDependencies);
    // The string-array form of `dependencies` still holds.
    if (dep.ok) expect(validateArgs('t', dep.schema, { x: 'a' })).toMatchObject({ ok: false });
  });

  it('refuses a $ref into data (const, enum, default, examples), also percent- or ~-encoded or undecodable', () => {
    for (const ref of [
      '#/const',
      '#/properties/a/default/p',
      '#/%65num/0',
      '#/examples/0',
      'other.json#/const',
    ]) {
      const raw = {
        type: 'object',
        const: { type: 'string', pattern: EVIL },
        properties: { a: { default: { p: {} } }, x: { $ref: ref } },
      };
      expect(safeInputSchema(raw)).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/\$ref into data/),
      });
    }
    expect(safeInputSchema({ properties: { x: { $ref: '#/%E0%A4%A' } } })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/cannot be decoded/),
    });
    // A property NAMED const is not data; `~1` unescapes to `/`.
    const named = safeInputSchema({
      type: 'object',
      properties: {
        const: { type: 'string' },
        'a/b': { type: 'number' },
        x: { $ref: '#/properties/const' },
        y: { $ref: '#/properties/a~1b' },
      },
    });
    expect(named.ok).toBe(true);
    if (named.ok) expect(validateArgs('t', named.schema, { x: 1 })).toMatchObject({ ok: false });
  });

  it('drops unevaluatedProperties with patternProperties, so names the patterns allowed stay allowed', () => {
    const raw = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: {} },
      patternProperties: { '^x-': {} },
      unevaluatedProperties: false,
    };
    const out = safeInputSchema(raw);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(validateArgs('t', raw, { a: 1, 'x-foo': 1 })).toEqual({ ok: true });
    expect(validateArgs('t', out.schema, { a: 1, 'x-foo': 1 })).toEqual({ ok: true });
    expect(out.schema).not.toHaveProperty('unevaluatedProperties');
    // Also when the patternProperties sit in a subschema the parent's unevaluatedProperties looks through.
    const nested = safeInputSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      allOf: [{ patternProperties: { '^x-': {} } }],
      unevaluatedProperties: false,
    });
    expect(nested.ok && validateArgs('t', nested.schema, { 'x-foo': 1 })).toEqual({ ok: true });
  });
});
