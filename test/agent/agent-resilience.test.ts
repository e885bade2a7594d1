/**
 * The agent never gets stuck: compaction under a tiny window, a provider's context-overflow refusal, a stream cut
 * mid-answer, a long retry-after. Against the loopback provider servers.
 */

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import { isContextOverflow, statedContextWindow } from '../../src/agent/context-overflow.js';
import { SUMMARY_PREFIX } from '../../src/compaction/compact.js';
import type { Message } from '../../src/conversation.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { loadSession } from '../../src/session/load-session.js';
import { SessionLog } from '../../src/session/session-log.js';
import type { RecordedRequest, ScriptedTurn, Surface } from '../helpers/fake-provider-server.js';
import { agentFixture, eventsOf, providerFor } from './agent-helpers.js';

const { server, ws } = await agentFixture();
afterEach(() => {
  server.reset();
});
const since = (n: number) => server.requests.slice(n);

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const answer = (text: string): Message => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'end',
});

/** Prose of about `tokens` tokens (4 characters each), distinct per seed so nothing compresses by accident. */
function prose(tokens: number, seed: number): string {
  const words: string[] = [];
  for (let i = 0; words.join(' ').length < tokens * 4; i++) words.push(`w${seed}x${i}`);
  return words.join(' ');
}

/** A history of `turns` question/answer pairs with one long tool output in the middle; ~`perTurn` tokens each. */
function longHistory(turns: number, perTurn: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < turns; i++) {
    out.push(user(`question ${i}: ${prose(perTurn / 2, i)}`));
    if (i === 1) {
      out.push({
        role: 'assistant',
        content: [{ type: 'tool_call', id: `toolu_${i}`, name: 'read', input: { path: 'big.log' } }],
        stopReason: 'tool_use',
      });
      out.push({
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: `toolu_${i}`,
            toolName: 'read',
            parts: [{ type: 'text', text: prose(perTurn * 3, 1000 + i) }],
            isError: false,
          },
        ],
      });
    }
    out.push(answer(`answer ${i}: ${prose(perTurn / 2, 500 + i)}`));
  }
  return out;
}

/** Tokens of a request as the fake provider counts them: a little more than the agent's 4 chars/token estimate. */
const providerTokens = (r: RecordedRequest) => Math.ceil(JSON.stringify(r.body).length / 3.5);
const isSummaryRequest = (r: RecordedRequest) => JSON.stringify(r.body).includes('You write the summary');

const OVERFLOW_MESSAGE: Record<Surface, (tokens: number, max: number) => string> = {
  'anthropic-messages': (t, m) => `prompt is too long: ${t} tokens > ${m} maximum`,
  'openai-chat': (t, m) =>
    `This model's maximum context length is ${m} tokens. However, your messages resulted in ${t} tokens. Please reduce the length of the messages.`,
  'openai-responses': () =>
    'Your input exceeds the context window of this model. Please adjust your input and try again.',
  gemini: (t, m) => `The input token count (${t}) exceeds the maximum number of tokens allowed (${m}).`,
};

/** A provider with a real `max` token window: it refuses longer requests in its own words, answers the rest. */
function windowedTurn(surface: Surface, max: number, reply: (r: RecordedRequest) => ScriptedTurn) {
  return (r: RecordedRequest): ScriptedTurn => {
    const tokens = providerTokens(r);
    if (tokens > max) {
      return {
        type: 'http-error',
        status: 400,
        message: OVERFLOW_MESSAGE[surface](tokens, max),
        ...(surface === 'openai-responses' || surface === 'openai-chat'
          ? { errorType: 'invalid_request_error' }
          : {}),
      };
    }
    return reply(r);
  };
}

describe('context-overflow errors in each surface wording', () => {
  it.each([
    [
      'anthropic-messages',
      OVERFLOW_MESSAGE['anthropic-messages'](29066, 12000),
      'invalid_request_error',
      12000,
    ],
    ['openai-chat', OVERFLOW_MESSAGE['openai-chat'](9000, 8192), 'invalid_request_error', 8192],
    [
      'openai-responses',
      'Your input exceeds the context window of this model.',
      'context_length_exceeded',
      undefined,
    ],
    ['gemini', OVERFLOW_MESSAGE.gemini(2_000_000, 1_048_576), 'INVALID_ARGUMENT', 1_048_576],
    [
      'llama.cpp',
      'the request exceeds the available context size, try increasing it',
      'exceed_context_size_error',
      undefined,
    ],
  ] as const)('%s', (api, message, type, window) => {
    const error = new ProviderError({
      api,
      status: 400,
      providerMessage: message,
      providerType: type,
      retryable: false,
    });
    expect(isContextOverflow(error)).toBe(true);
    expect(statedContextWindow(error)).toBe(window);
  });

  it('other 400s, 429s and 5xx are not overflows', () => {
    const e = (status: number, providerMessage: string) =>
      new ProviderError({ api: 'anthropic-messages', status, providerMessage, retryable: status >= 429 });
    expect(isContextOverflow(e(400, 'max_tokens: must be positive'))).toBe(false);
    expect(isContextOverflow(e(429, 'rate limited: too many tokens per minute'))).toBe(false);
    expect(isContextOverflow(e(500, 'prompt is too long'))).toBe(false);
    expect(isContextOverflow(new Error('prompt is too long'))).toBe(false);
  });
});

describe('compaction under a tiny window', () => {
  it('resuming a ~36k-token session with a 12k-window model: the summary is made in rounds that each fit, then the answer', async () => {
    const path = join(ws.root, `tiny-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path);
    for (const m of longHistory(9, 2800)) log.appendMessage(m);
    const events: AgentEvent[] = [];
    const model = resolveModel('claude-sonnet-4-5', {
      contextWindow: 12_000,
      limits: { maxOutputTokens: 4096 },
    });
    const n = server.requests.length;
    for (let i = 0; i < 30; i++) {
      server.enqueue(
        windowedTurn('anthropic-messages', 12_000, (r) =>
          isSummaryRequest(r)
            ? { type: 'reply', text: `summary of round ${i}: the user asked questions 0 to 8 about w-words.` }
            : { type: 'reply', text: 'Here is the answer.' },
        ),
      );
    }
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model,
      session: log,
      onEvent: (e) => events.push(e),
    });
    const result = await agent.prompt('What did we decide?');
    expect(result.stopReason).toBe('end');
    const requests = since(n);
    // Every request fit the provider's window: no refusal at all.
    expect(requests.every((r) => providerTokens(r) <= 12_000)).toBe(true);
    const summaries = requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(1);
    // Round 2+ carries the previous round's summary; the long tool output was shortened.
    const second = JSON.stringify(summaries[1]?.body);
    expect(second).toContain('[summary of the conversation before this part]');
    expect(JSON.stringify(summaries.map((s) => s.body))).toContain('characters cut');
    expect(eventsOf(events, 'compaction_end')).toHaveLength(1);
    expect(eventsOf(events, 'warning')).toEqual([]);
    log.close();
    const loaded = await loadSession(path);
    expect(loaded.entries.some((e) => e.type === 'compaction')).toBe(true);
    const first = loaded.conversation.messages[0];
    expect(first?.role === 'user' && first.content[0]?.type === 'text' && first.content[0].text).toContain(
      SUMMARY_PREFIX,
    );
  });

  it('the summary prompt says images are placeholders it cannot see', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'summary' });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=', width: 64, height: 48 }],
        },
        answer('a red square'),
        user('and now?'),
        answer('still red'),
      ],
      compaction: { keepRecentTokens: 1 },
    });
    const out = await agent.compact();
    expect(out?.summary).toBe('summary');
    const body = JSON.stringify(since(n)[0]?.body);
    expect(body).toContain('[image: image/png 64x48]');
    expect(body).toContain('you cannot see them');
    expect(body).not.toContain('iVBORw0KGgo=');
  });
});

describe('context-overflow refusal', () => {
  it('an unknown model set to 128k on an 8k llama.cpp server: compacts to the stated window and retries once', async () => {
    const events: AgentEvent[] = [];
    const n = server.requests.length;
    for (let i = 0; i < 12; i++) {
      server.enqueue(
        windowedTurn('openai-chat', 8192, (r) =>
          isSummaryRequest(r) ? { type: 'reply', text: `summary ${i}` } : { type: 'reply', text: 'fits now' },
        ),
      );
    }
    const agent = new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: 'llama-3.1-8b-instruct',
      messages: longHistory(6, 1500),
      onEvent: (e) => events.push(e),
    });
    expect(agent.contextWindow).toBe(128_000);
    const result = await agent.prompt('go on');
    expect(result.stopReason).toBe('end');
    expect(agent.contextWindow).toBe(8192);
    const warnings = eventsOf(events, 'warning').map((e) => e.warning);
    expect(warnings).toEqual([
      expect.objectContaining({
        code: 'context-overflow',
        message: expect.stringContaining('states a context window of 8192 tokens'),
      }),
    ]);
    const main = since(n).filter((r) => !isSummaryRequest(r));
    expect(main).toHaveLength(2);
    expect(providerTokens(main[1] as RecordedRequest)).toBeLessThanOrEqual(8192);
    expect(result.messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 'fits now' }],
    });
  });

  it('a second refusal after the compaction ends the run with the provider error: one retry, never a loop', async () => {
    const n = server.requests.length;
    const refuse: ScriptedTurn = {
      type: 'http-error',
      status: 400,
      message: OVERFLOW_MESSAGE['anthropic-messages'](50_000, 40_000),
    };
    server.enqueue(refuse);
    for (let i = 0; i < 10; i++) {
      server.enqueue((r) => (isSummaryRequest(r) ? { type: 'reply', text: `summary ${i}` } : refuse));
    }
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      messages: longHistory(8, 4000),
      onEvent: (e) => events.push(e),
    });
    const result = await agent.prompt('and?');
    expect(result.stopReason).toBe('error');
    expect(result.error?.message).toContain('prompt is too long');
    expect(eventsOf(events, 'compaction_end')).toHaveLength(1);
    // The request was made twice (the original and the one retry), whatever the refusals.
    expect(since(n).filter((r) => !isSummaryRequest(r))).toHaveLength(2);
    expect(server.pending).toBeGreaterThan(0);
  });

  it('with compaction off it is reported, not retried', async () => {
    const events: AgentEvent[] = [];
    server.enqueue({
      type: 'http-error',
      status: 400,
      message: OVERFLOW_MESSAGE.gemini(2_000_000, 1_048_576),
    });
    const agent = new Agent({
      provider: providerFor(server, 'gemini'),
      model: 'gemini-2.5-flash',
      messages: longHistory(2, 100),
      compaction: false,
      onEvent: (e) => events.push(e),
    });
    const result = await agent.prompt('x');
    expect(result.stopReason).toBe('error');
    expect(eventsOf(events, 'warning')[0]?.warning).toMatchObject({
      code: 'context-overflow',
      message: expect.stringContaining('compaction is off'),
    });
  });
});

describe('a stream cut mid-answer', () => {
  it.each(['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'] as const)(
    '%s: asked again after a message_reset; only the full answer is kept',
    async (surface) => {
      const events: AgentEvent[] = [];
      server.enqueue(
        // Cut before the finish: Chat's last frames are the finish chunk, the usage chunk and [DONE]; a break after
        // the finish reason ends the turn done (see test/transport/reset-after-finish.test.ts).
        {
          type: 'reply',
          text: 'The first try breaks off somewhere in the middle',
          cut: surface === 'openai-chat' ? -3 : -2,
        },
        { type: 'reply', text: 'The complete answer.' },
      );
      const agent = new Agent({
        provider: providerFor(server, surface),
        model:
          surface === 'openai-chat'
            ? resolveModel('gpt-4.1', { api: 'openai-chat' })
            : modelForSurface(surface),
        streamRetryDelayMs: 1,
        onEvent: (e) => events.push(e),
      });
      const result = await agent.prompt('hi');
      expect(result.stopReason).toBe('end');
      const resets = eventsOf(events, 'message_reset');
      expect(resets).toHaveLength(1);
      expect(resets[0]?.error.code).toBe('ERR_PROVIDER');
      // The host saw partial text before the reset, then a fresh message_start.
      const order = events.map((e) => e.type).filter((t) => t === 'message_start' || t === 'message_reset');
      expect(order).toEqual(['message_start', 'message_reset', 'message_start']);
      expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(agent.messages[1]).toMatchObject({ content: [{ type: 'text', text: 'The complete answer.' }] });
    },
  );

  it('not asked again once a tool call was complete: the run ends with the error and a clear warning', async () => {
    const events: AgentEvent[] = [];
    server.enqueue({
      type: 'reply',
      toolCalls: [{ id: 'toolu_cut', name: 'read', args: { path: 'notes.txt' } }],
      cut: -2,
    });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      tools: ws.tools,
      onEvent: (e) => events.push(e),
    });
    const result = await agent.prompt('read it');
    expect(result.stopReason).toBe('error');
    expect(eventsOf(events, 'message_reset')).toEqual([]);
    expect(eventsOf(events, 'warning').map((e) => e.warning)).toEqual([
      expect.objectContaining({
        code: 'stream-interrupted',
        message: expect.stringContaining('a tool call of it was already complete'),
      }),
    ]);
    // History stays consistent: the call got an aborted result, the tool did not run.
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('gives up after maxStreamRetries cuts, saying so', async () => {
    const events: AgentEvent[] = [];
    const cut: ScriptedTurn = { type: 'reply', text: 'again and again it breaks', cut: -2 };
    server.enqueue(cut, cut);
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      maxStreamRetries: 1,
      streamRetryDelayMs: 1,
      onEvent: (e) => events.push(e),
    });
    const result = await agent.prompt('hi');
    expect(result.stopReason).toBe('error');
    expect(eventsOf(events, 'message_reset')).toHaveLength(1);
    expect(eventsOf(events, 'warning')[0]?.warning.message).toContain('maxStreamRetries 1');
  });
});

describe('retry-after', () => {
  it('a wait longer than retry.maxRetryAfterMs fails at once, saying how long the provider asked for', async () => {
    server.enqueue({
      type: 'http-error',
      status: 429,
      message: 'rate limited',
      headers: { 'retry-after': '120' },
    });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages', { retry: { maxRetryAfterMs: 60_000 } }),
      model: 'claude-sonnet-4-5',
    });
    const result = await agent.prompt('hi');
    expect(result.stopReason).toBe('error');
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as ProviderError).retryAfterMs).toBe(120_000);
    // Word for word as docs/agent.md shows it.
    expect(result.error?.message).toBe(
      `anthropic-messages HTTP 429 (rate_limit_error): rate limited (the provider asked to retry after 120 s, longer than the longest wait allowed (retry.maxRetryAfterMs = 60 s); not retried) [POST ${server.url}/v1/messages]`,
    );
    expect((result.error as ProviderError).providerMessage).toBe('rate limited');
  });

  it('a wait within the maximum is honoured and reported as a retry event with its delay', async () => {
    const events: AgentEvent[] = [];
    server.enqueue(
      { type: 'http-error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } },
      { type: 'reply', text: 'ok' },
    );
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages', { retry: { maxRetryAfterMs: 2000 } }),
      model: 'claude-sonnet-4-5',
      onEvent: (e) => events.push(e),
    });
    const started = Date.now();
    const result = await agent.prompt('hi');
    expect(result.stopReason).toBe('end');
    expect(eventsOf(events, 'retry')).toEqual([expect.objectContaining({ attempt: 1, delayMs: 1000 })]);
    // The wait really happened (a lower bound, not a timing threshold on speed).
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  });
});

function modelForSurface(surface: Exclude<Surface, 'openai-chat'>) {
  return surface === 'anthropic-messages'
    ? resolveModel('claude-sonnet-4-5')
    : surface === 'openai-responses'
      ? resolveModel('gpt-4.1')
      : resolveModel('gemini-2.5-flash');
}
