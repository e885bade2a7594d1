/**
 * Newline-delimited JSON-RPC framing for a stdio MCP server, in linear time.
 *
 * The SDK's own `ReadBuffer` concatenates the whole pending buffer on every chunk and re-scans it for a newline, which
 * is quadratic: a 100 MB message (a big base64 image) keeps the event loop busy for minutes. This buffer keeps the
 * unterminated chunks in a list, scans only each new chunk, and joins once per message. A message longer than
 * `maxBytes` throws (the transport then reports the error and closes the connection) — the bound on memory a server
 * can make us hold.
 *
 * It has the SDK `ReadBuffer` shape (`append`, `readMessage`, `clear`) and is installed into the SDK's
 * `StdioClientTransport` by `installLineBuffer`.
 */

import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class LineBuffer {
  readonly #max: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #lines: Buffer[] = [];

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  append(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(10);
    while (nl !== -1) {
      const piece = chunk.subarray(start, nl);
      if (this.#pendingBytes + piece.length > this.#max) this.#overflow();
      this.#lines.push(this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]));
      this.#pending = [];
      this.#pendingBytes = 0;
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (this.#pendingBytes + rest.length > this.#max) this.#overflow();
      this.#pending.push(rest);
      this.#pendingBytes += rest.length;
    }
  }

  /** The next complete message, or null. Throws for a line that is not a JSON-RPC message (the line is consumed). */
  readMessage(): JSONRPCMessage | null {
    while (this.#lines.length > 0) {
      const line = (this.#lines.shift() as Buffer).toString('utf8').replace(/\r$/, '');
      if (line.trim() === '') continue;
      return deserializeMessage(line);
    }
    return null;
  }

  clear(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#lines = [];
  }

  #overflow(): never {
    this.clear();
    throw new Error(`the server sent a message over ${this.#max} bytes (maxMessageBytes); connection closed`);
  }
}

/**
 * Replace the read buffer of an SDK `StdioClientTransport` with a `LineBuffer`. Throws when the SDK no longer has the
 * field (the SDK is pinned; an upgrade that breaks this fails the MCP tests, not users).
 */
export function installLineBuffer(transport: object, maxBytes: number): void {
  const t = transport as { _readBuffer?: unknown };
  if (typeof (t._readBuffer as { append?: unknown } | undefined)?.append !== 'function') {
    throw new Error('the MCP SDK stdio transport has no _readBuffer to replace (SDK version changed?)');
  }
  t._readBuffer = new LineBuffer(maxBytes);
}
