/**
 * Hostile HTTP behaviour against the real transport on a loopback server: bodies that are not event streams, broken
 * encodings, silence, resets, absurd retry-after values, redirects, and aborts at every stage. Every stream ends in
 * exactly one terminal event with a typed error (or the right message), no unhandled rejection, the socket closed.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createProvider, type Provider, type ProviderOptions } from '../../src/providers/http-provider.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { fixturesDir, recordedStreams } from '../conformance/wire-fixtures.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Api = ProviderOptions['api'];

interface Loopback {
  server: Server;
  url: string;
  handler: Handler;
  requests: IncomingMessage[];
  /** Responses whose connection closed (the client went away or the body ended). */
  closed: ServerResponse[];
}

async function loopback(): Promise<Loopback> {
  const lb: Loopback = {
    server: undefined as unknown as Server,
    url: '',
    handler: (_req, res) => res.end(),
    requests: [],
    closed: [],
  };
  lb.server = createServer((req, res) => {
    lb.requests.push(req);
    res.on('close', () => lb.closed.push(res));
    req.resume();
    lb.handler(req, res);
  });
  lb.server.listen(0, '127.0.0.1');
  await once(lb.server, 'listening');
  lb.url = `http://127.0.0.1:${(lb.server.address() as AddressInfo).port}`;
  return lb;
}

let main: Loopback;
let other: Loopback;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  main = await loopback();
  other = await loopback();
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  // Let a stray rejection surface before checking.
  await new Promise((r) => setImmediate(r));
  expect(unhandled).toEqual([]);
  main.requests.length = 0;
  other.requests.length = 0;
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  main.server.closeAllConnections();
  other.server.closeAllConnections();
  main.server.close();
  other.server.close();
});

function provider(api: Api, extra: Partial<ProviderOptions> = {}): Provider {
  return createProvider({
    api,
    baseUrl: main.url,
    apiKey: 'secret-key',
    retry: { initialDelayMs: 1, maxDelayMs: 2, maxAttempts: 1 },
    idleTimeoutMs: 0,
    ...extra,
  });
}

/** Run a stream to its end; `onEvent` may abort. Asserts exactly one terminal event, last. */
async function run(p: Provider, signal?: AbortSignal, onEvent?: (e: StreamEvent) => void) {
  const events: StreamEvent[] = [];
  for await (const e of p.stream({ model: 'm', body: { messages: [] } }, { signal })) {
    events.push(e);
    onEvent?.(e);
  }
  const terminals = events.filter((e) => e.type === 'done' || e.type === 'error');
  expect(terminals).toHaveLength(1);
  const last = events.at(-1);
  if (last?.type !== 'done' && last?.type !== 'error') throw new Error('no terminal event last');
  return { events, last };
}

function errorOf(last: StreamEvent) {
  if (last.type !== 'error') throw new Error(`expected an error event, got ${last.type}`);
  return last.error;
}

/** Resolve when `res`'s connection has closed. */
function closedOf(res: ServerResponse): Promise<void> {
  return res.closed ? Promise.resolve() : once(res, 'close').then(() => {});
}

const CHAT_TEXT = (t: string) =>
  `data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: { content: t }, finish_reason: null }] })}\n\n`;
const CHAT_END = `data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;

function sse(res: ServerResponse, status = 200): void {
  res.writeHead(status, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
}

describe('hostile HTTP: a 200 that is not an event stream', () => {
  it('an HTML page with 200 is a non-retryable ERR_PROVIDER quoting the page, after one request', async () => {
    main.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body><h1>Captive portal: please log in</h1></body></html>');
    };
    const { last } = await run(provider('openai-chat', { retry: { maxAttempts: 3, initialDelayMs: 1 } }));
    const error = errorOf(last);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.code).toBe('ERR_PROVIDER');
    expect((error as ProviderError).retryable).toBe(false);
    expect(error.message).toMatch(/text\/html/);
    expect(error.message).toMatch(/Captive portal/);
    expect(main.requests).toHaveLength(1);
  });

  it('a JSON error body with 200 is ERR_PROVIDER with the provider message', async () => {
    main.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'model is loading', type: 'server_error' } }));
    };
    const error = errorOf((await run(provider('openai-chat'))).last);
    expect(error.code).toBe('ERR_PROVIDER');
    expect(error.message).toMatch(/model is loading/);
  });

  it('a JSON body of 50 MB with 200 is cut: the error quotes at most a bounded part and the socket closes', async () => {
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      res.writeHead(200, { 'content-type': 'application/json' });
      const piece = Buffer.alloc(1024 * 1024, 0x61);
      res.write('{"error":{"message":"');
      let n = 0;
      const more = () => {
        while (n < 50 && res.write(piece)) n++;
        if (n < 50) res.once('drain', more);
        else res.end('"}}');
      };
      more();
    };
    const error = errorOf((await run(provider('openai-chat'))).last);
    expect(error.code).toBe('ERR_PROVIDER');
    expect(error.message.length).toBeLessThan(10_000);
    await closedOf(res0 as ServerResponse);
  });

  it('a 429 whose error body never ends is reported from the first bytes; the socket closes', async () => {
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      res.writeHead(429, { 'content-type': 'text/plain' });
      res.write(`slow down ${'x'.repeat(200_000)}`);
      // ...and nothing more, ever.
    };
    const error = errorOf((await run(provider('openai-chat'))).last) as ProviderError;
    expect(error.status).toBe(429);
    expect(error.message).toMatch(/slow down/);
    await closedOf(res0 as ServerResponse);
  });

  it('a wrong content-type carrying a valid event stream is still read', async () => {
    main.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(CHAT_TEXT('hi') + CHAT_END);
    };
    const { last } = await run(provider('openai-chat'));
    expect(last.type).toBe('done');
    expect(last.message.content).toEqual([{ type: 'text', text: 'hi' }]);
  });
});

describe('hostile HTTP: content-encoding', () => {
  it('gzip declared over a plain body is a typed ERR_PROVIDER', async () => {
    main.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.end(CHAT_TEXT('plain') + CHAT_END);
    };
    const error = errorOf((await run(provider('openai-chat'))).last);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.code).toBe('ERR_PROVIDER');
  });

  it('a gzip bomb (136 MiB of NUL, no line end) stops at the line limit with a non-retryable error', async () => {
    const bomb = gzipSync(Buffer.alloc(136 * 1024 * 1024), { level: 9 });
    main.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.end(bomb);
    };
    const error = errorOf(
      (await run(provider('openai-chat', { retry: { maxAttempts: 3, initialDelayMs: 1 } }))).last,
    ) as ProviderError;
    expect(error.code).toBe('ERR_PROVIDER');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/openai-chat.*longer than/);
    expect(main.requests).toHaveLength(1);
  }, 60_000);
});

describe('hostile HTTP: silence, resets, truncation', () => {
  it('headers then silence: the abort signal ends it with ERR_ABORTED and closes the socket', async () => {
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      sse(res);
    };
    const ctl = new AbortController();
    const { last } = await run(provider('openai-chat'), ctl.signal, (e) => {
      if (e.type === 'start') ctl.abort();
    });
    expect(errorOf(last).code).toBe('ERR_ABORTED');
    expect(last.message.stopReason).toBe('aborted');
    await closedOf(res0 as ServerResponse);
  });

  it('headers then silence: the idle timeout ends it with a retryable ERR_PROVIDER and closes the socket', async () => {
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      sse(res);
    };
    const error = errorOf((await run(provider('openai-chat', { idleTimeoutMs: 50 }))).last) as ProviderError;
    expect(error.code).toBe('ERR_PROVIDER');
    expect(error.message).toMatch(/stalled/);
    await closedOf(res0 as ServerResponse);
  });

  it('keep-alive comments forever are ended by the abort signal (the idle timer sees bytes)', async () => {
    let res0: ServerResponse | undefined;
    const ctl = new AbortController();
    main.handler = (_req, res) => {
      res0 = res;
      sse(res);
      let n = 0;
      const timer = setInterval(() => {
        res.write(': keep-alive\n\n');
        if (++n === 30) ctl.abort();
      }, 2);
      res.on('close', () => clearInterval(timer));
    };
    const { last } = await run(provider('openai-chat', { idleTimeoutMs: 60_000 }), ctl.signal);
    expect(errorOf(last).code).toBe('ERR_ABORTED');
    await closedOf(res0 as ServerResponse);
  });

  it('a reset mid-event after text is an ERR_PROVIDER with the partial text, not retried', async () => {
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      sse(res);
      res.write(CHAT_TEXT('partial '));
      res.write('data: {"id":"c","choices":[{"index":0,"delta":{"content":"cut');
    };
    // The server resets the connection once the client has shown the text (no race with unread bytes).
    const { last } = await run(
      provider('openai-chat', { retry: { maxAttempts: 3, initialDelayMs: 1 } }),
      undefined,
      (e) => {
        if (e.type === 'text_delta') res0?.socket?.destroy();
      },
    );
    const error = errorOf(last);
    expect(error.code).toBe('ERR_PROVIDER');
    expect(last.message.content).toEqual([{ type: 'text', text: 'partial ' }]);
    expect(main.requests).toHaveLength(1);
  });

  it('a reset before any content is retried and the retry succeeds', async () => {
    let n = 0;
    main.handler = (_req, res) => {
      sse(res);
      if (n++ === 0) {
        res.write('data: {"id":"c","choi');
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      res.end(CHAT_TEXT('ok') + CHAT_END);
    };
    const { events, last } = await run(
      provider('openai-chat', { retry: { maxAttempts: 2, initialDelayMs: 1 } }),
    );
    expect(last.type).toBe('done');
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(last.message.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it.each<Api>(['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'])(
    '%s: a stream that ends without its terminal event is an ERR_PROVIDER naming it',
    async (api) => {
      main.handler = (_req, res) => {
        sse(res);
        res.end(': nothing\n\n');
      };
      const error = errorOf((await run(provider(api))).last);
      expect(error.code).toBe('ERR_PROVIDER');
      expect(error.message).toMatch(/ended before the response was complete/);
    },
  );
});

describe('hostile HTTP: retry-after lies', () => {
  const retried = async (headers: Record<string, string>, status = 429) => {
    let n = 0;
    main.handler = (_req, res) => {
      if (n++ === 0) {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end('{"error":{"message":"busy"}}');
        return;
      }
      sse(res);
      res.end(CHAT_TEXT('ok') + CHAT_END);
    };
    return run(provider('openai-chat', { retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 2 } }));
  };

  it.each([
    ['retry-after: 1e12 (seconds)', { 'retry-after': '1e12' }, 1e15],
    ['a far-future HTTP date', { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, undefined],
    ['retry-after-ms: 1e12', { 'retry-after-ms': '1e12' }, 1e12],
  ])('%s is not waited for: the error surfaces at once with a note', async (_name, headers, asked) => {
    for (const status of [429, 529, 503]) {
      const { last } = await retried(headers, status);
      const error = errorOf(last) as ProviderError;
      expect(error.status).toBe(status);
      expect(error.message).toMatch(/longer than the longest wait allowed/);
      if (asked !== undefined) expect(error.retryAfterMs).toBe(asked);
      expect(main.requests.length).toBe(1);
      main.requests.length = 0;
    }
  });

  it.each([
    ['-5', { 'retry-after': '-5' }],
    ['NaN', { 'retry-after': 'NaN' }],
    ['garbage', { 'retry-after': 'soon, maybe' }],
    ['retry-after-ms Infinity', { 'retry-after-ms': '1e400' }],
    ['retry-after-ms -1', { 'retry-after-ms': '-1' }],
  ])('retry-after %s is ignored: the computed backoff (capped) is used', async (_name, headers) => {
    const { events, last } = await retried(headers);
    expect(last.type).toBe('done');
    const retry = events.find((e) => e.type === 'retry');
    expect(retry?.type === 'retry' && retry.delayMs).toBeGreaterThanOrEqual(0);
    expect(retry?.type === 'retry' && retry.delayMs).toBeLessThanOrEqual(2);
  });

  it('a retry-after longer than a timer can hold, with maxRetryAfterMs Infinity, is waited for (not 1 ms)', async () => {
    main.handler = (_req, res) => {
      res.writeHead(429, { 'retry-after': '1e12' });
      res.end('busy');
    };
    const ctl = new AbortController();
    const { events, last } = await run(
      provider('openai-chat', { retry: { maxAttempts: 2, maxRetryAfterMs: Number.POSITIVE_INFINITY } }),
      ctl.signal,
      (e) => {
        // Node fires a timer longer than 2^31-1 ms after 1 ms: a second request would be made at once.
        if (e.type === 'retry') setTimeout(() => ctl.abort(), 50);
      },
    );
    expect(events.find((e) => e.type === 'retry')).toMatchObject({ delayMs: 1e15 });
    expect(errorOf(last).code).toBe('ERR_ABORTED');
    expect(main.requests).toHaveLength(1);
  });

  it('an HTTP date in the past retries at once', async () => {
    const { events, last } = await retried({ 'retry-after': 'Thu, 01 Jan 1970 00:00:00 GMT' });
    expect(last.type).toBe('done');
    expect(events.find((e) => e.type === 'retry')).toMatchObject({ delayMs: 0 });
  });
});

describe('hostile HTTP: redirects', () => {
  it('a redirect loop is one request and a non-retryable ERR_PROVIDER naming the redirect', async () => {
    main.handler = (req, res) => {
      res.writeHead(307, { location: req.url ?? '/' });
      res.end();
    };
    const error = errorOf(
      (await run(provider('openai-chat', { retry: { maxAttempts: 3, initialDelayMs: 1 } }))).last,
    ) as ProviderError;
    expect(error.code).toBe('ERR_PROVIDER');
    expect(error.status).toBe(307);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/redirect/);
    expect(main.requests).toHaveLength(1);
  });

  it.each<Api>(['anthropic-messages', 'gemini', 'openai-chat'])(
    '%s: a redirect to another origin is not followed, so the API key never reaches it',
    async (api) => {
      other.handler = (_req, res) => {
        sse(res);
        res.end(CHAT_END);
      };
      main.handler = (req, res) => {
        res.writeHead(308, { location: `${other.url}${req.url ?? '/'}` });
        res.end();
      };
      const error = errorOf((await run(provider(api))).last) as ProviderError;
      expect(error.code).toBe('ERR_PROVIDER');
      expect(error.message).toContain(other.url);
      expect(other.requests).toHaveLength(0);
    },
  );
});

describe('hostile HTTP: abort at every stage', () => {
  it('before the request: one aborted terminal event and no request sent', async () => {
    const { last } = await run(provider('openai-chat'), AbortSignal.abort());
    expect(errorOf(last).code).toBe('ERR_ABORTED');
    expect(main.requests).toHaveLength(0);
  });

  it('before the headers: ERR_ABORTED and the connection is closed', async () => {
    const ctl = new AbortController();
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      ctl.abort(new Error('user pressed escape'));
    };
    const { last } = await run(provider('openai-chat'), ctl.signal);
    const error = errorOf(last);
    expect(error.code).toBe('ERR_ABORTED');
    expect(error.message).toMatch(/user pressed escape/);
    await closedOf(res0 as ServerResponse);
  });

  it('mid-body after text: ERR_ABORTED with the partial text, the connection is closed', async () => {
    const ctl = new AbortController();
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      sse(res);
      res.write(CHAT_TEXT('so far'));
    };
    const { last } = await run(provider('openai-chat'), ctl.signal, (e) => {
      if (e.type === 'text_delta') ctl.abort();
    });
    expect(errorOf(last).code).toBe('ERR_ABORTED');
    expect(last.message).toMatchObject({
      stopReason: 'aborted',
      content: [{ type: 'text', text: 'so far' }],
    });
    await closedOf(res0 as ServerResponse);
  });

  it('during a retry wait: ERR_ABORTED at once, no second request', async () => {
    const ctl = new AbortController();
    main.handler = (_req, res) => {
      res.writeHead(503, { 'retry-after': '30' });
      res.end('busy');
    };
    const { last } = await run(
      provider('openai-chat', { retry: { maxAttempts: 3, initialDelayMs: 1 } }),
      ctl.signal,
      (e) => {
        if (e.type === 'retry') ctl.abort();
      },
    );
    expect(errorOf(last).code).toBe('ERR_ABORTED');
    expect(main.requests).toHaveLength(1);
  });

  it('after the end: nothing more happens', async () => {
    const ctl = new AbortController();
    main.handler = (_req, res) => {
      sse(res);
      res.end(CHAT_TEXT('done') + CHAT_END);
    };
    const { last } = await run(provider('openai-chat'), ctl.signal);
    expect(last.type).toBe('done');
    ctl.abort();
  });

  it('the consumer stops reading mid-body: the connection is closed', async () => {
    let res0: ServerResponse | undefined;
    main.handler = (_req, res) => {
      res0 = res;
      sse(res);
      res.write(CHAT_TEXT('a'));
    };
    for await (const e of provider('openai-chat').stream({ model: 'm', body: {} })) {
      if (e.type === 'text_delta') break;
    }
    await closedOf(res0 as ServerResponse);
  });
});

describe('hostile HTTP: in-stream errors', () => {
  const errorEvents: Record<Api, string> = {
    'anthropic-messages':
      'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    'openai-chat': `${CHAT_TEXT('half')}data: {"error":{"message":"Overloaded","type":"server_error"}}\n\n`,
    'openai-responses':
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"half"}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"server_error","code":"server_error","message":"Overloaded"}}\n\n',
    gemini:
      'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]}}]}\n\n' +
      'data: {"error":{"code":503,"message":"Overloaded","status":"UNAVAILABLE"}}\n\n',
  };

  it.each<Api>(['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'])(
    '%s: an error event after text is ERR_PROVIDER with the provider message and the partial text, not retried',
    async (api) => {
      main.handler = (_req, res) => {
        sse(res);
        res.end(errorEvents[api]);
      };
      const { last } = await run(provider(api, { retry: { maxAttempts: 3, initialDelayMs: 1 } }));
      const error = errorOf(last) as ProviderError;
      expect(error.code).toBe('ERR_PROVIDER');
      expect(error.providerMessage).toBe('Overloaded');
      expect(last.message.content).toEqual([{ type: 'text', text: 'half' }]);
      expect(main.requests).toHaveLength(1);
    },
  );
});

// The shared wire-fixtures folder (PANTO_WIRE_FIXTURES, default ../shared/reference/wire-fixtures beside the repo).
const HAVE_FIXTURES = existsSync(join(fixturesDir(), 'streams'));

describe.skipIf(!HAVE_FIXTURES)('hostile HTTP: recorded streams re-framed and dribbled', () => {
  const picks: Record<Api, string> = {
    'anthropic-messages': 'anthropic/vercel-anthropic-json-tool.1.chunks.txt',
    'openai-chat': 'openai-chat/vercel-groq-tool-call.chunks.txt',
    'openai-responses': 'openai-responses/vercel-azure-tool-call.1.chunks.txt',
    gemini: 'gemini/vercel-google-tool-call.chunks.txt',
  };

  it.each<Api>(['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'])(
    '%s: a BOM, CR-only line ends and `data:` without a space, in 1-byte writes, give the same message',
    async (api) => {
      const stream = recordedStreams().find((r) => r.name === picks[api]);
      if (stream === undefined) throw new Error(`fixture ${picks[api]} not found`);
      main.handler = (_req, res) => {
        sse(res);
        res.end(stream.body);
      };
      const whole = await run(provider(api));
      expect(whole.last.type).toBe('done');
      const hostile = Buffer.from(
        `\uFEFF${stream.body
          .replace(/^data: /gm, 'data:')
          .replace(/^event: /gm, 'event:')
          .replace(/\n/g, '\r')}`,
      );
      main.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.socket?.setNoDelay(true);
        let i = 0;
        const next = () => {
          if (i >= hostile.length) {
            res.end();
            return;
          }
          res.write(hostile.subarray(i, i + 1));
          i++;
          setImmediate(next);
        };
        next();
      };
      const dribbled = await run(provider(api));
      expect(dribbled.last).toEqual(whole.last);
    },
  );
});

describe('hostile HTTP: the body goes on after the last event', () => {
  const finished: Record<Api, string> = {
    'anthropic-messages':
      'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"all"}}\n\n' +
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    'openai-chat': `${CHAT_TEXT('all')}${CHAT_END}`,
    'openai-responses':
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"all"}\n\n' +
      'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","model":"m"}}\n\n',
    gemini:
      'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"all"}]},"finishReason":"STOP"}]}\n\n',
  };

  it.each<Api>(['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'])(
    '%s: keep-alives forever after the last event still end the turn as done, and the socket is closed',
    async (api) => {
      let res0: ServerResponse | undefined;
      main.handler = (_req, res) => {
        res0 = res;
        sse(res);
        res.write(finished[api]);
        const timer = setInterval(() => res.write(': keep-alive\n\n'), 5);
        res.on('close', () => clearInterval(timer));
      };
      const { last } = await run(provider(api, { idleTimeoutMs: 60_000 }));
      expect(last.type).toBe('done');
      expect(last.message.content).toEqual([{ type: 'text', text: 'all' }]);
      await closedOf(res0 as ServerResponse);
    },
  );

  it('openai-chat: the usage chunk after the finish reason is still read (only [DONE] ends the stream)', async () => {
    main.handler = (_req, res) => {
      sse(res);
      res.write(
        `${CHAT_TEXT('all')}data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
      );
      setTimeout(() => {
        res.end(
          `data: ${JSON.stringify({ id: 'c', model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } })}\n\ndata: [DONE]\n\n`,
        );
      }, 20);
    };
    const { last } = await run(provider('openai-chat'));
    expect(last.type).toBe('done');
    expect(last.message.usage).toMatchObject({ inputTokens: 3, outputTokens: 4 });
  });
});

describe('hostile HTTP: requests that cannot be sent, silence after the end', () => {
  it('a request body JSON cannot hold (a BigInt, a cycle) is one ERR_INVALID_ARGUMENT error event, no request', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const body of [{ n: 1n }, cyclic]) {
      const events: StreamEvent[] = [];
      for await (const e of provider('openai-chat').stream({ model: 'm', body })) events.push(e);
      expect(events).toHaveLength(1);
      expect(events[0]?.type === 'error' && events[0].error.code).toBe('ERR_INVALID_ARGUMENT');
    }
    expect(main.requests).toHaveLength(0);
  });

  it('silence (connection left open) after the last event is done, not a stall', async () => {
    main.handler = (_req, res) => {
      sse(res);
      res.write(CHAT_TEXT('all') + CHAT_END);
    };
    const { last } = await run(provider('openai-chat', { idleTimeoutMs: 100 }));
    expect(last.type).toBe('done');
  });
});
