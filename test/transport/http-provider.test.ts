import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AssistantMessage } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createProvider, type Provider, type ProviderOptions } from '../../src/providers/http-provider.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import {
  type FakeProviderServer,
  type Surface,
  startFakeProviderServer,
} from '../helpers/fake-provider-server.js';

const SURFACES: Surface[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];

let server: FakeProviderServer;
beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => {
  await server.close();
});

function provider(api: Surface, extra: Partial<ProviderOptions> = {}): Provider {
  return createProvider({
    api,
    baseUrl: server.baseUrl(api),
    apiKey: 'test-key',
    retry: { initialDelayMs: 1, maxDelayMs: 5 },
    ...extra,
  });
}

async function run(p: Provider, body: Record<string, unknown> = {}, signal?: AbortSignal) {
  const events: StreamEvent[] = [];
  for await (const e of p.stream({ model: 'm-1', body }, { signal })) events.push(e);
  const last = events.at(-1);
  if (last?.type !== 'done' && last?.type !== 'error') throw new Error('no terminal event');
  return { events, last, message: last.message as AssistantMessage };
}

const requestsSince = (n: number) => server.requests.slice(n);

describe.each(SURFACES)('%s stream: a full reply', (api) => {
  it('assembles thinking, text and tool calls with arguments split across deltas, usage and stop reason', async () => {
    server.enqueue({
      type: 'reply',
      thinking: 'Let me look at the file.',
      text: 'I will read it.',
      toolCalls: [
        { id: 'c1', name: 'read', args: { path: 'img/cat.png', note: 'ünïcode 🐱' } },
        { id: 'c2', name: 'read', args: { path: 'b.txt' } },
      ],
      usage: { input: 321, output: 45 },
    });
    const { events, message } = await run(provider(api));
    expect(events[0]).toEqual({ type: 'start' });
    expect(message.stopReason).toBe('tool_use');
    expect(message.model).toBe('m-1');
    const thinking = message.content.find((b) => b.type === 'thinking');
    expect(thinking?.type === 'thinking' && thinking.text).toBe('Let me look at the file.');
    expect(message.content.filter((b) => b.type === 'text')).toEqual([
      { type: 'text', text: 'I will read it.' },
    ]);
    const calls = message.content.filter((b) => b.type === 'tool_call');
    expect(calls.map((c) => [c.id, c.name, c.input])).toEqual([
      ['c1', 'read', { path: 'img/cat.png', note: 'ünïcode 🐱' }],
      ['c2', 'read', { path: 'b.txt' }],
    ]);
    expect(message.usage).toEqual({ inputTokens: 321, outputTokens: 45 });
    const textDeltas = events
      .filter((e) => e.type === 'text_delta')
      .map((e) => (e.type === 'text_delta' ? e.text : ''));
    expect(textDeltas.join('')).toBe('I will read it.');
    expect(events.filter((e) => e.type === 'toolcall_end')).toHaveLength(2);
  });

  it('gives the same message when the body arrives in 1..7-byte writes', async () => {
    for (const chunkBytes of [1, 3, 7]) {
      server.enqueue({
        type: 'reply',
        text: 'héllo wörld 🌍',
        toolCalls: [{ id: 'x', name: 't', args: { a: [1, 2] } }],
        chunkBytes,
      });
      const { message } = await run(provider(api));
      expect(message.content).toEqual([
        { type: 'text', text: 'héllo wörld 🌍' },
        expect.objectContaining({ type: 'tool_call', id: 'x', name: 't', input: { a: [1, 2] } }),
      ]);
    }
  });

  it('reports a plain answer as end and max_tokens as max_tokens', async () => {
    server.enqueue({ type: 'reply', text: 'done' }, { type: 'reply', text: 'cut', stop: 'max_tokens' });
    expect((await run(provider(api))).message.stopReason).toBe('end');
    expect((await run(provider(api))).message.stopReason).toBe('max_tokens');
  });

  it('sends the streaming flags, the model and the auth header of the surface', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'ok' });
    await run(provider(api, { headers: { 'x-extra': 'yes' } }), { messages: [] });
    const [req] = requestsSince(n);
    expect(req?.headers['x-extra']).toBe('yes');
    expect(req?.model).toBe('m-1');
    switch (api) {
      case 'anthropic-messages':
        expect(req?.headers['x-api-key']).toBe('test-key');
        expect(req?.headers['anthropic-version']).toBe('2023-06-01');
        expect(req?.body).toMatchObject({ model: 'm-1', stream: true, messages: [] });
        break;
      case 'openai-chat':
        expect(req?.headers.authorization).toBe('Bearer test-key');
        expect(req?.body).toMatchObject({
          model: 'm-1',
          stream: true,
          stream_options: { include_usage: true },
        });
        break;
      case 'openai-responses':
        expect(req?.headers.authorization).toBe('Bearer test-key');
        expect(req?.body).toMatchObject({ model: 'm-1', stream: true });
        break;
      case 'gemini':
        expect(req?.headers['x-goog-api-key']).toBe('test-key');
        expect(req?.path).toBe('/v1beta/models/m-1:streamGenerateContent?alt=sse');
        expect(req?.body).toEqual({ messages: [] });
        break;
    }
  });
});

describe('retries', () => {
  it('waits what retry-after (seconds) asks on a 429, then succeeds', async () => {
    const n = server.requests.length;
    server.enqueue(
      { type: 'http-error', status: 429, message: 'Rate limited', headers: { 'retry-after': '1' } },
      { type: 'reply', text: 'after the wait' },
    );
    const { events, message } = await run(provider('anthropic-messages'));
    const retry = events.find((e) => e.type === 'retry');
    expect(retry).toMatchObject({ type: 'retry', attempt: 1, delayMs: 1000 });
    expect(retry?.type === 'retry' && (retry.error as ProviderError).status).toBe(429);
    expect(message.content).toEqual([{ type: 'text', text: 'after the wait' }]);
    expect(requestsSince(n)).toHaveLength(2);
  });

  it('honours retry-after-ms over retry-after', async () => {
    server.enqueue(
      {
        type: 'http-error',
        status: 429,
        message: 'slow down',
        headers: { 'retry-after-ms': '20', 'retry-after': '30' },
      },
      { type: 'reply', text: 'ok' },
    );
    const { events } = await run(provider('openai-chat'));
    expect(events.find((e) => e.type === 'retry')).toMatchObject({ delayMs: 20 });
  });

  it('retries 5xx with backoff up to maxAttempts, then surfaces the last error', async () => {
    const n = server.requests.length;
    server.enqueue(
      { type: 'http-error', status: 503, message: 'unavailable 1' },
      { type: 'http-error', status: 500, message: 'internal 2' },
      { type: 'http-error', status: 529, message: 'Overloaded 3' },
    );
    const { events, last } = await run(
      provider('anthropic-messages', { retry: { maxAttempts: 3, initialDelayMs: 1 } }),
    );
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(2);
    expect(last.type).toBe('error');
    const err = last.type === 'error' ? (last.error as ProviderError) : undefined;
    expect(err?.code).toBe('ERR_PROVIDER');
    expect(err?.status).toBe(529);
    expect(err?.providerType).toBe('overloaded_error');
    expect(err?.providerMessage).toBe('Overloaded 3');
    expect(requestsSince(n)).toHaveLength(3);
  });

  it('does not wait for a retry-after longer than maxRetryAfterMs', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'http-error', status: 429, message: 'quota', headers: { 'retry-after': '3600' } });
    const { last } = await run(provider('openai-responses'));
    expect(last.type).toBe('error');
    expect(requestsSince(n)).toHaveLength(1);
  });

  it.each(SURFACES)(
    '%s: retries an in-stream overload/server error that came before any content',
    async (api) => {
      server.enqueue({ type: 'stream-error', message: 'Overloaded' }, { type: 'reply', text: 'second try' });
      const { events, message } = await run(provider(api));
      expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
      expect(message.content).toEqual([{ type: 'text', text: 'second try' }]);
      expect(events.filter((e) => e.type === 'start')).toHaveLength(1);
    },
  );

  it('does not retry an in-stream error after text was delivered (no duplicated text)', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'stream-error', text: 'partial answ', message: 'Overloaded' });
    const { last, message } = await run(provider('anthropic-messages'));
    expect(last.type).toBe('error');
    expect(message.stopReason).toBe('error');
    expect(message.content).toEqual([{ type: 'text', text: 'partial answ' }]);
    expect(message.errorMessage).toContain('Overloaded');
    expect(requestsSince(n)).toHaveLength(1);
  });

  it('retries a connection failure, then reports the network error', async () => {
    const dead = await startFakeProviderServer();
    const url = dead.baseUrl('openai-chat');
    await dead.close();
    const p = createProvider({
      api: 'openai-chat',
      baseUrl: url,
      retry: { maxAttempts: 2, initialDelayMs: 1 },
    });
    const { events, last } = await run(p);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(last.type === 'error' && last.error.code).toBe('ERR_PROVIDER');
    expect(last.type === 'error' && last.error.message).toMatch(/fetch failed|ECONNREFUSED/);
  });

  it('fails (and retries) a stalled stream after idleTimeoutMs', async () => {
    server.enqueue({ type: 'stall' }, { type: 'reply', text: 'fresh' });
    const { events, message } = await run(provider('gemini', { idleTimeoutMs: 300 }));
    const retry = events.find((e) => e.type === 'retry');
    expect(retry?.type === 'retry' && retry.error.message).toContain('stalled');
    expect(message.content).toEqual([{ type: 'text', text: 'fresh' }]);
  });
});

describe('errors', () => {
  it.each(SURFACES)('%s: a 400 carries the provider message and status, without retry', async (api) => {
    const n = server.requests.length;
    server.enqueue({ type: 'http-error', status: 400, message: 'messages.1.content.0: bad thing' });
    const { last, message } = await run(provider(api));
    expect(last.type).toBe('error');
    const err = last.type === 'error' ? last.error : undefined;
    expect(err).toBeInstanceOf(ProviderError);
    expect(isPantoError(err, 'ERR_PROVIDER')).toBe(true);
    expect((err as ProviderError).status).toBe(400);
    expect((err as ProviderError).providerMessage).toBe('messages.1.content.0: bad thing');
    expect(err?.message).toContain('messages.1.content.0: bad thing');
    expect(message).toMatchObject({ role: 'assistant', stopReason: 'error', content: [] });
    expect(requestsSince(n)).toHaveLength(1);
  });

  it('maps 401/403 to ERR_PROVIDER_AUTH', async () => {
    server.enqueue({ type: 'http-error', status: 401, message: 'invalid x-api-key' });
    const { last } = await run(provider('anthropic-messages'));
    expect(last.type === 'error' && last.error.code).toBe('ERR_PROVIDER_AUTH');
    expect(last.type === 'error' && (last.error as ProviderError).providerType).toBe('authentication_error');
  });

  it('reports a JSON answer to a streaming request as an error naming the JSON', async () => {
    server.enqueue({
      type: 'raw',
      headers: { 'content-type': 'application/json' },
      body: '{"error":{"message":"nope"}}',
    });
    const { last } = await run(provider('openai-chat'));
    expect(last.type === 'error' && last.error.message).toContain('nope');
  });

  it('reports a stream that ends without its end marker', async () => {
    server.enqueue({
      type: 'raw',
      body: 'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
    });
    const { last } = await run(provider('anthropic-messages', { retry: { maxAttempts: 1 } }));
    expect(last.type === 'error' && last.error.message).toContain('ended before the response was complete');
  });

  it('keeps invalid tool-call JSON raw for the agent to answer', async () => {
    const body =
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"name":"read","arguments":"{\\"path\\": "}}]}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    server.enqueue({ type: 'raw', body });
    const { message } = await run(provider('openai-chat'));
    const call = message.content[0];
    expect(call?.type === 'tool_call' && call.input).toEqual({});
    expect(call?.type === 'tool_call' && call.providerData?.invalidArguments).toMatchObject({
      raw: '{"path": ',
    });
  });
});

describe('abort', () => {
  it.each(SURFACES)('%s: aborting mid-stream stops the request and keeps the partial text', async (api) => {
    const before = server.clientDisconnects;
    server.enqueue({ type: 'stall', text: 'half a sent' });
    const ctl = new AbortController();
    const events: StreamEvent[] = [];
    for await (const e of provider(api).stream({ model: 'm-1', body: {} }, { signal: ctl.signal })) {
      events.push(e);
      if (e.type === 'text_delta') ctl.abort();
    }
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.type === 'error' && last.error.code).toBe('ERR_ABORTED');
    expect(last?.type === 'error' && last.message).toMatchObject({
      stopReason: 'aborted',
      content: [{ type: 'text', text: 'half a sent' }],
    });
    // The server sees the disconnect a moment after the client aborts.
    await vi.waitFor(() => expect(server.clientDisconnects).toBeGreaterThan(before));
  });

  it('aborting during a retry wait ends at once', async () => {
    server.enqueue({ type: 'http-error', status: 429, message: 'wait', headers: { 'retry-after': '30' } });
    const ctl = new AbortController();
    const events: StreamEvent[] = [];
    for await (const e of provider('openai-chat').stream({ model: 'm', body: {} }, { signal: ctl.signal })) {
      events.push(e);
      if (e.type === 'retry') ctl.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'ERR_ABORTED' } });
  });

  it('an already aborted signal sends nothing', async () => {
    const n = server.requests.length;
    const { last } = await run(provider('gemini'), {}, AbortSignal.abort());
    expect(last.type === 'error' && last.error.code).toBe('ERR_ABORTED');
    expect(requestsSince(n)).toHaveLength(0);
  });
});

describe('createProvider configuration', () => {
  it('reads the API key from the environment', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'a' }, { type: 'reply', text: 'b' });
    await run(
      createProvider({
        api: 'gemini',
        baseUrl: server.baseUrl('gemini'),
        env: { GOOGLE_API_KEY: 'from-google' },
      }),
    );
    await run(
      createProvider({
        api: 'openai-chat',
        baseUrl: server.baseUrl('openai-chat'),
        env: { OPENAI_API_KEY: 'from-env' },
      }),
    );
    const [g, o] = requestsSince(n);
    expect(g?.headers['x-goog-api-key']).toBe('from-google');
    expect(o?.headers.authorization).toBe('Bearer from-env');
  });

  it('needs no key for a custom base URL (local servers) and sends no auth header', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'local' });
    await run(createProvider({ api: 'openai-chat', baseUrl: server.baseUrl('openai-chat'), env: {} }));
    expect(requestsSince(n)[0]?.headers.authorization).toBeUndefined();
  });

  it('throws ERR_PROVIDER_AUTH for the default endpoint without a key, naming the variable', () => {
    expect(() => createProvider({ api: 'anthropic-messages', env: {} })).toThrow(/ANTHROPIC_API_KEY/);
    try {
      createProvider({ api: 'gemini', env: {} });
    } catch (err) {
      expect(isPantoError(err, 'ERR_PROVIDER_AUTH')).toBe(true);
    }
  });

  it('throws ERR_INVALID_ARGUMENT for an unknown api', () => {
    expect(() => createProvider({ api: 'nope' as Surface, apiKey: 'k' })).toThrow(/unknown api 'nope'/);
  });
});

describe('OpenAI-compatible servers', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

  it('reads tool calls without index (whole calls, object arguments) and reasoning_content', async () => {
    const body =
      chunk({ reasoning_content: 'think ' }) +
      chunk({ reasoning_content: 'hard' }) +
      chunk({ content: 'Two calls.' }) +
      chunk({ tool_calls: [{ id: 'a', function: { name: 'read', arguments: { path: 'x' } } }] }) +
      chunk({ tool_calls: [{ id: 'b', function: { name: 'read', arguments: '{"path":"y"}' } }] }) +
      // Some servers report `stop` for a turn that called tools, and close without [DONE].
      chunk({}, 'stop');
    server.enqueue({ type: 'raw', body });
    const { message } = await run(provider('openai-chat'));
    expect(message.stopReason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'thinking', text: 'think hard' },
      { type: 'text', text: 'Two calls.' },
      { type: 'tool_call', id: 'a', name: 'read', input: { path: 'x' } },
      { type: 'tool_call', id: 'b', name: 'read', input: { path: 'y' } },
    ]);
  });

  it('synthesises ids for calls that carry none', async () => {
    const body =
      chunk({ tool_calls: [{ index: 0, function: { name: 'read', arguments: '{"path":' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"z"}' } }] }) +
      chunk({}, 'tool_calls') +
      'data: [DONE]\n\n';
    server.enqueue({ type: 'raw', body });
    const { message } = await run(provider('openai-chat'));
    expect(message.content).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'read', input: { path: 'z' } },
    ]);
  });
});
