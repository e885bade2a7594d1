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
afterAll(() => new Promise((r) => server.close(r)));

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
});
