import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import { STEERING_CANCELLED_TEXT, STEERING_SKIPPED_TEXT } from '../../src/agent/steering.js';
import type { Message, ToolResultsMessage } from '../../src/conversation.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { loadSession } from '../../src/session/load-session.js';
import { SessionLog } from '../../src/session/session-log.js';
import { defineTool } from '../../src/tool.js';
import { ToolRegistry } from '../../src/tool-source.js';
import { ABORTED_RESULT_TEXT } from '../../src/tools/dispatch.js';
import type { RecordedRequest } from '../helpers/fake-provider-server.js';
import {
  agentFixture,
  eventsOf,
  isPngBase64,
  type Json,
  MEDIA,
  modelFor,
  providerFor,
} from './agent-helpers.js';

const { server, ws } = await agentFixture();
afterEach(() => {
  // Every test consumes exactly the turns it queued.
  expect(server.reset()).toBe(0);
});

const since = (n: number) => server.requests.slice(n);

function anthropicAgent(extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}, events?: AgentEvent[]) {
  return new Agent({
    provider: providerFor(server, 'anthropic-messages'),
    model: modelFor('anthropic-messages'),
    tools: ws.tools,
    ...(events ? { onEvent: (e: AgentEvent) => events.push(e) } : {}),
    ...extra,
  });
}

/** A tool that runs until its signal aborts (reporting it), or 30 s. */
function waitTool(seen: { aborted: boolean }) {
  return defineTool({
    name: 'wait',
    description: 'waits',
    inputSchema: { type: 'object', properties: {} },
    invoke: (_args, ctx) =>
      new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve('waited'), 30_000);
        ctx.signal.addEventListener('abort', () => {
          seen.aborted = true;
          clearTimeout(timer);
          resolve('stopped');
        });
        // Tell the host we are running (tests act on this event).
        ctx.update({ message: 'waiting' });
      }),
  });
}

const quickTool = defineTool({
  name: 'quick',
  description: 'answers at once',
  inputSchema: { type: 'object', properties: {} },
  invoke: () => 'quick result',
});

/** The Anthropic dotted path of the first image in a recorded Messages request, as the API names it in errors. */
function anthropicImagePath(req: RecordedRequest): string | undefined {
  const messages = req.body.messages as Json[];
  for (let m = 0; m < messages.length; m++) {
    const content = messages[m]?.content;
    if (!Array.isArray(content)) continue;
    for (let c = 0; c < content.length; c++) {
      const block = content[c];
      if (block.type === 'image') return `messages.${m}.content.${c}`;
      if (block.type === 'tool_result' && Array.isArray(block.content)) {
        const i = block.content.findIndex((b: Json) => b.type === 'image');
        if (i >= 0) return `messages.${m}.content.${c}.content.${i}`;
      }
    }
  }
  return undefined;
}

const readCat = { type: 'reply' as const, toolCalls: [{ name: 'read', args: { path: 'cat.png' } }] };

describe('retry', () => {
  it('a 429 with retry-after is waited out and the turn completes, reported as a retry event', async () => {
    const n = server.requests.length;
    server.enqueue(
      {
        type: 'http-error',
        status: 429,
        message: 'Number of request tokens has exceeded your per-minute rate limit',
        headers: { 'retry-after': '1' },
      },
      { type: 'reply', text: 'hello' },
    );
    const events: AgentEvent[] = [];
    const agent = anthropicAgent({}, events);
    const result = await agent.prompt('hi');
    expect(result.stopReason).toBe('end');
    expect(eventsOf(events, 'retry')).toMatchObject([{ attempt: 1, delayMs: 1000, error: { status: 429 } }]);
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(since(n)).toHaveLength(2);
  });
});

describe('abort', () => {
  it('mid-stream: the stream stops, the partial message is recorded as aborted, and the next prompt works', async () => {
    const n = server.requests.length;
    const before = server.clientDisconnects;
    server.enqueue({ type: 'stall', text: 'I was say' });
    const agent = anthropicAgent();
    const off = agent.subscribe((e) => {
      if (e.type === 'message_delta' && e.delta.type === 'text_delta') agent.abort();
    });
    const result = await agent.prompt('tell me');
    off();
    expect(result.stopReason).toBe('aborted');
    expect(result.error?.code).toBe('ERR_ABORTED');
    const last = agent.messages.at(-1);
    expect(last).toMatchObject({
      role: 'assistant',
      stopReason: 'aborted',
      content: [{ type: 'text', text: 'I was say' }],
    });
    expect(agent.running).toBe(false);
    for (let i = 0; i < 100 && server.clientDisconnects === before; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(server.clientDisconnects).toBeGreaterThan(before);

    server.enqueue({ type: 'reply', text: 'second answer' });
    expect((await agent.prompt('again')).stopReason).toBe('end');
    // The aborted partial answer is not sent back to the model.
    const next = since(n)[1]?.body as Json;
    expect(JSON.stringify(next.messages)).not.toContain('I was say');
  });

  it('mid-tool: the running tool is told to stop and every call gets an aborted result', async () => {
    const seen = { aborted: false };
    server.enqueue({
      type: 'reply',
      toolCalls: [
        { id: 'w1', name: 'wait', args: {} },
        { id: 'q1', name: 'quick', args: {} },
      ],
    });
    const ctl = new AbortController();
    const agent = anthropicAgent({
      tools: new ToolRegistry([[waitTool(seen), quickTool]]),
      toolConcurrency: 1,
    });
    agent.subscribe((e) => {
      if (e.type === 'tool_call_update' && e.toolName === 'wait') ctl.abort();
    });
    const result = await agent.prompt('go', { signal: ctl.signal });
    expect(result.stopReason).toBe('aborted');
    expect(seen.aborted).toBe(true);
    const tool = agent.messages.at(-1) as ToolResultsMessage;
    expect(tool.role).toBe('tool');
    expect(tool.results.map((r) => [r.toolUseId, r.isError, r.parts])).toEqual([
      ['w1', true, [{ type: 'text', text: ABORTED_RESULT_TEXT }]],
      ['q1', true, [{ type: 'text', text: ABORTED_RESULT_TEXT }]],
    ]);
  });
});

describe('a request rejected because of one image', () => {
  it('is retried once with that image replaced in the request only; later requests leave it out too', async () => {
    const n = server.requests.length;
    const rejectIfImage = (req: RecordedRequest) => {
      const path = anthropicImagePath(req);
      return path === undefined
        ? { type: 'reply' as const, text: 'I could not see the picture.' }
        : {
            type: 'http-error' as const,
            status: 400,
            message: `${path}.image.source.base64.data: Could not process image`,
          };
    };
    server.enqueue(readCat, rejectIfImage, rejectIfImage);
    const events: AgentEvent[] = [];
    const agent = anthropicAgent({}, events);
    const result = await agent.prompt('look at cat.png');
    expect(result.stopReason).toBe('end');
    const reqs = since(n);
    expect(reqs).toHaveLength(3);
    expect(anthropicImagePath(reqs[1] as RecordedRequest)).toBeDefined();
    const retried = reqs[2]?.body as Json;
    expect(anthropicImagePath(reqs[2] as RecordedRequest)).toBeUndefined();
    expect(JSON.stringify(retried.messages)).toContain(
      'image omitted: the provider rejected this attachment',
    );
    // History keeps the image; the host was warned once.
    const tool = agent.messages[2] as ToolResultsMessage;
    expect(tool.results[0]?.parts.some((p) => p.type === 'image')).toBe(true);
    expect(eventsOf(events, 'warning').filter((e) => e.warning.code === 'media-rejected')).toHaveLength(1);

    // The next prompt does not send the rejected image again (no second rejection).
    server.enqueue(rejectIfImage);
    expect((await agent.prompt('and now?')).stopReason).toBe('end');
    expect(since(n)).toHaveLength(4);
    expect(anthropicImagePath(since(n)[3] as RecordedRequest)).toBeUndefined();
  });

  it('a second rejection is surfaced, not looped on', async () => {
    const n = server.requests.length;
    server.enqueue(
      { type: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'cat.png' } }] },
      { type: 'http-error', status: 400, message: 'Invalid image.', errorType: 'invalid_request_error' },
      { type: 'http-error', status: 400, message: 'Invalid image.', errorType: 'invalid_request_error' },
    );
    const agent = new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: modelFor('openai-chat'),
      tools: ws.tools,
    });
    const result = await agent.prompt('look');
    expect(result.stopReason).toBe('error');
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as ProviderError).status).toBe(400);
    expect((result.error as ProviderError).providerMessage).toBe('Invalid image.');
    expect(since(n)).toHaveLength(3);
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error' });
  });

  it('an error that names no attachment is surfaced at once', async () => {
    const n = server.requests.length;
    server.enqueue(readCat, { type: 'http-error', status: 400, message: 'max_tokens: must be positive' });
    const result = await anthropicAgent().prompt('look');
    expect(result.stopReason).toBe('error');
    expect(result.error?.message).toContain('max_tokens: must be positive');
    expect(since(n)).toHaveLength(2);
  });
});

describe('session log', () => {
  it('every message is appended as it happens; a resumed session continues with the picture in history', async () => {
    const path = join(ws.root, `s-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path, { model: 'claude-sonnet-4-5' });
    server.enqueue(readCat, { type: 'reply', text: 'A red square.' });
    const agent = anthropicAgent({ session: log });
    const seenOnDisk: number[] = [];
    agent.subscribe((e) => {
      if (e.type === 'message_end') seenOnDisk.push(log.conversation.messages.length);
    });
    await agent.prompt('What is in cat.png?');
    expect(seenOnDisk).toEqual([1, 2, 3, 4]);
    log.close();

    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toEqual(agent.messages);

    const reopened = await SessionLog.open(path);
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'Still a red square.' });
    const resumed = anthropicAgent({ session: reopened });
    expect(resumed.messages).toEqual(agent.messages);
    const result = await resumed.prompt('And again?');
    expect(result.stopReason).toBe('end');
    const body = since(n)[0]?.body as Json;
    expect(anthropicImagePath(since(n)[0] as RecordedRequest)).toBeDefined();
    // Prompt caching is on by default for Anthropic: the last turn carries the cache breakpoint.
    expect(body.messages.at(-1).content.at(-1)).toEqual({
      type: 'text',
      text: 'And again?',
      cache_control: { type: 'ephemeral' },
    });
    reopened.close();
    expect((await loadSession(path)).conversation.messages).toHaveLength(6);
  });

  it('continue() runs a resumed conversation whose last message is a tool result', async () => {
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'read notes' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 't1', name: 'read', input: { path: 'notes.txt' } }],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 't1',
            toolName: 'read',
            parts: [{ type: 'text', text: 'line one' }],
            isError: false,
          },
        ],
      },
    ];
    server.enqueue({ type: 'reply', text: 'It says line one.' });
    const agent = anthropicAgent({ messages: history });
    const result = await agent.continue();
    expect(result.stopReason).toBe('end');
    expect(result.messages.map((m) => m.role)).toEqual(['assistant']);
    expect((await agent.continue()).turns).toBe(0);
  });
});

describe('steering', () => {
  it('a message sent while tools run ends the unfinished calls and goes next', async () => {
    const n = server.requests.length;
    const seen = { aborted: false };
    server.enqueue(
      {
        type: 'reply',
        toolCalls: [
          { id: 'w1', name: 'wait', args: {} },
          { id: 'q1', name: 'quick', args: {} },
        ],
      },
      { type: 'reply', text: 'Hi!' },
    );
    const agent = anthropicAgent({
      tools: new ToolRegistry([[waitTool(seen), quickTool]]),
      toolConcurrency: 1,
    });
    agent.subscribe((e) => {
      if (e.type === 'tool_call_update' && e.toolName === 'wait') agent.steer('Never mind, just say hi.');
    });
    const result = await agent.prompt('run the tools');
    expect(result.stopReason).toBe('end');
    expect(seen.aborted).toBe(true);
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    const tool = agent.messages[2] as ToolResultsMessage;
    expect(tool.results.map((r) => r.parts)).toEqual([
      [{ type: 'text', text: STEERING_CANCELLED_TEXT }],
      [{ type: 'text', text: STEERING_SKIPPED_TEXT }],
    ]);
    const body = since(n)[1]?.body as Json;
    // Anthropic: results and the steering text travel in the same user message, results first.
    const lastUser = body.messages.at(-1);
    expect(lastUser.content.map((b: Json) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
    expect(lastUser.content[2].text).toBe('Never mind, just say hi.');
  });

  it('steer() while idle is delivered with the next run', async () => {
    server.enqueue({ type: 'reply', text: 'ok' });
    const agent = anthropicAgent();
    agent.steer('queued first');
    await agent.prompt('then this');
    expect(agent.messages.slice(0, 2).map((m) => (m.role === 'user' ? m.content[0] : undefined))).toEqual([
      { type: 'text', text: 'then this' },
      { type: 'text', text: 'queued first' },
    ]);
  });
});

describe('steering while the answer streams', () => {
  it('skips every call of that answer without starting it', async () => {
    const seen = { aborted: false };
    server.enqueue(
      {
        type: 'reply',
        toolCalls: [
          { id: 'w1', name: 'wait', args: {} },
          { id: 'q1', name: 'quick', args: {} },
        ],
      },
      { type: 'reply', text: 'ok, stopped' },
    );
    const events: AgentEvent[] = [];
    const agent = anthropicAgent({ tools: new ToolRegistry([[waitTool(seen), quickTool]]) }, events);
    const off = agent.subscribe((e) => {
      if (e.type === 'message_start') {
        agent.steer('stop, do not run anything');
        off();
      }
    });
    await agent.prompt('run the tools');
    const tool = agent.messages[2] as ToolResultsMessage;
    expect(tool.results.map((r) => r.parts)).toEqual([
      [{ type: 'text', text: STEERING_SKIPPED_TEXT }],
      [{ type: 'text', text: STEERING_SKIPPED_TEXT }],
    ]);
    expect(eventsOf(events, 'tool_call_start')).toHaveLength(0);
    expect(seen.aborted).toBe(false);
    expect(agent.messages[3]).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: 'stop, do not run anything' }],
    });
  });
});

describe('after a failure', () => {
  it('continue() asks again, leaving the failed answer out of the request', async () => {
    const n = server.requests.length;
    server.enqueue(
      { type: 'http-error', status: 500, message: 'boom' },
      { type: 'reply', text: 'second time lucky' },
    );
    const agent = anthropicAgent({
      provider: providerFor(server, 'anthropic-messages', { retry: { maxAttempts: 1 } }),
    });
    const failed = await agent.prompt('hello');
    expect(failed.stopReason).toBe('error');
    expect(failed.error?.message).toContain('boom');
    const again = await agent.continue();
    expect(again.stopReason).toBe('end');
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(((since(n)[1] as RecordedRequest).body as Json).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('refuses a model that does not speak the provider API', () => {
    expect(
      () =>
        new Agent({ provider: providerFor(server, 'openai-chat'), model: modelFor('anthropic-messages') }),
    ).toThrow(/speaks anthropic-messages but the provider speaks openai-chat/);
  });
});

describe('limits and bad output', () => {
  it('stops after maxTurns model requests while the model still calls tools', async () => {
    const n = server.requests.length;
    const again = { type: 'reply' as const, toolCalls: [{ name: 'read', args: { path: 'notes.txt' } }] };
    server.enqueue(again, again, again);
    const result = await anthropicAgent({ maxTurns: 2 }).prompt('loop');
    expect(result.stopReason).toBe('max_turns');
    expect(result.turns).toBe(2);
    expect(since(n)).toHaveLength(2);
    expect(result.messages.at(-1)?.role).toBe('tool');
    // The third turn was never asked for.
    expect(server.reset()).toBe(1);
  });

  it('answers tool arguments that are not JSON with an error result, without running the tool', async () => {
    const body =
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"bad1","function":{"name":"read","arguments":"{\\"path\\": cat"}}]}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    server.enqueue({ type: 'raw', body }, { type: 'reply', text: 'sorry' });
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: modelFor('openai-chat'),
      tools: ws.tools,
      onEvent: (e) => events.push(e),
    });
    await agent.prompt('read it');
    const tool = agent.messages[2] as ToolResultsMessage;
    expect(tool.results[0]?.isError).toBe(true);
    expect((tool.results[0]?.parts[0] as { text: string } | undefined)?.text).toMatch(
      /not a JSON object.*did not run/,
    );
    const ends = eventsOf(events, 'tool_call_end');
    expect(ends.map((e) => [e.toolCallId, e.isError])).toEqual([['bad1', true]]);
    expect(eventsOf(events, 'warning').map((e) => e.warning.code)).toContain('invalid-arguments');
  });

  it('a listener that throws does not break the run and is reported as a process warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      server.enqueue({ type: 'reply', text: 'fine' });
      const agent = anthropicAgent();
      agent.subscribe(() => {
        throw new Error('listener bug');
      });
      const result = await agent.prompt('hi');
      expect(result.stopReason).toBe('end');
      expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => (w as Error & { code?: string }).code)).toEqual(['PANTO_LISTENER_THREW']);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rejects a second prompt while running', async () => {
    server.enqueue({ type: 'stall' });
    const agent = anthropicAgent();
    const streaming = new Promise<void>((resolve) =>
      agent.subscribe((e) => e.type === 'message_start' && resolve()),
    );
    const first = agent.prompt('one');
    await expect(agent.prompt('two')).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    await streaming;
    agent.abort();
    expect((await first).stopReason).toBe('aborted');
  });
});

describe('user content with attachments', () => {
  it('raw bytes from the host go through the media pipeline into the user message', async () => {
    const n = server.requests.length;
    const png = await readFile(join(MEDIA, 'png-rgb.png'));
    const pdf = await readFile(join(MEDIA, 'pdf-2page.pdf'));
    server.enqueue({ type: 'reply', text: 'A picture and a report.' });
    const agent = anthropicAgent();
    await agent.prompt([
      'What are these?',
      { type: 'media', data: png },
      { type: 'media', data: pdf, name: 'report.pdf' },
    ]);
    const user = agent.messages[0];
    if (user?.role !== 'user') throw new Error('expected a user message');
    expect(user.content.map((p) => p.type)).toEqual(['text', 'image', 'document']);
    expect(user.content[1]).toMatchObject({ mediaType: 'image/png', width: 64, height: 48 });
    expect(user.content[2]).toMatchObject({ mediaType: 'application/pdf', name: 'report.pdf' });
    const content = ((since(n)[0] as RecordedRequest).body as Json).messages[0].content;
    expect(content.map((b: Json) => b.type)).toEqual(['text', 'image', 'document']);
    expect(isPngBase64(content[1].source.data)).toBe(true);
  });

  it('bytes the pipeline refuses become a note and a warning', async () => {
    server.enqueue({ type: 'reply', text: 'ok' });
    const events: AgentEvent[] = [];
    const agent = anthropicAgent({}, events);
    await agent.prompt(['look', { type: 'media', data: new Uint8Array([1, 2, 3, 4, 5]) }]);
    const user = agent.messages[0];
    expect(user?.role === 'user' && user.content[1]?.type).toBe('text');
    expect(eventsOf(events, 'warning').map((e) => e.warning.code)).toContain('media-dropped');
  });
});

describe('compaction', () => {
  it('summarizes through the same provider when the context nears the window, and logs it', async () => {
    const model = resolveModel('claude-sonnet-4-5', { limits: { contextWindow: 3000 } });
    const long = 'x'.repeat(4000);
    const history: Message[] = [];
    for (let i = 0; i < 4; i++) {
      history.push({ role: 'user', content: [{ type: 'text', text: `question ${i} ${long}` }] });
      history.push({
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${i}` }],
        stopReason: 'end',
      });
    }
    const path = join(ws.root, `c-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path);
    for (const m of history) log.appendMessage(m);
    const n = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'SUMMARY: four questions about x.' },
      { type: 'reply', text: 'fine' },
    );
    const events: AgentEvent[] = [];
    const agent = anthropicAgent(
      { session: log, model, compaction: { reserveTokens: 500, keepRecentTokens: 1200 } },
      events,
    );
    const result = await agent.prompt('short question');
    expect(result.stopReason).toBe('end');
    const [summaryReq, turnReq] = since(n);
    expect(JSON.stringify(summaryReq?.body)).toContain('Summarize this conversation');
    expect(summaryReq?.body.tools).toBeUndefined();
    const first = ((turnReq as RecordedRequest).body as Json).messages[0];
    expect(JSON.stringify(first)).toContain('SUMMARY: four questions about x.');
    expect(eventsOf(events, 'compaction_end')).toHaveLength(1);
    expect(agent.messages.length).toBeLessThan(history.length + 2);
    log.close();
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toEqual(agent.messages);
  });
});

describe('compaction from reported usage', () => {
  it('compacts when the provider reports a context the estimate misses, and only trusts usage measured after', async () => {
    const model = resolveModel('claude-sonnet-4-5', { limits: { contextWindow: 3000 } });
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'first question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'first answer' }], stopReason: 'end' },
      { role: 'user', content: [{ type: 'text', text: 'second question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'second answer' }], stopReason: 'end' },
    ];
    const summaries: string[] = [];
    const events: AgentEvent[] = [];
    const agent = anthropicAgent(
      {
        messages: history,
        model,
        compaction: {
          reserveTokens: 500,
          keepRecentTokens: 10,
          summarizer: async (req) => {
            summaries.push(req.text);
            return 'SUMMARY';
          },
        },
      },
      events,
    );
    server.enqueue({ type: 'reply', text: 'r1', usage: { input: 2800, output: 20 } });
    await agent.prompt('one');
    expect(eventsOf(events, 'compaction_start')).toHaveLength(0); // the estimate alone is tiny

    server.enqueue({ type: 'reply', text: 'r2', usage: { input: 300, output: 5 } });
    await agent.prompt('two');
    const starts = eventsOf(events, 'compaction_start');
    expect(starts).toHaveLength(1);
    expect(starts[0]?.tokens).toBeGreaterThanOrEqual(2820);
    expect(summaries).toHaveLength(1);

    server.enqueue({ type: 'reply', text: 'r3', usage: { input: 350, output: 5 } });
    await agent.prompt('three');
    expect(eventsOf(events, 'compaction_start')).toHaveLength(1); // r1's stale usage no longer counts
  });

  it('does not trust usage recorded in a handed-in history (it may predate a compaction)', async () => {
    const model = resolveModel('claude-sonnet-4-5', { limits: { contextWindow: 3000 } });
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'first question' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'first answer' }],
        stopReason: 'end',
        usage: { inputTokens: 2800, outputTokens: 20 },
      },
    ];
    const events: AgentEvent[] = [];
    const agent = anthropicAgent(
      {
        messages: history,
        model,
        compaction: { reserveTokens: 500, keepRecentTokens: 10, summarizer: async () => 'SUMMARY' },
      },
      events,
    );
    server.enqueue({ type: 'reply', text: 'r1', usage: { input: 300, output: 5 } });
    await agent.prompt('one');
    expect(eventsOf(events, 'compaction_start')).toHaveLength(0);
  });
});

describe('model ids', () => {
  it('a bare id takes the provider API and the catalog facts', () => {
    const agent = new Agent({ provider: providerFor(server, 'openai-chat'), model: 'gpt-4.1' });
    expect(agent.model).toMatchObject({ id: 'gpt-4.1', api: 'openai-chat', input: { image: true } });
  });
});

describe('compaction that fails', () => {
  const model = resolveModel('claude-sonnet-4-5', { limits: { contextWindow: 3000 } });
  const history = (chars: number): Message[] => {
    const out: Message[] = [];
    for (let i = 0; i < 4; i++) {
      out.push({ role: 'user', content: [{ type: 'text', text: `q${i} ${'y'.repeat(chars)}` }] });
      out.push({ role: 'assistant', content: [{ type: 'text', text: `a${i}` }], stopReason: 'end' });
    }
    return out;
  };
  const failingCompaction = {
    reserveTokens: 500,
    keepRecentTokens: 1200,
    summarizer: async (): Promise<string> => {
      throw new Error('summarizer down');
    },
  };

  it('warns and still sends the request while the conversation fits the window', async () => {
    // ~2,600 estimated tokens: past the trigger (3,000 - 500), within the window.
    const handed = history(2500);
    server.enqueue({ type: 'reply', text: 'answered anyway' });
    const events: AgentEvent[] = [];
    const agent = anthropicAgent({ messages: handed, model, compaction: failingCompaction }, events);
    const result = await agent.prompt('next');
    expect(result.stopReason).toBe('end');
    const warning = eventsOf(events, 'warning').find((e) => e.warning.code === 'compaction-failed');
    expect(warning?.warning.message).toContain('summarizer down');
    expect(agent.messages).toHaveLength(handed.length + 2);
  });

  it('does not send a request it knows cannot fit: the run ends with ERR_MODEL_CAPABILITY', async () => {
    // ~4,000 estimated tokens in a 3,000-token window, and no summary to be had.
    const handed = history(4000);
    server.reset();
    const n = server.requests.length;
    const events: AgentEvent[] = [];
    const agent = anthropicAgent({ messages: handed, model, compaction: failingCompaction }, events);
    const result = await agent.prompt('next');
    expect(result.stopReason).toBe('error');
    expect(result.error?.code).toBe('ERR_MODEL_CAPABILITY');
    expect(server.requests.length).toBe(n);
    expect(eventsOf(events, 'warning').some((e) => e.warning.code === 'compaction-failed')).toBe(true);
    expect(agent.messages).toHaveLength(handed.length + 1);
  });
});

describe('abort with a session log', () => {
  it('records the aborted turn so the file loads and resumes', async () => {
    const path = join(ws.root, `a-${Date.now()}.jsonl`);
    const log = await SessionLog.create(path);
    server.enqueue({ type: 'stall' });
    const agent = anthropicAgent({ session: log });
    const off = agent.subscribe((e) => {
      if (e.type === 'message_start') agent.abort();
    });
    expect((await agent.prompt('hello')).stopReason).toBe('aborted');
    off();
    log.close();
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      { role: 'assistant', content: [], stopReason: 'aborted' },
    ]);
  });
});
