/**
 * The one line splitter of session files, shared by the parser that reads every line (jsonl-reader.ts) and the index
 * that looks at each line's first bytes (session-index.ts). The file is read in chunks (the next one while the
 * current one is handled) and split on the newline BYTE. The complete lines of a chunk are handed over in place, as
 * one block; a line that spans chunks is assembled in a buffer grown up to `maxLineBytes` (or, with `headBytes`, only
 * its first bytes are kept and its length counted). A UTF-8 byte order mark at the file's start is skipped (the first
 * line then starts at offset 3). A longer line is an error, never a silent truncation. The file is never one string,
 * and memory stays at two chunks plus the longest line (or its head).
 */

import type { FileHandle } from 'node:fs/promises';

/** Bytes read per call unless `chunkBytes` says otherwise. */
export const DEFAULT_CHUNK = 4 * 1024 * 1024;
/** Longest line accepted unless `maxLineBytes` says otherwise. */
export const DEFAULT_MAX_LINE = 256 * 1024 * 1024;
export const NEWLINE = 0x0a;
export const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

/** Complete lines `buf[start, end)`: each ends with a newline (`end` is just past the last one); `offset` is the file offset of `buf[start]`. */
export interface LineBlock {
  buf: Buffer;
  start: number;
  end: number;
  offset: number;
}

/**
 * A line that spanned chunks, read with `headBytes`: its first bytes (at most `headBytes`), its file offset and its
 * length in bytes without the newline (a trailing CR included; `cr` tells whether it ends with one).
 */
export interface LineHead {
  head: Buffer;
  offset: number;
  length: number;
  cr: boolean;
}

/** The file's last line when no newline ends it: its bytes (its head with `headBytes`), offset and length. */
export type LastLine = LineHead;

export interface LineReadSettings {
  chunkBytes: number;
  maxLineBytes: number;
  /** Read no further than this offset (the size a reader stat-ed first); default: to the end of the file. */
  limit?: number;
  /** Keep only this many first bytes of a line that spans chunks, and hand it to `onHead` (default: whole lines). */
  headBytes?: number;
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
 * line assembled across chunks as a block of its own (with `headBytes`, `onHead` gets such a line instead), in file
 * order; the buffers are reused after the callback returns (or its promise settles). A throw stops the read and
 * propagates once no read is in flight.
 */
export async function readLines(
  fh: FileHandle,
  settings: LineReadSettings,
  onBlock: (block: LineBlock) => void | Promise<void>,
  onHead?: (line: LineHead) => void | Promise<void>,
): Promise<LinesRead> {
  const { maxLineBytes, headBytes, tooLong } = settings;
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
  // The line that spans chunks: its bytes (or head) so far, its length and where it starts; `carrying` while one is open.
  let carry = Buffer.allocUnsafe(headBytes ?? 0);
  let carryLen = 0;
  let lineLength = 0;
  let lineOffset = 0;
  let carrying = false;
  let lastByte = 0;
  const append = (src: Buffer, from: number, to: number): void => {
    lineLength += to - from;
    if (lineLength > maxLineBytes) throw tooLong();
    const room = headBytes === undefined ? to - from : Math.min(to - from, headBytes - carryLen);
    if (room <= 0) return;
    if (carryLen + room + 1 > carry.length) {
      const grown = Buffer.allocUnsafe(
        Math.min(Math.max(carryLen + room + 1, carry.length * 2), maxLineBytes + 1),
      );
      carry.copy(grown, 0, 0, carryLen);
      carry = grown;
    }
    carryLen += src.copy(carry, carryLen, from, from + room);
  };
  const finish = async (): Promise<void> => {
    carrying = false;
    const head = {
      head: carry.subarray(0, carryLen),
      offset: lineOffset,
      length: lineLength,
      cr: lastByte === CR,
    };
    carryLen = 0;
    if (headBytes !== undefined && onHead !== undefined) return onHead(head);
    carry[head.head.length] = NEWLINE;
    return onBlock({ buf: carry, start: 0, end: head.head.length + 1, offset: lineOffset });
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
      if (carrying) {
        const nl = view.indexOf(NEWLINE);
        if (nl === -1) {
          append(view, 0, bytesRead);
          lastByte = view[bytesRead - 1] as number;
          continue;
        }
        append(view, 0, nl);
        if (nl > 0) lastByte = view[nl - 1] as number;
        await finish();
        s = nl + 1;
      }
      const last = view.lastIndexOf(NEWLINE);
      if (last >= s) {
        await onBlock({ buf: view, start: s, end: last + 1, offset: chunkOffset + s });
        s = last + 1;
      }
      if (s < bytesRead) {
        carrying = true;
        lineLength = 0;
        lineOffset = chunkOffset + s;
        append(view, s, bytesRead);
        lastByte = view[bytesRead - 1] as number;
      }
    }
  } finally {
    // A read may still be in flight when a callback threw: let it finish before the caller closes the file.
    await next.catch(() => undefined);
  }
  const result: LinesRead = { fileBytes: pos };
  if (carrying)
    result.last = {
      head: carry.subarray(0, carryLen),
      offset: lineOffset,
      length: lineLength,
      cr: lastByte === CR,
    };
  return result;
}
