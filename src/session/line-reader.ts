/**
 * Opening a session file and the one line splitter of session files, shared by the parser that reads every line
 * (jsonl-reader.ts) and the index that looks at each line's first bytes (session-index.ts). The file is read in
 * chunks (the next one while the current one is handled) and split on the newline BYTE. The complete lines of a chunk
 * are handed over in place, as one block; a line that spans chunks is assembled in a buffer grown up to
 * `maxLineBytes`. A UTF-8 byte order mark at the file's start is skipped (the first line then starts at offset 3). A
 * longer line is an error, never a silent truncation. The file is never one string, and memory stays at two chunks
 * plus the longest line.
 */

import { isUtf8 } from 'node:buffer';
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { PantoError } from '../errors.js';
import { notRegular } from '../regular-file.js';

/** Flags every read of a session file opens it with (`O_NONBLOCK` where the platform has it: a FIFO never blocks). */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * `path` opened for reading, after checking with `fstat` on that descriptor (no window between check and open) that
 * it is a regular file. @throws PantoError `ERR_INVALID_ARGUMENT` when it is not (a directory, a FIFO, a device),
 * before anything is read; file-system errors (e.g. `ENOENT`) propagate.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const fh = await open(path, READ_FLAGS);
  try {
    const kind = notRegular(await fh.stat());
    if (kind === null) return fh;
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `${path}: is ${kind}, not a regular file; a session file must be a regular file`,
    );
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** Bytes read per call unless `chunkBytes` says otherwise. */
export const DEFAULT_CHUNK = 4 * 1024 * 1024;
/** Longest line accepted unless `maxLineBytes` says otherwise. */
export const DEFAULT_MAX_LINE = 256 * 1024 * 1024;
export const NEWLINE = 0x0a;
export const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

/**
 * Bytes decoded per `toString` when lines are decoded (`decodeLines`). The decoded string (at most 2 bytes per byte)
 * stays below V8's large-object size (128 KiB), so it is allocated and dropped in the young generation.
 */
export const BATCH_BYTES = 48 * 1024;

/** Complete lines `buf[start, end)`: each ends with a newline (`end` is just past the last one); `offset` is the file offset of `buf[start]`. */
export interface LineBlock {
  buf: Buffer;
  start: number;
  end: number;
  offset: number;
}

/** The file's last line when no newline ends it: its bytes without a trailing CR, its offset and its whole length. */
export interface LastLine {
  bytes: Buffer;
  offset: number;
  length: number;
}

export interface LineReadSettings {
  chunkBytes: number;
  maxLineBytes: number;
  /** Read no further than this offset (the size a reader stat-ed first); default: to the end of the file. */
  limit?: number;
  /** The error for a line longer than `maxLineBytes` (the next line after those handed over so far). */
  tooLong: () => Error;
}

export interface LinesRead {
  /** Bytes read: the offset just past the last one. */
  fileBytes: number;
  last?: LastLine;
}

/**
 * Split the file `fh` into lines (see the module comment). `onBlock` gets the complete lines of each chunk, and each
 * line assembled across chunks as a block of its own, in file order; a promise it returns is awaited before the next
 * block; the buffers are reused after that. A throw stops the read and
 * propagates once no read is in flight.
 */
export async function readLines(
  fh: FileHandle,
  settings: LineReadSettings,
  onBlock: (block: LineBlock) => unknown,
): Promise<LinesRead> {
  const { maxLineBytes, tooLong } = settings;
  const limit = settings.limit ?? Number.POSITIVE_INFINITY;
  const size = Math.min(settings.chunkBytes, maxLineBytes + 1);
  const reads = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
  const read = (slot: number, position: number): Promise<{ bytesRead: number }> => {
    const want = Math.min(size, limit - position);
    return want > 0 ? fh.read(reads[slot] as Buffer, 0, want, position) : Promise.resolve({ bytesRead: 0 });
  };
  // A byte order mark at the start is skipped (its three bytes are read on their own: chunks may be smaller).
  const bom = Buffer.alloc(3);
  const { bytesRead: bomRead } = await fh.read(bom, 0, Math.min(3, Math.max(0, limit)), 0);
  let pos = bomRead === 3 && BOM.every((b, k) => bom[k] === b) ? 3 : 0;
  // The line that spans chunks (while `carryLen` > 0): its bytes so far and where it starts.
  let carry = Buffer.allocUnsafe(0);
  let carryLen = 0;
  let lineOffset = 0;
  const append = (src: Buffer, from: number, to: number): void => {
    if (carryLen + to - from > maxLineBytes) throw tooLong();
    if (carryLen + to - from + 1 > carry.length) {
      const grown = Buffer.allocUnsafe(
        Math.min(Math.max(carryLen + to - from + 1, carry.length * 2), maxLineBytes + 1),
      );
      carry.copy(grown, 0, 0, carryLen);
      carry = grown;
    }
    carryLen += src.copy(carry, carryLen, from, to);
  };

  let which = 0;
  let next = read(0, pos);
  try {
    for (;;) {
      const { bytesRead } = await next;
      if (bytesRead === 0) break;
      const chunkOffset = pos;
      pos += bytesRead;
      const view = (reads[which] as Buffer).subarray(0, bytesRead);
      which ^= 1;
      next = read(which, pos);
      let s = 0;
      if (carryLen > 0) {
        const nl = view.indexOf(NEWLINE);
        if (nl === -1) {
          append(view, 0, bytesRead);
          continue;
        }
        append(view, 0, nl);
        carry[carryLen] = NEWLINE;
        await onBlock({ buf: carry, start: 0, end: carryLen + 1, offset: lineOffset });
        carryLen = 0;
        s = nl + 1;
      }
      const last = view.lastIndexOf(NEWLINE);
      if (last >= s) {
        await onBlock({ buf: view, start: s, end: last + 1, offset: chunkOffset + s });
        s = last + 1;
      }
      if (s < bytesRead) {
        lineOffset = chunkOffset + s;
        append(view, s, bytesRead);
      }
    }
  } finally {
    // A read may still be in flight when a callback threw: let it finish before the caller closes the file.
    await next.catch(() => undefined);
  }
  const result: LinesRead = { fileBytes: pos };
  if (carryLen > 0) {
    const cr = carry[carryLen - 1] === CR;
    result.last = {
      bytes: carry.subarray(0, cr ? carryLen - 1 : carryLen),
      offset: lineOffset,
      length: carryLen,
    };
  }
  return result;
}

/**
 * Each line of `buf[start, end)` in order, as text without its newline or trailing CR (each line ends with a newline
 * except perhaps the last), with whether its bytes are valid UTF-8 (bad sequences decode to U+FFFD). Decoded a batch
 * of at most `BATCH_BYTES` at a time (one `toString`, cut at a newline; a longer line alone): UTF-8 resynchronises at
 * the newline, so the text equals decoding line by line.
 */
export function decodeLines(
  buf: Buffer,
  start: number,
  end: number,
  onLine: (text: string, invalidUtf8: boolean) => void,
): void {
  for (let s = start; s < end; ) {
    let e = end;
    if (end - s > BATCH_BYTES) {
      e = buf.lastIndexOf(NEWLINE, s + BATCH_BYTES - 1) + 1;
      if (e <= s) {
        const nl = buf.indexOf(NEWLINE, s);
        e = nl === -1 || nl >= end ? end : nl + 1;
      }
    }
    const text = buf.toString('utf8', s, e);
    // Rare: bytes that are not UTF-8 in the batch (they decode to U+FFFD, so a text without one is valid); each line is
    // then checked on its own (`from` is its first byte).
    let from = text.includes('\uFFFD') && !isUtf8(buf.subarray(s, e)) ? s : -1;
    for (let p = 0; p < text.length; ) {
      let nl = text.indexOf('\n', p);
      if (nl === -1) nl = text.length;
      let invalid = false;
      if (from !== -1) {
        const to = buf.indexOf(NEWLINE, from);
        const stop = to === -1 || to > e ? e : to;
        invalid = !isUtf8(buf.subarray(from, stop));
        from = stop + 1;
      }
      onLine(text.slice(p, nl > p && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl), invalid);
      p = nl + 1;
    }
    s = e;
  }
}
