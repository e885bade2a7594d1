/**
 * Regressions found by the agent-loop fuzzer (test/fuzz/fuzz-agent.mjs), each the fuzzer's input shrunk by hand, run
 * through the real Agent against the loopback provider server.
 */

import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AssistantMessage, Usage } from '../../src/conversation.js';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import type { Provider } from '../../src/providers/http-provider.js';
import type { Surface } from '../helpers/fake-provider-server.js';
import { agentFixture, modelFor, providerFor } from './agent-helpers.js';

const { server, ws } = await agentFixture();

const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

describe('usage a model reports as nonsense (fuzz: seed 3 case 0, input 1.5; seed 3 case 45, -1 and 1e300)', () => {
  const cases: Array<[Surface, { input: number; output: number }]> = [
    ['openai-chat', { input: 1.5, output: -1 }],
    ['anthropic-messages', { input: -1e9, output: 2.5 }],
    ['gemini', { input: 1e300, output: -5 }],
    ['openai-responses', { input: -1, output: 1e300 }],
  ];
  it.each(cases)(
    '%s %j: stored and totalled as non-negative safe integers, cost finite',
    async (surface, usage) => {
      server.enqueue({ type: 'reply', text: 'ok', usage });
      const agent = new Agent({
        provider: providerFor(server, surface),
        model: modelFor(surface),
        tools: ws.tools,
      });
      const result = await agent.prompt('hi');
      expect(result.stopReason).toBe('end');
      const answer = agent.messages.at(-1);
      expect(answer?.role).toBe('assistant');
      const stored = answer?.role === 'assistant' ? answer.usage : undefined;
      expect(stored).toBeDefined();
      for (const v of Object.values(stored ?? {})) expect(isCount(v)).toBe(true);
      const totals = agent.usage;
      expect(isCount(totals.inputTokens)).toBe(true);
      expect(isCount(totals.outputTokens)).toBe(true);
      expect(Number.isFinite(totals.cost) && totals.cost >= 0).toBe(true);
    },
  );
});

describe('token totals over answers near 2^53 (fuzz: seed 3 case 1)', () => {
  it('stay safe integers: the sum stops at Number.MAX_SAFE_INTEGER', async () => {
    server.enqueue(
      { type: 'reply', text: 'one', usage: { input: 1e300, output: 1 } },
      { type: 'reply', text: 'two', usage: { input: 1e300, output: 1 } },
    );
    const agent = new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: modelFor('openai-chat'),
    });
    await agent.prompt('a');
    await agent.prompt('b');
    expect(agent.usage.requests).toBe(2);
    expect(agent.usage.inputTokens).toBe(Number.MAX_SAFE_INTEGER);
    expect(Number.isFinite(agent.usage.cost)).toBe(true);
  });
});

/** A custom Provider (the public extension point) that answers every request with `message`. */
function providerAnswering(message: AssistantMessage): Provider {
  return {
    api: 'openai-chat',
    name: 'custom',
    async *stream(): AsyncIterable<StreamEvent> {
      yield { type: 'done', message: structuredClone(message) };
    },
  };
}

describe('usage from a custom Provider, which no wire parser cleaned', () => {
  it('raw nonsense counts are stored and totalled as non-negative safe integers', async () => {
    const raw = { inputTokens: -5, outputTokens: 1e300, cacheReadTokens: Number.NaN };
    const agent = new Agent({
      provider: providerAnswering({
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        stopReason: 'end',
        usage: raw,
      }),
      model: modelFor('openai-chat'),
    });
    const result = await agent.prompt('hi');
    expect(result.stopReason).toBe('end');
    const answer = agent.messages.at(-1);
    const stored = answer?.role === 'assistant' ? answer.usage : undefined;
    expect(stored).toEqual({ inputTokens: 0, outputTokens: Number.MAX_SAFE_INTEGER, cacheReadTokens: 0 });
    expect(agent.usage.inputTokens).toBe(0);
    expect(agent.usage.outputTokens).toBe(Number.MAX_SAFE_INTEGER);
    expect(agent.usage.cacheReadTokens).toBe(0);
    expect(Number.isFinite(agent.usage.cost)).toBe(true);
  });

  it('usage: null is no usage, not a TypeError', async () => {
    const agent = new Agent({
      provider: providerAnswering({
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        stopReason: 'end',
        usage: null as unknown as Usage,
      }),
      model: modelFor('openai-chat'),
    });
    const result = await agent.prompt('hi');
    expect(result.stopReason).toBe('end');
    const answer = agent.messages.at(-1);
    expect(answer?.role === 'assistant' ? answer.usage : 'not an answer').toBeUndefined();
    expect(agent.usage.requests).toBe(0);
  });
});
