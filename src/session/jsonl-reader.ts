/**
 * Reading every line of a JSONL file as JSON, for files far larger than one JS string can hold. Lines come from the
 * shared splitter (line-reader.ts), a chunk's complete lines decoded in batches (`decodeLines`), and each line is
 * parsed on its own (an error names its line). Peak extra memory: two chunks, the longest line, one batch. Bytes that
 * are not valid UTF-8 decode to U+FFFD with an `invalid_utf8` warning.
 */

import { isUtf8 } from 'node:buffer';
import { PantoError } from '../errors.js';
import {
  CR,
  DEFAULT_CHUNK,
  DEFAULT_MAX_LINE,
  decodeLines,
  type LastLine,
  openRegularFile,
  readLines,
} from './line-reader.js';
import { LineWarnings, type SessionWarning, type TornLine } from './session-warning.js';

export { BATCH_BYTES } from './line-reader.js';

export interface JsonlReadOptions {
  /** Bytes read per call (default 4 MiB). */
  chunkBytes?: number;
  /** Longest line accepted, in bytes (default 256 MiB). A longer line fails with `ERR_SESSION_CORRUPT`. */
  maxLineBytes?: number;
}

export interface JsonlReadResult {
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
 * order mark); a throw stops reading and propagates. A promise returned holds the reading (from the end of the chunk's
 * lines) until it settles; the rest of that chunk's lines are still handed over meanwhile.
 */
export type JsonlLineHandler = (value: unknown, line: number, text: string) => unknown;

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

/** `text`, line `line` of `path`, as a JSON value. @throws PantoError `ERR_SESSION_CORRUPT` when it is not JSON. */
export function parseLine(path: string, line: number, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw corruptLine(path, line, err);
  }
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
 * The file's last line when no newline ends it (line number `line`; `first`: no line before it parsed): its text and
 * value when it parses (text '' for a lone CR: nothing to load), else `torn` when a crash can have left it. Its
 * warnings are written (`torn_line`, or `unterminated_line` and `invalid_utf8`).
 * @throws PantoError `ERR_SESSION_CORRUPT` when a crash cannot have left it (`tornLineProblem`).
 */
export function finalLine(
  path: string,
  line: number,
  last: LastLine,
  first: boolean,
  warnings: LineWarnings,
): { torn: TornLine } | { text: string; value: unknown } {
  const text = last.bytes.toString('utf8');
  let value: unknown;
  if (text !== '') {
    try {
      value = JSON.parse(text);
    } catch (err) {
      const problem = tornLineProblem(last.bytes, first);
      if (problem) throw new PantoError('ERR_SESSION_CORRUPT', `${path}:${line}: ${problem}`, { cause: err });
      const torn = { line, offset: last.offset, bytes: last.length };
      warnings.torn(torn);
      return { torn };
    }
    if (!isUtf8(last.bytes)) warnings.invalidUtf8(line);
  }
  warnings.unterminated(line);
  return { text, value };
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
  let parsed = 0;
  const warnings = new LineWarnings(path);

  /** One line's text (no newline, no CR): parsed and handed over, or counted as empty. */
  const take = (text: string, invalidUtf8: boolean): unknown => {
    lineNo++;
    if (text === '') {
      warnings.empty(lineNo);
      return;
    }
    const value = parseLine(path, lineNo, text);
    if (invalidUtf8) warnings.invalidUtf8(lineNo);
    parsed++;
    return onLine(value, lineNo, text);
  };

  const fh = await openRegularFile(path);
  try {
    const tooLong = () => lineTooLong(path, lineNo + 1, maxLineBytes);
    const read = await readLines(fh, { chunkBytes, maxLineBytes, tooLong }, ({ buf, start, end }) => {
      // Promises the handler returned for this chunk's lines: the reading waits for them before the next chunk.
      const held: Promise<unknown>[] = [];
      decodeLines(buf, start, end, (text, invalidUtf8) => {
        const r = take(text, invalidUtf8);
        if (r instanceof Promise) held.push(r);
      });
      return held.length === 0 ? undefined : Promise.all(held);
    });
    const result: JsonlReadResult = {
      fileBytes: read.fileBytes,
      unterminated: false,
      warnings: warnings.list,
    };
    if (read.last !== undefined) {
      const last = finalLine(path, lineNo + 1, read.last, parsed === 0, warnings);
      if ('torn' in last) result.torn = last.torn;
      else {
        result.unterminated = true;
        if (last.text !== '') await take(last.text, false);
      }
    }
    return result;
  } finally {
    await fh.close();
  }
}
