/**
 * A keep-alive cut across two reads is still a keep-alive: the progress clock (`progressTimeoutMs`) judges each event
 * by its head, not each read, so a server cannot dodge the stall by splitting its pings. An event whose head already
 * rules out a keep-alive still counts as progress while it arrives (a long image in pieces).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { mayBeKeepAlive } from '../../src/providers/common/surface-parser.js';
import { createProvider, type ProviderOptions } from '../../src/providers/http-provider.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { SseParser } from '../../src/providers/transport/sse-parser.js';

type Api = ProviderOptions['api'];

/** Each surface's keep-alive as its server sends it. */
const KEEP_ALIVE: Record<Api, string> = {
  'anthropic-messages': 'event: ping\ndata: {"type": "ping"}\n\n',
  'openai-chat': 'data: {"type":"ping"}\n\n',
  'openai-responses': 'data: {"type":"keepalive","sequence_number":7}\n\n',
  gemini: 'data: {"type":"response.keep_alive"}\n\n',
};

/** The first event of a response on each surface (content). */
const HALF: Record<Api, string> = {
  'anthropic-messages':
    'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n',
  'openai-chat':
    'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}\n\n',
  'openai-responses':
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"half"}\n\n',
  gemini: 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]}}]}\n\n',
};

const APIS = Object.keys(KEEP_ALIVE) as Api[];

describe('SseParser.pendingHead + mayBeKeepAlive', () => {
  it.each(APIS)('%s: every prefix of a keep-alive may still be one', (api) => {
    const ka = KEEP_ALIVE[api];
    for (let cut = 1; cut < ka.length - 1; cut++) {
      const sse = new SseParser(() => {});
      sse.push(ka.slice(0, cut));
      expect([cut, mayBeKeepAlive(sse.pendingHead())]).toEqual([cut, true]);
    }
  });

  it.each(APIS)('%s: a content event is judged content once its head rules a keep-alive out', (api) => {
    const line = HALF[api].trimEnd();
    const sse = new SseParser(() => {});
    sse.push(line.slice(0, -1));
    expect(mayBeKeepAlive(sse.pendingHead())).toBe(false);
  });

  it('a padded keep-alive stays a keep-alive however long it grows; a long event with another type does not', () => {
    const padded = new SseParser(() => {});
    padded.push(`data: {"type":"ping","pad":"${'x'.repeat(10_000)}`);
    expect(mayBeKeepAlive(padded.pendingHead())).toBe(true);
    const image = new SseParser(() => {});
    image.push(`data: {"type":"response.output_item.done","item":{"result":"${'A'.repeat(10_000)}`);
    expect(mayBeKeepAlive(image.pendingHead())).toBe(false);
  });

  it('a head is the first characters only, and no head while the pending line is not a data line', () => {
    const sse = new SseParser(() => {});
    sse.push('event: pi');
    expect(sse.pendingHead()).toBeUndefined();
    sse.push('ng\nda');
    expect(sse.pendingHead()).toBeUndefined();
    sse.push(`ta: {"type":"x${'y'.repeat(1000)}`);
    expect(sse.pendingHead(20)).toEqual({ event: 'ping', data: '{"type":"xyyyyyyyyyy' });
  });

  it('a head of data spread over many data: lines is its joined start, reset by each dispatch and an over-long event', () => {
    const sse = new SseParser(() => {}, { maxLineChars: 5000 });
    sse.push('event: big\n');
    for (let i = 0; i < 300; i++) sse.push(`data: ${i}${'z'.repeat(i % 7)}\n`);
    const joined = Array.from({ length: 300 }, (_, i) => `${i}${'z'.repeat(i % 7)}`).join('\n');
    expect(sse.pendingHead()).toEqual({ event: 'big', data: joined.slice(0, 256) });
    expect(sse.pendingHead(1024)?.data).toBe(joined.slice(0, 1024));
    expect(sse.pendingHead(2000)?.data).toBe(joined.slice(0, 2000));
    // Short data lines plus the unterminated one.
    sse.push('\ndata: a\ndata: b\ndata: c');
    expect(sse.pendingHead()).toEqual({ event: '', data: 'a\nb\nc' });
    // An over-long event is dropped whole: the next one starts a fresh head.
    expect(() => sse.push(`\ndata: ${'q'.repeat(6000)}\n`)).toThrow();
    sse.push('data: fresh\n');
    expect(sse.pendingHead()).toEqual({ event: '', data: 'fresh' });
  });
});

describe('transport: keep-alives split across reads', () => {
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

  it.each(APIS)('%s: halves of keep-alives, each in its own write, still stall the attempt', async (api) => {
    const ka = KEEP_ALIVE[api];
    const cut = ka.indexOf('"type"') + 9;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.socket?.setNoDelay(true);
      res.write(HALF[api]);
      // Two writes per keep-alive, 5 ms apart, until the client gives up (if it never did, the test would time out).
      let n = 0;
      const timer = setInterval(() => {
        res.write(n % 2 === 0 ? ka.slice(0, cut) : ka.slice(cut));
        n++;
      }, 5);
      res.on('close', () => clearInterval(timer));
    };
    const provider = createProvider({
      api,
      baseUrl: url,
      apiKey: 'k',
      retry: { maxAttempts: 1 },
      idleTimeoutMs: 60_000,
      progressTimeoutMs: 300,
    });
    const events: StreamEvent[] = [];
    for await (const e of provider.stream({ model: 'm', body: {} })) events.push(e);
    const last = events.at(-1);
    if (last?.type !== 'error') throw new Error(`expected an error, got ${last?.type}`);
    expect(last.error).toBeInstanceOf(ProviderError);
    // The stall is `keep-alives-only`; a loaded machine that delays the client's reads past the limit makes it `idle`
    // (no bytes read since the last content): either way the split keep-alives did not count as content.
    expect(['keep-alives-only', 'idle']).toContain((last.error as ProviderError).stall);
  });
});
