/**
 * What a chat host needs from the agent beyond prompting: taking back queued steering, compacting on request at any
 * size with a focus, and an honest word when a context overflow leaves nothing to compact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type AgentEvent } from '../../src/agent/index.js';
import { createProvider } from '../../src/providers/index.js';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';

let server: FakeProviderServer;
beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => {
  await server.close();
});

function agent(events: AgentEvent[] = []) {
  return new Agent({
    provider: createProvider({ api: 'openai-chat', baseUrl: server.baseUrl('openai-chat'), apiKey: 'k' }),
    model: 'gpt-4o',
    streamRetryDelayMs: 1,
    onEvent: (e) => events.push(e),
  });
}

describe('takeSteering', () => {
  it('an aborted run leaves its queued messages to the host instead of sending them with the next prompt', async () => {
    server.reset();
    server.enqueue({ type: 'stall', text: 'long answer' }, { type: 'reply', text: 'next' });
    const a = agent();
    const run = a.prompt('first');
    while (server.requests.length === 0 || !a.running) await new Promise((r) => setTimeout(r, 10));
    a.steer('queued one');
    a.steer('queued two');
    a.abort();
    expect((await run).stopReason).toBe('aborted');
    expect(a.takeSteering()).toEqual(['queued one', 'queued two']);
    expect(a.takeSteering()).toEqual([]);
    await a.prompt('next prompt');
    const sent = JSON.stringify(server.requests.at(-1)?.body.messages);
    expect(sent).not.toContain('queued one');
  });
});

describe('compact() on request', () => {
  it('at any size: keeps the last turn whole, passes the focus, reports reason manual', async () => {
    server.reset();
    server.enqueue(
      { type: 'reply', text: 'answer one' },
      { type: 'reply', text: 'answer two' },
      { type: 'reply', text: 'THE SUMMARY' },
    );
    const events: AgentEvent[] = [];
    const a = agent(events);
    await a.prompt('question one');
    await a.prompt('question two');
    const out = await a.compact({ focus: 'the numbers' });
    expect(out?.summary).toBe('THE SUMMARY');
    const summaryRequest = JSON.stringify(server.requests.at(-1)?.body);
    expect(summaryRequest).toContain('question one');
    expect(summaryRequest).not.toContain('question two');
    expect(summaryRequest).toContain('The user asks the summary to focus on: the numbers');
    expect(events.find((e) => e.type === 'compaction_start')).toMatchObject({ reason: 'manual' });
    const texts = JSON.stringify(a.messages);
    expect(texts).toContain('question two');
    expect(texts).toContain('answer two');
    expect(texts).not.toContain('answer one');
  });

  it('a single exchange: null, and no compaction_start', async () => {
    server.reset();
    server.enqueue({ type: 'reply', text: 'only answer' });
    const events: AgentEvent[] = [];
    const a = agent(events);
    await a.prompt('only question');
    expect(await a.compact()).toBeNull();
    expect(events.some((e) => e.type === 'compaction_start')).toBe(false);
  });
});

describe('a context overflow with nothing older to compact', () => {
  it('is reported as such (not "compacting and retrying"), and the request is not repeated', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({
      type: 'http-error',
      status: 400,
      errorType: 'invalid_request_error',
      message:
        "This model's maximum context length is 1024 tokens. However, your messages resulted in 5000 tokens.",
    });
    const events: AgentEvent[] = [];
    const a = agent(events);
    const result = await a.prompt('y'.repeat(3000));
    expect(result.stopReason).toBe('error');
    expect(server.requests.length - before).toBe(1);
    const warnings = events.filter((e) => e.type === 'warning').map((e) => e.warning.message);
    expect(warnings).toEqual([
      expect.stringContaining('there is nothing older than the last message to compact'),
    ]);
    expect(events.some((e) => e.type === 'compaction_start')).toBe(false);
  });
});
