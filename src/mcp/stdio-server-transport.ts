/**
 * The server end of MCP stdio over any pair of streams: newline-delimited JSON-RPC read from `stdin`, written to
 * `stdout`. Our own implementation of the SDK's public `Transport` interface, not the SDK's `StdioServerTransport`
 * (whose framing is quadratic and which has no backpressure, no answer to a bad line, and no end on EOF or EPIPE), so
 * an SDK upgrade cannot silently take these away:
 * - Framing by `LineBuffer` (linear time); a line over `maxMessageBytes` reports to `onerror` and ends the session.
 * - A line that is not JSON is answered with JSON-RPC error `-32700`, a line that is JSON but not a JSON-RPC message
 *   with `-32600`, with `id: null` or the line's own id when it is a request (its sender waits for that id) — but
 *   `id: null` when a request with that id is still unanswered, so no id gets two responses. Reading goes on.
 * - Backpressure: once `stdout` is backed up (a write returned false), no more is read from `stdin` until it drains,
 *   so a client that does not read cannot make the server's memory grow with its requests.
 * - The end of `stdin` (the client closed its end) or a failing `stdout` (EPIPE) ends the session (`onclose`, once).
 *   A send still waiting for a drain settles when the session ends.
 */

import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { InvalidLineError, LineBuffer, type ParseMessage } from './line-buffer.js';
import { plainError } from './rpc-error-text.js';

/** Per output stream, the sessions to end when it fails; one `error` listener per stream, however many sessions. */
const errorEnds = new WeakMap<NodeJS.WritableStream, Set<() => void>>();

/** Call `end` when `stream` fails, through the stream's single listener (installed once, never removed). */
function onStreamError(stream: NodeJS.WritableStream, end: () => void): void {
  let ends = errorEnds.get(stream);
  if (ends === undefined) {
    const set = new Set<() => void>();
    ends = set;
    errorEnds.set(stream, set);
    stream.on('error', () => {
      for (const e of [...set]) e();
    });
  }
  ends.add(end);
}

export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #buffer: LineBuffer;
  #started = false;
  #closed = false;
  #ended: () => void = () => {};
  /** Resolves when the session ends (EOF, EPIPE, an over-long line, or `close()`). */
  readonly closed = new Promise<void>((resolve) => {
    this.#ended = resolve;
  });
  /** Ids (JSON keys) of requests read and not yet answered. */
  readonly #running = new Set<string>();
  /** While `stdout` is backed up: settles at its next drain (or when the session ends); reading is paused. */
  #drained: Promise<void> | undefined;
  #endWait: (() => void) | undefined;
  readonly #onData = (chunk: Buffer) => this.#read(chunk);
  readonly #onEnd = () => {
    this.close().catch(() => {});
  };
  readonly #onReadError = (err: Error) => this.onerror?.(err);

  /** `parse` is the SDK's message check (`parseJSONRPCMessage`). */
  constructor(stdin: Readable, stdout: Writable, options: { maxMessageBytes: number; parse: ParseMessage }) {
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#buffer = new LineBuffer(options.maxMessageBytes, options.parse, 'the client');
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioServerTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onReadError);
    this.#stdin.once('end', this.#onEnd);
    // Without a listener an EPIPE would be thrown as an uncaught exception.
    onStreamError(this.#stdout, this.#onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('Not connected'));
    if ('id' in message && !('method' in message)) this.#running.delete(JSON.stringify(message.id));
    const written = this.#stdout.write(`${JSON.stringify(plainError(message))}\n`);
    if (written && !this.#stdout.writableNeedDrain) return Promise.resolve();
    return this.#backedUp();
  }

  /** One wait for the next drain shared by every send; reading stops until then. */
  #backedUp(): Promise<void> {
    this.#drained ??= new Promise<void>((resolve) => {
      this.#stdin.pause();
      const done = () => {
        this.#stdout.off('drain', done);
        this.#drained = undefined;
        this.#endWait = undefined;
        if (!this.#closed) this.#stdin.resume();
        resolve();
      };
      this.#endWait = done;
      this.#stdout.once('drain', done);
    });
    return this.#drained;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onReadError);
    this.#stdin.off('end', this.#onEnd);
    // The stream's error listener stays (a write still pending can fail later); this session no longer hears it.
    errorEnds.get(this.#stdout)?.delete(this.#onEnd);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#buffer.clear();
    this.#endWait?.();
    this.#ended();
    this.onclose?.();
  }

  #read(chunk: Buffer): void {
    if (this.#closed) return;
    this.#buffer.feed(chunk, {
      message: (message) => {
        if ('id' in message && 'method' in message) this.#running.add(JSON.stringify(message.id));
        this.onmessage?.(message);
      },
      invalid: (err) => (err instanceof InvalidLineError ? this.#answerInvalid(err) : this.onerror?.(err)),
      overflow: (err) => {
        this.onerror?.(err);
        this.close().catch(() => {});
      },
      stopped: () => this.#closed,
    });
  }

  #answerInvalid(err: InvalidLineError): void {
    const id = err.id !== null && this.#running.has(JSON.stringify(err.id)) ? null : err.id;
    this.send({ jsonrpc: '2.0', id, error: { code: err.rpcCode, message: err.message } } as never).catch(
      () => {},
    );
  }
}
