/**
 * Reading every line of a JSONL file as JSON, for files far larger than one JS string can hold (V8 caps a string at
 * ~512 MB). Lines come from the shared splitter (line-reader.ts). The complete lines of a chunk are decoded in batches
 * of about `BATCH_BYTES` (one `toString` per batch, cut at a newline), and each line is a slice of its batch's string,
 * `JSON.parse`d on its own (so an error names its line, and a bad line can never merge with its neighbours); a line
 * longer than a batch is decoded alone. Decoding a batch gives the same text as decoding its lines one by one: UTF-8
 * decoding resynchronises at every ASCII byte, so the newline byte never takes part in a replacement character. A
 * batch string is small enough to stay in V8's young generation. Peak extra memory: two chunks, the longest line's
 * bytes, one decoded batch (or one decoded line, when it is longer than a batch).
 *
 * Bytes that are not valid UTF-8 decode to U+FFFD (one per bad sequence) and the line is reported in `invalidUtf8`;
 * each batch is checked with `isUtf8` (simdutf, a few percent of the decode's cost).
 */

import { isUtf8 } from 'node:buffer';
import { PantoError } from '../errors.js';
import { CR, DEFAULT_CHUNK, DEFAULT_MAX_LINE, type LineBlock, NEWLINE, readLines } from './line-reader.js';
import { openRegularFile } from './regular-file.js';

export interface JsonlReadOptions {
  /** Bytes read per call (default 4 MiB). */
  chunkBytes?: number;
  /** Longest line accepted, in bytes (default 256 MiB). A longer line fails with `ERR_SESSION_CORRUPT`. */
  maxLineBytes?: number;
}

/** Consecutive empty lines: the first one's 1-based number and how many there are. */
export interface EmptyRun {
  line: number;
  count: number;
}

/** Add empty line `line` to `runs` (extending the last run when it ends just before `line`). */
export function addEmptyLine(runs: EmptyRun[], line: number): void {
  const last = runs[runs.length - 1];
  if (last !== undefined && last.line + last.count === line) last.count++;
  else runs.push({ line, count: 1 });
}

/** The `empty_line` warning message for `run` (one warning per run of consecutive empty lines). */
export function emptyRunMessage(path: string, run: EmptyRun): string {
  return run.count === 1
    ? `${path}:${run.line}: empty line skipped`
    : `${path}:${run.line}: ${run.count} empty lines skipped (lines ${run.line}-${run.line + run.count - 1})`;
}

/** A final line that ended without a newline and did not parse (a write cut short by a crash). */
export interface TornLine {
  /** 1-based line number. */
  line: number;
  /** Byte offset where the torn line starts (the file is intact up to here). */
  offset: number;
  /** Length in bytes of the torn fragment. */
  bytes: number;
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
  /**
   * The empty lines that were skipped, as runs of consecutive lines (ascending): a run is its first 1-based line
   * number and how many lines it holds, so a file of a million newlines costs one run, not a million numbers.
   */
  emptyLines: EmptyRun[];
  /** Number of lines in the file (parsed, empty and torn). */
  lineCount: number;
  /**
   * The lines handed to the callback whose bytes are not valid UTF-8 (ascending). They were decoded with U+FFFD for
   * each bad sequence, as `Buffer.toString('utf8')` does; the caller reports them.
   */
  invalidUtf8: number[];
}

/**
 * Called once per parsed line, in file order, with the line's text (as parsed: no newline, no trailing CR, no byte
 * order mark); a throw stops reading and propagates.
 */
export type JsonlLineHandler = (value: unknown, line: number, text: string) => void;

/**
 * Bytes decoded per `toString` when a chunk's complete lines are parsed. The decoded string (at most 2 bytes per byte)
 * stays below V8's large-object size (128 KiB), so it is allocated and dropped in the young generation.
 */
export const BATCH_BYTES = 48 * 1024;

const HEADER_START = Buffer.from('{"type":"session"', 'latin1');

/**
 * Why a final line without a newline that does not parse is not a torn line a crash could leave (a prefix of one
 * line as `SessionLog` writes it), or null. A crash never leaves a CR inside a line (`SessionLog` writes none; a
 * CRLF file's torn line can only end with one), so a CR before the fragment's last byte means the file's lines end
 * with CR alone. A fragment that is the file's first line (`first`: nothing parsed before it) must be the start of
 * a header, a run of NUL bytes (a file system's unwritten tail after a power loss), or empty after a UTF-8 byte order
 * mark: anything else is not a session file, and treating it as torn would let `SessionLog.open` cut it away.
 * `bytes` is the fragment without a trailing CR.
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

/** The `torn_line` warning text for `torn`. */
export function tornLineMessage(path: string, torn: TornLine): string {
  return (
    `${path}:${torn.line}: last line is incomplete (${torn.bytes} bytes, likely a crash mid-write); ` +
    'skipped, everything before it loaded'
  );
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
  const emptyLines: EmptyRun[] = [];
  const invalidUtf8: number[] = [];

  /** One line's text (no newline, no CR): parsed and handed over, or counted as empty. */
  const take = (text: string): void => {
    lineNo++;
    if (text === '') {
      addEmptyLine(emptyLines, lineNo);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw corruptLine(path, lineNo, err);
    }
    lines++;
    onLine(value, lineNo, text);
  };

  /** The complete lines of a block, decoded a batch of at most BATCH_BYTES at a time (a longer line alone). */
  const onBlock = ({ buf, start, end }: LineBlock): void => {
    let s = start;
    while (s < end) {
      let e = end;
      if (end - s > BATCH_BYTES) {
        e = buf.lastIndexOf(NEWLINE, s + BATCH_BYTES - 1) + 1;
        if (e <= s) e = buf.indexOf(NEWLINE, s) + 1;
      }
      if (!isUtf8(buf.subarray(s, e))) {
        // Rare: find the lines with bad bytes (a line that is not JSON either fails below, before it is reported).
        let line = lineNo;
        for (let from = s; from < e; ) {
          const nl = buf.indexOf(NEWLINE, from);
          line++;
          if (!isUtf8(buf.subarray(from, nl))) invalidUtf8.push(line);
          from = nl + 1;
        }
      }
      const text = buf.toString('utf8', s, e);
      for (let p = 0; p < text.length; ) {
        const nl = text.indexOf('\n', p);
        take(text.slice(p, nl > p && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl));
        p = nl + 1;
      }
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
      emptyLines,
      lineCount: lineNo,
      invalidUtf8,
    };
    const last = read.last;
    if (last !== undefined) {
      // The last line, without a newline: loaded when it parses, else torn (skipped) when a crash can have left it.
      const bytes = last.head.subarray(0, last.cr ? last.length - 1 : last.length);
      const text = bytes.toString('utf8');
      if (text === '') {
        // A lone CR at the end: nothing to load, but the line still needs its newline.
        result.lineCount = lineNo + 1;
        result.unterminated = true;
        return result;
      }
      try {
        JSON.parse(text);
      } catch (err) {
        const problem = tornLineProblem(bytes, lines === 0);
        if (problem)
          throw new PantoError('ERR_SESSION_CORRUPT', `${path}:${lineNo + 1}: ${problem}`, { cause: err });
        result.lineCount = lineNo + 1;
        result.torn = { line: lineNo + 1, offset: last.offset, bytes: last.length };
        return result;
      }
      if (!isUtf8(bytes)) invalidUtf8.push(lineNo + 1);
      take(text);
      result.lines = lines;
      result.lineCount = lineNo;
      result.unterminated = true;
    }
    return result;
  } finally {
    await fh.close();
  }
}
