/**
 * A stream that signalled its end and then holds the connection: every surface ends the turn as `done` in bounded
 * time, never by the idle timeout. Anthropic's `message_delta` with a `stop_reason` (no `message_stop` after it) gets
 * the same `finishGraceMs` as an OpenAI Chat finish reason; Responses `response.completed` and a Gemini
 * `finishReason` are the surfaces' last events, so the body is drained for at most `DRAIN_AFTER_END_MS`.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicStreamParser } from '../../src/providers/anthropic-messages/anthropic-stream.js';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createProvider, type ProviderOptions } from '../../src/providers/http-provider.js';

type Api = ProviderOptions['api'];

const ANTHROPIC_UNTIL_DELTA =
  'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"all"}}\n\n' +
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":4}}\n\n';

/** Each surface's end signal with no closing event (Anthropic) or its last event, then the connection held. */
const HELD: Record<Api, string> = {
  'anthropic-messages': ANTHROPIC_UNTIL_DELTA,
  'openai-chat':
    'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"all"},"finish_reason":"length"}]}\n\n',
  'openai-responses':
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"all"}\n\n' +
    'event: response.completed\ndata: {"type":"response.completed","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"m","usage":{"input_tokens":1,"output_tokens":4}}}\n\n',
  gemini:
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"all"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":4}}\n\n',
};

describe('AnthropicStreamParser: the stop reason completes, message_stop ends', () => {
  it('message_delta with a stop_reason: complete, not ended; message_stop: ended', () => {
    const parser = new AnthropicStreamParser(() => {});
    for (const block of ANTHROPIC_UNTIL_DELTA.trim().split('\n\n')) {
      const [event, data] = block.split('\n').map((l) => l.slice(l.indexOf(':') + 2)) as [string, string];
      if (event === 'message_delta') expect([parser.complete, parser.ended]).toEqual([false, false]);
      parser.accept({ event, data, id: '' });
    }
    expect([parser.complete, parser.ended]).toEqual([true, false]);
    expect(parser.result()).toMatchObject({
      stopReason: 'max_tokens',
      content: [{ type: 'text', text: 'all' }],
    });
    parser.accept({ event: 'message_stop', data: '{"type":"message_stop"}', id: '' });
    expect([parser.complete, parser.ended]).toEqual([true, true]);
  });

  it('a message_delta without a stop_reason (usage only) does not complete the message', () => {
    const parser = new AnthropicStreamParser(() => {});
    parser.accept({
      event: 'message_delta',
      data: '{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":1}}',
      id: '',
    });
    expect(parser.complete).toBe(false);
  });
});

describe('transport: the end signalled, then the connection held', () => {
  let server: Server;
  let url = '';
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, r) => r.end();

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      handler(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it.each(Object.keys(HELD) as Api[])(
    '%s: done with the text, the stop reason and the usage, before the idle timeout',
    async (api) => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(HELD[api]);
        // Keep-alives after the end neither extend the wait nor count as content.
        const timer = setInterval(() => res.write(': ping\n\n'), 5);
        res.on('close', () => clearInterval(timer));
      };
      // The idle timeout (not retried: one attempt) is the failure a missing end rule would show.
      const provider = createProvider({
        api,
        baseUrl: url,
        apiKey: 'k',
        retry: { maxAttempts: 1 },
        idleTimeoutMs: 60_000,
        progressTimeoutMs: 3000,
        finishGraceMs: 50,
      });
      const events: StreamEvent[] = [];
      for await (const e of provider.stream({ model: 'm', body: {} })) events.push(e);
      const last = events.at(-1);
      if (last?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(last)}`);
      expect(last.message).toMatchObject({
        stopReason: 'max_tokens',
        content: [{ type: 'text', text: 'all' }],
      });
      if (api !== 'openai-chat') expect(last.message.usage).toMatchObject({ outputTokens: 4 });
    },
  );
});
