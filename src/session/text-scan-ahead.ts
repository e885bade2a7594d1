/**
 * Reading and scanning ahead on a second thread, for a loader that leaves long texts in the file (`textInFile`,
 * line-texts.ts): while the loading thread parses chunk N of the file, a worker thread (text-scan-worker.ts) reads
 * chunk N+1 into a buffer both threads share and scans its complete lines for their long text literals — the byte
 * work (`LineScanner`: structure scan, JSON string check, UTF-16 length, CRC-32) that otherwise takes about a third of
 * the loading thread's time. The loader parses the same bytes it would have read itself: the worker reads into the
 * shared buffer and the loader takes that buffer's bytes, never a second read of the file.
 *
 * Protocol: `request(slot, …)` posts a read of `length` bytes at `position` of descriptor `fd` into `slot` (one of two
 * shared buffers, `start()`); `take(slot)` waits (synchronously, `Atomics.wait` on a shared counter the worker bumps
 * after each reply) for that request's reply on a `MessagePort` read with `receiveMessageOnPort`, so the loading
 * thread needs no event-loop turn to receive it. Replies carry the request's sequence number; a stale one is dropped.
 *
 * Never a correctness dependency: `take` gives undefined — the loader reads the chunk itself and scans on its own
 * thread, as without a worker — when the worker has not started yet, could not read (the loader's own read then meets
 * the error), is gone, or has not answered within `TAKE_TIMEOUT_MS`; after a timeout or a failure to start it is not
 * asked again. `close` terminates the worker (and waits for it, so no read of `fd` is in flight once it resolves).
 */

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { MessagePort, Worker } from 'node:worker_threads';
import { packagePath } from '../package-root.js';
import type { JsonlReadAhead } from './jsonl-reader.js';
import { LINE_INTS } from './text-literals.js';

/** Sent to the worker as `workerData`. */
export interface ScanAheadData {
  replies: MessagePort;
  /** Int32 [0]: replies sent so far; [1]: 1 once the worker listens. */
  signal: SharedArrayBuffer;
  slots: SharedArrayBuffer[];
}

export interface ScanRequest {
  seq: number;
  slot: number;
  fd: number;
  length: number;
  position: number;
  /** The chunk starts inside a line (the previous chunk did not end with a newline): its first bytes are not a line. */
  midLine: boolean;
  minBytes: number;
}

export interface ScanReply {
  seq: number;
  /** -1: the worker could not read (the loader reads the chunk itself). */
  bytesRead: number;
  /** The complete lines scanned: bytes [from, to) of the slot (none when from === to). */
  from?: number;
  to?: number;
  lines?: Int32Array;
  records?: Int32Array;
  reduced?: Uint8Array;
}

/** How long `take` waits for one chunk's reply before the loader reads it itself (and stops asking the worker). */
const TAKE_TIMEOUT_MS = 5000;

/** A chunk the worker scanned, until its lines have been looked up. */
interface ScannedChunk {
  buffer: ArrayBufferLike;
  from: number;
  to: number;
  lines: Int32Array;
  records: Int32Array;
  reduced: Buffer;
  /** Index (in lines) of the next line `recordsFor` may meet. */
  cursor: number;
}

const NO_INTS = new Int32Array(0);
const NO_BYTES = Buffer.alloc(0);

let threads: typeof import('node:worker_threads') | undefined;
/** node:worker_threads, loaded when the first read-ahead starts (importing the library does not load it). */
function workerThreads(): typeof import('node:worker_threads') {
  threads ??= createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
  return threads;
}

/** The built worker script, or undefined (running from the TypeScript sources without a build: no read-ahead). */
function workerScript(): string | undefined {
  try {
    const built = packagePath('dist', 'session', 'text-scan-worker.js');
    return existsSync(built) ? built : undefined;
  } catch {
    return undefined;
  }
}

export class TextScanAhead implements JsonlReadAhead {
  readonly #minBytes: number;
  #worker: Worker | null = null;
  #replies: MessagePort | null = null;
  #signal: Int32Array | null = null;
  #slots: Buffer[] = [];
  /** Sequence number of the outstanding request per slot (0: none). */
  readonly #asked = [0, 0];
  #seq = 0;
  #broken = false;
  /** The chunk whose lines the loader is parsing (the last one `take` gave). */
  #current: ScannedChunk | null = null;
  #served = 0;

  /** True once the worker has started and takes requests (until `close`). */
  get ready(): boolean {
    return !this.#broken && (this.#signal?.[1] ?? 0) === 1;
  }

  /** Chunks the worker read and scanned that the loader took. */
  get served(): number {
    return this.#served;
  }

  /** `minBytes`: literal bytes, quotes included, from which a text stays in the file (line-texts.ts). */
  constructor(minBytes: number) {
    this.#minBytes = minBytes;
  }

  /** Start the worker, with two shared read buffers of `size` bytes (see `JsonlReadAhead.start`). */
  start(size: number): Buffer[] | undefined {
    const script = workerScript();
    if (script === undefined) return undefined;
    try {
      const { MessageChannel, Worker } = workerThreads();
      const signal = new SharedArrayBuffer(8);
      const slots = [new SharedArrayBuffer(size), new SharedArrayBuffer(size)];
      const { port1, port2 } = new MessageChannel();
      const data: ScanAheadData = { replies: port2, signal, slots };
      const worker = new Worker(script, {
        workerData: data,
        transferList: [port2],
        // The scan keeps a few arrays per chunk: a worker out of memory ends alone (the loader scans on its own).
        resourceLimits: { maxOldGenerationSizeMb: 256 },
        stdout: true,
        stderr: true,
      });
      worker.unref();
      port1.unref();
      worker.on('error', () => {
        this.#broken = true;
      });
      worker.on('exit', () => {
        this.#broken = true;
      });
      this.#worker = worker;
      this.#replies = port1;
      this.#signal = new Int32Array(signal);
      this.#slots = slots.map((sab) => Buffer.from(sab));
      return this.#slots;
    } catch {
      this.#broken = true;
      return undefined;
    }
  }

  request(slot: number, fd: number, length: number, position: number, midLine: boolean): boolean {
    if (this.#broken || this.#worker === null || (this.#signal?.[1] ?? 0) === 0) return false;
    const seq = ++this.#seq;
    this.#asked[slot] = seq;
    const m: ScanRequest = { seq, slot, fd, length, position, midLine, minBytes: this.#minBytes };
    try {
      this.#worker.postMessage(m);
    } catch {
      this.#broken = true;
      this.#asked[slot] = 0;
      return false;
    }
    return true;
  }

  take(slot: number): number | undefined {
    const seq = this.#asked[slot] ?? 0;
    this.#asked[slot] = 0;
    this.#current = null;
    const replies = this.#replies;
    const signal = this.#signal;
    if (seq === 0 || replies === null || signal === null) return undefined;
    const deadline = performance.now() + TAKE_TIMEOUT_MS;
    for (;;) {
      const sent = Atomics.load(signal, 0);
      const got = workerThreads().receiveMessageOnPort(replies);
      if (got !== undefined) {
        const reply = got.message as ScanReply;
        if (reply.seq < seq) continue; // the reply to a request the loader gave up on
        if (reply.seq !== seq || reply.bytesRead < 0) return undefined;
        const buffer = this.#slots[slot]?.buffer;
        const from = reply.from ?? 0;
        const to = reply.to ?? 0;
        if (buffer !== undefined && to > from) {
          this.#current = {
            buffer,
            from,
            to,
            lines: reply.lines ?? NO_INTS,
            records: reply.records ?? NO_INTS,
            reduced:
              reply.reduced === undefined
                ? NO_BYTES
                : Buffer.from(reply.reduced.buffer, reply.reduced.byteOffset, reply.reduced.byteLength),
            cursor: 0,
          };
        }
        this.#served++;
        return reply.bytesRead;
      }
      const left = deadline - performance.now();
      if (this.#broken || left <= 0) {
        this.#broken = true;
        return undefined;
      }
      // Sleep until the worker's next reply (the counter moves past `sent`), in slices of the time left.
      Atomics.wait(signal, 0, sent, Math.min(left, 50));
    }
  }

  /**
   * For the line buf[start, end) (no newline, no CR) of the chunk `take` last gave: its records (`load` them with
   * `records`, `first`, `count`) and `text`, the line with those literals emptied; `null` when the worker scanned the
   * line and found none; undefined when the worker did not scan it (another buffer, a line spanning chunks): scan it
   * on this thread.
   */
  recordsFor(
    buf: Buffer,
    start: number,
    end: number,
  ): { records: Int32Array; first: number; count: number; text: string } | null | undefined {
    const c = this.#current;
    if (c === null || buf.buffer !== c.buffer || buf.byteOffset !== 0) return undefined;
    if (start < c.from || end >= c.to) return undefined;
    const lines = c.lines;
    let l = c.cursor * LINE_INTS;
    while (l < lines.length && (lines[l] as number) < start) l += LINE_INTS;
    c.cursor = l / LINE_INTS;
    if (l >= lines.length || lines[l] !== start) return null;
    return {
      records: c.records,
      first: lines[l + 1] as number,
      count: lines[l + 2] as number,
      text: c.reduced.toString('utf8', lines[l + 3] as number, lines[l + 4] as number),
    };
  }

  async close(): Promise<void> {
    this.#current = null;
    const worker = this.#worker;
    this.#worker = null;
    this.#broken = true;
    this.#replies?.close();
    this.#replies = null;
    if (worker !== null) await worker.terminate();
  }
}
