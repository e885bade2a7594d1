/**
 * Serve a `ToolSource` over MCP Streamable HTTP on loopback (`http://127.0.0.1:<port>/mcp`).
 *
 * - Binds 127.0.0.1 only, and refuses requests whose `Host` is not a loopback name (DNS-rebinding protection) and
 *   browser requests from a non-loopback `Origin`.
 * - One MCP session per client (`Mcp-Session-Id`), each its own `createMcpServer` over the same source; at most
 *   `maxSessions` at once (further `initialize` requests get 503); request bodies over `maxBodyBytes` get 413.
 * - `close()` ends every session and the listener.
 */

import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { PantoError } from '../errors.js';
import type { ToolSource } from '../tool-source.js';
import { serveSdk } from './mcp-sdk.js';
import { createMcpServer, type McpServerOptions } from './mcp-server.js';

export interface McpHttpServerOptions extends McpServerOptions {
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** Most concurrent sessions. Default 64. */
  maxSessions?: number;
  /** Largest request body, bytes. Default 16 MiB. */
  maxBodyBytes?: number;
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
  const maxSessions = options.maxSessions ?? 64;
  const maxBody = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const sessions = new Map<string, StreamableHTTPServerTransport>();

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
      if (read === 'too-large') return rpcError(res, 413, `request body over ${maxBody} bytes`);
      try {
        body = JSON.parse(read.toString('utf8'));
      } catch {
        return rpcError(res, 400, 'Parse error: the body is not JSON', -32700);
      }
    }
    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;
    let transport = sessionId !== undefined ? sessions.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId !== undefined) return rpcError(res, 404, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return rpcError(res, 400, 'Bad Request: no session; send initialize first');
      }
      if (sessions.size >= maxSessions) return rpcError(res, 503, `too many sessions (${maxSessions})`);
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, t);
        },
      });
      t.onclose = () => {
        if (t.sessionId !== undefined) sessions.delete(t.sessionId);
      };
      await createMcpServer(source, options).connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, body);
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) rpcError(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (err) =>
      reject(
        new PantoError('ERR_MCP_UNAVAILABLE', `cannot listen on 127.0.0.1:${port}: ${err.message}`, {
          cause: err,
        }),
      ),
    );
    http.listen(port, '127.0.0.1', () => resolve());
  });
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
      await Promise.all(open.map((t) => t.close().catch(() => {})));
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

function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

function rpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
