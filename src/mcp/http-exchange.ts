/**
 * The answer to one Streamable HTTP POST that carried JSON-RPC requests: their responses, and the notifications sent
 * for them (progress), as an SSE stream; or, for a client that does not accept SSE, one JSON body (a message or an
 * array) once every request is answered, notifications left out.
 *
 * - The SSE headers go out at once (a call may run for minutes before its first event; a client's fetch waits for
 *   headers).
 * - The stream ends when the last request is answered.
 * - A client that closes the connection before that has given up on the requests still unanswered: `onAbandoned` gets
 *   their ids (the server cancels them). A message for an id no longer pending is dropped.
 * - `onWrite` runs after every write with its size (the unsent-bytes budget counts it).
 */

import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { plainError } from './rpc-error-text.js';

export type RequestId = string | number;

/** The map key of a request id (`1` and `"1"` are different ids). */
export const idKey = (id: RequestId): string => JSON.stringify(id);

export interface HttpExchangeOptions {
  /** Answer as an SSE stream (else one JSON body). */
  sse: boolean;
  /** The POST was a JSON-RPC batch (a JSON answer is then an array even for one response). */
  batch?: boolean;
  /** Extra response headers (e.g. `mcp-session-id`). */
  headers?: Record<string, string>;
  /** Called after each write with its size in bytes (the unsent-bytes budget counts it). */
  onWrite?: (bytes: number) => void;
  onAbandoned?: (ids: RequestId[]) => void;
}

export class HttpExchange {
  readonly res: ServerResponse;
  readonly #pending = new Map<string, RequestId>();
  readonly #opts: HttpExchangeOptions;
  readonly #json: JSONRPCMessage[] = [];
  #ended = false;

  constructor(res: ServerResponse, ids: RequestId[], options: HttpExchangeOptions) {
    this.res = res;
    this.#opts = options;
    for (const id of ids) this.#pending.set(idKey(id), id);
    if (options.sse) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        ...options.headers,
      });
      res.flushHeaders();
    }
    res.once('close', () => {
      if (this.#ended) return;
      this.#ended = true;
      const left = [...this.#pending.values()];
      this.#pending.clear();
      if (left.length > 0) options.onAbandoned?.(left);
    });
  }

  /** Whether `id` still waits for its response here. */
  has(id: RequestId): boolean {
    return this.#pending.has(idKey(id));
  }

  /** Whether the answer is complete or the connection is gone. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Write a response (for a pending id) or a related notification. False when it was dropped. */
  send(message: JSONRPCMessage): boolean {
    if (this.#ended) return false;
    const isResponse = 'id' in message && !('method' in message);
    if (isResponse) {
      const key = idKey(message.id as RequestId);
      if (!this.#pending.delete(key)) return false;
    }
    let bytes = 0;
    if (this.#opts.sse) {
      const event = `event: message\ndata: ${JSON.stringify(plainError(message))}\n\n`;
      bytes = Buffer.byteLength(event, 'utf8');
      this.res.write(event);
    } else if (isResponse) {
      this.#json.push(plainError(message));
    }
    if (this.#pending.size === 0) bytes += this.#finish();
    this.#opts.onWrite?.(bytes);
    return true;
  }

  /** End the answer now (the session is closing): unanswered requests stay unanswered. */
  abort(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending.clear();
    this.res.destroy();
  }

  /** End the answer; the bytes it wrote. */
  #finish(): number {
    this.#ended = true;
    if (this.#opts.sse) {
      this.res.end();
      return 0;
    }
    const body = JSON.stringify(this.#opts.batch ? this.#json : this.#json[0]);
    this.res.writeHead(200, { 'content-type': 'application/json', ...this.#opts.headers }).end(body);
    return Buffer.byteLength(body, 'utf8');
  }
}
