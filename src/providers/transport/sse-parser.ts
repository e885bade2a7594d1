/**
 * Incremental Server-Sent Events parser, following the WHATWG HTML "event stream interpretation" algorithm
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
 *
 * Contract:
 * - `push(bytes)` accepts chunks split anywhere — inside a UTF-8 sequence, between CR and LF, inside a field name.
 *   Lines end with CRLF, LF or CR. A leading BOM is dropped. Lines starting with `:` are comments.
 * - Multi-line `data:` fields are joined with `\n`. An event with no data lines is not dispatched (per spec).
 * - `end()` flushes: unlike the spec (which discards an unterminated last event), a final event that was not followed
 *   by a blank line is still delivered, because several OpenAI-compatible servers close the stream without one.
 * - Events are delivered synchronously to the callback given to the constructor, in stream order.
 * - Memory is bounded: a line, or an event's joined data, longer than `maxLineChars` (default 128 Mi characters)
 *   throws a non-retryable `ProviderError` (`ERR_PROVIDER`) instead of growing until V8's string limit.
 */

import { ProviderError } from './provider-error.js';

/**
 * Default bound on one line / one event's data, in UTF-16 code units (V8's own string limit is ~512 Mi). Not tighter
 * on purpose: one legitimate event can carry a whole response — OpenAI Responses' `response.completed` repeats every
 * output item, several generated images of ~20 MB base64 each included; a Gemini chunk holds whole `inlineData`
 * parts — and a response may stream up to `MAX_MESSAGE_CHARS` (the same 128 Mi). So a body that never ends a line (a
 * gzip bomb of NULs) is refused after about 128 MB of decompressed text, and no legitimate event is.
 */
export const SSE_MAX_LINE_CHARS = 128 * 1024 * 1024;

/** How much of a pending event's joined data `SseParser.pendingHead` can return without touching the whole data. */
export const SSE_HEAD_CHARS = 1024;

export interface SseParserOptions {
  /** Longest line (and longest joined `data` of one event) accepted, in characters. */
  maxLineChars?: number;
  /** The wire API named in the error for an over-long line. */
  api?: string;
}

/** One dispatched event. `event` is `'message'` when the stream gave no `event:` field. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far (sticky across events, per spec), or `''`. */
  id: string;
}

export class SseParser {
  readonly #onEvent: (event: SseEvent) => void;
  readonly #decoder = new TextDecoder('utf-8');
  /**
   * The unterminated tail of the stream (never holds a CR or LF), as the pieces it arrived in: a long line is joined
   * once, when its end arrives, instead of being re-joined and re-scanned on every chunk (quadratic).
   */
  readonly #tail: string[] = [];
  #tailChars = 0;
  /** The previous chunk ended with CR: a LF at the start of the next chunk belongs to it. */
  #pendingCr = false;
  #eventType = '';
  /** The last `event:` value read (interned across events). */
  #lastEventType = '';
  #data = '';
  /**
   * The first `SSE_HEAD_CHARS` (at most) of `#data`, kept as data is added: `pendingHead` reads it instead of slicing
   * `#data`, which (built by `+=`) would be flattened on every read — quadratic over an event of many `data:` lines.
   */
  #head = '';
  #hasData = false;
  #lastId = '';
  #retry: number | undefined;

  readonly #maxLineChars: number;
  readonly #api: string;

  constructor(onEvent: (event: SseEvent) => void, options: SseParserOptions = {}) {
    this.#onEvent = onEvent;
    this.#maxLineChars = options.maxLineChars ?? SSE_MAX_LINE_CHARS;
    this.#api = options.api ?? 'sse';
  }

  /**
   * Characters of the event not yet dispatched: its joined `data` so far plus an unterminated line that is not a
   * comment. It grows while a long event (a 20 MB base64 image) is still arriving; keep-alive comments leave it be.
   */
  get pendingChars(): number {
    const tail =
      this.#tailChars > 0 && (this.#tail[0] as string).charCodeAt(0) !== 58 /* : */ ? this.#tailChars : 0;
    return tail + (this.#hasData ? this.#data.length + 1 : 0);
  }

  /**
   * The event still arriving, for telling a keep-alive cut across reads from content: its `event:` name so far and
   * the first `maxChars` (at most) of its data, the unterminated `data:` line included. `undefined` when what is
   * pending cannot be judged yet: nothing, a comment, or an unterminated line that is not (or not yet visibly) a
   * `data:` line (`event: pi`, `da`). Costs O(maxChars), however long the pending line is and however many `data:`
   * lines the event already has, for `maxChars` up to `SSE_HEAD_CHARS` (beyond that it slices the joined data).
   */
  pendingHead(maxChars = 256): { event: string; data: string } | undefined {
    let data = !this.#hasData
      ? ''
      : maxChars <= SSE_HEAD_CHARS
        ? this.#head.slice(0, maxChars)
        : this.#data.slice(0, maxChars);
    if (data.length < maxChars && this.#tailChars > 0) {
      let line = '';
      for (let i = 0; i < this.#tail.length && line.length < maxChars + 6; i++)
        line += this.#tail[i] as string;
      if (line.startsWith('data:')) {
        const v = line.charCodeAt(5) === 32 ? 6 : 5;
        data = this.#hasData ? `${data}\n${line.slice(v)}` : line.slice(v);
        data = data.slice(0, maxChars);
      } else if (!this.#hasData) return undefined;
    } else if (!this.#hasData) return undefined;
    return { event: this.#eventType, data };
  }

  /** Reconnection time the stream asked for with a `retry:` field, if any (ms). */
  get retry(): number | undefined {
    return this.#retry;
  }

  /** Feed bytes (or already-decoded text). */
  push(chunk: Uint8Array | string): void {
    let text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    if (text.length === 0) return;
    if (this.#pendingCr) {
      this.#pendingCr = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    let nextLf = text.indexOf('\n');
    let nextCr = text.indexOf('\r');
    if (nextLf === -1 && nextCr === -1) {
      // No line ends here: only the new piece is scanned, and the tail is not joined until its line ends.
      if (text.length === 0) return;
      this.#tail.push(text);
      this.#tailChars += text.length;
      if (this.#tailChars > this.#maxLineChars) this.#tooLong('line');
      return;
    }
    const offset = this.#tailChars;
    const input = offset === 0 ? text : this.#takeTail() + text;
    if (offset > 0) {
      nextLf = nextLf === -1 ? -1 : nextLf + offset;
      nextCr = nextCr === -1 ? -1 : nextCr + offset;
    }
    let start = 0;
    const len = input.length;
    while (start < len) {
      let end: number;
      if (nextCr === -1 && nextLf === -1) break;
      if (nextCr === -1 || (nextLf !== -1 && nextLf < nextCr)) {
        end = nextLf;
        this.#line(input, start, end);
        start = end + 1;
      } else {
        end = nextCr;
        this.#line(input, start, end);
        if (end + 1 < len) {
          start = input.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
        } else {
          start = end + 1;
          this.#pendingCr = true;
        }
      }
      if (nextLf !== -1 && nextLf < start) nextLf = input.indexOf('\n', start);
      if (nextCr !== -1 && nextCr < start) nextCr = input.indexOf('\r', start);
    }
    if (start < len) {
      this.#tail.push(start === 0 ? input : input.slice(start));
      this.#tailChars = len - start;
      if (this.#tailChars > this.#maxLineChars) this.#tooLong('line');
    }
  }

  /** The unterminated tail as one string; the tail is emptied. */
  #takeTail(): string {
    const tail = this.#tail.length === 1 ? (this.#tail[0] as string) : this.#tail.join('');
    this.#tail.length = 0;
    this.#tailChars = 0;
    return tail;
  }

  #tooLong(what: string): never {
    this.#tail.length = 0;
    this.#tailChars = 0;
    this.#data = '';
    this.#head = '';
    this.#hasData = false;
    throw new ProviderError({
      api: this.#api,
      providerMessage: `stream ${what} longer than ${this.#maxLineChars} characters; refusing to buffer it`,
      retryable: false,
    });
  }

  /** The stream ended: flush a trailing partial line and an unterminated event. */
  end(): void {
    const tail = this.#decoder.decode();
    if (tail.length > 0) this.push(tail);
    if (this.#tailChars > 0) {
      const rest = this.#takeTail();
      this.#line(rest, 0, rest.length);
    }
    this.#dispatch();
  }

  #line(input: string, start: number, end: number): void {
    if (start === end) {
      this.#dispatch();
      return;
    }
    const first = input.charCodeAt(start);
    if (first === 58 /* : */) return;
    // Fast path for the line almost every event has: `data:` (no field-name allocation).
    if (first === 100 /* d */ && isField(input, start, end, 'data')) {
      const v = start + 5;
      this.#addData(input.slice(v < end && input.charCodeAt(v) === 32 ? v + 1 : v, end));
      return;
    }
    if (first === 101 /* e */ && isField(input, start, end, 'event')) {
      let v = start + 6;
      if (v < end && input.charCodeAt(v) === 32) v++;
      // Streams repeat a handful of event names: reuse the last one instead of slicing a new string per event.
      const last = this.#lastEventType;
      if (end - v !== last.length || input.slice(v, end) !== last) this.#lastEventType = input.slice(v, end);
      this.#eventType = this.#lastEventType;
      return;
    }
    const colon = input.indexOf(':', start);
    let field: string;
    let value: string;
    if (colon === -1 || colon >= end) {
      field = input.slice(start, end);
      value = '';
    } else {
      field = input.slice(start, colon);
      const valueStart = colon + 1 < end && input.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1;
      value = input.slice(valueStart, end);
    }
    switch (field) {
      case 'data':
        this.#addData(value);
        break;
      case 'event':
        this.#eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.#lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.#retry = Number(value);
        break;
      default:
        break;
    }
  }

  #addData(value: string): void {
    if (this.#hasData && this.#data.length + value.length >= this.#maxLineChars) this.#tooLong('event data');
    if (this.#hasData) {
      this.#data += `\n${value}`;
      if (this.#head.length < SSE_HEAD_CHARS)
        this.#head = `${this.#head}\n${value.slice(0, SSE_HEAD_CHARS)}`.slice(0, SSE_HEAD_CHARS);
    } else {
      this.#data = value;
      this.#head = value.slice(0, SSE_HEAD_CHARS);
      this.#hasData = true;
    }
  }

  #dispatch(): void {
    if (!this.#hasData) {
      this.#eventType = '';
      return;
    }
    const event: SseEvent = { event: this.#eventType || 'message', data: this.#data, id: this.#lastId };
    this.#data = '';
    this.#head = '';
    this.#hasData = false;
    this.#eventType = '';
    this.#onEvent(event);
  }
}

/** True when the line `[start, end)` of `input` begins with `name:` (charCode compares: `startsWith` at an offset is slow). */
function isField(input: string, start: number, end: number, name: string): boolean {
  const n = name.length;
  if (end - start <= n || input.charCodeAt(start + n) !== 58 /* : */) return false;
  for (let i = 1; i < n; i++) if (input.charCodeAt(start + i) !== name.charCodeAt(i)) return false;
  return true;
}

/**
 * Read a byte stream as SSE events. The reader is cancelled when the consumer stops early or `signal` aborts; an
 * abort rejects with the signal's reason.
 */
export async function* readSseEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent, void, undefined> {
  const queue: SseEvent[] = [];
  const parser = new SseParser((e) => queue.push(e));
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) {
        parser.end();
        finished = true;
      } else {
        parser.push(value);
      }
      for (let i = 0; i < queue.length; i++) yield queue[i] as SseEvent;
      queue.length = 0;
      if (finished) return;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
