/**
 * Hostile streams that stay alive without answering, against the real transport on a loopback server: keep-alives
 * forever before the last event (SSE comments, Anthropic `ping`, Responses `keepalive`), an OpenAI Chat finish reason
 * with no `[DONE]` and the connection held, and silence after each surface's last event. Every stream ends in exactly
 * one terminal event; the limits are per-provider options with small values here, so nothing waits real minutes.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { isKeepAliveEvent } from '../../src/providers/common/surface-parser.js';
import {
  createProvider,
  PROGRESS_TIMEOUT_MS,
  type Provider,
  type ProviderOptions,
} from '../../src/providers/http-provider.js';
import { OpenAIChatStreamParser } from '../../src/providers/openai-chat/openai-chat-stream.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { fixturesDir, recordedStreams } from '../conformance/wire-fixtures.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Api = ProviderOptions['api'];
const APIS: Api[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];

let server: Server;
let url = '';
let handler: Handler = (_req, res) => res.end();
let requests = 0;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    req.resume();
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await new Promise((r) => setImmediate(r));
  expect(unhandled).toEqual([]);
  requests = 0;
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  server.closeAllConnections();
  server.close();
});

function provider(api: Api, extra: Partial<ProviderOptions> = {}): Provider {
  return createProvider({
    api,
    baseUrl: url,
    apiKey: 'k',
    retry: { initialDelayMs: 1, maxDelayMs: 2, maxAttempts: 3 },
    idleTimeoutMs: 60_000,
    ...extra,
  });
}

async function run(p: Provider) {
  const events: StreamEvent[] = [];
  for await (const e of p.stream({ model: 'm', body: { messages: [] } })) events.push(e);
  expect(events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
  const last = events.at(-1);
  if (last?.type !== 'done' && last?.type !== 'error') throw new Error('no terminal event last');
  return { events, last };
}

function sse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
}

/** Write `piece()` every `ms` until the connection closes. */
function every(res: ServerResponse, ms: number, piece: (n: number) => string | undefined): void {
  let n = 0;
  const timer = setInterval(() => {
    const next = piece(n++);
    if (next === undefined) {
      clearInterval(timer);
      res.end();
    } else res.write(next);
  }, ms);
  res.on('close', () => clearInterval(timer));
}

/**
 * The limit in cases that must NOT fire while content flows every few ms: far above any event-loop stall of a loaded
 * 2-core CI machine (hundreds of ms), so only a missing refresh can fire it. Those streams outlast it by the server's
 * own clock, so they take ~2.2 s each.
 */
const LIMIT_MS = 2000;

const closed = (res: ServerResponse) => (res.closed ? Promise.resolve() : once(res, 'close'));

/** The first event(s) of a response on each surface, carrying the text "half". */
const HALF: Record<Api, string> = {
  'anthropic-messages':
    'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}\n\n',
  'openai-chat':
    'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}\n\n',
  'openai-responses':
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"half"}\n\n',
  gemini: 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]}}]}\n\n',
};

/** What each surface's server sends to keep a connection alive. */
const KEEP_ALIVE: Record<Api, string> = {
  'anthropic-messages': 'event: ping\ndata: {"type": "ping"}\n\n',
  'openai-chat': ': OPENROUTER PROCESSING\n\n',
  'openai-responses': 'event: keepalive\ndata: {"type":"keepalive","sequence_number":7}\n\n',
  gemini: ': ping\n\n',
};

describe('keep-alives forever before the last event', () => {
  it.each(APIS)(
    '%s: only keep-alives after the first text end the attempt (not retried) with the partial text',
    async (api) => {
      let res0: ServerResponse | undefined;
      handler = (_req, res) => {
        res0 = res;
        sse(res);
        res.write(HALF[api]);
        every(res, 5, () => KEEP_ALIVE[api]);
      };
      // 1 s, not less: a loaded machine that delays the client's reads past the limit sees silence (an idle stall).
      const { last } = await run(provider(api, { progressTimeoutMs: 1000 }));
      if (last.type !== 'error') throw new Error(`expected an error, got ${last.type}`);
      const error = last.error as ProviderError;
      expect(error).toBeInstanceOf(ProviderError);
      expect(error.code).toBe('ERR_PROVIDER');
      expect(error.stall).toBe('keep-alives-only');
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/no content for 1000 ms, only keep-alives/);
      expect(last.message.content).toEqual([{ type: 'text', text: 'half' }]);
      expect(requests).toBe(1);
      await closed(res0 as ServerResponse);
    },
  );

  it.each(APIS)(
    '%s: keep-alives from the first byte (nothing of the response ever) are not retried either',
    async (api) => {
      handler = (_req, res) => {
        sse(res);
        every(res, 5, () => ': keep-alive\n\n');
      };
      const { events, last } = await run(provider(api, { progressTimeoutMs: 800 }));
      if (last.type !== 'error') throw new Error(`expected an error, got ${last.type}`);
      expect((last.error as ProviderError).stall).toBe('keep-alives-only');
      expect(events.some((e) => e.type === 'retry')).toBe(false);
      expect(requests).toBe(1);
    },
  );

  it('content between keep-alives keeps the stream going past the limit, and it ends as done', async () => {
    let contents = 0;
    handler = (_req, res) => {
      sse(res);
      const start = Date.now();
      let finished = false;
      every(res, 4, (n) => {
        if (finished) return undefined;
        // Past the limit by the server's own clock (however late its timers ran), then the finish.
        if (Date.now() - start > LIMIT_MS + 200) {
          finished = true;
          return 'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
        }
        if (n % 2 === 0) return ': OPENROUTER PROCESSING\n\n';
        contents++;
        return 'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n';
      });
    };
    // The stream outlasts the limit; content arrives every ~8 ms, so only a stall of ~2 s could fire it.
    const { last } = await run(provider('openai-chat', { progressTimeoutMs: LIMIT_MS }));
    expect(last.type).toBe('done');
    expect(last.message.content).toEqual([{ type: 'text', text: 'x'.repeat(contents) }]);
  });

  it('one long event still arriving (a base64 image in pieces) is progress, not keep-alives', async () => {
    const image = 'A'.repeat(200 * 1024);
    const pieces: string[] = [];
    const line = `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: image }] }, finishReason: 'STOP' }] })}\n\n`;
    for (let i = 0; i < line.length; i += 2048) pieces.push(line.slice(i, i + 2048));
    handler = (_req, res) => {
      sse(res);
      res.socket?.setNoDelay(true);
      // About 100 pieces, spread over longer than the limit, with no event dispatched until the last one.
      every(res, Math.ceil((LIMIT_MS + 200) / pieces.length), (n) => pieces[n]);
    };
    const { last } = await run(provider('gemini', { progressTimeoutMs: LIMIT_MS }));
    expect(last.type).toBe('done');
    expect(last.message.content).toEqual([{ type: 'text', text: image }]);
  });

  it('with no bytes at all the progress limit is an idle stall: "no data", retryable', async () => {
    handler = (_req, res) => sse(res);
    const { events, last } = await run(
      provider('openai-chat', { progressTimeoutMs: 50, retry: { maxAttempts: 2, initialDelayMs: 1 } }),
    );
    if (last.type !== 'error') throw new Error(`expected an error, got ${last.type}`);
    const error = last.error as ProviderError;
    expect(error.stall).toBe('idle');
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/no data for 50 ms/);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(requests).toBe(2);
  });

  it('progressTimeoutMs 0 turns the limit off (the caller’s signal still ends it); 0 is not the default', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write(HALF['openai-chat']);
      every(res, 5, () => ': ping\n\n');
    };
    /** The delays of the timers armed during one stream the caller aborts; it must end as ERR_ABORTED. */
    const delaysWith = async (progressTimeoutMs?: number): Promise<unknown[]> => {
      // Node's own setTimeout, watched (not replaced): which delays the transport arms.
      const spy = vi.spyOn(globalThis, 'setTimeout');
      const ctl = new AbortController();
      const p = provider('openai-chat', progressTimeoutMs === undefined ? {} : { progressTimeoutMs });
      const events: StreamEvent[] = [];
      try {
        for await (const e of p.stream({ model: 'm', body: {} }, { signal: ctl.signal })) {
          events.push(e);
          // Keep-alives keep coming; with no limit only the caller ends the stream.
          if (e.type === 'text_delta') setTimeout(() => ctl.abort(), 100);
        }
        return spy.mock.calls.map((c) => c[1]);
      } finally {
        spy.mockRestore();
        const last = events.at(-1);
        expect(last?.type === 'error' && last.error.code).toBe('ERR_ABORTED');
      }
    };
    // 0 arms no progress clock at all; the default arms one of PROGRESS_TIMEOUT_MS (a `||` would arm that for 0 too).
    expect(await delaysWith()).toContain(PROGRESS_TIMEOUT_MS);
    expect(await delaysWith(0)).not.toContain(PROGRESS_TIMEOUT_MS);
  });
});

describe('limits longer than a timer can hold', () => {
  it('idleTimeoutMs 1e12, progressTimeoutMs Infinity and finishGraceMs 1e12 wait, not fire at once', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write(
        `${HALF['openai-chat']}data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`,
      );
      // Node fires a timer longer than 2^31-1 ms after 1 ms: that would end the turn before this usage arrives.
      setTimeout(
        () =>
          res.end(
            'data: {"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\ndata: [DONE]\n\n',
          ),
        30,
      );
    };
    const { last } = await run(
      provider('openai-chat', {
        idleTimeoutMs: 1e12,
        progressTimeoutMs: Number.POSITIVE_INFINITY,
        finishGraceMs: 1e12,
      }),
    );
    expect(last.type).toBe('done');
    expect(last.message.usage).toMatchObject({ inputTokens: 3, outputTokens: 4 });
  });

  it('an idle timeout of 1e12 with a slow first byte is not a stall', async () => {
    handler = (_req, res) => {
      setTimeout(() => {
        sse(res);
        res.end(`${HALF['openai-chat']}data: [DONE]\n\n`);
      }, 30);
    };
    const { last } = await run(provider('openai-chat', { idleTimeoutMs: 1e12 }));
    expect(last.type).toBe('done');
  });
});

describe('OpenAI Chat: a finish reason, then no [DONE]', () => {
  const FINISH =
    'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n';
  const USAGE =
    'data: {"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\n';

  it('neither usage nor [DONE], the connection held: done after the grace, not a stall', async () => {
    let res0: ServerResponse | undefined;
    handler = (_req, res) => {
      res0 = res;
      sse(res);
      res.write(HALF['openai-chat'] + FINISH);
    };
    const { last } = await run(provider('openai-chat', { finishGraceMs: 50 }));
    expect(last.type).toBe('done');
    expect(last.message).toMatchObject({ stopReason: 'end', content: [{ type: 'text', text: 'half' }] });
    await closed(res0 as ServerResponse);
  });

  it('keep-alives after the finish reason do not extend the grace', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write(HALF['openai-chat'] + FINISH);
      every(res, 5, () => ': OPENROUTER PROCESSING\n\n');
    };
    const { last } = await run(provider('openai-chat', { finishGraceMs: 50 }));
    expect(last.type).toBe('done');
  });

  it('the usage chunk after the finish reason is kept even without [DONE]', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write(HALF['openai-chat'] + FINISH);
      setTimeout(() => res.write(USAGE), 20);
    };
    const { last } = await run(provider('openai-chat', { finishGraceMs: LIMIT_MS, idleTimeoutMs: LIMIT_MS }));
    expect(last.type).toBe('done');
    expect(last.message.usage).toMatchObject({ inputTokens: 3, outputTokens: 4 });
  });

  it('a finish reason sent early (then more content) does not cut the answer: content pushes the grace back', async () => {
    let chunks = 0;
    handler = (_req, res) => {
      sse(res);
      // A server that marks a reasoning chunk `finish_reason: "stop"` and goes on (open-webui #16377).
      res.write(
        'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":"stop"}]}\n\n',
      );
      const start = Date.now();
      let finished = false;
      every(res, 5, () => {
        if (finished) return undefined;
        if (Date.now() - start <= LIMIT_MS + 200) {
          chunks++;
          return HALF['openai-chat'];
        }
        finished = true;
        return `${FINISH}${USAGE}data: [DONE]\n\n`;
      });
    };
    // Chunks ~5 ms apart outlast the grace by the server's clock; each one pushes it back.
    const { last } = await run(provider('openai-chat', { finishGraceMs: LIMIT_MS }));
    expect(last.type).toBe('done');
    expect(last.message.content.at(-1)).toEqual({ type: 'text', text: 'half'.repeat(chunks) });
    expect(last.message.usage).toMatchObject({ inputTokens: 3, outputTokens: 4 });
  });

  it('parser: usage after the finish reason ends the stream until more content shows the finish was early', () => {
    const parser = new OpenAIChatStreamParser(() => {});
    const accept = (data: string) => parser.accept({ event: 'message', data: data.slice(6).trim(), id: '' });
    accept(HALF['openai-chat']);
    accept(FINISH);
    expect([parser.complete, parser.ended]).toEqual([true, false]);
    accept(USAGE);
    expect(parser.ended).toBe(true);
    accept('data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":null}]}');
    expect(parser.ended).toBe(true);
    accept(HALF['openai-chat']);
    expect(parser.ended).toBe(false);
    accept('data: [DONE]');
    expect(parser.ended).toBe(true);
  });

  it('usage in the finish chunk itself ends the stream without waiting for the grace', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write(
        `${HALF['openai-chat']}data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":6}}\n\n`,
      );
    };
    // A grace longer than the test timeout: only the usage can end this stream in time.
    const { last } = await run(provider('openai-chat', { finishGraceMs: 600_000, idleTimeoutMs: 400 }));
    expect(last.type).toBe('done');
    expect(last.message).toMatchObject({
      stopReason: 'max_tokens',
      usage: { inputTokens: 5, outputTokens: 6 },
    });
  });
});

// The shared wire-fixtures folder (PANTO_WIRE_FIXTURES, default ../shared/reference/wire-fixtures beside the repo).
const HAVE_FIXTURES = existsSync(join(fixturesDir(), 'streams'));

describe.skipIf(!HAVE_FIXTURES)('OpenAI Chat recordings without [DONE], the connection held', () => {
  const chat = HAVE_FIXTURES ? recordedStreams().filter((r) => r.api === 'openai-chat') : [];

  it.each(chat.map((r) => [r.name, r] as const))(
    '%s: the same done message, usage included',
    async (_n, rec) => {
      handler = (_req, res) => {
        sse(res);
        res.end(rec.body);
      };
      const whole = await run(provider('openai-chat'));
      expect(whole.last.type).toBe('done');
      const cut = rec.body.replace(/^data: ?\[DONE\][ \t]*\r?\n(\r?\n)?/gm, '');
      expect(cut).not.toContain('[DONE]');
      let res0: ServerResponse | undefined;
      handler = (_req, res) => {
        res0 = res;
        sse(res);
        res.write(cut);
      };
      const held = await run(provider('openai-chat', { finishGraceMs: 100, idleTimeoutMs: 400 }));
      expect(held.last).toEqual(whole.last);
      await closed(res0 as ServerResponse);
    },
  );
});

describe('silence after the last event on every surface is done, with its usage', () => {
  const LAST: Record<Api, string> = {
    'anthropic-messages':
      `${HALF['anthropic-messages']}event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n` +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    'openai-chat': `${HALF['openai-chat']}data: {"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":4}}\n\ndata: [DONE]\n\n`,
    'openai-responses':
      `${HALF['openai-responses']}event: response.completed\ndata: ` +
      '{"type":"response.completed","response":{"status":"completed","model":"m","usage":{"input_tokens":1,"output_tokens":4}}}\n\n',
    gemini:
      'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]},"finishReason":"STOP"}],' +
      '"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":4}}\n\n',
  };

  it.each(APIS)('%s: the connection held open after the last event', async (api) => {
    let res0: ServerResponse | undefined;
    handler = (_req, res) => {
      res0 = res;
      sse(res);
      res.write(LAST[api]);
    };
    const { last } = await run(provider(api, { idleTimeoutMs: 400 }));
    expect(last.type).toBe('done');
    expect(last.message.content).toEqual([{ type: 'text', text: 'half' }]);
    expect(last.message.usage).toMatchObject({ outputTokens: 4 });
    await closed(res0 as ServerResponse);
  });
});

describe('isKeepAliveEvent', () => {
  it('knows the keep-alive events and nothing that merely mentions them', () => {
    expect(isKeepAliveEvent({ event: 'ping', data: '{"type": "ping"}', id: '' })).toBe(true);
    expect(isKeepAliveEvent({ event: 'message', data: '{"type":"ping"}', id: '' })).toBe(true);
    expect(
      isKeepAliveEvent({ event: 'message', data: '{"type":"keepalive","sequence_number":466}', id: '' }),
    ).toBe(true);
    expect(isKeepAliveEvent({ event: 'keepalive', data: '{}', id: '' })).toBe(true);
    expect(
      isKeepAliveEvent({
        event: 'message',
        data: '{"choices":[{"index":0,"delta":{"content":"ping"}}]}',
        id: '',
      }),
    ).toBe(false);
    expect(
      isKeepAliveEvent({
        event: 'message',
        data: '{"choices":[{"delta":{"content":"{\\"type\\":\\"ping\\"}"}}]}',
        id: '',
      }),
    ).toBe(false);
    expect(isKeepAliveEvent({ event: 'message', data: '{"type":"response.keep_alive"}', id: '' })).toBe(true);
    expect(isKeepAliveEvent({ event: 'message', data: '{"type":"pingback"}', id: '' })).toBe(false);
    expect(
      isKeepAliveEvent({
        event: 'message',
        data: '{"type":"response.output_text.delta","delta":"ping"}',
        id: '',
      }),
    ).toBe(false);
    expect(isKeepAliveEvent({ event: 'message', data: 'ping', id: '' })).toBe(false);
    expect(isKeepAliveEvent({ event: 'message', data: '[DONE]', id: '' })).toBe(false);
  });
});
