/**
 * Streaming JSONL reader for files far larger than one JS string can hold (V8 caps a string at ~512 MB).
 *
 * The file is read in chunks (the next chunk is read while the current one is parsed) and split on the newline BYTE
 * (0x0A). The complete lines of a chunk are decoded in batches of about `BATCH_BYTES` (one `toString` per batch, cut
 * at a newline), and each line is a slice of its batch's string, `JSON.parse`d on its own (so an error names its line,
 * and a bad line can never merge with its neighbours); a line longer than a batch is decoded alone. Decoding a batch
 * gives the same text as decoding its lines one by one: UTF-8 decoding resynchronises at every ASCII byte, so the
 * newline byte never takes part in a replacement character. Parsed values copy their strings out of the source, so a
 * batch string is garbage once its lines are parsed; it is small enough to stay in V8's young generation (a
 * large-object allocation per batch would cost page faults). A line that spans chunks is assembled in a buffer grown
 * up to `maxLineBytes`; a longer line is an error, never a silent truncation. Peak extra memory: two chunks, the
 * longest line's bytes, one decoded batch (or one decoded line, when it is longer than a batch).
 *
 * Bytes that are not valid UTF-8 decode to U+FFFD (one per bad sequence) and the line is reported in `invalidUtf8`;
 * each batch is checked with `isUtf8` (simdutf, a few percent of the decode's cost).
 */

import { isUtf8 } from 'node:buffer';
import { PantoError } from '../errors.js';
import { type FileIdentity, fileIdentity } from './file-identity.js';
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
  /** The file as it was when reading finished (`fstat` of the descriptor read from). */
  identity: FileIdentity;
  /**
   * 1-based numbers of the lines handed to the callback whose bytes are not valid UTF-8 (ascending). They were decoded
   * with U+FFFD for each bad sequence, as `Buffer.toString('utf8')` does; the caller reports them.
   */
  invalidUtf8: number[];
}

/**
 * Called once per parsed line, in file order, with the line's text (as parsed: no newline, no trailing CR, no byte
 * order mark); a throw stops reading and propagates.
 */
export type JsonlLineHandler = (value: unknown, line: number, text: string) => void;

/**
 * Given a line's bytes (valid UTF-8, no newline, no trailing CR; never line 1) and the file offset of its first byte,
 * the text to `JSON.parse` instead of the decoded line, or undefined to parse the line itself. Called just before the line's `JsonlLineHandler` call.
 * When the text it gives does not parse, the line itself is parsed (its error, if any, is the one reported).
 */
export type JsonlLinePreparer = (
  buf: Buffer,
  start: number,
  end: number,
  fileOffset: number,
) => string | undefined;

/**
 * Reads the file's chunks on another thread, ahead of the parsing here (text-scan-ahead.ts): the next chunk is asked
 * for before the current one is parsed, and taken when it is needed. Whatever it does not give, the reader reads
 * itself; it never writes to buffers but its own.
 */
export interface JsonlReadAhead {
  /**
   * Start reading ahead with chunks of `size` bytes: the two read buffers its reads fill, or undefined when it cannot
   * (the reader reads on its own).
   */
  start(size: number): Buffer[] | undefined;
  /**
   * Ask for `length` bytes at `position` of descriptor `fd` into buffer `slot`; false when it will not (read them
   * here). `midLine`: the bytes before `position` do not end with a newline (the chunk's first bytes end a line).
   */
  request(slot: number, fd: number, length: number, position: number, midLine: boolean): boolean;
  /**
   * Called when the reader needs buffer `slot`'s bytes (also when nothing was asked): how many it read, or undefined —
   * the reader reads them itself, into buffers of its own from then on (an answer may still be on its way).
   */
  take(slot: number): number | undefined;
  /** Stop; resolves when no read of the file is in flight any more. */
  close(): Promise<void>;
}

/**
 * Where a line's bytes are: `buf[start, end)` is the line (no newline), and `fileOffset` is the file offset of
 * `buf[start]` (what line-texts.ts keeps of the line it reduced, to place the literals it leaves in the file).
 */
export interface LineBytes {
  buf: Buffer;
  start: number;
  end: number;
  fileOffset: number;
}

/** Bytes read per call unless `chunkBytes` says otherwise. */
export const DEFAULT_CHUNK = 4 * 1024 * 1024;
const DEFAULT_MAX_LINE = 256 * 1024 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;
/**
 * Bytes decoded per `toString` when a chunk's complete lines are parsed. The decoded string (at most 2 bytes per byte)
 * stays below V8's large-object size (128 KiB), so it is allocated and dropped in the young generation.
 */
export const BATCH_BYTES = 48 * 1024;

const BOM = 0xfeff;
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
  const cr = bytes.indexOf(CR);
  if (cr !== -1) {
    return 'the last line holds a CR byte inside it and no newline; lines must end with \\n (LF or CRLF), not CR alone';
  }
  if (!first) return null;
  let b = bytes;
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) b = b.subarray(3);
  const n = Math.min(b.length, HEADER_START.length);
  if (b.subarray(0, n).equals(HEADER_START.subarray(0, n))) return null;
  if (b.every((c) => c === 0)) return null;
  return 'the file has no newline and its only line is neither JSON nor the start of a session header; not a session file';
}

/** `text` without a leading byte order mark (allowed before the header: line 1 only). */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === BOM ? text.slice(1) : text;
}

function decodeLine(buf: Buffer, start: number, end: number): string {
  // Strip a trailing CR so CRLF files read the same (JSON.parse would accept it anyway; this keeps empty-line checks honest).
  const stop = end > start && buf[end - 1] === CR ? end - 1 : end;
  return buf.toString('utf8', start, stop);
}

/**
 * Read `path` line by line and hand each parsed JSON value to `onLine`.
 *
 * Errors: a line that is not valid JSON and is followed by a newline fails with `ERR_SESSION_CORRUPT` naming the
 * file and line number; a final line without newline that does not parse is reported as `torn` instead. I/O errors
 * propagate as is. With `prepare`, lines are decoded one by one rather than a batch at a time, and `prepare` may give
 * the text to parse (`JsonlLinePreparer`). With `ahead`, chunks are read through it (`JsonlReadAhead`), and it is
 * closed before the file is, however the read ends.
 */
export async function readJsonl(
  path: string,
  onLine: JsonlLineHandler,
  options: JsonlReadOptions = {},
  prepare?: JsonlLinePreparer,
  ahead?: JsonlReadAhead,
): Promise<JsonlReadResult> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE;
  if (!(chunkBytes > 0) || !(maxLineBytes > 0)) {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'chunkBytes and maxLineBytes must be positive');
  }
  const fh = await openRegularFile(path);
  /** A read of this thread's in flight (awaited before the file is closed). */
  let pending: Promise<{ bytesRead: number; buffer: Buffer }> | undefined;
  try {
    // Two read buffers: the next chunk is read while the current one is parsed. A line that spans chunks is
    // assembled in `carry` (grown by doubling, at most maxLineBytes + 1 bytes); lines inside a chunk are parsed in place.
    const size = Math.min(chunkBytes, maxLineBytes + 1);
    const shared = ahead?.start(size);
    let reads = shared ?? [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
    /**
     * Start reading `size` bytes at `position` into buffer `slot` (by the read-ahead when it takes the request); the
     * returned function gives them once they are needed.
     */
    const startRead = (
      slot: number,
      position: number,
      midLine: boolean,
    ): (() => Promise<{ bytesRead: number; buffer: Buffer }>) => {
      const asked =
        shared !== undefined && reads === shared && ahead !== undefined
          ? ahead.request(slot, fh.fd, size, position, midLine)
          : false;
      const own = asked ? undefined : fh.read(reads[slot] as Buffer, 0, size, position);
      pending = own;
      return async () => {
        const bytesRead = ahead?.take(slot);
        if (bytesRead !== undefined) return { bytesRead, buffer: reads[slot] as Buffer };
        if (own !== undefined) return own;
        // Asked but not answered: read here, into buffers the read-ahead never writes to.
        reads = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
        pending = fh.read(reads[slot] as Buffer, 0, size, position);
        return pending;
      };
    };
    let carry = Buffer.allocUnsafe(0);
    let carryLen = 0;
    let filePos = 0; // file offset of the next read
    let lineOffset = 0; // file offset where the current line starts
    let lineNo = 0;
    let lines = 0;
    const emptyLines: EmptyRun[] = [];
    const invalidUtf8: number[] = [];

    const tooLong = (line: number): PantoError =>
      new PantoError(
        'ERR_SESSION_CORRUPT',
        `${path}:${line}: line is longer than maxLineBytes (${maxLineBytes} bytes); refusing to load it`,
      );

    const appendCarry = (src: Buffer, from: number, to: number): void => {
      const need = carryLen + (to - from);
      if (need > maxLineBytes) throw tooLong(lineNo + 1);
      if (need > carry.length) {
        const grown = Buffer.allocUnsafe(Math.min(Math.max(need, carry.length * 2), maxLineBytes + 1));
        carry.copy(grown, 0, 0, carryLen);
        carry = grown;
      }
      src.copy(carry, carryLen, from, to);
      carryLen = need;
    };

    const corruptLine = (line: number, err: unknown): PantoError =>
      new PantoError(
        'ERR_SESSION_CORRUPT',
        `${path}:${line}: not valid JSON (${(err as Error).message}); the session file is damaged at this line`,
        { cause: err },
      );

    const handle = (
      buf: Buffer,
      lineStart: number,
      lineEnd: number,
      terminated: boolean,
      knownValid = false,
    ): TornLine | undefined => {
      lineNo++;
      const bytes = lineEnd - lineStart;
      if (bytes > maxLineBytes) throw tooLong(lineNo);
      const offset = lineOffset;
      lineOffset += bytes + (terminated ? 1 : 0);
      const stop = lineEnd > lineStart && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
      const valid = knownValid || isUtf8(buf.subarray(lineStart, lineEnd));
      let value: unknown;
      let text: string | undefined;
      if (prepare !== undefined && lineNo > 1 && stop > lineStart && valid) {
        const prepared = prepare(buf, lineStart, stop, offset);
        if (prepared !== undefined) {
          try {
            value = JSON.parse(prepared);
            text = prepared;
          } catch {
            // parsed from the line itself below: its error is the one to report
          }
        }
      }
      if (text === undefined) {
        const decoded = decodeLine(buf, lineStart, lineEnd);
        text = lineNo === 1 ? withoutBom(decoded) : decoded;
        if (decoded === '') {
          if (terminated) addEmptyLine(emptyLines, lineNo);
          return undefined;
        }
        try {
          value = JSON.parse(text);
        } catch (err) {
          if (!terminated) {
            const problem = tornLineProblem(buf.subarray(lineStart, stop), lines === 0);
            if (problem)
              throw new PantoError('ERR_SESSION_CORRUPT', `${path}:${lineNo}: ${problem}`, { cause: err });
            return { line: lineNo, offset, bytes };
          }
          throw corruptLine(lineNo, err);
        }
      }
      if (!valid) invalidUtf8.push(lineNo);
      lines++;
      onLine(value, lineNo, text);
      return undefined;
    };

    /**
     * The complete lines in buf[start, end) (`end` just past a newline), decoded a batch at a time. Same results as
     * `handle` per line; no line here can exceed maxLineBytes (a chunk holds at most maxLineBytes + 1 bytes).
     */
    const handleLines = (buf: Buffer, start: number, end: number): void => {
      let s = start;
      if (prepare !== undefined) {
        // One line at a time: `prepare` decides what of each line is decoded. UTF-8 is checked for all the lines at
        // once (each line is checked alone only when they are not all valid).
        const allValid = isUtf8(buf.subarray(start, end));
        while (s < end) {
          const nl = buf.indexOf(NEWLINE, s);
          handle(buf, s, nl, true, allValid);
          s = nl + 1;
        }
        return;
      }
      while (s < end) {
        let e = end;
        if (end - s > BATCH_BYTES) {
          e = buf.lastIndexOf(NEWLINE, s + BATCH_BYTES - 1) + 1;
          if (e <= s) {
            // One line longer than a batch: decoded on its own, as a line spanning chunks is.
            const nl = buf.indexOf(NEWLINE, s);
            handle(buf, s, nl, true);
            s = nl + 1;
            continue;
          }
        }
        if (!isUtf8(buf.subarray(s, e))) {
          // Rare: find the lines with bad bytes (a line that is not JSON either fails below, before it is reported).
          let from = s;
          let line = lineNo;
          while (from < e) {
            const nl = buf.indexOf(NEWLINE, from);
            line++;
            if (!isUtf8(buf.subarray(from, nl))) invalidUtf8.push(line);
            from = nl + 1;
          }
        }
        const text = buf.toString('utf8', s, e);
        let p = 0;
        for (;;) {
          const nl = text.indexOf('\n', p);
          if (nl === -1) break;
          lineNo++;
          const stop = nl > p && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
          if (stop === p) addEmptyLine(emptyLines, lineNo);
          else {
            const line = text.slice(lineNo === 1 && text.charCodeAt(p) === BOM ? p + 1 : p, stop);
            let value: unknown;
            try {
              value = JSON.parse(line);
            } catch (err) {
              throw corruptLine(lineNo, err);
            }
            lines++;
            onLine(value, lineNo, line);
          }
          p = nl + 1;
        }
        lineOffset += e - s;
        s = e;
      }
    };

    let which = 0;
    let next = startRead(0, 0, false);
    for (;;) {
      const { bytesRead, buffer } = await next();
      if (bytesRead === 0) break;
      filePos += bytesRead;
      which ^= 1;
      next = startRead(which, filePos, buffer[bytesRead - 1] !== NEWLINE);
      const view = buffer.subarray(0, bytesRead);
      let start = 0;
      if (carryLen > 0) {
        const nl = view.indexOf(NEWLINE);
        if (nl === -1) {
          appendCarry(view, 0, bytesRead);
          continue;
        }
        appendCarry(view, 0, nl);
        handle(carry, 0, carryLen, true);
        carryLen = 0;
        start = nl + 1;
      }
      const last = view.lastIndexOf(NEWLINE);
      if (last >= start) {
        handleLines(view, start, last + 1);
        start = last + 1;
      }
      if (start < bytesRead) appendCarry(view, start, bytesRead);
    }

    let torn: TornLine | undefined;
    let unterminated = false;
    if (carryLen > 0) {
      torn = handle(carry, 0, carryLen, false);
      unterminated = torn === undefined;
    }
    const st = await fh.stat();
    const result: JsonlReadResult = {
      lines,
      fileBytes: filePos,
      identity: fileIdentity(st),
      unterminated,
      emptyLines,
      lineCount: lineNo,
      invalidUtf8,
    };
    if (torn) result.torn = torn;
    return result;
  } finally {
    // A read may still be in flight when a line handler threw: let it finish before closing.
    await pending?.catch(() => undefined);
    await ahead?.close();
    await fh.close();
  }
}
