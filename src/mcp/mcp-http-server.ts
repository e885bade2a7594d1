/**
 * Serve a `ToolSource` over MCP Streamable HTTP on loopback (`http://127.0.0.1:<port>/mcp`).
 *
 * - Binds 127.0.0.1 only, and refuses requests whose `Host` is not a loopback name (DNS-rebinding protection) and
 *   browser requests from a non-loopback `Origin`.
 * - One MCP session per client (`Mcp-Session-Id`), each its own `createMcpServer` over the same source; at most
 *   `maxSessions` at once (further `initialize` requests get 503). A session with no open request (no call running,
 *   no SSE stream) for `sessionIdleMs` is closed, so clients that initialize and walk away cannot hold every slot.
 * - Request bodies over `maxBodyBytes` get 413 as soon as the declared length or the bytes read pass the cap, and the
 *   connection is closed (the rest is not read). A request (headers and body) not received within
 *   `requestTimeoutMs` gets 408 (slowloris); at most `maxConnections` TCP connections are open at once.
 * - A client that closes the connection of a POST before its answers were sent cancels those requests (their Lua
 *   calls are aborted as by `notifications/cancelled`).
 * - `close()` ends every session and the listener.
 */

import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { PantoError } from '../errors.js';
import { timerMs } from '../timer-ms.js';
import type { ToolSource } from '../tool-source.js';
import { serveSdk } from './mcp-sdk.js';
import { createMcpServer, type McpServerOptions } from './mcp-server.js';
import { positiveInteger } from './positive-integer.js';

export interface McpHttpServerOptions extends McpServerOptions {
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** Most concurrent sessions. Default 64. */
  maxSessions?: number;
  /** Largest request body, bytes. Default 16 MiB. */
  maxBodyBytes?: number;
  /** A session with no open request for this long is closed (its client gets 404 and can initialize again). Default 10 min. */
  sessionIdleMs?: number;
  /** Time to receive a whole request, headers and body; slower ones get 408. Default 30 s. */
  requestTimeoutMs?: number;
  /** Most open TCP connections; further ones are closed at once. Default 256. */
  maxConnections?: number;
}

/** Defaults of `McpHttpServerOptions`. */
export const MCP_HTTP_DEFAULTS = {
  maxSessions: 64,
  maxBodyBytes: 16 * 1024 * 1024,
  sessionIdleMs: 10 * 60_000,
  requestTimeoutMs: 30_000,
  maxConnections: 256,
} as const;

/** One open session: its transport, its requests still open, and the timer that closes it when idle. */
interface Session {
  transport: StreamableHTTPServerTransport;
  open: number;
  idle?: ReturnType<typeof setTimeout> | undefined;
}

export interface McpHttpServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  /** Open sessions. */
  readonly sessions: number;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Listen on 127.0.0.1. Rejects with `ERR_INVALID_ARGUMENT` for a bad port, `ERR_MCP_UNAVAILABLE` when the port
 * cannot be bound (e.g. in use).
 */
export async function serveMcpHttp(
  source: ToolSource,
  options: McpHttpServerOptions = {},
): Promise<McpHttpServer> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `serveMcpHttp: port must be an integer 0..65535, got ${port}`,
    );
  }
  // The SDK and node:http load on the first serve, not when libpanto is imported.
  const [{ StreamableHTTPServerTransport, isInitializeRequest }, { createServer }, { randomUUID }] =
    await Promise.all([serveSdk(), import('node:http'), import('node:crypto')]);
  const maxSessions = positive(options.maxSessions, MCP_HTTP_DEFAULTS.maxSessions, 'maxSessions');
  const maxBody = positive(options.maxBodyBytes, MCP_HTTP_DEFAULTS.maxBodyBytes, 'maxBodyBytes');
  const idleMs = positive(options.sessionIdleMs, MCP_HTTP_DEFAULTS.sessionIdleMs, 'sessionIdleMs');
  const requestTimeout = timerMs(
    positive(options.requestTimeoutMs, MCP_HTTP_DEFAULTS.requestTimeoutMs, 'requestTimeoutMs'),
  );
  const maxConnections = positive(options.maxConnections, MCP_HTTP_DEFAULTS.maxConnections, 'maxConnections');
  const sessions = new Map<string, Session>();
  /** `initialize` requests admitted whose session is not in `sessions` yet. */
  let initializing = 0;

  /** Count `res` as open on `session` until it closes; the idle timer runs only while nothing is open. */
  const track = (session: Session, res: ServerResponse) => {
    if (session.idle !== undefined) clearTimeout(session.idle);
    session.idle = undefined;
    session.open++;
    res.once('close', () => {
      session.open--;
      const id = session.transport.sessionId;
      if (session.open > 0 || id === undefined || sessions.get(id) !== session) return;
      session.idle = setTimeout(() => {
        sessions.delete(id);
        session.transport.close().catch(() => {});
      }, timerMs(idleMs));
      session.idle.unref();
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/mcp') return reply(res, 404, 'not found: the MCP endpoint is /mcp');
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!LOOPBACK_HOSTS.has(host)) return reply(res, 403, 'forbidden host');
    const origin = req.headers.origin;
    if (origin !== undefined && !isLoopbackOrigin(origin)) return reply(res, 403, 'forbidden origin');

    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req, maxBody);
      if (read === 'too-large') {
        // Do not read (or wait for) the rest: answer and close the connection.
        res.setHeader('connection', 'close');
        res.once('finish', () => req.destroy());
        return rpcError(res, 413, `request body over ${maxBody} bytes`);
      }
      try {
        body = JSON.parse(read.toString('utf8'));
      } catch {
        return rpcError(res, 400, 'Parse error: the body is not JSON', -32700);
      }
    }
    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;
    const session = sessionId !== undefined ? sessions.get(sessionId) : undefined;
    let transport = session?.transport;
    let release = (): void => {};
    if (session !== undefined) track(session, res);
    if (transport === undefined) {
      if (sessionId !== undefined) return rpcError(res, 404, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return rpcError(res, 400, 'Bad Request: no session; send initialize first');
      }
      // Sessions still initializing hold a slot too: concurrent initializes all pass a check of `sessions.size` alone,
      // since the session is only added after the awaits below.
      if (sessions.size + initializing >= maxSessions) {
        return rpcError(res, 503, `too many sessions (${maxSessions})`);
      }
      initializing++;
      let reserved = true;
      release = () => {
        if (reserved) initializing--;
        reserved = false;
      };
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          release();
          const created: Session = { transport: t, open: 0 };
          sessions.set(id, created);
          track(created, res);
        },
      });
      t.onclose = () => {
        const id = t.sessionId;
        const closing = id !== undefined ? sessions.get(id) : undefined;
        if (closing?.transport !== t) return;
        if (closing.idle !== undefined) clearTimeout(closing.idle);
        sessions.delete(id as string);
      };
      try {
        await createMcpServer(source, options).connect(t);
      } catch (err) {
        release();
        throw err;
      }
      transport = t;
    }
    // A client that drops the connection of a POST before its answers came has given up on those requests: cancel
    // them, as a `notifications/cancelled` would, so their Lua calls stop now instead of running to their budget.
    const ids = requestIds(body);
    if (ids.length > 0) {
      const t = transport;
      res.once('close', () => {
        if (res.writableFinished) return;
        for (const requestId of ids) {
          t.onmessage?.({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId, reason: 'the client closed the connection' },
          });
        }
      });
    }
    try {
      await transport.handleRequest(req, res, body);
    } finally {
      release(); // an initialize that did not make a session gives its slot back
    }
  };

  const http: HttpServer = createServer(
    {
      requestTimeout: requestTimeout,
      headersTimeout: requestTimeout,
      // How often Node checks those two timeouts (its default, 30 s, would let a slow request live that much longer).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(requestTimeout / 4))),
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) rpcError(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`);
        else res.end();
      });
    },
  );
  http.maxConnections = maxConnections;
  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error) =>
      reject(
        new PantoError('ERR_MCP_UNAVAILABLE', `cannot listen on 127.0.0.1:${port}: ${err.message}`, {
          cause: err,
        }),
      );
    http.once('error', failed);
    http.listen(port, '127.0.0.1', () => {
      http.off('error', failed);
      resolve();
    });
  });
  // After listening, an error of the listener (e.g. EMFILE when accepting) must not be an uncaught exception.
  http.on('error', () => {});
  const bound = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    get sessions() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      for (const s of open) if (s.idle !== undefined) clearTimeout(s.idle);
      await Promise.all(open.map((s) => s.transport.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname) || new URL(origin).hostname === '::1';
  } catch {
    return false;
  }
}

/** The body, or 'too-large' as soon as the declared length or the bytes read pass `max` (reading then stops). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve('too-large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      chunks.push(c);
      if (size <= max) return;
      req.off('data', onData);
      req.pause();
      chunks.length = 0;
      resolve('too-large');
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIds(body: unknown): Array<string | number> {
  const ids: Array<string | number> = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== 'object' || m === null || typeof (m as { method?: unknown }).method !== 'string')
      continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  return positiveInteger(value, fallback, 'serveMcpHttp', name);
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

function rpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
