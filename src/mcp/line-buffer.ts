/**
 * Newline-delimited JSON-RPC framing for a stdio MCP server, in linear time.
 *
 * The SDK's own `ReadBuffer` concatenates the whole pending buffer on every chunk and re-scans it for a newline, which
 * is quadratic: a 100 MB message (a big base64 image) keeps the event loop busy for minutes. This buffer keeps the
 * unterminated chunks in a list, scans only each new chunk, and joins once per message. A message longer than
 * `maxBytes` throws (the transport then reports the error and closes the connection) — the bound on memory a server
 * can make us hold.
 *
 * Used by our own stdio transports (`stdio-client-transport.ts`, `stdio-server-transport.ts`).
 */

import type { JSONRPCMessage } from '@modelcontextprotocol/client';

/** The SDK's JSON-RPC message check (`parseJSONRPCMessage` of either SDK package): the message, or it throws. */
export type ParseMessage = (value: unknown) => JSONRPCMessage;

/** Longest part of a JSON or schema error quoted in an `InvalidLineError` message, in characters. */
const MAX_DETAIL_CHARS = 100;

/**
 * A line that is not a JSON-RPC message: `rpcCode` is the JSON-RPC error a server answers it with (`-32700` for a line
 * that is not JSON, `-32600` for JSON that is not a JSON-RPC message: a batch array, a wrong type in a field, …).
 */
export class InvalidLineError extends Error {
  readonly rpcCode: -32700 | -32600;
  /**
   * The id to answer with: the line's own when it is an object with a string `method` and a string or finite number
   * `id` (a request, so its sender waits for that id), else `null` (JSON-RPC: the id could not be determined).
   */
  readonly id: string | number | null;
  constructor(rpcCode: -32700 | -32600, message: string, id: string | number | null = null) {
    super(message);
    this.name = 'InvalidLineError';
    this.rpcCode = rpcCode;
    this.id = id;
  }
}

function requestId(value: unknown): string | number | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (typeof method !== 'string') return null;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** One line: a zod error's first issue as `path: message`, any other error's message; cut to `MAX_DETAIL_CHARS`. */
function detail(err: unknown): string {
  const issue = (err as { issues?: Array<{ path?: unknown[]; message?: unknown }> } | null)?.issues?.[0];
  const raw =
    issue !== undefined
      ? `${(issue.path ?? []).map(String).join('.') || '(message)'}: ${String(issue.message)}`
      : err instanceof Error
        ? err.message
        : String(err);
  const text = raw.replace(/\s+/g, ' ');
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}

/** One line as a JSON-RPC message; throws `InvalidLineError` (the SDK's own check, with a typed, bounded error). */
export function parseLine(line: string, parse: ParseMessage): JSONRPCMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new InvalidLineError(-32700, `Parse error: the line is not JSON (${detail(err)})`);
  }
  try {
    return parse(value);
  } catch (err) {
    throw new InvalidLineError(
      -32600,
      `Invalid Request: the line is JSON but not a JSON-RPC message (${detail(err)})`,
      requestId(value),
    );
  }
}

/** Where `LineBuffer.feed` hands what a chunk completed. */
export interface LineHandlers {
  message(message: JSONRPCMessage): void;
  /** A line that is not a JSON-RPC message (an `InvalidLineError`, consumed): reading goes on. */
  invalid(err: Error): void;
  /** The chunk made a line longer than the limit: the buffer was cleared; nothing more is read from the chunk. */
  overflow(err: Error): void;
  /** Checked before each message: true stops the hand-over (the transport closed). */
  stopped(): boolean;
}

export class LineBuffer {
  readonly #max: number;
  readonly #sender: string;
  readonly #parse: ParseMessage;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #lines: Buffer[] = [];

  /** `parse` checks each line's JSON; `sender` names the peer in the overflow message (`the server`, `the client`). */
  constructor(maxBytes: number, parse: ParseMessage, sender = 'the server') {
    this.#max = maxBytes;
    this.#parse = parse;
    this.#sender = sender;
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

  /**
   * The next complete message, or null. Throws `InvalidLineError` for a line that is not a JSON-RPC message (the line
   * is consumed; the next call goes on with the next line).
   */
  readMessage(): JSONRPCMessage | null {
    while (this.#lines.length > 0) {
      const line = (this.#lines.shift() as Buffer).toString('utf8').replace(/\r$/, '');
      if (line.trim() === '') continue;
      return parseLine(line, this.#parse);
    }
    return null;
  }

  /** `append(chunk)`, then every message it completed, in order, to `on` (see `LineHandlers`). */
  feed(chunk: Buffer, on: LineHandlers): void {
    try {
      this.append(chunk);
    } catch (err) {
      on.overflow(err as Error);
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readMessage();
      } catch (err) {
        on.invalid(err instanceof Error ? err : new Error(String(err)));
        continue;
      }
      if (message === null || on.stopped()) return;
      on.message(message);
    }
  }

  clear(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#lines = [];
  }

  #overflow(): never {
    this.clear();
    throw new Error(
      `${this.#sender} sent a message over ${this.#max} bytes (maxMessageBytes); connection closed`,
    );
  }
}
