/**
 * One 2025-era Streamable HTTP session (`Mcp-Session-Id`) as an SDK `Transport`: our own, so that every byte the
 * server writes goes through the unsent-bytes budget (the SDK's transport queues every event without backpressure).
 *
 * - `handle(res, messages)` takes one POST's messages. Requests get an `HttpExchange` on `res` (SSE, or JSON for a
 *   client that does not accept SSE); a POST of notifications and responses only gets 202 at once.
 * - A POST with a request whose id is still unanswered in this session, or twice in the batch, is refused whole
 *   (HTTP 400, `-32600`): JSON-RPC forbids reusing an id, and its response could not be routed.
 * - `send` routes a response, and a notification sent for a request (`relatedRequestId`: progress), to that request's
 *   exchange. The server never sends anything unrelated to a request (no standalone GET stream: GET gets 405), so
 *   such messages are dropped.
 * - A POST whose connection closes before its answers were sent cancels its unanswered requests
 *   (`notifications/cancelled` delivered to the server as if the client had sent it).
 * - `busy` while an exchange is open; `onIdle` when the last one ends. `close()` ends every exchange (their sockets
 *   are destroyed, freeing what they held) and fires `onclose` once.
 */

import type { ServerResponse } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { HttpExchange, idKey, type RequestId } from './http-exchange.js';

export interface HttpSessionTransportOptions {
  /** Called with each new exchange's response (the unsent-bytes budget tracks it). */
  onResponse?: (res: ServerResponse) => void;
  /** Called after every write to an exchange, with its response and the bytes written. */
  onWrite?: (res: ServerResponse, bytes: number) => void;
  /** Called when the session has no open exchange any more. */
  onIdle?: () => void;
}

export class HttpSessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  readonly sessionId: string;

  readonly #opts: HttpSessionTransportOptions;
  /** Exchanges by the key of each request id they still wait for. */
  readonly #byId = new Map<string, HttpExchange>();
  readonly #open = new Set<HttpExchange>();
  #closed = false;

  constructor(sessionId: string, options: HttpSessionTransportOptions = {}) {
    this.sessionId = sessionId;
    this.#opts = options;
  }

  /** An exchange is open (a request is being answered). */
  get busy(): boolean {
    return this.#open.size > 0;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async start(): Promise<void> {}

  /** Deliver one POST's messages (already parsed and shape-checked); see the module contract. */
  handle(
    res: ServerResponse,
    messages: JSONRPCMessage[],
    options: { sse: boolean; batch: boolean; extra?: MessageExtraInfo },
  ): void {
    if (this.#closed) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }),
      );
      return;
    }
    const requests = messages.filter((m) => 'method' in m && 'id' in m) as Array<
      JSONRPCMessage & { id: RequestId }
    >;
    if (requests.length === 0) {
      res.writeHead(202).end();
      for (const m of messages) this.onmessage?.(m, options.extra);
      return;
    }
    const ids: RequestId[] = [];
    for (const r of requests) {
      const key = idKey(r.id);
      if (this.#byId.has(key) || ids.some((id) => idKey(id) === key)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32600,
              message: `Invalid Request: request id ${JSON.stringify(r.id)} is already used by a request of this session that is still running (request ids must be unique)`,
            },
          }),
        );
        return;
      }
      ids.push(r.id);
    }
    const exchange = new HttpExchange(res, ids, {
      sse: options.sse,
      batch: options.batch,
      headers: { 'mcp-session-id': this.sessionId },
      ...(this.#opts.onWrite ? { onWrite: (bytes: number) => this.#opts.onWrite?.(res, bytes) } : {}),
      onAbandoned: (left) => {
        for (const requestId of left) {
          if (this.#byId.get(idKey(requestId)) !== exchange) continue;
          this.#byId.delete(idKey(requestId));
          this.onmessage?.({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId, reason: 'the client closed the connection' },
          });
        }
      },
    });
    this.#opts.onResponse?.(res);
    this.#open.add(exchange);
    res.once('close', () => {
      this.#open.delete(exchange);
      if (this.#open.size === 0 && !this.#closed) this.#opts.onIdle?.();
    });
    for (const id of ids) this.#byId.set(idKey(id), exchange);
    for (const m of messages) this.onmessage?.(m, options.extra);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#closed) return;
    const isResponse = 'id' in message && !('method' in message);
    const id = isResponse ? (message.id as RequestId) : options?.relatedRequestId;
    if (id === undefined || id === null) return;
    const exchange = this.#byId.get(idKey(id));
    if (exchange === undefined) return;
    if (isResponse) this.#byId.delete(idKey(id));
    exchange.send(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#byId.clear();
    for (const exchange of this.#open) exchange.abort();
    this.#open.clear();
    this.onclose?.();
  }
}
