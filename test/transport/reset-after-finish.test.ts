/**
 * A connection that breaks after the response signalled its finish (Anthropic `message_delta` with a stop reason,
 * before `message_stop`; an OpenAI Chat finish reason, before the usage chunk and `[DONE]`) ends the turn as `done`
 * with what arrived: the answer is whole, and retrying it (here, or the agent asking again after an error) would pay
 * for it twice. A break before the finish is still a retryable failure. Real loopback server that destroys the socket.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createProvider, type ProviderOptions } from '../../src/providers/http-provider.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';

type Api = ProviderOptions['api'];

const FINISHED: Partial<Record<Api, string>> = {
  'anthropic-messages':
    'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"all"}}\n\n' +
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":4}}\n\n',
  'openai-chat':
    'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"all"},"finish_reason":"length"}]}\n\n',
};

/** The same streams cut before their finish. */
const UNFINISHED: Partial<Record<Api, string>> = {
  'anthropic-messages': (FINISHED['anthropic-messages'] as string).split('event: message_delta')[0] as string,
  'openai-chat':
    'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"all"},"finish_reason":null}]}\n\n',
};

const APIS = Object.keys(FINISHED) as Api[];

describe('transport: the connection breaks after the finish', () => {
  let server: Server;
  let url = '';
  let requests = 0;
  let body = '';

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      requests++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.socket?.setNoDelay(true);
      // Chunked body with no terminating chunk: the client's read fails once the socket closes.
      res.write(body, () => setTimeout(() => res.socket?.destroy(), 20));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  async function run(api: Api, stream: string): Promise<StreamEvent[]> {
    requests = 0;
    body = stream;
    const provider = createProvider({
      api,
      baseUrl: url,
      apiKey: 'k',
      retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 },
      finishGraceMs: 60_000,
    });
    const events: StreamEvent[] = [];
    for await (const e of provider.stream({ model: 'm', body: {} })) events.push(e);
    return events;
  }

  it.each(APIS)('%s: done with the answer and its stop reason, one request', async (api) => {
    const events = await run(api, FINISHED[api] as string);
    const last = events.at(-1);
    if (last?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(last)}`);
    expect(last.message).toMatchObject({
      stopReason: 'max_tokens',
      content: [{ type: 'text', text: 'all' }],
    });
    expect(requests).toBe(1);
  });

  it.each(APIS)('%s: a break before the finish is still a retryable failure', async (api) => {
    const events = await run(api, UNFINISHED[api] as string);
    const last = events.at(-1);
    if (last?.type !== 'error') throw new Error(`expected error, got ${JSON.stringify(last)}`);
    expect(last.error).toBeInstanceOf(ProviderError);
    expect((last.error as ProviderError).retryable).toBe(true);
    // Content was streamed already: the transport does not retry it (the agent may ask again).
    expect(requests).toBe(1);
  });
});
