/**
 * The lines of a JSONL file as an async iterable, read by the session reader (jsonl-reader.ts: its chunks, limits,
 * torn-line rule and errors). Lines are handed over in batches of about `BATCH` characters and the reader waits, after
 * a chunk, until the batches it filled are consumed, so memory stays at the reader's plus one chunk's batches however
 * large the file (export and import stream through it).
 */

import { type JsonlReadOptions, type JsonlReadResult, readJsonl } from '../session/jsonl-reader.js';

/** Text (UTF-16 code units) per batch handed to the consumer. */
const BATCH = 256 * 1024;
/** Bytes read per call unless `chunkBytes` says otherwise (the reader keeps two). */
const CHUNK = 1024 * 1024;

/** Thrown into the reader when the consumer stops early (`break`, a throw): ends the read, never surfaces. */
const stopped = Symbol('stopped');

export interface FileLinesOptions extends JsonlReadOptions {
  /** Called once the whole file was read (its warnings, a torn last line that was skipped). */
  onEnd?: (read: JsonlReadResult) => void;
}

/**
 * Every parsed line's text of `path` in order (as `readJsonl` gives it: no newline, no CR, no byte order mark).
 * Throws what `readJsonl` throws, when the consumer reaches the failing line's batch.
 */
export async function* fileLines(path: string, options: FileLinesOptions = {}): AsyncGenerator<string> {
  const ready: string[][] = [];
  let batch: string[] = [];
  let size = 0;
  let done = false;
  let failure: { err: unknown } | undefined;
  let stop = false;
  let wakeConsumer: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  let holding: Promise<void> | undefined;
  const wake = () => {
    const w = wakeConsumer;
    wakeConsumer = undefined;
    w?.();
  };
  const reading = readJsonl(
    path,
    (_value, _line, text) => {
      if (stop) throw stopped;
      batch.push(text);
      size += text.length;
      if (size < BATCH) return;
      ready.push(batch);
      batch = [];
      size = 0;
      wake();
      // Hold the reader (after this chunk's lines) until the consumer has taken every ready batch; one promise for
      // all the batches of a chunk.
      holding ??= new Promise<void>((resolve) => {
        wakeReader = () => {
          holding = undefined;
          resolve();
        };
      });
      return holding;
    },
    { chunkBytes: CHUNK, ...options },
  ).then(
    (read) => {
      if (batch.length > 0) ready.push(batch);
      done = true;
      options.onEnd?.(read);
      wake();
    },
    (err: unknown) => {
      if (err !== stopped) failure = { err };
      done = true;
      wake();
    },
  );
  try {
    for (;;) {
      const next = ready.shift();
      if (next !== undefined) {
        if (ready.length === 0) {
          // The last ready batch: the reader reads the next chunk while this one is consumed.
          const r = wakeReader;
          wakeReader = undefined;
          r?.();
        }
        yield* next;
        continue;
      }
      if (done) {
        if (failure !== undefined) throw failure.err;
        return;
      }
      await new Promise<void>((resolve) => {
        wakeConsumer = resolve;
      });
    }
  } finally {
    stop = true;
    const r = wakeReader;
    wakeReader = undefined;
    r?.();
    await reading;
  }
}
