import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PantoError } from '../../src/errors.js';
import { McpConnection, type McpLogEntry } from '../../src/mcp/mcp-connection.js';
import { McpToolSource } from '../../src/mcp/mcp-tool-source.js';

// A Streamable HTTP MCP server on loopback (raw node:http, no SDK) whose tools answer with bodies our client cuts:
// small caps (4 KiB, 200 ms idle) keep every case in milliseconds.

const CAP = 4096;
let server: Server;
let url: string;

type Msg = { id?: string | number; method?: string; params?: Record<string, unknown> };

async function readJson(req: IncomingMessage): Promise<Msg> {
  let text = '';
  for await (const c of req) text += c;
  return JSON.parse(text) as Msg;
}

const sse = (msg: unknown) => `event: message\ndata: ${JSON.stringify(msg)}\n\n`;

/** Resumed GET streams (with Last-Event-ID) the server was asked for. */
let resumes = 0;
/**
 * A priming event (id, `retry: 0`) and the start of an event, then the rest of that event over the cap: the SDK
 * resumes such a stream after a cut. Two writes, so the priming event reaches the client before the cut.
 */
function primedOverCap(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`id: 1\nretry: 0\ndata:\n\ndata: ${'r'.repeat(CAP / 2)}`);
  setTimeout(() => res.end('r'.repeat(CAP)), 50);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET' && req.headers['last-event-id'] !== undefined) {
    resumes++;
    primedOverCap(res);
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const msg = await readJson(req);
  if (msg.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const json = (body: unknown) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const reply = (result: unknown) => json({ jsonrpc: '2.0', id: msg.id, result });
  if (msg.method === 'initialize') {
    reply({
      protocolVersion: msg.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'cutter', version: '1.0.0' },
    });
    return;
  }
  if (msg.method === 'tools/list') {
    const names = [
      'stall',
      'json_big',
      'error_big',
      'sse_cut',
      'server_32099',
      'progress_flood',
      'resume_loop',
    ];
    reply({ tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })) });
    return;
  }
  const name = msg.params?.name;
  if (name === 'stall') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"jsonrpc":"2.0",');
  } else if (name === 'json_big') {
    reply({ content: [{ type: 'text', text: 'x'.repeat(2 * CAP) }] });
  } else if (name === 'error_big') {
    res.writeHead(500, { 'content-type': 'text/plain' }).end('e'.repeat(2 * CAP));
  } else if (name === 'sse_cut') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${'a'.repeat(2 * CAP)}`);
  } else if (name === 'resume_loop') {
    primedOverCap(res);
  } else if (name === 'server_32099') {
    json({ jsonrpc: '2.0', id: msg.id, error: { code: -32099, message: 'the server says no' } });
  } else if (name === 'progress_flood') {
    const token = (msg.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
    let body = '';
    for (let i = 1; i <= 40; i++) {
      body += sse({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: token, progress: i },
      });
    }
    body += sse({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'done' }] } });
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(body);
  } else {
    reply({ content: [{ type: 'text', text: 'unknown' }], isError: true });
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function connection(log: McpLogEntry[] = []): McpConnection {
  return new McpConnection(
    'c',
    { type: 'http', url },
    {
      initTimeoutMs: 5_000,
      callTimeoutMs: 60_000,
      maxCallTimeMs: 60_000,
      probeTimeoutMs: 5_000,
      maxMessageBytes: CAP,
      httpBodyIdleMs: 200,
      log: (e) => log.push(e),
      onToolsChanged: () => {},
      clientInfo: { name: 'test', version: '0' },
    },
  );
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('the call succeeded');
    },
    (err: unknown) => err,
  );
}

describe('McpConnection: a response body our client cuts fails its call with ERR_MCP_LIMIT', () => {
  it('JSON stall, JSON over the cap, error body over the cap, SSE event over the cap: each its own reason', async () => {
    const log: McpLogEntry[] = [];
    const conn = connection(log);
    await conn.start();
    try {
      const call = (tool: string) => failure(conn.callTool(tool, {}, new AbortController().signal, () => {}));
      const [stall, big, errorBig, sseCut] = await Promise.all(
        ['stall', 'json_big', 'error_big', 'sse_cut'].map(call),
      );
      for (const err of [stall, big, errorBig, sseCut]) {
        expect(err).toBeInstanceOf(PantoError);
        expect((err as PantoError).code).toBe('ERR_MCP_LIMIT');
      }
      expect((stall as Error).message).toBe(
        "MCP server 'c' failed the call: the server's response body stalled: no byte for 200 ms; the call was ended",
      );
      expect((big as Error).message).toMatch(
        /failed the call: the server sent a response body over 4096 bytes/,
      );
      expect((errorBig as Error).message).toMatch(
        /failed the call: the server sent a response body over 4096 bytes/,
      );
      expect((sseCut as Error).message).toMatch(
        /failed the call: the server sent an SSE event over 4096 bytes/,
      );
      // The made-up responses for calls the SDK had already rejected found their handlers (no leak, no noise).
      await new Promise((resolve) => setImmediate(resolve));
      expect(log.filter((e) => /unknown message ID/.test(e.message))).toEqual([]);
    } finally {
      await conn.close();
    }
  });

  it("a real server's -32099 error is the server's error, not a cut", async () => {
    const conn = connection();
    await conn.start();
    try {
      const err = await failure(conn.callTool('server_32099', {}, new AbortController().signal, () => {}));
      expect(err).not.toBeInstanceOf(PantoError);
      expect((err as Error).message).toBe(
        "MCP server 'c' failed the call: MCP error -32099: the server says no",
      );
    } finally {
      await conn.close();
    }
  });

  it('McpToolSource hands the code to the host in meta.code', async () => {
    const source = new McpToolSource({ c: { type: 'http', url } }, { maxMessageBytes: CAP });
    await source.start();
    try {
      const out = await source.call(
        'c__json_big',
        {},
        { signal: new AbortController().signal, workspaceRoot: '/', toolCallId: 'j', update: () => {} },
      );
      expect(out).toMatchObject({
        ok: false,
        meta: { mcpServer: 'c', mcpTool: 'json_big', code: 'ERR_MCP_LIMIT' },
      });
    } finally {
      await source.close();
    }
  });

  it("a host update that throws on a progress flood neither crashes the process nor fails the call's result", async () => {
    const source = new McpToolSource({ c: { type: 'http', url } });
    await source.start();
    let updates = 0;
    try {
      const out = await source.call(
        'c__progress_flood',
        {},
        {
          signal: new AbortController().signal,
          workspaceRoot: '/',
          toolCallId: 'p',
          update: () => {
            updates++;
            throw new Error('host update failed');
          },
        },
      );
      expect(out).toMatchObject({ ok: true, parts: [{ type: 'text', text: 'done' }] });
      expect(updates).toBeGreaterThan(16);
    } finally {
      await source.close();
    }
  });

  it('a resumable SSE stream (priming id, retry: 0) cut again on resumption ends the connection, not a reconnect loop', async () => {
    const log: McpLogEntry[] = [];
    const conn = connection(log);
    await conn.start();
    resumes = 0;
    try {
      const err = await failure(conn.callTool('resume_loop', {}, new AbortController().signal, () => {}));
      expect((err as PantoError).code).toBe('ERR_MCP_LIMIT');
      // The SDK resumes the cut POST stream with a GET; that one is cut too and the connection ends (a crash).
      // (Bounded wait: without the fix the state stays 'ready' while the SDK keeps resuming.)
      for (let i = 0; i < 1000 && conn.state !== 'crashed'; i++) await new Promise((r) => setTimeout(r, 10));
      expect(conn.state).toBe('crashed');
      expect(resumes).toBe(1);
      expect(
        log.some(
          (e) => e.level === 'error' && /server stopped: .*an SSE event over 4096 bytes/.test(e.message),
        ),
      ).toBe(true);
    } finally {
      await conn.close();
    }
    expect(resumes).toBe(1);
  });
});
