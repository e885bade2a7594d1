import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedFetch } from '../../src/mcp/bounded-fetch.js';

// A loopback server whose /<name> writes the chunks of BODIES[name] one by one (so event boundaries fall across chunks).
const BODIES: Record<string, { type: string; chunks: string[] }> = {
  // 40 events of ~31 bytes: 1279 bytes in all, each event under the 100-byte cap. "\r\n" line ends, split mid-blank-line.
  manyEvents: {
    type: 'text/event-stream',
    chunks: Array.from({ length: 40 }, () => `data: ${'e'.repeat(22)}\r\n\r`).map((c, i) =>
      i === 0 ? c : `\n${c}`,
    ),
  },
  oneBigEvent: {
    type: 'text/event-stream',
    chunks: ['data: ', 'x'.repeat(60), '\ndata: ', 'y'.repeat(60), '\n\n'],
  },
  lonelyCr: { type: 'text/event-stream', chunks: ['data: a\n\r\n', 'data: ', 'z'.repeat(90), '\n\n'] },
  json: { type: 'application/json', chunks: ['[', ' '.repeat(60), ' '.repeat(60), ']'] },
  small: { type: 'application/json', chunks: ['{"ok":', 'true}'] },
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer(async (req, res) => {
    if (req.url === '/stall') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":');
      return;
    }
    const body = BODIES[(req.url ?? '').slice(1)];
    if (!body) {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'content-type': body.type });
    for (const c of body.chunks) {
      res.write(c);
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
});

const fetch100 = boundedFetch(100);
const read = async (name: string) => (await fetch100(`${base}/${name}`)).text();

describe('boundedFetch', () => {
  it('an SSE stream may carry any number of events, each under the cap', async () => {
    expect((await read('manyEvents')).length).toBe(40 * 31 + 39);
  });

  it('one SSE event over the cap (across lines and chunks) errors the body', async () => {
    await expect(read('oneBigEvent')).rejects.toThrow(/an SSE event over 100 bytes/);
  });

  it('a line holding only "\\r" ends an event too', async () => {
    expect(await read('lonelyCr')).toContain('z'.repeat(90));
  });

  it('any other body is capped in total; small bodies and bodiless responses pass unchanged', async () => {
    await expect((await fetch100(`${base}/json`)).json()).rejects.toThrow(/a response body over 100 bytes/);
    expect(await (await fetch100(`${base}/small`)).json()).toEqual({ ok: true });
    const none = await fetch100(`${base}/none`);
    expect(none.status).toBe(204);
  });

  it('a body stalling after its headers is cut at idleMs; onCut hears why and the ids of the POSTed requests', async () => {
    const cuts: Array<[string, Array<string | number>]> = [];
    const f = boundedFetch(100, (reason, ids) => cuts.push([reason, ids]), 50);
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 7, method: 'tools/call' },
      { jsonrpc: '2.0', method: 'notifications/cancelled' },
      { jsonrpc: '2.0', id: 'x', method: 'ping' },
    ]);
    const res = await f(`${base}/stall`, { method: 'POST', body });
    await expect(res.text()).rejects.toThrow("the server's response body stalled: no byte for 50 ms");
    expect(cuts).toEqual([
      ["the server's response body stalled: no byte for 50 ms; the call was ended", [7, 'x']],
    ]);
  });

  it('an over-cap body names the ids of the request it answered (so the caller can fail it at once)', async () => {
    const cuts: Array<Array<string | number>> = [];
    const f = boundedFetch(100, (_reason, ids) => cuts.push(ids));
    const res = await f(`${base}/oneBigEvent`, {
      method: 'POST',
      body: '{"jsonrpc":"2.0","id":3,"method":"tools/call"}',
    });
    await expect(res.text()).rejects.toThrow(/an SSE event over 100 bytes/);
    expect(cuts).toEqual([[3]]);
  });
});
