import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import { toGemini } from '../../src/providers/gemini/gemini.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';
import type { ToolDecl } from '../../src/tool.js';

const conversation: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'list the files' }] },
  {
    role: 'assistant',
    content: [{ type: 'tool_call', id: 'toolu_1', name: 'ls', input: {} }],
    stopReason: 'tool_use',
  },
  {
    role: 'tool',
    results: [
      {
        type: 'tool_result',
        toolUseId: 'toolu_1',
        toolName: 'ls',
        parts: [{ type: 'text', text: 'a.txt' }],
        isError: false,
      },
    ],
  },
];
const tools: ToolDecl[] = [
  { name: 'ls', description: 'List files', inputSchema: { type: 'object', properties: {} } },
  { name: 'read', description: 'Read a file', inputSchema: { type: 'object', properties: {} } },
];

describe('thinking per surface', () => {
  it('Anthropic: extended thinking with the level budget; max_tokens grows past the budget when needed', () => {
    const high = toAnthropicMessages(conversation, 'claude-sonnet-4-5', { thinking: 'high' });
    expect(high.body.thinking).toEqual({ type: 'enabled', budget_tokens: 24_576 });
    expect(high.body.max_tokens).toBe(64_000);
    const small = toAnthropicMessages(conversation, 'claude-sonnet-4-5', {
      thinking: 'low',
      maxTokens: 1000,
    });
    expect(small.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(small.body.max_tokens).toBe(3048);
    expect(
      toAnthropicMessages(conversation, 'claude-sonnet-4-5', { thinking: 'off' }).body.thinking,
    ).toBeUndefined();
  });

  it('Anthropic: a model whose output cap is below the budget gets three quarters of it', () => {
    const model = resolveModel('claude-sonnet-4-5', { limits: { maxOutputTokens: 8000 } });
    const r = toAnthropicMessages(conversation, model, { thinking: 'high' });
    expect(r.body).toMatchObject({ max_tokens: 8000, thinking: { budget_tokens: 6000 } });
    const tiny = resolveModel('claude-sonnet-4-5', { limits: { maxOutputTokens: 1200 } });
    const t = toAnthropicMessages(conversation, tiny, { thinking: 'low' });
    expect(t.body.thinking).toBeUndefined();
    expect(t.warnings.map((w) => w.code)).toContain('option-ignored');
  });

  it('OpenAI Chat reasoning_effort, Responses reasoning.effort', () => {
    expect(
      toOpenAIChat(conversation, resolveModel('o4-mini', { api: 'openai-chat' }), { thinking: 'medium' }).body
        .reasoning_effort,
    ).toBe('medium');
    expect(toOpenAIResponses(conversation, 'gpt-5', { thinking: 'low' }).body.reasoning).toEqual({
      effort: 'low',
    });
  });

  it('Gemini: a thinking budget on 2.5, a thinking level on 3+, thoughts included', () => {
    expect(
      toGemini(conversation, 'gemini-2.5-flash', { thinking: 'medium', maxTokens: 100 }).body
        .generationConfig,
    ).toEqual({
      maxOutputTokens: 100,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 },
    });
    expect(toGemini(conversation, 'gemini-3-pro-preview', { thinking: 'low' }).body.generationConfig).toEqual(
      {
        thinkingConfig: { includeThoughts: true, thinkingLevel: 'LOW' },
      },
    );
    expect(
      toGemini(conversation, 'gemini-3-pro-preview', { thinking: 'medium' }).body.generationConfig
        ?.thinkingConfig?.thinkingLevel,
    ).toBe('HIGH');
    expect(
      toGemini(conversation, 'gemini-3-flash', { thinking: 'medium' }).body.generationConfig?.thinkingConfig
        ?.thinkingLevel,
    ).toBe('MEDIUM');
  });

  it('a model that cannot reason: nothing sent, an option-ignored warning naming how to declare it', () => {
    for (const r of [
      toOpenAIChat(conversation, 'llama-3.1-8b', { thinking: 'high' }),
      toOpenAIResponses(conversation, 'gpt-4.1', { thinking: 'high' }),
      toGemini(conversation, 'gemini-2.0-flash', { thinking: 'high' }),
    ]) {
      expect(JSON.stringify(r.body)).not.toMatch(/reasoning|thinking/);
      expect(r.warnings).toEqual([
        expect.objectContaining({
          code: 'option-ignored',
          message: expect.stringContaining('reasoning: true'),
        }),
      ]);
    }
    const declared = resolveModel('qwq-32b', { reasoning: true });
    expect(toOpenAIChat(conversation, declared, { thinking: 'high' }).body.reasoning_effort).toBe('high');
  });

  it('an unknown level is a typed error', () => {
    expect(() => toOpenAIChat(conversation, 'gpt-5', { thinking: 'max' as 'high' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });
});

describe('promptCache', () => {
  it('Anthropic: breakpoints on the system prompt, the last tool and the last block of the last message (at most 4)', () => {
    const { body } = toAnthropicMessages(conversation, 'claude-sonnet-4-5', {
      promptCache: true,
      system: 'Be terse.',
      tools,
    });
    expect(body.system).toEqual([{ type: 'text', text: 'Be terse.', cache_control: { type: 'ephemeral' } }]);
    expect(body.tools?.[0]?.cache_control).toBeUndefined();
    expect(body.tools?.[1]?.cache_control).toEqual({ type: 'ephemeral' });
    const last = body.messages[body.messages.length - 1];
    expect(last?.content[last.content.length - 1]).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
    expect(JSON.stringify(body).match(/cache_control/g)?.length).toBe(3);
    // together with the older cacheControl option the last-message breakpoint is shared, not doubled
    const both = toAnthropicMessages(conversation, 'claude-sonnet-4-5', {
      promptCache: { ttl: '1h' },
      cacheControl: true,
      system: 's',
      tools,
    });
    expect(JSON.stringify(both.body).match(/cache_control/g)?.length).toBe(3);
    expect(both.body.tools?.[1]?.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  });

  it('Anthropic without the option: a plain string system prompt and no breakpoints', () => {
    const { body } = toAnthropicMessages(conversation, 'claude-sonnet-4-5', { system: 'Be terse.', tools });
    expect(body.system).toBe('Be terse.');
    expect(JSON.stringify(body)).not.toContain('cache_control');
  });

  it('OpenAI and Gemini cache on their own: the option changes nothing and warns nothing', () => {
    for (const [a, b] of [
      [toOpenAIChat(conversation, 'gpt-4.1', { promptCache: true }), toOpenAIChat(conversation, 'gpt-4.1')],
      [
        toOpenAIResponses(conversation, 'gpt-5', { promptCache: true }),
        toOpenAIResponses(conversation, 'gpt-5'),
      ],
      [
        toGemini(conversation, 'gemini-2.5-pro', { promptCache: true }),
        toGemini(conversation, 'gemini-2.5-pro'),
      ],
    ] as const) {
      expect(a.body).toEqual(b.body);
      expect(a.warnings).toEqual([]);
    }
  });
});
