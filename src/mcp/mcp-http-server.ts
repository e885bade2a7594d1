/**
 * Serve a `ToolSource` over MCP Streamable HTTP (`http://127.0.0.1:<port>/mcp` by default).
 *
 * - Binds 127.0.0.1 unless `host` says otherwise. Refuses (403) a `Host` that is not a loopback name or the bound
 *   address (DNS rebinding; no check on a wildcard bind) and a browser `Origin` whose host is neither loopback nor the
 *   request's own host.
 * - Bearer token: every request must carry `Authorization: Bearer <token>`, else 401 with `WWW-Authenticate: Bearer`.
 *   The token is generated per start (`server.authToken`) unless `authToken` gives one; compared in constant time.
 *   `authToken: false` turns it off, for loopback binds only.
 * - One MCP session per client (`Mcp-Session-Id`), each its own `createMcpServer` over the same source. GET (a
 *   standalone SSE stream: the server never sends anything unrelated to a request) gets 405, DELETE ends a session.
 * - Session slots: at most `maxSessions`, and `maxSessionsPerClient` per client address. When a new session would
 *   pass either, the least recently used idle session (no request being answered) of that client, or of anyone, is
 *   closed to make room, else the stalled one (see below) holding the most unsent bytes; only when every session is
 *   busy and reading does `initialize` get 503. A session with no open request for
 *   `sessionIdleMs` is closed.
 * - Unsent bytes: what the server has written that a client has not read is bounded per session
 *   (`maxUnsentBytesPerSession`) and what this process holds for all of them (`maxUnsentBytes`). Past either, that
 *   session's next tool calls wait (a client that reads is still served); at most `maxRunningCallsPerSession` calls of
 *   a session and `maxRunningCalls` in all run at once. A session that stays stalled for `drainTimeoutMs` is closed:
 *   its calls are cancelled and its connections closed (see `unsent-budget.ts`).
 * - Request bodies over `maxBodyBytes` get 413 as soon as the declared length or the bytes read pass the cap, and the
 *   connection is closed (the rest is not read). A request (headers and body) not received within `requestTimeoutMs`
 *   gets 408 (slowloris); at most `maxConnections` TCP connections are open at once, so request bodies held at once
 *   stay under `maxConnections × maxBodyBytes` (256 MiB by default).
 * - A client that closes the connection of a POST before its answers were sent cancels those requests (their Lua
 *   calls are aborted as by `notifications/cancelled`).
 * - `close()` ends every session and the listener.
 */

import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { PantoError } from '../errors.js';
import { timerMs } from '../timer-ms.js';
import type { ToolSource } from '../tool-source.js';
import type { HttpSessionTransport } from './http-session-transport.js';
import { serveSdk } from './mcp-sdk.js';
import { createMcpServer, type McpServerOptions } from './mcp-server.js';
import { positiveInteger } from './positive-integer.js';
import { UnsentBudget } from './unsent-budget.js';

export interface McpHttpServerOptions extends McpServerOptions {
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** Address to bind. Default `127.0.0.1`. A non-loopback address needs the bearer token (not `authToken: false`). */
  host?: string;
  /**
   * The token clients must send as `Authorization: Bearer <token>`. Default: a new random token per start
   * (`server.authToken`). `false`: no authentication (loopback binds only).
   */
  authToken?: string | false;
  /** Most concurrent sessions. Default 64. */
  maxSessions?: number;
  /** Most concurrent sessions of one client address (on loopback every client has the same address). Default 16. */
  maxSessionsPerClient?: number;
  /** Largest request body, bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** A session with no open request for this long is closed (its client gets 404 and can initialize again). Default 10 min. */
  sessionIdleMs?: number;
  /** Time to receive a whole request, headers and body; slower ones get 408. Default 30 s. */
  requestTimeoutMs?: number;
  /** Most open TCP connections; further ones are closed at once. Default 64. */
  maxConnections?: number;
  /** Bytes written for one session that its client has not read, past which its calls wait. Default 4 MiB. */
  maxUnsentBytesPerSession?: number;
  /** Bytes written for all sessions that their clients have not read, past which every new call waits. Default 16 MiB. */
  maxUnsentBytes?: number;
  /** A session stalled (past its unsent share, or holding unsent bytes while the total is passed) this long is closed, ms. Default 30 s. */
  drainTimeoutMs?: number;
  /** Most tool calls of one session running at once (the others wait their turn). Default 4. */
  maxRunningCallsPerSession?: number;
  /** Most tool calls of all sessions running at once (the others wait their turn). Default 8 (the Lua host's own). */
  maxRunningCalls?: number;
  /** Lifecycle notes (a session closed for not reading, evicted, ...). Default: discarded. */
  log?: (message: string) => void;
}

/** Defaults of `McpHttpServerOptions`. */
export const MCP_HTTP_DEFAULTS = {
  maxSessions: 64,
  maxSessionsPerClient: 16,
  maxBodyBytes: 4 * 1024 * 1024,
  sessionIdleMs: 10 * 60_000,
  requestTimeoutMs: 30_000,
  maxConnections: 64,
  maxUnsentBytesPerSession: 4 * 1024 * 1024,
  maxUnsentBytes: 16 * 1024 * 1024,
  drainTimeoutMs: 30_000,
  maxRunningCallsPerSession: 4,
  maxRunningCalls: 8,
} as const;

export interface McpHttpServer {
  /** `http://<host>:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  /** The bearer token clients must send, or undefined when authentication is off. */
  readonly authToken: string | undefined;
  /** Open sessions. */
  readonly sessions: number;
  close(): Promise<void>;
}

/** One open session. */
interface Session {
  transport: HttpSessionTransport;
  server: Server;
  client: string;
  lastActive: number;
  idle: ReturnType<typeof setTimeout> | undefined;
}

/** Most messages in one JSON-RPC batch (the SDK's own limit; 2025-06-18 and later have no batches). */
const MAX_BATCH_MESSAGES = 100;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);
const LOOPBACK_BINDS = new Set(['127.0.0.1', 'localhost', '::1']);
const WILDCARD_BINDS = new Set(['0.0.0.0', '::']);

/**
 * Listen (loopback by default). Rejects with `ERR_INVALID_ARGUMENT` for a bad option, `ERR_MCP_UNAVAILABLE` when the
 * port cannot be bound (e.g. in use).
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
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.length === 0) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `serveMcpHttp: host must be a non-empty string, got ${host}`,
    );
  }
  const loopbackBind = LOOPBACK_BINDS.has(host);
  const authOption = options.authToken;
  if (authOption === false && !loopbackBind) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `serveMcpHttp: authToken: false is for loopback binds only; binding ${host} needs a bearer token`,
    );
  }
  if (authOption !== undefined && authOption !== false && !/^[\x21-\x7e]{16,}$/.test(String(authOption))) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      'serveMcpHttp: authToken must be at least 16 printable ASCII characters without spaces, or false',
    );
  }
  const positive = (key: keyof typeof MCP_HTTP_DEFAULTS) =>
    positiveInteger(options[key], MCP_HTTP_DEFAULTS[key], 'serveMcpHttp', key);
  const maxSessions = positive('maxSessions');
  const maxPerClient = positive('maxSessionsPerClient');
  const maxBody = positive('maxBodyBytes');
  const idleMs = positive('sessionIdleMs');
  const requestTimeout = timerMs(positive('requestTimeoutMs'));
  const maxConnections = positive('maxConnections');
  const log = options.log ?? (() => {});

  // The SDK, node:http and node:crypto load on the first serve, not when libpanto is imported.
  const [sdk, { createServer }, { randomUUID }, bearer, { HttpSessionTransport }] = await Promise.all([
    serveSdk(),
    import('node:http'),
    import('node:crypto'),
    import('./bearer-token.js'),
    import('./http-session-transport.js'),
  ]);
  const authToken = authOption === false ? undefined : (authOption ?? bearer.newBearerToken());
  const checkAuth = authToken === undefined ? undefined : bearer.bearerChecker(authToken);

  const sessions = new Map<string, Session>();
  /** `initialize` requests admitted whose session is not open yet. */
  let initializing = 0;

  const endSession = (id: string, why: string | undefined) => {
    const s = sessions.get(id);
    if (s === undefined) return;
    sessions.delete(id);
    if (s.idle !== undefined) clearTimeout(s.idle);
    budget.forget(s, new Error(`the session was closed${why ? `: ${why}` : ''}`));
    if (why !== undefined) log(`session ${id.slice(0, 8)} closed: ${why}`);
    s.transport.close().catch(() => {});
    s.server.close().catch(() => {});
  };

  const budget = new UnsentBudget({
    perOwner: positive('maxUnsentBytesPerSession'),
    total: positive('maxUnsentBytes'),
    drainTimeoutMs: positive('drainTimeoutMs'),
    maxRunning: positive('maxRunningCallsPerSession'),
    maxRunningTotal: positive('maxRunningCalls'),
    onStalled: (owner) => {
      const s = owner as Session;
      endSession(
        s.transport.sessionId,
        `its client left ${budget.inFlight(s)} bytes unread for ${options.drainTimeoutMs ?? MCP_HTTP_DEFAULTS.drainTimeoutMs} ms (drainTimeoutMs); its calls were cancelled`,
      );
    },
  });

  /**
   * Close one of `candidates` to make room: the least recently used idle one, else the stalled one (its client does
   * not read) holding the most unsent bytes. False when every candidate is busy and reading.
   */
  const makeRoom = (candidates: Iterable<Session>, why: string): boolean => {
    let idle: Session | undefined;
    let stalled: Session | undefined;
    for (const s of candidates) {
      if (!s.transport.busy) {
        if (idle === undefined || s.lastActive < idle.lastActive) idle = s;
      } else if (
        budget.stalled(s) &&
        (stalled === undefined || budget.inFlight(s) > budget.inFlight(stalled))
      ) {
        stalled = s;
      }
    }
    const victim = idle ?? stalled;
    if (victim === undefined) return false;
    endSession(
      victim.transport.sessionId,
      `${why}${victim === idle ? '' : ' (it was stalled: its client did not read its answers)'}`,
    );
    return true;
  };

  const touch = (s: Session) => {
    s.lastActive = performance.now();
    if (s.idle !== undefined) clearTimeout(s.idle);
    s.idle = undefined;
  };

  const openSession = async (client: string): Promise<Session | string> => {
    const ofClient = [...sessions.values()].filter((s) => s.client === client);
    if (ofClient.length >= maxPerClient && !makeRoom(ofClient, 'room for a newer session of its client')) {
      return `too many sessions of this client (${maxPerClient}), all of them busy`;
    }
    if (
      sessions.size + initializing >= maxSessions &&
      !makeRoom(sessions.values(), 'room for a newer session')
    ) {
      return `too many sessions (${maxSessions}), all of them busy`;
    }
    initializing++;
    try {
      const id = randomUUID();
      const session = {} as Session;
      const transport = new HttpSessionTransport(id, {
        onResponse: (res) => budget.track(session, res),
        onWrite: (res, bytes) => budget.wrote(session, res, bytes),
        onIdle: () => {
          if (sessions.get(id) !== session) return;
          session.idle = setTimeout(() => endSession(id, undefined), timerMs(idleMs));
          session.idle.unref();
        },
      });
      const server = createMcpServer(source, {
        ...options,
        admitCall: (signal) => budget.admit(session, signal),
      });
      Object.assign(session, { transport, server, client, lastActive: performance.now(), idle: undefined });
      transport.onclose = () => {
        if (sessions.get(id) === session) endSession(id, undefined);
      };
      await server.connect(transport);
      sessions.set(id, session);
      return session;
    } finally {
      initializing--;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') return reply(res, 404, 'not found: the MCP endpoint is /mcp');
    const hostHeader = hostName(req.headers.host ?? '');
    if (!WILDCARD_BINDS.has(host) && !LOOPBACK_HOSTS.has(hostHeader) && hostHeader !== host) {
      return reply(res, 403, 'forbidden host');
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigin(origin, hostHeader))
      return reply(res, 403, 'forbidden origin');
    if (checkAuth !== undefined) {
      const verdict = checkAuth(req.headers.authorization);
      if (verdict !== 'ok') {
        res.setHeader(
          'www-authenticate',
          verdict === 'missing'
            ? 'Bearer realm="panto-mcp"'
            : 'Bearer realm="panto-mcp", error="invalid_token"',
        );
        return rpcError(
          res,
          401,
          verdict === 'missing'
            ? 'Unauthorized: send Authorization: Bearer <token> (the token panto mcp serve printed)'
            : 'Unauthorized: the bearer token is wrong',
          -32001,
        );
      }
    }
    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;

    if (req.method === 'DELETE') {
      if (sessionId === undefined || !sessions.has(sessionId)) return rpcError(res, 404, 'Session not found');
      endSession(sessionId, undefined);
      return reply(res, 200, 'session closed');
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST, DELETE');
      return rpcError(
        res,
        405,
        'Method Not Allowed: this server sends messages only in the answer to a POST',
        -32000,
      );
    }
    const contentType = String(req.headers['content-type'] ?? '');
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      return rpcError(res, 415, 'Unsupported Media Type: the body must be application/json');
    }
    const accept = String(req.headers.accept ?? '*/*');
    const sse = /text\/event-stream|\*\/\*/i.test(accept);
    if (!sse && !/application\/json/i.test(accept)) {
      return rpcError(res, 406, 'Not Acceptable: accept application/json or text/event-stream');
    }
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !sdk.SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return rpcError(
        res,
        400,
        `Bad Request: unsupported protocol version ${JSON.stringify(version.slice(0, 40))} (supported: ${sdk.SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    }

    const read = await readBody(req, maxBody);
    if (read === 'too-large') {
      // Do not read (or wait for) the rest: answer and close the connection.
      res.setHeader('connection', 'close');
      res.once('finish', () => req.destroy());
      return rpcError(res, 413, `request body over ${maxBody} bytes`);
    }
    let body: unknown;
    try {
      body = JSON.parse(read.toString('utf8'));
    } catch {
      return rpcError(res, 400, 'Parse error: the body is not JSON', -32700);
    }
    const batch = Array.isArray(body);
    const raw = batch ? (body as unknown[]) : [body];
    if (raw.length === 0) return rpcError(res, 400, 'Invalid Request: an empty batch', -32600);
    if (raw.length > MAX_BATCH_MESSAGES) {
      return rpcError(
        res,
        400,
        `Invalid Request: a batch of more than ${MAX_BATCH_MESSAGES} messages`,
        -32600,
      );
    }
    const messages: JSONRPCMessage[] = [];
    for (const m of raw) {
      const parsed = sdk.JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) {
        return rpcError(
          res,
          400,
          'Invalid Request: the body is not a JSON-RPC message (or batch of them)',
          -32600,
        );
      }
      messages.push(parsed.data);
    }
    const initialize = messages.some((m) => sdk.isInitializeRequest(m));

    let session: Session | undefined;
    if (sessionId !== undefined) {
      session = sessions.get(sessionId);
      if (session === undefined) return rpcError(res, 404, 'Session not found', -32001);
      if (initialize) return rpcError(res, 400, 'Bad Request: initialize inside a session', -32600);
    } else {
      if (!initialize) return rpcError(res, 400, 'Bad Request: no session; send initialize first');
      if (messages.length > 1) {
        return rpcError(res, 400, 'Invalid Request: initialize must be sent alone', -32600);
      }
      const opened = await openSession(req.socket.remoteAddress ?? '');
      if (typeof opened === 'string') return rpcError(res, 503, opened);
      session = opened;
    }
    touch(session);
    session.transport.handle(res, messages, {
      sse,
      batch,
      extra: { requestInfo: { headers: req.headers } },
    });
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
        new PantoError('ERR_MCP_UNAVAILABLE', `cannot listen on ${host}:${port}: ${err.message}`, {
          cause: err,
        }),
      );
    http.once('error', failed);
    http.listen(port, host, () => {
      http.off('error', failed);
      resolve();
    });
  });
  // After listening, an error of the listener (e.g. EMFILE when accepting) must not be an uncaught exception.
  http.on('error', () => {});
  const bound = (http.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${bound}/mcp`,
    port: bound,
    authToken,
    get sessions() {
      return sessions.size;
    },
    async close() {
      for (const id of [...sessions.keys()]) endSession(id, undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The host name of a `Host` header (without port; an IPv6 literal keeps its brackets). */
function hostName(hostHeader: string): string {
  return hostHeader.startsWith('[') ? hostHeader.replace(/\]:\d+$/, ']') : hostHeader.replace(/:\d+$/, '');
}

function allowedOrigin(origin: string, hostHeader: string): boolean {
  try {
    const { hostname, host } = new URL(origin);
    return LOOPBACK_HOSTS.has(hostname) || hostName(host) === hostHeader;
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

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

function rpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
