/**
 * A hostile client against `serveMcpHttp` over real loopback HTTP, with the real fengari Lua tools. Each case ends by
 * checking that a well-behaved client (the official SDK client) is still served. (Host/Origin checks, the body cap on
 * a complete body and unknown sessions: server-http.e2e.ts.)
 */

import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../../src/lua/lua-tool-source.js';
import {
  MCP_HTTP_DEFAULTS,
  type McpHttpServer,
  type McpHttpServerOptions,
  serveMcpHttp,
} from '../../../src/mcp/mcp-http-server.js';
import type { ToolSource } from '../../../src/tool-source.js';
import { LUA_BIG, LUA_TOOLS } from './servers.js';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
});
const TOKEN = 'hostile-client-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...AUTH,
};
/** The Authorization line of a raw request. */
const AUTH_LINE = `Authorization: Bearer ${TOKEN}\r\n`;

let source: LuaToolSource;
beforeAll(async () => {
  source = await LuaToolSource.fromDir(LUA_TOOLS, { includeBuiltins: false });
});
afterAll(() => source?.close());

async function withServer(options: McpHttpServerOptions, run: (server: McpHttpServer) => Promise<void>) {
  const server = await serveMcpHttp(source, { authToken: TOKEN, ...options });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/** The official SDK client connects, calls a tool, and leaves (closing its session). */
async function wellBehaved(server: McpHttpServer): Promise<void> {
  const client = new Client({ name: 'polite', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: AUTH },
  });
  await client.connect(transport);
  try {
    const res = (await client.callTool({ name: 'test_simple_text', arguments: {} })) as CallToolResult;
    expect(res.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}

/** POST `body`; the status and the session id it got (settles only when the server answers). */
function post(
  server: McpHttpServer,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; session: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(server.url, { method: 'POST', headers: { ...HEADERS, ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => {
        const sid = res.headers['mcp-session-id'];
        resolve({ status: res.statusCode ?? 0, session: typeof sid === 'string' ? sid : undefined, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw TCP connection to the server; resolves what it read once the server closes it. */
function rawSocket(server: McpHttpServer): { socket: Socket; closed: Promise<string> } {
  const socket = connect(server.port, '127.0.0.1');
  let read = '';
  socket.on('data', (c: Buffer) => {
    read += c.toString();
  });
  const closed = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(read));
    socket.on('error', () => {});
  });
  return { socket, closed };
}

const bounded = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)),
  ]);

describe('serveMcpHttp against a hostile client', () => {
  it('sessions opened and abandoned cannot hold the slots: a new one replaces the least recently used idle one', async () => {
    await withServer({ maxSessions: 3, sessionIdleMs: 300 }, async (server) => {
      const opened: Array<string | undefined> = [];
      for (let i = 0; i < 3; i++) opened.push((await post(server, INIT)).session);
      expect(server.sessions).toBe(3);
      const fourth = await post(server, INIT);
      expect(fourth.status).toBe(200);
      expect(server.sessions).toBe(3);
      const ping = (session: string | undefined) =>
        post(server, '{"jsonrpc":"2.0","id":2,"method":"ping"}', {
          'mcp-session-id': session ?? '',
          'mcp-protocol-version': '2025-06-18',
        });
      // The oldest went; the newest is there.
      expect((await ping(opened[0])).status).toBe(404);
      expect((await ping(fourth.session)).status).toBe(200);
      // Nothing is open on them: they expire, and a polite client gets a session again.
      await expect.poll(() => server.sessions, { timeout: 5_000 }).toBe(0);
      await wellBehaved(server);
    });
  });

  it('only when every session is busy does initialize get 503; per client at most maxSessionsPerClient', async () => {
    for (const options of [
      { maxSessions: 2, expect: 'too many sessions (2)' },
      { maxSessions: 10, maxSessionsPerClient: 2, expect: 'too many sessions of this client (2)' },
    ]) {
      const { expect: message, ...limits } = options;
      await withServer(limits, async (server) => {
        const calls: AbortController[] = [];
        for (let i = 0; i < 2; i++) {
          const { session } = await post(server, INIT);
          const ac = new AbortController();
          calls.push(ac);
          const res = await fetch(server.url, {
            method: 'POST',
            headers: { ...HEADERS, 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' },
            signal: ac.signal,
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 2,
              method: 'tools/call',
              params: { name: 'slow_steps', arguments: { steps: 100_000_000 } },
            }),
          });
          expect(res.status).toBe(200);
        }
        const refused = await post(server, INIT);
        expect(refused.status).toBe(503);
        expect(refused.text).toContain(message);
        for (const ac of calls) ac.abort();
        // Idle again: the next client gets a slot.
        await expect.poll(async () => (await post(server, INIT)).status, { timeout: 5_000 }).toBe(200);
      });
    }
  });

  it('a sessionIdleMs over what a timer holds (2^31 ms) does not close sessions at once', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      await withServer({ sessionIdleMs: 2 ** 31 + 1000 }, async (server) => {
        const { status, session } = await post(server, INIT);
        expect(status).toBe(200);
        const headers = { 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' };
        // The idle timer was armed when the answer closed; an overflowing one fires after 1 ms, before this one.
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(server.sessions).toBe(1);
        expect((await post(server, '{"jsonrpc":"2.0","id":2,"method":"ping"}', headers)).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(server.sessions).toBe(1);
      });
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('a session answering a call is in use and does not expire; GET (a standalone stream) is 405', async () => {
    await withServer({ sessionIdleMs: 200 }, async (server) => {
      const { session } = await post(server, INIT);
      const headers = { ...HEADERS, 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' };
      const stream = await fetch(server.url, { headers: { ...headers, accept: 'text/event-stream' } });
      expect(stream.status).toBe(405);
      expect(stream.headers.get('allow')).toBe('POST, DELETE');
      const ac = new AbortController();
      const call = await fetch(server.url, {
        method: 'POST',
        headers,
        signal: ac.signal,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'slow_steps', arguments: { steps: 100_000_000 } },
        }),
      });
      expect(call.status).toBe(200);
      // Another session, idle, expires meanwhile: the one answering a call outlives it.
      await post(server, INIT);
      expect(server.sessions).toBe(2);
      await expect.poll(() => server.sessions, { timeout: 5_000 }).toBe(1);
      const ping = await post(server, '{"jsonrpc":"2.0","id":3,"method":"ping"}', headers);
      expect(ping.status).toBe(200);
      ac.abort();
      await wellBehaved(server);
    });
  });

  it('a declared body over the cap gets 413 at once, without the server waiting for (or reading) the bytes', async () => {
    await withServer({ maxBodyBytes: 64 * 1024 }, async (server) => {
      const { socket, closed } = rawSocket(server);
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${AUTH_LINE}` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n{"a":"`,
      );
      const answer = await bounded(closed, 5_000, 'a 1 GiB declared body');
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
      expect(answer).toContain('request body over 65536 bytes');
      await wellBehaved(server);
    });
  });

  it('a chunked body without a length is cut off as soon as it passes the cap', async () => {
    await withServer({ maxBodyBytes: 64 * 1024 }, async (server) => {
      const { socket, closed } = rawSocket(server);
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${AUTH_LINE}` +
          `Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const chunk = 'a'.repeat(16 * 1024);
      // 128 KiB and then nothing: the server must answer without the end of the body.
      for (let i = 0; i < 8; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      const answer = await bounded(closed, 5_000, 'an endless chunked body');
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
      await wellBehaved(server);
    });
  });

  it('slowloris: a request trickled in is answered 408 and dropped after requestTimeoutMs', async () => {
    await withServer({ requestTimeoutMs: 500 }, async (server) => {
      const headersOnly = rawSocket(server);
      headersOnly.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const bodyTrickle = rawSocket(server);
      bodyTrickle.socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${AUTH_LINE}` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\n\r\n{`,
      );
      const trickle = setInterval(() => bodyTrickle.socket.write(' '), 100);
      try {
        const [a, b] = await bounded(
          Promise.all([headersOnly.closed, bodyTrickle.closed]),
          5_000,
          'trickled requests',
        );
        expect(a).toMatch(/^HTTP\/1\.1 408/);
        expect(b).toMatch(/^HTTP\/1\.1 408/);
      } finally {
        clearInterval(trickle);
      }
      await wellBehaved(server);
    });
  });

  it('connections beyond maxConnections are closed at once; the slots come back when they close', async () => {
    await withServer({ maxConnections: 3 }, async (server) => {
      const idle = [1, 2, 3].map(() => rawSocket(server));
      await Promise.all(idle.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
      // Node accepts, then drops the fourth connection: it ends without a byte.
      const fourth = rawSocket(server);
      expect(await bounded(fourth.closed, 5_000, 'a connection over the cap')).toBe('');
      for (const { socket } of idle) socket.destroy();
      await Promise.all(idle.map(({ closed }) => closed));
      await wellBehaved(server);
    });
  });

  it('a client that drops the connection mid-call: the Lua call is aborted, not left to run to its budget', async () => {
    const settled: Array<{ aborted: boolean; ok: boolean }> = [];
    const recording = {
      name: 'recording',
      list: () => source.list(),
      call: async (...args: Parameters<LuaToolSource['call']>) => {
        const r = await source.call(...args);
        settled.push({ aborted: args[2].signal.aborted, ok: r.ok });
        return r;
      },
    };
    const server = await serveMcpHttp(recording, { authToken: TOKEN });
    try {
      const { session } = await post(server, INIT);
      const headers = { ...HEADERS, 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' };
      await post(server, '{"jsonrpc":"2.0","method":"notifications/initialized"}', headers);
      const ac = new AbortController();
      const res = await fetch(server.url, {
        method: 'POST',
        headers,
        signal: ac.signal,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'slow_steps', arguments: { steps: 100_000_000 }, _meta: { progressToken: 'p' } },
        }),
      });
      // The call runs once it reports progress; then the client goes away.
      const reader = res.body?.getReader();
      let seen = '';
      while (!seen.includes('notifications/progress')) {
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) break;
        seen += new TextDecoder().decode(chunk.value);
      }
      ac.abort();
      // Its wall-clock budget is 30 s: it must end well before that.
      await expect.poll(() => settled.length, { timeout: 10_000 }).toBe(1);
      expect(settled[0]).toEqual({ aborted: true, ok: false });
      await wellBehaved(server);
    } finally {
      await server.close();
    }
  });

  it('JSON-RPC oddities: batches over 100, __proto__/constructor methods, object ids, bad params, deep JSON', async () => {
    await withServer({}, async (server) => {
      const { session } = await post(server, INIT);
      const headers = { 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' };
      await post(server, '{"jsonrpc":"2.0","method":"notifications/initialized"}', headers);
      const batch = JSON.stringify(
        Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i + 2, method: 'tools/list' })),
      );
      expect((await post(server, batch, headers)).status).toBe(400);
      for (const method of ['__proto__', 'constructor', 'hasOwnProperty']) {
        const res = await post(
          server,
          JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }),
          headers,
        );
        expect(res.text).toContain('"code":-32601');
      }
      expect((await post(server, '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', headers)).status).toBe(
        400,
      );
      const args = await post(
        server,
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test_simple_text","arguments":[1]}}',
        headers,
      );
      expect(args.text).toContain('"code":-32602');
      const deep = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow_steps","arguments":{"steps":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
      const deepRes = await post(server, deep, headers);
      expect(deepRes.status).toBe(200);
      expect(deepRes.text).toContain('"isError":true');
      // Another client's session id cannot be guessed; a made-up one is unknown, and deleting it touches nothing.
      const del = await fetch(server.url, {
        method: 'DELETE',
        headers: { ...AUTH, 'mcp-session-id': crypto.randomUUID(), 'mcp-protocol-version': '2025-06-18' },
      });
      expect(del.status).toBe(404);
      expect(server.sessions).toBe(1);
      await wellBehaved(server);
    });
  });

  it('rejects bad limits with ERR_INVALID_ARGUMENT', async () => {
    for (const bad of [
      { sessionIdleMs: 0 },
      { requestTimeoutMs: -1 },
      { maxConnections: 1.5 },
      { maxSessions: 0 },
    ]) {
      await expect(serveMcpHttp(source, bad)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    }
  });
});

describe('serveMcpHttp: the bearer token', () => {
  it('every request needs it: missing is 401 with WWW-Authenticate: Bearer, a near miss 401 invalid_token', async () => {
    await withServer({}, async (server) => {
      const send = async (authorization: string | undefined, method = 'POST') => {
        const res = await fetch(server.url, {
          method,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(authorization === undefined ? {} : { authorization }),
          },
          ...(method === 'POST' ? { body: INIT } : {}),
        });
        await res.text();
        return { status: res.status, challenge: res.headers.get('www-authenticate') };
      };
      expect(await send(undefined)).toEqual({ status: 401, challenge: 'Bearer realm="panto-mcp"' });
      for (const near of [
        `Bearer ${TOKEN.slice(0, -1)}`,
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.toUpperCase()}`,
        `Basic ${TOKEN}`,
        `Bearer ${TOKEN} extra`,
        'Bearer',
      ]) {
        expect(await send(near)).toEqual({
          status: 401,
          challenge: 'Bearer realm="panto-mcp", error="invalid_token"',
        });
      }
      expect((await send(undefined, 'GET')).status).toBe(401);
      expect((await send(undefined, 'DELETE')).status).toBe(401);
      // The scheme name is case-insensitive; the token is not.
      expect((await send(`bearer ${TOKEN}`)).status).toBe(200);
      expect(server.sessions).toBe(1);
    });
  });

  it('a token is generated per start unless given; authToken: false only on loopback; a weak token is refused', async () => {
    const a = await serveMcpHttp(source);
    const b = await serveMcpHttp(source);
    try {
      expect(a.authToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(b.authToken).not.toBe(a.authToken);
    } finally {
      await a.close();
      await b.close();
    }
    const open = await serveMcpHttp(source, { authToken: false });
    try {
      expect(open.authToken).toBeUndefined();
      expect((await post(open, INIT, { authorization: '' })).status).toBe(200);
    } finally {
      await open.close();
    }
    for (const bad of [
      { authToken: false as const, host: '0.0.0.0' },
      { authToken: 'short' },
      { authToken: 'has a space in it, long enough' },
    ]) {
      await expect(serveMcpHttp(source, bad)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    }
  });
});

describe('serveMcpHttp: clients that never read their answers', () => {
  let big: LuaToolSource;
  const started: string[] = [];
  let counting: ToolSource;
  beforeAll(async () => {
    big = await LuaToolSource.fromDir([LUA_TOOLS, LUA_BIG], { includeBuiltins: false });
    counting = {
      name: 'counting',
      list: () => big.list(),
      call: (name, args, ctx) => {
        started.push(name);
        return big.call(name, args, ctx);
      },
    };
  });
  afterAll(() => big?.close());

  /** Initialize a session, then POST `calls` calls of ~1 MB on a raw socket and never read a byte. */
  async function neverReads(
    server: McpHttpServer,
    calls: number,
  ): Promise<{ session: string; socket: Socket }> {
    const { session } = await post(server, INIT);
    const headers = { 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' };
    await post(server, '{"jsonrpc":"2.0","method":"notifications/initialized"}', headers);
    const body = JSON.stringify(
      Array.from({ length: calls }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 10,
        method: 'tools/call',
        params: { name: 'big_text', arguments: {} },
      })),
    );
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${AUTH_LINE}` +
        `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
    return { session: session ?? '', socket };
  }

  it('its calls wait once its unsent share is passed; after drainTimeoutMs its session closes and its calls are cancelled; a polite client is served meanwhile', {
    timeout: 60_000,
  }, async () => {
    started.length = 0;
    const log: string[] = [];
    const server = await serveMcpHttp(counting, {
      authToken: TOKEN,
      maxUnsentBytesPerSession: 512 * 1024,
      maxUnsentBytes: 2 * 1024 * 1024,
      drainTimeoutMs: 2_000,
      log: (m) => log.push(m),
    });
    try {
      const { session, socket } = await neverReads(server, 60);
      // Results pile up until the share is passed (the kernel's socket buffers take a few MB first), then calls wait.
      await expect.poll(() => log.some((m) => /drainTimeoutMs/.test(m)), { timeout: 30_000 }).toBe(true);
      expect(log.find((m) => /drainTimeoutMs/.test(m))).toMatch(
        /^session [0-9a-f]{8} closed: its client left \d+ bytes unread for 2000 ms \(drainTimeoutMs\); its calls were cancelled$/,
      );
      const ran = started.filter((n) => n === 'big_text').length;
      expect(ran).toBeLessThan(40);
      // Its id is gone; nothing more of its runs.
      const ping = await post(server, '{"jsonrpc":"2.0","id":2,"method":"ping"}', {
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      });
      expect(ping.status).toBe(404);
      await new Promise((r) => setTimeout(r, 500));
      expect(started.filter((n) => n === 'big_text').length).toBe(ran);
      await wellBehaved(server);
      socket.destroy();
    } finally {
      await server.close();
    }
  });

  it('ten never-reading clients at once: a polite client is still served, before any of them is closed', {
    timeout: 60_000,
  }, async () => {
    started.length = 0;
    const log: string[] = [];
    const server = await serveMcpHttp(counting, {
      authToken: TOKEN,
      maxUnsentBytesPerSession: 512 * 1024,
      maxUnsentBytes: 2 * 1024 * 1024,
      drainTimeoutMs: 60_000,
      log: (m) => log.push(m),
    });
    try {
      const hostile = await Promise.all(Array.from({ length: 10 }, () => neverReads(server, 60)));
      await new Promise((r) => setTimeout(r, 1_000));
      await bounded(wellBehaved(server), 20_000, 'a polite client next to ten that never read');
      expect(log.filter((m) => /drainTimeoutMs/.test(m))).toEqual([]);
      expect(started.filter((n) => n === 'big_text').length).toBeLessThan(10 * 60);
      for (const h of hostile) h.socket.destroy();
    } finally {
      await server.close();
    }
  });

  it('when a slot is needed, a stalled session (its client does not read) is the one closed', {
    timeout: 60_000,
  }, async () => {
    const log: string[] = [];
    const server = await serveMcpHttp(counting, {
      authToken: TOKEN,
      maxSessions: 1,
      maxUnsentBytesPerSession: 256 * 1024,
      drainTimeoutMs: 60_000,
      log: (m) => log.push(m),
    });
    try {
      started.length = 0;
      const { socket } = await neverReads(server, 30);
      // Busy (its calls are open); stalled once more than its share is written and calls of it wait.
      await expect.poll(() => started.length, { timeout: 10_000 }).toBeGreaterThan(1);
      await expect
        .poll(
          async () => {
            const r = await post(server, INIT);
            return r.status;
          },
          { timeout: 30_000, interval: 500 },
        )
        .toBe(200);
      expect(log.some((m) => /it was stalled: its client did not read its answers/.test(m))).toBe(true);
      socket.destroy();
    } finally {
      await server.close();
    }
  });
});

describe('serveMcpHttp defaults', () => {
  it('request bodies held at once by default stay under 256 MiB (maxConnections × maxBodyBytes)', () => {
    expect(MCP_HTTP_DEFAULTS.maxConnections * MCP_HTTP_DEFAULTS.maxBodyBytes).toBeLessThanOrEqual(
      256 * 1024 * 1024,
    );
  });
});
