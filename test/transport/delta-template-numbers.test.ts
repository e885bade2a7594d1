import { describe, expect, it } from 'vitest';
import { DeltaTemplate } from '../../src/providers/common/delta-template.js';
import type { SseEvent } from '../../src/providers/transport/sse-parser.js';
import { firstDifference, mutate, prng, runBothPaths } from '../helpers/stream-paths.js';

/** A Gemini text chunk as the API sends it (field order and members of a real gemini-3 recording). */
const geminiChunk = (text: string, n: number) =>
  `{"candidates":[{"content":{"parts":[{"text":${JSON.stringify(text)}}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":${n},"totalTokenCount":${194 + n},"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}],"thoughtsTokenCount":185},"modelVersion":"gemini-3-pro-preview","responseId":"bH6LaZW8Fp_3nsEPqtaSwQ4"}`;

const lastText = (p: Record<string, unknown>) => {
  const parts = (
    (p.candidates as Array<Record<string, unknown>> | undefined)?.[0]?.content as
      | Record<string, unknown>
      | undefined
  )?.parts as Array<Record<string, unknown>> | undefined;
  return parts?.at(-1)?.text;
};

function learned() {
  const t = DeltaTemplate.learn(geminiChunk('seed', 5), 'text', lastText, 0, { numbers: true });
  if (t === undefined) throw new Error('the Gemini chunk was not learned');
  return t;
}

/** `data` with the `k`-th number token replaced by `value`. */
function withNumber(data: string, k: number, value: string): string {
  const m = [...data.matchAll(/(?<=[:[,])-?\d+/g)][k] as RegExpMatchArray;
  return data.slice(0, m.index) + value + data.slice((m.index ?? 0) + m[0].length);
}

/** The template's verdict on `data` against JSON.parse's: a match must rebuild exactly what JSON.parse gives. */
function agrees(t: DeltaTemplate<number>, data: string): 'match' | 'no match' {
  const value = t.match(data);
  if (value === undefined) return 'no match';
  const parsed: unknown = JSON.parse(data); // a match on text JSON.parse rejects would throw here
  expect(firstDifference(t.object(value), parsed), data).toBeUndefined();
  return 'match';
}

describe('DeltaTemplate with number holes (object templates)', () => {
  it('learns a Gemini chunk: every usage count is a hole, read as JSON.parse reads it', () => {
    const t = learned();
    expect(t.isObject).toBe(true);
    expect(t.match(geminiChunk('Hello', 17))).toBe('Hello');
    expect(t.numbers).toEqual([0, 9, 17, 211, 9, 185]);
    expect(agrees(t, geminiChunk('Hello', 17))).toBe('match');
  });

  it('accepts any JSON number in a hole, with the value JSON.parse gives (huge, exponent, negative, -0)', () => {
    const t = learned();
    const numbers = [
      '0',
      '-0',
      '-12',
      '123456789012345678901234567890',
      '9007199254740993',
      '999999999999999',
      '1e400',
      '-1e400',
      '1E+2',
      '1.5e-7',
      '0.1',
      '-0.0e-0',
      '4.9e-325',
    ];
    for (let k = 0; k < 6; k++) {
      for (const n of numbers) expect(agrees(t, withNumber(geminiChunk('x', 1), k, n)), n).toBe('match');
    }
  });

  it('refuses what is not a JSON number, so JSON.parse decides (and rejects) it', () => {
    const t = learned();
    const bad = ['01', '1.', '.5', '+1', '-', '1e', '1e+', '--1', 'NaN', 'Infinity', '0x10', '1_000', '"7"'];
    for (const n of bad) {
      const data = withNumber(geminiChunk('x', 1), 2, n);
      expect(t.match(data), n).toBeUndefined();
    }
    // Valid JSON of another kind in a number hole is another shape: no match, JSON.parse reads it in full.
    for (const n of ['null', 'true', '[]', '{}']) {
      const data = withNumber(geminiChunk('x', 1), 2, n);
      expect(t.match(data), n).toBeUndefined();
      expect(() => JSON.parse(data)).not.toThrow();
    }
  });

  it('reads unicode escapes in the text exactly, and refuses broken ones', () => {
    const t = learned();
    const base = geminiChunk('x', 3);
    for (const esc of ['\\u00e9', '\\ud83d\\ude00', '\\ud800', '\\u0000', '\\"\\\\\\/\\b\\f\\n\\r\\t']) {
      expect(agrees(t, base.replace('"text":"x"', `"text":"a${esc}b"`)), esc).toBe('match');
    }
    for (const esc of ['\\q', '\\u12', '\\u12g4', '\\ ', '\\x41']) {
      expect(t.match(base.replace('"text":"x"', `"text":"a${esc}b"`)), esc).toBeUndefined();
    }
  });

  it('refuses every truncation of a chunk', () => {
    const t = learned();
    const data = geminiChunk('some text', 42);
    for (let i = 0; i < data.length; i++) expect(t.match(data.slice(0, i))).toBeUndefined();
    expect(t.match(`${data}x`)).toBeUndefined();
  });

  it('does not match a chunk that differs only in member order or whitespace', () => {
    const t = learned();
    const data = geminiChunk('x', 4);
    const v = JSON.parse(data);
    const reordered = JSON.stringify({ ...v, usageMetadata: { totalTokenCount: 1, ...v.usageMetadata } });
    expect(t.match(reordered)).toBeUndefined();
    expect(t.match(JSON.stringify(v, null, 1))).toBeUndefined();
    expect(t.match(data.replace('"index":0', '"index": 0'))).toBeUndefined();
  });

  it('refuses to learn numbers it cannot place: a duplicate key, or a __proto__ member', () => {
    const dup = '{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":{"n":1,"n":2}}';
    expect(DeltaTemplate.learn(dup, 'text', lastText, 0, { numbers: true })).toBeUndefined();
    const proto = '{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"__proto__":3}';
    expect(DeltaTemplate.learn(proto, 'text', lastText, 0, { numbers: true })).toBeUndefined();
  });
});

/** A Gemini stream of `n` text chunks and a final one, as SSE events. */
function geminiStream(n: number): SseEvent[] {
  const events: SseEvent[] = [];
  for (let i = 0; i < n; i++) events.push({ event: 'message', data: geminiChunk(`token ${i} `, i), id: '' });
  events.push({
    event: 'message',
    data: geminiChunk('.', n).replace('"index":0', '"finishReason":"STOP","index":0'),
    id: '',
  });
  return events;
}

describe('Gemini stream parser: templates change nothing', () => {
  it('gives the same events and message as the full parse, and the usage of the last chunk', () => {
    const { fast, reference } = runBothPaths('gemini', geminiStream(50));
    expect(fast).toEqual(reference);
    expect(fast.result?.usage).toEqual({ inputTokens: 9, outputTokens: 50 + 185 });
    expect(fast.events.filter((e) => e.type === 'usage')).toHaveLength(51);
  });

  it('hostile numbers, escapes, whitespace, reordering and truncation: same outcome on both paths', () => {
    const rnd = prng(16);
    const base = geminiStream(30);
    let errors = 0;
    for (let k = 0; k < 300; k++) {
      const { fast, reference } = runBothPaths('gemini', mutate(base, rnd, 1 + (k % 4)));
      expect(fast, `mutation ${k}`).toEqual(reference);
      if (fast.error !== undefined) errors++;
    }
    // Some mutations broke the JSON: both paths failed with the same ProviderError and partial message.
    expect(errors).toBeGreaterThan(0);
  });

  it('a chunk whose count becomes a huge number or -1e400 is read as JSON.parse reads it', () => {
    const events = geminiStream(5);
    for (const n of ['123456789012345678901234567890', '-1e400', '1e400', '-0']) {
      const edited = events.map((e, i) => (i === 3 ? { ...e, data: withNumber(e.data, 2, n) } : e));
      const { fast, reference } = runBothPaths('gemini', edited);
      expect(fast, n).toEqual(reference);
    }
  });
});

describe('object templates on hostile shapes', () => {
  it('refuses an event nested deeper than it walks, and the stream still parses it in full', () => {
    const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
    const data = `{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"x":${deep}}`;
    expect(DeltaTemplate.learn(data, 'text', lastText, 0, { numbers: true })).toBeUndefined();
    const events = [0, 1, 2].map((i) => ({ event: 'message', data: data.replace('"a"', `"a${i}"`), id: '' }));
    const { fast, reference } = runBothPaths('gemini', events);
    expect(fast).toEqual(reference);
    expect(fast.result?.content).toEqual([{ type: 'text', text: 'a0a1a2' }]);
  });
});
