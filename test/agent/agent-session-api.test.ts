/**
 * The Agent APIs a chat front end needs: usage and cost per turn and per session, model switches recorded in the
 * session log, a manual compaction, reasoning effort and prompt caching. Against the loopback provider servers.
 */

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import type { Message } from '../../src/conversation.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { priceOf, usageCost } from '../../src/providers/model/model-prices.js';
import { loadSession } from '../../src/session/load-session.js';
import { SessionLog } from '../../src/session/session-log.js';
import { agentFixture, eventsOf, type Json, providerFor } from './agent-helpers.js';

const { server, ws } = await agentFixture();
afterEach(() => {
  expect(server.reset()).toBe(0);
});
const since = (n: number) => server.requests.slice(n);
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

describe('usage and cost', () => {
  it('turn_end carries the answer usage (cache reads/writes counted) and its cost; agent.usage sums the session', async () => {
    const events: AgentEvent[] = [];
    server.enqueue(
      {
        type: 'reply',
        toolCalls: [{ name: 'read', args: { path: 'notes.txt' } }],
        usage: { input: 1000, output: 100, cacheWrite: 4000 },
      },
      { type: 'reply', text: 'two lines', usage: { input: 200, output: 50, cacheRead: 4000 } },
    );
    const path = join(ws.root, `usage-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path);
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      tools: ws.tools,
      session: log,
      onEvent: (e) => events.push(e),
    });
    await agent.prompt('read notes.txt');
    const ends = eventsOf(events, 'turn_end');
    expect(ends.map((e) => e.usage)).toEqual([
      { inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 4000 },
      { inputTokens: 200, outputTokens: 50, cacheReadTokens: 4000 },
    ]);
    const price = priceOf('claude-sonnet-4-5');
    if (!price) throw new Error('expected a catalog price');
    const first = usageCost({ inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 4000 }, price).total;
    const second = usageCost({ inputTokens: 200, outputTokens: 50, cacheReadTokens: 4000 }, price).total;
    expect(ends[0]?.cost?.total).toBeCloseTo(first, 10);
    expect(ends[0]?.cost?.cacheWrite).toBeCloseTo(0.015, 10); // 4000 x $3.75 / M
    expect(ends[1]?.cost?.cacheRead).toBeCloseTo(0.0012, 10); // 4000 x $0.30 / M
    expect(agent.usage).toEqual({
      requests: 2,
      inputTokens: 1200,
      outputTokens: 150,
      cacheReadTokens: 4000,
      cacheWriteTokens: 4000,
      cost: expect.closeTo(first + second, 10),
      unpricedRequests: 0,
    });
    log.close();

    // A resumed session starts from the totals recorded in its log.
    const reopened = await SessionLog.open(path);
    const resumed = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      session: reopened,
    });
    expect(resumed.usage).toEqual(agent.usage);
    reopened.close();
  });

  it('a model without a price: tokens counted, cost left out and said so; a host price applies', async () => {
    server.enqueue({ type: 'reply', text: 'a', usage: { input: 10, output: 5 } });
    const agent = new Agent({ provider: providerFor(server, 'openai-chat'), model: 'llama-3.1-8b' });
    await agent.prompt('hi');
    expect(agent.usage).toMatchObject({ requests: 1, inputTokens: 10, cost: 0, unpricedRequests: 1 });

    const events: AgentEvent[] = [];
    server.enqueue({ type: 'reply', text: 'a', usage: { input: 1_000_000, output: 0 } });
    const priced = new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: 'llama-3.1-8b',
      price: { input: 0.5, output: 1 },
      onEvent: (e) => events.push(e),
    });
    await priced.prompt('hi');
    expect(eventsOf(events, 'turn_end')[0]?.cost?.total).toBeCloseTo(0.5);
    expect(
      () =>
        new Agent({
          provider: providerFor(server, 'openai-chat'),
          model: 'x',
          price: { input: -1, output: 0 },
        }),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });
});

describe('setModel', () => {
  it('switches the model between runs, records it in the session log, and a resume reads it back', async () => {
    const path = join(ws.root, `switch-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path, { model: 'claude-sonnet-4-5' });
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      session: log,
      onEvent: (e) => events.push(e),
    });
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'from sonnet' });
    await agent.prompt('one');
    agent.setModel('claude-haiku-4-5');
    expect(agent.model.id).toBe('claude-haiku-4-5');
    expect(eventsOf(events, 'model_change')).toEqual([
      expect.objectContaining({ model: expect.objectContaining({ id: 'claude-haiku-4-5' }) }),
    ]);
    server.enqueue({ type: 'reply', text: 'from haiku' });
    await agent.prompt('two');
    expect(since(n).map((r) => r.model)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);

    // Another API needs its provider; the history carries over.
    expect(() => agent.setModel('gpt-4.1')).toThrow(/'gpt-4.1' is served by openai \(openai-responses\)/);
    expect(() => agent.setModel(resolveModel('gpt-4.1'))).toThrow(
      /speaks openai-responses but the provider speaks anthropic-messages/,
    );
    expect(agent.model.id).toBe('claude-haiku-4-5');
    agent.setModel(resolveModel('gpt-4.1'), { provider: providerFor(server, 'openai-responses') });
    server.enqueue({ type: 'reply', text: 'from gpt' });
    await agent.prompt('three');
    const body = since(n)[2]?.body as Json;
    expect(body.model).toBe('gpt-4.1');
    expect(JSON.stringify(body.input)).toContain('from haiku');
    log.close();

    const loaded = await loadSession(path);
    expect(loaded.model).toBe('gpt-4.1');
    expect(
      loaded.entries.filter((e) => e.type === 'model_change').map((e) => (e as { model: string }).model),
    ).toEqual(['claude-haiku-4-5', 'gpt-4.1']);
    expect(loaded.conversation.messages).toHaveLength(6);
  });

  it('is refused while a run is in progress', async () => {
    server.enqueue({ type: 'stall', text: 'thinking…' });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
    });
    const run = agent.prompt('hi');
    await new Promise<void>((resolve) => agent.subscribe((e) => e.type === 'message_delta' && resolve()));
    expect(() => agent.setModel('claude-haiku-4-5')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    agent.abort();
    expect((await run).stopReason).toBe('aborted');
  });
});

describe('compact()', () => {
  it('summarizes all but the recent messages on demand and records it; null when there is nothing to compact', async () => {
    const path = join(ws.root, `compact-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path);
    const agent = new Agent({
      provider: providerFor(server, 'openai-responses'),
      model: 'gpt-4.1',
      session: log,
      compaction: { keepRecentTokens: 5 },
    });
    expect(await agent.compact()).toBeNull();
    server.enqueue({ type: 'reply', text: 'first answer' }, { type: 'reply', text: 'second answer' });
    await agent.prompt('first question');
    await agent.prompt('second question');
    server.enqueue({ type: 'reply', text: 'They asked two questions.', usage: { input: 300, output: 10 } });
    const before = agent.usage.requests;
    const out = await agent.compact();
    expect(out?.summary).toBe('They asked two questions.');
    expect(agent.messages[0]).toMatchObject({ role: 'user' });
    expect(agent.messages).toHaveLength(3);
    // The summary request's usage counts in the session totals.
    expect(agent.usage.requests).toBe(before + 1);
    log.close();
    expect((await loadSession(path)).conversation.messages).toEqual(agent.messages);
  });
});

describe('compact() with automatic compaction off', () => {
  it('still compacts on demand', async () => {
    server.enqueue({ type: 'reply', text: 'summary of q1' });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      // The recent part (q2, ~22k tokens) fills the default keepRecentTokens (20,000): q1 and a1 are summarized.
      messages: [
        user('q1'),
        { role: 'assistant', content: [{ type: 'text', text: 'a1' }], stopReason: 'end' },
        user(`q2 ${'x'.repeat(88_000)}`),
      ],
      compaction: false,
    });
    expect((await agent.compact({ signal: AbortSignal.timeout(30_000) }))?.summary).toBe('summary of q1');
  });
});

describe('a model of another vendor through a vendor API', () => {
  it('is refused before any request', () => {
    const n = server.requests.length;
    expect(
      () => new Agent({ provider: providerFor(server, 'anthropic-messages'), model: 'gpt-4.1' }),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    expect(() => new Agent({ provider: providerFor(server, 'gemini'), model: 'claude-sonnet-4-5' })).toThrow(
      /served by anthropic/,
    );
    // OpenAI-compatible gateways serve anything.
    expect(
      new Agent({ provider: providerFor(server, 'openai-chat'), model: 'claude-sonnet-4-5' }).model.api,
    ).toBe('openai-chat');
    expect(server.requests.length).toBe(n);
  });
});

describe('thinking and prompt caching as Agent options', () => {
  it('Anthropic: cache breakpoints on by default; thinking sent at the chosen level and changeable', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'a', thinking: 'let me see' }, { type: 'reply', text: 'b' });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      tools: ws.tools,
      system: 'Be brief.',
      thinking: 'medium',
    });
    await agent.prompt('hi');
    const body = since(n)[0]?.body as Json;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    agent.setThinking('off');
    expect(agent.thinking).toBe('off');
    await agent.prompt('again');
    expect((since(n)[1]?.body as Json | undefined)?.thinking).toBeUndefined();
  });

  it('promptCache: false turns the breakpoints off; other surfaces get none by default', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'a' }, { type: 'reply', text: 'b' });
    await new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      system: 's',
      promptCache: false,
    }).prompt('hi');
    await new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: 'gpt-4.1',
      thinking: 'high',
    }).prompt('hi');
    expect(JSON.stringify(since(n)[0]?.body)).not.toContain('cache_control');
    const chat = since(n)[1]?.body as Json;
    expect(chat.reasoning_effort).toBeUndefined();
  });

  it('an unknown level is refused at construction and by setThinking', () => {
    const make = () =>
      new Agent({
        provider: providerFor(server, 'anthropic-messages'),
        model: 'claude-sonnet-4-5',
        thinking: 'max' as 'high',
      });
    expect(make).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
    });
    expect(() => agent.setThinking('huge' as 'high')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });

  it('a model that cannot reason: thinking is not sent and the host is warned once', async () => {
    const events: AgentEvent[] = [];
    server.enqueue({ type: 'reply', text: 'a' }, { type: 'reply', text: 'b' });
    const agent = new Agent({
      provider: providerFor(server, 'openai-responses'),
      model: 'gpt-4.1',
      thinking: 'high',
      onEvent: (e) => events.push(e),
    });
    await agent.prompt('one');
    await agent.prompt('two');
    expect(eventsOf(events, 'warning').map((e) => e.warning.code)).toEqual(['option-ignored']);
  });
});

describe('a resumed session: its earlier usage is counted when first asked for', () => {
  const usageOf = (i: number) => ({ inputTokens: 1000 + i, outputTokens: 100 + i, cacheReadTokens: i });
  const answer = (i: number): Message => ({
    role: 'assistant',
    content: [{ type: 'text', text: `answer ${i}` }],
    stopReason: 'end',
    usage: usageOf(i),
    model: 'claude-sonnet-4-5',
  });

  /** A log of 10 answered turns, compacted down to the last two, then one more turn. */
  async function compactedLog(): Promise<string> {
    const path = join(ws.root, `lazy-usage-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path, { model: 'claude-sonnet-4-5' });
    for (let i = 0; i < 10; i++) {
      log.appendMessage(user(`q${i}`));
      log.appendMessage(answer(i));
    }
    log.appendCompaction({
      summary: 's',
      replacement: [user('summary')],
      firstKeptIndex: 16,
      messageCountBefore: 20,
      tokensBefore: 9000,
      tokensAfter: 3000,
    });
    log.appendMessage(user('q10'));
    log.appendMessage(answer(10));
    log.close();
    return path;
  }

  it('counts every answer of the log (also the replaced ones), then the agent’s own, to the last bit', async () => {
    const path = await compactedLog();
    const price = priceOf('claude-sonnet-4-5');
    if (!price) throw new Error('expected a catalog price');
    server.enqueue({ type: 'reply', text: 'new', usage: { input: 7, output: 3 } });
    const log = await SessionLog.open(path);
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      session: log,
    });
    await agent.prompt('go on'); // adds usage before the log's is counted
    let cost = 0;
    for (let i = 0; i <= 10; i++) cost += usageCost(usageOf(i), price).total;
    cost += usageCost({ inputTokens: 7, outputTokens: 3 }, price).total;
    const sum = (f: (i: number) => number) =>
      Array.from({ length: 11 }, (_, i) => f(i)).reduce((a, b) => a + b);
    expect(agent.usage).toStrictEqual({
      requests: 12,
      inputTokens: sum((i) => 1000 + i) + 7,
      outputTokens: sum((i) => 100 + i) + 3,
      cacheReadTokens: sum((i) => i),
      cacheWriteTokens: 0,
      cost,
      unpricedRequests: 0,
    });
    expect(agent.usage).toStrictEqual(agent.usage);
    log.close();
  });

  it('a damaged line in the replaced history: the agent resumes; usage reports the damage, typed', async () => {
    const path = await compactedLog();
    const { readFileSync, writeFileSync } = await import('node:fs');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[4] = `${(lines[4] as string).slice(0, 100)}`; // an old answer, cut short (its leading fields intact)
    writeFileSync(path, lines.join('\n'));
    const log = await SessionLog.open(path);
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      session: log,
    });
    expect(agent.messages.map((m) => m.role)).toEqual([
      'user',
      ...Array(3).fill(['user', 'assistant']).flat(),
    ]);
    expect(() => agent.usage).toThrow(expect.objectContaining({ code: 'ERR_SESSION_CORRUPT' }));
    expect(() => agent.usage).toThrow(`${path}:5:`);
    log.close();
    expect((await loadSession(path).catch((e: unknown) => e)) instanceof Error).toBe(false);
  });
});
