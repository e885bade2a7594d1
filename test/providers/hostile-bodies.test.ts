/**
 * Hostile conversations (a restored session, another provider's history, a buggy tool) through the four serializers:
 * each must give a body the surface accepts — checked here against the field rules of the published request schemas
 * (/work/shared/reference/wire-fixtures/schemas: Anthropic `RequestToolUseBlock.id` / `RequestToolResultBlock
 * .tool_use_id` `^[a-zA-Z0-9_-]+$`, `RequestToolUseBlock.name` 1–200 characters, `input` an object; OpenAI Responses
 * `call_id` 1–64 characters; Gemini `FunctionCall.name` / `FunctionResponse.name` `^[a-zA-Z0-9_-]{1,64}$`, `args` a
 * Struct) — with every call still paired with exactly one result, and no throw other than a typed one.
 */

import { describe, expect, it } from 'vitest';
import type {
  AssistantMessage,
  Conversation,
  ImagePart,
  Message,
  StoredPart,
  ToolCallBlock,
} from '../../src/conversation.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { call, jpeg, pdf, png, result, text } from './scenarios.js';
import { solidPng } from './solid-png.js';
import { type Surface, surfaces } from './surfaces.js';
import { expectWireRules, type Json, pairs } from './wire-rules.js';

/** Serialize, check the wire rules and that calls and results pair up one to one in order. */
function serializeChecked(surface: Surface, conversation: Conversation) {
  const out = surface.serialize(conversation, surface.model);
  const body = out.body as Json;
  expectWireRules(surface.api, body);
  const { calls, results } = pairs(surface.api, body);
  expect(results).toEqual(calls);
  if (surface.api !== 'gemini') expect(new Set(calls).size).toBe(calls.length);
  // The body goes over the wire as JSON: it must stringify.
  expect(() => JSON.stringify(body)).not.toThrow();
  return out;
}

function turn(calls: ToolCallBlock[], ...results: ReturnType<typeof result>[]): Message[] {
  return [
    { role: 'assistant', content: calls, stopReason: 'tool_use' },
    { role: 'tool', results },
  ];
}

const go: Message = { role: 'user', content: [text('go')] };

describe.each(surfaces)('hostile history on $api', (surface) => {
  it('ids from any provider (spaces, dots, colons, unicode, 200 characters, empty) stay paired and valid', () => {
    const ids = ['call 1', 'functions.read:0', 'ид-юникод', 'x'.repeat(200), '', 'a.b', 'a b'];
    const calls = ids.map((id) => call(id, 'read', { path: id }) as ToolCallBlock);
    const conversation: Conversation = {
      messages: [go, ...turn(calls, ...ids.map((id) => result(id, 'read', [text(`r ${id}`)])))],
    };
    const { body } = serializeChecked(surface, conversation);
    if (surface.api !== 'gemini') {
      expect(new Set(pairs(surface.api, body as Json).calls).size).toBe(ids.length);
    }
  });

  it('tool names with spaces, unicode, 70 characters or none are sent in a form the surface accepts', () => {
    const names = ['read file', 'lire_fichier_é', 'n'.repeat(70), '', 'mcp.server:tool'];
    const calls = names.map((name, i) => call(`c${i}`, name, {}) as ToolCallBlock);
    const conversation: Conversation = {
      messages: [go, ...turn(calls, ...names.map((name, i) => result(`c${i}`, name, [text('ok')])))],
    };
    serializeChecked(surface, conversation);
  });

  it('missing, duplicate, unknown and out-of-order results: one result per call, in call order', () => {
    const conversation: Conversation = {
      messages: [
        go,
        {
          role: 'assistant',
          content: [call('a', 'read', {}), call('b', 'read', {}), call('c', 'read', {})],
          stopReason: 'tool_use',
        },
        {
          role: 'tool',
          results: [
            result('c', 'read', [text('third')]),
            result('zz', 'read', [text('unknown')]),
            result('a', 'read', [text('first')]),
            result('a', 'read', [text('first again')]),
          ],
        },
      ],
    };
    const out = serializeChecked(surface, conversation);
    const codes = out.warnings.map((w) => w.code);
    expect(codes).toContain('missing-tool-result');
    expect(codes).toContain('orphan-tool-result');
    const json = JSON.stringify(out.body);
    expect(json).toContain('first');
    expect(json).not.toContain('first again');
    expect(json).not.toContain('unknown');
  });

  it('a call id used twice (in one message and again in a later turn) is sent unique, each result with its call', () => {
    const conversation: Conversation = {
      messages: [
        go,
        {
          role: 'assistant',
          content: [call('call_0', 'read', { n: 1 }), call('call_0', 'read', { n: 2 })],
          stopReason: 'tool_use',
        },
        {
          role: 'tool',
          results: [result('call_0', 'read', [text('one')]), result('call_0', 'read', [text('two')])],
        },
        ...turn(
          [call('call_0', 'read', { n: 3 }) as ToolCallBlock],
          result('call_0', 'read', [text('three')]),
        ),
      ],
    };
    const out = serializeChecked(surface, conversation);
    expect(out.warnings).toEqual([]);
    const json = JSON.stringify(out.body);
    expect(json.indexOf('one')).toBeLessThan(json.indexOf('two'));
    expect(json.indexOf('two')).toBeLessThan(json.indexOf('three'));
    if (surface.api !== 'gemini') {
      expect(new Set(pairs(surface.api, out.body as Json).calls).size).toBe(3);
    }
  });

  it("a result whose toolName differs from its call's name is sent under the call's name", () => {
    const conversation: Conversation = {
      messages: [
        go,
        ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'something else', [text('ok')])),
      ],
    };
    serializeChecked(surface, conversation);
  });

  it('a result arriving after a user message (not right after its call) is an orphan; the call gets a synthetic one', () => {
    const conversation: Conversation = {
      messages: [
        go,
        { role: 'assistant', content: [call('c1', 'read', {})], stopReason: 'tool_use' },
        { role: 'user', content: [text('never mind')] },
        { role: 'tool', results: [result('c1', 'read', [text('late')])] },
        { role: 'tool', results: [] },
      ],
    };
    const out = serializeChecked(surface, conversation);
    expect(out.warnings.map((w) => w.code).sort()).toEqual(['missing-tool-result', 'orphan-tool-result']);
    expect(JSON.stringify(out.body)).not.toContain('late');
  });

  it('an assistant message with 200 tool calls gets 200 results', () => {
    const calls = Array.from({ length: 200 }, (_, i) => call(`call_${i}`, 'read', { i }) as ToolCallBlock);
    const conversation: Conversation = {
      messages: [
        go,
        ...turn(calls, ...calls.map((c, i) => result(c.id, 'read', i % 2 ? [] : [text(`r${i}`)]))),
      ],
    };
    const { body } = serializeChecked(surface, conversation);
    expect(pairs(surface.api, body as Json).calls).toHaveLength(200);
  });

  it('a part of unknown type or a malformed part becomes a placeholder, not a crash', () => {
    const bad = [
      { type: 'audio', data: 'AAAA', mediaType: 'audio/wav' },
      { type: 'image' },
      { type: 'image', mediaType: 'image/png', data: 42, width: 1, height: 1 },
      { type: 'document', mediaType: 'application/pdf' },
      { type: 'text' },
      null,
    ] as unknown as StoredPart[];
    const conversation: Conversation = {
      messages: [
        { role: 'user', content: [text('look'), ...bad] },
        ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'read', [text('ok'), ...bad])),
      ],
    };
    const out = serializeChecked(surface, conversation);
    expect(out.media).toEqual([]);
    expect(JSON.stringify(out.body)).toContain('ok');
    expect(out.warnings.map((w) => w.code)).toContain('unsupported-input');
  });

  it('lone surrogates and NUL in text, ids, names and input are sent as well-formed JSON', () => {
    const conversation: Conversation = {
      messages: [
        { role: 'system', content: 'sys \ud800' },
        { role: 'user', content: [text('hi \udc00 there\u0000')] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling \ud83d' },
            call('id\ud800', 'read\udfff', { path: 'a\ud800b', 'k\udc00': ['\ud800'], ok: '\ud83d\ude00' }),
          ],
          stopReason: 'tool_use',
        },
        { role: 'tool', results: [result('id\ud800', 'read\udfff', [text('out \ud800\u0000')])] },
      ],
    };
    const { body } = serializeChecked(surface, conversation);
    const json = JSON.stringify(body);
    expect(json).toContain('\ud83d\ude00');
    expect(json).toContain('\ufffd');
  });

  it('tool-call input that is not an object (array, string, null, number) becomes an object', () => {
    const inputs = [[1, 2], 'rm -rf /', null, 42];
    const calls = inputs.map(
      (input, i) => ({ type: 'tool_call', id: `c${i}`, name: 'read', input }) as unknown as ToolCallBlock,
    );
    const conversation: Conversation = {
      messages: [go, ...turn(calls, ...calls.map((c) => result(c.id, 'read', [text('ok')])))],
    };
    serializeChecked(surface, conversation);
  });

  it('tool-call input nested 100k levels deep (a restored session) gives a body, not a RangeError', () => {
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) as Record<string, unknown>;
    const conversation: Conversation = {
      messages: [
        go,
        ...turn([call('c1', 'read', deep) as ToolCallBlock], result('c1', 'read', [text('ok')])),
        { role: 'user', content: [text('next')] },
      ],
    };
    const out = serializeChecked(surface, conversation);
    expect(JSON.stringify(out.body)).toContain('next');
    expect(out.warnings.length).toBeGreaterThan(0);
  });

  it('__proto__ keys in input are sent as data and never reach Object.prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"p2": 1}}}');
    const conversation: Conversation = {
      messages: [
        go,
        ...turn([call('c1', 'read', input) as ToolCallBlock], result('c1', 'read', [text('ok')])),
      ],
    };
    const { body } = serializeChecked(surface, conversation);
    const round = JSON.parse(JSON.stringify(body));
    expect(({} as Json).polluted).toBeUndefined();
    expect(({} as Json).p2).toBeUndefined();
    expect(JSON.stringify(round)).toContain('polluted');
  });

  it('a stored part is placed as it is: the serializer never reads its bytes (checked where it entered)', () => {
    // A part that lies could only come from a hand-built conversation: what enters through the pipeline, a session
    // file or an Agent's handed-in history was checked there (test/media/stored-media.test.ts).
    const lying: ImagePart = { ...jpeg, mediaType: 'image/png' };
    const empty: ImagePart = { ...png, data: '' };
    const conversation: Conversation = {
      messages: [
        go,
        ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'read', [lying, empty])),
      ],
    };
    const out = serializeChecked(surface, conversation);
    expect(out.media).toHaveLength(1);
    const json = JSON.stringify(out.body);
    expect(json).toContain(jpeg.data);
    expect(json).not.toContain('image/jpeg');
    expect(out.warnings.map((w) => w.code)).toEqual(['unsupported-input']);
  });

  it("the side limit is judged on the stored width/height (the header's, by the entry checks)", () => {
    const max = surface.model.limits.maxImageSide;
    if (max === undefined) return expect(surface.api).not.toBe('anthropic-messages');
    const wide = solidPng(max + 1, 1);
    const conversation: Conversation = {
      messages: [go, ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'read', [wide, png]))],
    };
    const out = serializeChecked(surface, conversation);
    expect(out.media).toHaveLength(1);
    expect(out.warnings.map((w) => w.code)).toEqual(['request-limit']);
  });

  it('150 images stay within the per-request image cap; the newest survive', () => {
    const messages: Message[] = [go];
    for (let i = 0; i < 150; i++) {
      messages.push(
        ...turn([call(`s${i}`, 'screenshot', {}) as ToolCallBlock], result(`s${i}`, 'screenshot', [png])),
      );
    }
    const out = serializeChecked(surface, { messages });
    expect(out.media.length).toBeLessThanOrEqual(surface.model.limits.imagesPerRequest);
    expect(out.media.at(-1)?.key).toBe(`${2 * 149 + 2}:0:0`);
  });

  it('an image over the per-image byte cap is replaced by a placeholder', () => {
    const bytes = Buffer.concat([
      Buffer.from(png.data, 'base64'),
      Buffer.alloc(surface.model.limits.maxImageBytes),
    ]);
    const big: ImagePart = { ...png, data: bytes.toString('base64') };
    const conversation: Conversation = {
      messages: [go, ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'read', [big, png]))],
    };
    const out = serializeChecked(surface, conversation);
    expect(out.media).toHaveLength(1);
    expect(out.warnings.map((w) => w.code)).toContain('request-limit');
  });
});

describe('PDF to a model without PDF support', () => {
  it.each([
    ['anthropic-messages', 'claude-3-haiku-20240307'],
    ['openai-chat', 'gpt-3.5-turbo'],
  ] as const)('%s %s: the PDF becomes a placeholder', (api, id) => {
    const surface = surfaces.find((s) => s.api === api) as Surface;
    const model = resolveModel(id, { api });
    if (model.input.pdf) return expect(model.input.pdf).toBe(false);
    const conversation: Conversation = {
      messages: [go, ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'read', [pdf]))],
    };
    const out = surface.serialize(conversation, model);
    expect(out.media).toEqual([]);
    expect(out.warnings.map((w) => w.code)).toContain('unsupported-input');
  });
});

describe('a session recorded on one provider, resumed on another', () => {
  const foreign = (model: string, id: string, name: string): Message[] => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'looking' }, call(id, name, { path: 'a' })],
      stopReason: 'tool_use',
      model,
    };
    return [assistant, { role: 'tool', results: [result(id, name, [text('done'), png])] }];
  };
  const history: Conversation = {
    messages: [
      go,
      ...foreign('gpt-5', 'fc_68a1|call_Xy.z', 'read file'),
      ...foreign('claude-sonnet-4-5', 'toolu_01ABC', 'read'),
      ...foreign('gemini-3-pro-preview', 'gemini_r1_0', 'mcp.fs:read'),
      { role: 'user', content: [text('continue')] },
    ],
  };
  it.each(surfaces)('on $api: valid ids and names, calls and results paired', (surface) => {
    serializeChecked(surface, history);
  });
});

describe('a 50 MB text result', () => {
  const big = `${'x'.repeat(50 * 1024 * 1024 - 1)}\u{1F600}`;
  it.each(surfaces)(
    'on $api: cut to the text limit with a note, paired, and within the request size',
    (surface) => {
      const conversation: Conversation = {
        messages: [
          go,
          ...turn([call('c1', 'read', {}) as ToolCallBlock], result('c1', 'read', [text(big), text('tail')])),
        ],
      };
      const out = serializeChecked(surface, conversation);
      const json = JSON.stringify(out.body);
      expect(Buffer.byteLength(json)).toBeLessThanOrEqual(surface.model.limits.requestBytes);
      expect(json).toContain('more characters were cut');
      expect(json).not.toContain('tail');
      expect(out.warnings.find((w) => w.code === 'request-limit')?.parts).toEqual(['2:0:0', '2:0:1']);
      if (surface.api === 'openai-responses') {
        const output = (out.body as Json).input.find((i: Json) => i.type === 'function_call_output');
        expect(output.output.length).toBeLessThanOrEqual(10 * 1024 * 1024);
      }
    },
  );

  it('a user message of many texts that together pass the limit is cut the same way', () => {
    const surface = surfaces[2] as Surface;
    const chunk = 'y'.repeat(4 * 1024 * 1024);
    const out = serializeChecked(surface, {
      messages: [{ role: 'user', content: [text(chunk), text(chunk), text(chunk)] }],
    });
    const parts = (out.body as Json).input[0].content as Json[];
    const total = parts.reduce((n, p) => n + p.text.length, 0);
    expect(total).toBeLessThanOrEqual(10 * 1024 * 1024);
    expect(parts[0]?.text).toBe(chunk);
  });
});
