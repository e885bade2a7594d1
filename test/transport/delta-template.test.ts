import { describe, expect, it } from 'vitest';
import { DeltaTemplate, DeltaTemplateSet } from '../../src/providers/common/delta-template.js';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createStreamParser } from '../../src/providers/create-stream-parser.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';

const anthropicDelta = (text: string, index = 0, type = 'text_delta', field = 'text') =>
  JSON.stringify({ type: 'content_block_delta', index, delta: { type, [field]: text } });

const readText = (p: Record<string, unknown>) => (p.delta as Record<string, unknown> | undefined)?.text;

/** Texts that exercise every JSON string escape, astral characters and lone surrogates. */
const HARD_TEXTS = [
  '',
  'plain',
  'quote " and backslash \\ and slash /',
  'tab\tnewline\ncr\r\u0000\u001f\u007f',
  'naïve café — 日本語 🎉',
  '\ud83d', // a lone surrogate: JSON.stringify escapes it
  '"}}',
  '\\',
];

describe('DeltaTemplate', () => {
  it('reads back exactly what JSON.parse reads, for every kind of string', () => {
    const t = DeltaTemplate.learn(anthropicDelta('seed'), 'text', readText, 0);
    expect(t).toBeDefined();
    for (const text of HARD_TEXTS) {
      const data = anthropicDelta(text);
      expect(t?.match(data)).toBe(readText(JSON.parse(data)));
    }
    // Escapes a server may choose that JSON.stringify does not produce.
    const escaped = anthropicDelta('x').replace('"x"', '"\\u00e9\\/\\b\\f"');
    expect(t?.match(escaped)).toBe('é/\b\f');
  });

  it('refuses anything that is not one valid string literal in the learned position', () => {
    const t = DeltaTemplate.learn(anthropicDelta('seed'), 'text', readText, 0);
    const base = anthropicDelta('x');
    const bad = [
      base.replace('"x"', '"a","b":"c"'), // two members: valid JSON, another shape
      base.replace('"x"', '"a\tb"'), // raw control character: JSON.parse rejects it
      base.replace('"x"', '"bad \\q escape"'),
      base.replace('"x"', '"lone\\"'),
      base.replace('"x"', '42'),
      base.replace('"x"', 'null'),
      base.replace('"index":0', '"index":1'),
      `${base} `,
      base.slice(0, -1),
      anthropicDelta('x', 0, 'thinking_delta', 'thinking'),
    ];
    for (const data of bad) expect(t?.match(data), data).toBeUndefined();
  });

  it('learns the field the reader names, not an earlier member with the same key and value', () => {
    const data = JSON.stringify({ meta: { text: 'same' }, delta: { text: 'same' } });
    const t = DeltaTemplate.learn(data, 'text', readText, 0);
    expect(t?.match(JSON.stringify({ meta: { text: 'same' }, delta: { text: 'other' } }))).toBe('other');
    expect(t?.match(JSON.stringify({ meta: { text: 'other' }, delta: { text: 'same' } }))).toBeUndefined();
  });

  it('accepts any plain obfuscation string and any integer sequence number, nothing else, in those holes', () => {
    const event = (delta: string, seq: string, obf: string) =>
      `{"type":"response.output_text.delta","sequence_number":${seq},"item_id":"msg_1","output_index":0,"delta":${JSON.stringify(delta)},"logprobs":[],"obfuscation":${obf}}`;
    const read = (p: Record<string, unknown>) => p.delta;
    const t = DeltaTemplate.learn(event('seed', '4', '"VLMd"'), 'delta', read, 0);
    expect(t?.match(event('Hello', '5', '"abc"'))).toBe('Hello');
    expect(t?.match(event('a\\"b', '1234', '""'))).toBe('a\\"b');
    expect(t?.match(event('x', '0', '"q"'))).toBe('x');
    for (const bad of [
      event('x', '05', '"q"'),
      event('x', '-1', '"q"'),
      event('x', '1.5', '"q"'),
      event('x', '', '"q"'),
      event('x', '5', '"a\\nb"'),
      event('x', '5', '"a\tb"'.replace('\\t', '\t')),
      event('x', '5', '5'),
      event('x', '5', '"unterminated'),
    ]) {
      expect(t?.match(bad), bad).toBeUndefined();
    }
    // The probe proves the position whatever the holes hold; JSON.parse agrees on every accepted event.
    const ok = event('Hi there', '987', '"zz"');
    expect(t?.match(ok)).toBe(JSON.parse(ok).delta);
  });

  it('does not learn a shape whose field it cannot find', () => {
    expect(DeltaTemplate.learn('{"delta":{"text":5}}', 'text', readText, 0)).toBeUndefined();
    expect(DeltaTemplate.learn('{"delta":{}}', 'text', readText, 0)).toBeUndefined();
  });

  it('keeps a few shapes per stream and stops learning when shapes keep changing', () => {
    const set = new DeltaTemplateSet<number>();
    for (let i = 0; i < 100; i++) {
      set.learn(anthropicDelta('seed', i), 'text', readText, i);
    }
    // The budget ran out after 32 learns; the last four learned are kept.
    expect(set.match(anthropicDelta('v', 31))).toBe(true);
    expect(set.tag).toBe(31);
    expect(set.match(anthropicDelta('v', 28))).toBe(true);
    expect(set.match(anthropicDelta('v', 27))).toBe(false);
    expect(set.match(anthropicDelta('v', 40))).toBe(false);
  });
});

function run(api: ModelApi, datas: Array<[string, string]>) {
  const out: StreamEvent[] = [];
  const parser = createStreamParser(api, (e) => out.push(e));
  for (const [event, data] of datas) parser.accept({ event, data, id: '' });
  return { parser, out };
}

describe('stream parsers with learned delta shapes', () => {
  it('Anthropic: text, thinking and tool deltas read as the full parse reads them, across blocks', () => {
    const texts = HARD_TEXTS.concat(HARD_TEXTS);
    const events: Array<[string, string]> = [
      ['message_start', JSON.stringify({ type: 'message_start', message: { model: 'm', usage: {} } })],
      [
        'content_block_start',
        JSON.stringify({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'thinking', thinking: '' },
        }),
      ],
      ...texts.map((t): [string, string] => [
        'content_block_delta',
        anthropicDelta(t, 0, 'thinking_delta', 'thinking'),
      ]),
      ['content_block_stop', JSON.stringify({ type: 'content_block_stop', index: 0 })],
      [
        'content_block_start',
        JSON.stringify({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
      ],
      ...texts.map((t): [string, string] => ['content_block_delta', anthropicDelta(t, 1)]),
      ['content_block_stop', JSON.stringify({ type: 'content_block_stop', index: 1 })],
      [
        'content_block_start',
        JSON.stringify({
          type: 'content_block_start',
          index: 2,
          content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} },
        }),
      ],
      ...['{"a":', '"x\\"y"', '}'].map((t): [string, string] => [
        'content_block_delta',
        anthropicDelta(t, 2, 'input_json_delta', 'partial_json'),
      ]),
      ['content_block_stop', JSON.stringify({ type: 'content_block_stop', index: 2 })],
      ['message_stop', JSON.stringify({ type: 'message_stop' })],
    ];
    const { parser, out } = run('anthropic-messages', events);
    const message = parser.result();
    expect(message.content).toEqual([
      { type: 'thinking', text: texts.join('') },
      { type: 'text', text: texts.join('') },
      { type: 'tool_call', id: 't1', name: 'f', input: { a: 'x"y' } },
    ]);
    const deltas = out.filter((e) => e.type === 'text_delta').map((e) => e.text);
    expect(deltas).toEqual(texts.filter((t) => t !== ''));
  });

  it('Anthropic: a malformed event after a learned shape is still a ProviderError', () => {
    const { parser } = run('anthropic-messages', [
      [
        'content_block_start',
        JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ],
      ['content_block_delta', anthropicDelta('a')],
      ['content_block_delta', anthropicDelta('b')],
    ]);
    const broken = anthropicDelta('x').replace('"x"', '"a\tb"');
    expect(() => parser.accept({ event: 'content_block_delta', data: broken, id: '' })).toThrow(
      ProviderError,
    );
  });

  it('OpenAI Chat: plain text chunks read as the full parse reads them; other chunks still take effect', () => {
    let n = 0;
    const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-x',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
        usage: null,
        ...extra,
        obfuscation: 'pad'.repeat(++n % 4),
      });
    const texts = HARD_TEXTS.concat(HARD_TEXTS);
    const events: Array<[string, string]> = [
      ['message', chunk({ role: 'assistant', content: '' })],
      ...texts.map((t): [string, string] => ['message', chunk({ content: t })]),
      ['message', chunk({ reasoning_content: 'think' })],
      ['message', chunk({ content: 'after' })],
      ['message', chunk({ content: ' usage' }, { usage: { prompt_tokens: 3, completion_tokens: 4 } })],
      [
        'message',
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'gpt-x',
          choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'length' }],
        }),
      ],
      ['message', '[DONE]'],
    ];
    const { parser } = run('openai-chat', events);
    const message = parser.result();
    expect(message.stopReason).toBe('max_tokens');
    expect(message.usage).toMatchObject({ inputTokens: 3, outputTokens: 4 });
    // Text after reasoning continues the open text block (the Chat parser's rule, fast path or not).
    expect(message.content).toEqual([
      { type: 'text', text: `${texts.join('')}after usage` },
      { type: 'thinking', text: 'think' },
    ]);
  });
});

describe('OpenAI Responses with learned delta shapes', () => {
  it('reads text, reasoning and argument deltas as the full parse does, whatever the sequence numbers', () => {
    let seq = 0;
    const ev = (o: Record<string, unknown>) =>
      JSON.stringify({ type: o.type, sequence_number: seq++, ...o, obfuscation: 'o'.repeat(seq % 5) });
    const texts = HARD_TEXTS.concat(HARD_TEXTS);
    const events: Array<[string, string]> = [
      ['response.created', ev({ type: 'response.created', response: { model: 'gpt-x' } })],
      ...texts.map((t): [string, string] => [
        'x',
        ev({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: t }),
      ]),
      [
        'x',
        ev({
          type: 'response.output_item.added',
          item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] },
        }),
      ],
      ...texts.map((t): [string, string] => [
        'x',
        ev({ type: 'response.output_text.delta', item_id: 'msg_1', delta: t }),
      ]),
      [
        'x',
        ev({
          type: 'response.output_item.added',
          item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' },
        }),
      ],
      ...['{"a":', '"x\\"y"', '}'].map((t): [string, string] => [
        'x',
        ev({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: t }),
      ]),
      ['x', ev({ type: 'response.refusal.delta', item_id: 'msg_1', delta: ' no' })],
      ['x', ev({ type: 'response.completed', response: { status: 'completed', usage: {} } })],
    ];
    const { parser, out } = run('openai-responses', events);
    const message = parser.result();
    const thinking = message.content.find((b) => b.type === 'thinking');
    const text = message.content.find((b) => b.type === 'text');
    const call = message.content.find((b) => b.type === 'tool_call');
    expect(thinking?.text).toBe(texts.join(''));
    expect(text?.text).toBe(`${texts.join('')} no`);
    expect(call?.input).toEqual({ a: 'x"y' });
    expect(message.stopReason).toBe('refusal');
    expect(out.filter((e) => e.type === 'text_delta').length).toBe(texts.filter((t) => t !== '').length + 1);
  });
});
