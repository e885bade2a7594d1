/**
 * Reading every line of a JSONL file as JSON, for files far larger than one JS string can hold. Lines come from the
 * shared splitter (line-reader.ts); a chunk's complete lines are decoded in batches of about `BATCH_BYTES` (one
 * `toString`, cut at a newline; UTF-8 resynchronises at the newline, so the text equals decoding line by line) and
 * each line is parsed on its own (an error names its line). Peak extra memory: two chunks, the longest line, one
 * batch. Bytes that are not valid UTF-8 decode to U+FFFD with an `invalid_utf8` warning (`isUtf8` per batch).
 */

import { isUtf8 } from 'node:buffer';
import { PantoError } from '../errors.js';
import { CR, DEFAULT_CHUNK, DEFAULT_MAX_LINE, type LineBlock, NEWLINE, readLines } from './line-reader.js';
import { openRegularFile } from './regular-file.js';
import { LineWarnings, type SessionWarning, type TornLine } from './session-warning.js';

export type { TornLine } from './session-warning.js';

export interface JsonlReadOptions {
  /** Bytes read per call (default 4 MiB). */
  chunkBytes?: number;
  /** Longest line accepted, in bytes (default 256 MiB). A longer line fails with `ERR_SESSION_CORRUPT`. */
  maxLineBytes?: number;
}

export interface JsonlReadResult {
  /** Number of lines handed to the callback. */
  lines: number;
  /** File size in bytes when reading finished. */
  fileBytes: number;
  /** Set when the last line was torn; it was not handed to the callback. */
  torn?: TornLine;
  /** True when the last line parsed but has no trailing newline (an appender must write one first). */
  unterminated: boolean;
  /** Empty, invalid UTF-8, torn and unterminated lines, in line order. */
  warnings: SessionWarning[];
}

/**
 * Called once per parsed line, in file order, with the line's text (as parsed: no newline, no trailing CR, no byte
 * order mark); a throw stops reading and propagates. A promise returned holds the reading until it settles.
 */
export type JsonlLineHandler = (value: unknown, line: number, text: string) => unknown;

/**
 * Bytes decoded per `toString` when a chunk's complete lines are parsed. The decoded string (at most 2 bytes per byte)
 * stays below V8's large-object size (128 KiB), so it is allocated and dropped in the young generation.
 */
export const BATCH_BYTES = 48 * 1024;

const HEADER_START = Buffer.from('{"type":"session"', 'latin1');

/**
 * Why a final line without a newline that does not parse cannot be a torn line a crash left, or null: it holds a CR
 * (lines ending in CR alone), or it is the file's first line (`first`) and neither the start of a header nor NUL
 * bytes (a power loss's unwritten tail) — not a session file, which `SessionLog.open` must not cut away. `bytes` is
 * the fragment without a trailing CR.
 */
export function tornLineProblem(bytes: Buffer, first: boolean): string | null {
  if (bytes.indexOf(CR) !== -1) {
    return 'the last line holds a CR byte inside it and no newline; lines must end with \\n (LF or CRLF), not CR alone';
  }
  if (!first) return null;
  const n = Math.min(bytes.length, HEADER_START.length);
  if (bytes.subarray(0, n).equals(HEADER_START.subarray(0, n))) return null;
  if (bytes.every((c) => c === 0)) return null;
  return 'the file has no newline and its only line is neither JSON nor the start of a session header; not a session file';
}

export function formatError(path: string, line: number, problem: string): PantoError {
  return new PantoError('ERR_SESSION_FORMAT', `${path}:${line}: ${problem}`);
}

export function corruptLine(path: string, line: number, err: unknown): PantoError {
  return new PantoError(
    'ERR_SESSION_CORRUPT',
    `${path}:${line}: not valid JSON (${(err as Error).message}); the session file is damaged at this line`,
    { cause: err },
  );
}

export function lineTooLong(path: string, line: number, maxLineBytes: number): PantoError {
  return new PantoError(
    'ERR_SESSION_CORRUPT',
    `${path}:${line}: line is longer than maxLineBytes (${maxLineBytes} bytes); refusing to load it`,
  );
}

/** The chunk and line limits of `options`, checked. */
export function readLimits(options: JsonlReadOptions): { chunkBytes: number; maxLineBytes: number } {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE;
  if (!(chunkBytes > 0) || !(maxLineBytes > 0)) {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'chunkBytes and maxLineBytes must be positive');
  }
  return { chunkBytes, maxLineBytes };
}

/**
 * Read `path` line by line and hand each parsed JSON value to `onLine`.
 *
 * Errors: a line that is not valid JSON and is followed by a newline fails with `ERR_SESSION_CORRUPT` naming the
 * file and line number, as does a line longer than `maxLineBytes`; a final line without newline that does not parse
 * is reported as `torn` instead (or `ERR_SESSION_CORRUPT` when a crash cannot have left it: `tornLineProblem`).
 * `ERR_INVALID_ARGUMENT` when `path` is not a regular file. I/O errors propagate as is.
 */
export async function readJsonl(
  path: string,
  onLine: JsonlLineHandler,
  options: JsonlReadOptions = {},
): Promise<JsonlReadResult> {
  const { chunkBytes, maxLineBytes } = readLimits(options);
  let lineNo = 0;
  let lines = 0;
  const warnings = new LineWarnings(path);

  /** One line's text (no newline, no CR): parsed and handed over, or counted as empty. */
  const take = (text: string): unknown => {
    lineNo++;
    if (text === '') {
      warnings.empty(lineNo);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw corruptLine(path, lineNo, err);
    }
    lines++;
    return onLine(value, lineNo, text);
  };

  /** The complete lines of a block, decoded a batch of at most BATCH_BYTES at a time (a longer line alone). */
  const onBlock = async ({ buf, start, end }: LineBlock): Promise<void> => {
    let s = start;
    while (s < end) {
      let e = end;
      if (end - s > BATCH_BYTES) {
        e = buf.lastIndexOf(NEWLINE, s + BATCH_BYTES - 1) + 1;
        if (e <= s) e = buf.indexOf(NEWLINE, s) + 1;
      }
      const bad: number[] = [];
      if (!isUtf8(buf.subarray(s, e))) {
        // Rare: find the lines with bad bytes (a line that is not JSON either fails below, before it is reported).
        let line = lineNo;
        for (let from = s; from < e; ) {
          const nl = buf.indexOf(NEWLINE, from);
          line++;
          if (!isUtf8(buf.subarray(from, nl))) bad.push(line);
          from = nl + 1;
        }
      }
      const text = buf.toString('utf8', s, e);
      for (let p = 0; p < text.length; ) {
        const nl = text.indexOf('\n', p);
        const held = take(text.slice(p, nl > p && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl));
        if (held instanceof Promise) await held;
        p = nl + 1;
      }
      for (const line of bad) warnings.invalidUtf8(line);
      s = e;
    }
  };

  const fh = await openRegularFile(path);
  try {
    const tooLong = () => lineTooLong(path, lineNo + 1, maxLineBytes);
    const read = await readLines(fh, { chunkBytes, maxLineBytes, tooLong }, onBlock);
    const result: JsonlReadResult = {
      lines,
      fileBytes: read.fileBytes,
      unterminated: false,
      warnings: warnings.list,
    };
    const last = read.last;
    if (last !== undefined) {
      // The last line, without a newline: loaded when it parses, else torn (skipped) when a crash can have left it.
      const bytes = last.head.subarray(0, last.cr ? last.length - 1 : last.length);
      const text = bytes.toString('utf8');
      if (text === '') {
        // A lone CR at the end: nothing to load, but the line still needs its newline.
        result.unterminated = true;
        warnings.unterminated(lineNo + 1);
        return result;
      }
      try {
        JSON.parse(text);
      } catch (err) {
        const problem = tornLineProblem(bytes, lines === 0);
        if (problem)
          throw new PantoError('ERR_SESSION_CORRUPT', `${path}:${lineNo + 1}: ${problem}`, { cause: err });
        result.torn = { line: lineNo + 1, offset: last.offset, bytes: last.length };
        warnings.torn(result.torn);
        return result;
      }
      await take(text);
      if (!isUtf8(bytes)) warnings.invalidUtf8(lineNo);
      result.lines = lines;
      result.unterminated = true;
      warnings.unterminated(lineNo);
    }
    return result;
  } finally {
    await fh.close();
  }
}
