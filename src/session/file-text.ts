/**
 * Text parts whose text stays in the session file: what lets a large session load in a fraction of the memory its
 * text would take as JS strings (V8 stores non-Latin-1 text at two bytes per character: a 200 MB session of such
 * prose would need about 1.3x the file for its text alone).
 *
 * A file-backed part is a `{ type: 'text', text }` object like any other: `text` is an own, enumerable accessor, so
 * `part.text`, `JSON.stringify`, object spread, `structuredClone`, `postMessage` and deep-equality checks all see the
 * string. Reading it decodes the part's JSON string literal from the file, synchronously, every time (nothing is
 * cached: the point is not to hold it). Assigning `text` replaces the accessor with a plain string property.
 *
 * Contract of a read (`SessionText.read`):
 * - The file must still hold the bytes the load read: the same file (device and inode), at least as long as the
 *   bytes loaded, not rewritten in place (same size, another mtime) — the rules of `openSessionIndex`'s later reads.
 *   A file that only grew (an agent appending to it) is fine. Otherwise, and when the file is gone or the bytes found
 *   are not the literal loaded (another CRC-32, not a JSON string, another length), the read throws
 *   `ERR_SESSION_CHANGED` (a `PantoError`) rather than return other text. The rule is file-identity.ts's.
 * - One descriptor serves every read in the same event-loop turn (serializing a conversation reads many parts): it
 *   is opened and checked on the first read and closed on the next turn (`setImmediate`, unref'd). Within that turn
 *   the file's identity is not checked again: a file replaced or removed after the first read is still read through
 *   the old descriptor (the loaded text); a file shortened is `ERR_SESSION_CHANGED`. What every read checks is the
 *   content: the CRC-32 of the literal's bytes, taken at the load, so a file rewritten in place within the turn (or,
 *   in any turn, rewritten and grown, or rewritten within the file system's timestamp tick, which `fstat` cannot
 *   tell from an append) is `ERR_SESSION_CHANGED` too, short of a CRC-32 collision.
 * - Assigning `text` behaves as on a plain part, also once the part is sealed (the accessor then returns the value
 *   assigned) or frozen (a `TypeError`, as strict-mode code gets from a frozen plain object).
 * - `SessionLog`, the file's one writer, tells the source about its own appends and repairs (`adoptTextIdentity`),
 *   so they are not taken for a change.
 */

import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { crc32 } from 'node:zlib';
import { TEXT_LOCATION, type TextPart } from '../conversation.js';
import { PantoError } from '../errors.js';
import { type FileIdentity, fileIdentity, prefixChange } from './file-identity.js';
import type { LineBytes } from './jsonl-reader.js';
import { READ_FLAGS } from './regular-file.js';
import type { MessageTextLiterals } from './text-literals.js';

/** Where `loadSession` leaves long texts: `textInFile` (see `LoadSessionOptions`). */
export interface TextInFileOptions {
  /** Files smaller than this keep every text in memory (default 64 MiB). */
  minFileBytes?: number;
  /** Texts stored in fewer bytes than this (their JSON string in the file, quotes excluded) stay in memory (default 128). */
  minTextBytes?: number;
}

export const DEFAULT_TEXT_IN_FILE_MIN_FILE_BYTES = 64 * 1024 * 1024;
/**
 * A file-backed part costs about 100 bytes of heap; a text of 128 bytes costs 150–280 as a JS string (one or two
 * bytes per character, plus its header). Shorter texts are not worth a file read on every access.
 */
export const DEFAULT_TEXT_IN_FILE_MIN_TEXT_BYTES = 128;

/** `textInFile` with its defaults applied, or null when texts stay in memory. Throws `ERR_INVALID_ARGUMENT`. */
export function textInFileSettings(
  option: false | TextInFileOptions | undefined,
): Required<TextInFileOptions> | null {
  if (option === false) return null;
  if (option !== undefined && (typeof option !== 'object' || option === null)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `textInFile: expected false or an object, got ${option === null ? 'null' : typeof option}`,
    );
  }
  const count = (name: keyof TextInFileOptions, fallback: number): number => {
    const v = option?.[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !(v >= 0) || (!Number.isInteger(v) && v !== Number.POSITIVE_INFINITY)) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `textInFile.${name}: expected a non-negative integer or Infinity, got ${typeof v === 'number' ? v : typeof v}`,
      );
    }
    return v;
  };
  return {
    minFileBytes: count('minFileBytes', DEFAULT_TEXT_IN_FILE_MIN_FILE_BYTES),
    minTextBytes: count('minTextBytes', DEFAULT_TEXT_IN_FILE_MIN_TEXT_BYTES),
  };
}

const QUOTE = 0x22;

/** One loaded session file that file-backed parts read from (shared by all of them). */
export class SessionText {
  readonly path: string;
  #identity: FileIdentity;
  /** Bytes of the file the load read: every part's literal ends at or before this offset. */
  #covered: number;
  #fd = -1;

  constructor(path: string, identity: FileIdentity, covered: number) {
    this.path = path;
    this.#identity = identity;
    this.#covered = covered;
  }

  /** When the load finished: the file as it was read, and how many of its bytes were loaded. */
  settle(identity: FileIdentity, covered: number): void {
    this.adopt(identity);
    this.#covered = covered;
  }

  /** After the file's own writer appended or repaired past the loaded bytes: the file as it is now is expected. */
  adopt(stat: FileIdentity): void {
    this.#identity = fileIdentity(stat);
  }

  #changed(why: string, cause?: unknown): PantoError {
    return new PantoError(
      'ERR_SESSION_CHANGED',
      `${this.path}: cannot read a message text left in the session file: ${why}; load the session again`,
      cause === undefined ? undefined : { cause },
    );
  }

  #open(): number {
    if (this.#fd !== -1) return this.#fd;
    let fd: number;
    try {
      fd = openSync(this.path, READ_FLAGS);
    } catch (err) {
      throw this.#changed(
        `the file cannot be opened (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        err,
      );
    }
    let st: Stats;
    try {
      st = fstatSync(fd);
    } catch (err) {
      closeSync(fd);
      throw this.#changed('the file cannot be examined', err);
    }
    const problem = st.isFile()
      ? prefixChange(st, this.#identity, this.#covered)
      : 'it is no longer a regular file';
    if (problem !== null) {
      closeSync(fd);
      throw this.#changed(problem);
    }
    this.#fd = fd;
    setImmediate(() => {
      this.#fd = -1;
      try {
        closeSync(fd);
      } catch {
        // already closed by the process's teardown
      }
    }).unref();
    return fd;
  }

  /**
   * The string the JSON literal at bytes [start, end) of the file decodes to; `crc` is the CRC-32 of those bytes at
   * the load (as a signed 32-bit integer) and `length` the decoded length. The CRC catches what stat cannot: a file
   * rewritten through its path that also grew (an append is the same to `fstat`).
   */
  read(start: number, end: number, crc: number, length: number): string {
    const fd = this.#open();
    const n = end - start;
    const buf = Buffer.allocUnsafe(n);
    let got = 0;
    try {
      while (got < n) {
        const r = readSync(fd, buf, got, n - got, start + got);
        if (r === 0) break;
        got += r;
      }
    } catch (err) {
      throw this.#changed(`reading bytes ${start}-${end} failed`, err);
    }
    if (got !== n || buf[0] !== QUOTE || buf[n - 1] !== QUOTE || (crc32(buf) | 0) !== crc) {
      throw this.#changed(`bytes ${start}-${end} no longer hold the text loaded from them`);
    }
    let text: unknown;
    try {
      text = JSON.parse(buf.toString('utf8'));
    } catch {
      text = undefined;
    }
    if (typeof text !== 'string' || text.length !== length) {
      throw this.#changed(`bytes ${start}-${end} no longer hold the text loaded from them`);
    }
    return text;
  }
}

/** @internal For `SessionLog`: after its own write, the file as it is now is what later reads expect. */
export function adoptTextIdentity(source: SessionText, stat: FileIdentity): void {
  source.adopt(stat);
}

interface TextLocation {
  readonly source: SessionText;
  readonly start: number;
  readonly end: number;
  readonly crc: number;
  readonly length: number;
}

/**
 * What `LOCATION` holds after `text` was assigned on a part that cannot take a data property any more (sealed: its
 * `text` is no longer configurable): the assigned value, returned by the accessor from then on.
 */
interface AssignedText {
  readonly assigned: unknown;
}

/**
 * Assigning `text` to a file-backed part, as for a plain `{ type, text }` object: the accessor becomes a plain data
 * property holding `value`. A sealed part keeps its accessor, which returns `value` from then on (a sealed plain
 * object's `text` stays writable); a frozen part refuses with the `TypeError` strict-mode code gets from a frozen
 * plain object (this library's modules and a host's ES modules are strict; sloppy-mode code would see the error where
 * a plain object ignores the assignment silently).
 */
function setText(this: { [TEXT_LOCATION]: TextLocation | AssignedText | undefined }, value: unknown): void {
  if (Object.getOwnPropertyDescriptor(this, 'text')?.configurable === false) {
    if (Object.isFrozen(this)) {
      throw new TypeError("Cannot assign to read only property 'text' of object '#<Object>'");
    }
    this[TEXT_LOCATION] = { assigned: value };
    return;
  }
  Object.defineProperty(this, 'text', { value, writable: true, enumerable: true, configurable: true });
  this[TEXT_LOCATION] = undefined;
}

/** The shared descriptor of a file-backed part's `text` (one descriptor: every such part shares one V8 map). */
const TEXT_DESCRIPTOR: PropertyDescriptor = {
  get(this: { [TEXT_LOCATION]: TextLocation | AssignedText }): unknown {
    const at = this[TEXT_LOCATION];
    if ('assigned' in at) return at.assigned;
    return at.source.read(at.start, at.end, at.crc, at.length);
  },
  set: setText,
  enumerable: true,
  configurable: true,
};

/** The location of a file-backed part whose text was not reassigned, else undefined. */
function locationOf(part: unknown): TextLocation | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const at = (part as { [TEXT_LOCATION]?: TextLocation | AssignedText })[TEXT_LOCATION];
  return at === undefined || 'assigned' in at ? undefined : at;
}

/**
 * A plain `{ type: 'text', text }` object whose `text` reads the JSON string literal at bytes [start, end) of
 * `source`'s file, quotes included, whose CRC-32 is `crc` (signed) and which decodes to a string of `length` UTF-16
 * code units (see the module comment).
 */
export function fileTextPart(
  source: SessionText,
  start: number,
  end: number,
  crc: number,
  length: number,
  textFirst = false,
): TextPart {
  let part: TextPart;
  if (textFirst) {
    // The key order of the line it came from (`{"text":…,"type":"text"}`), so JSON of the part reads the same.
    part = {} as TextPart;
    Object.defineProperty(part, 'text', TEXT_DESCRIPTOR);
    part.type = 'text';
  } else {
    part = { type: 'text' } as TextPart;
    Object.defineProperty(part, 'text', TEXT_DESCRIPTOR);
  }
  const at: TextLocation = { source, start, end, crc, length };
  Object.defineProperty(part, TEXT_LOCATION, { value: at, writable: true });
  return part;
}

/** True when `part` is a file-backed text part whose text was not reassigned. */
export function isFileTextPart(part: unknown): boolean {
  return locationOf(part) !== undefined;
}

/** `x[key]` when `x` is an object, else undefined. */
function field(x: unknown, key: string): unknown {
  return typeof x === 'object' && x !== null ? (x as Record<string, unknown>)[key] : undefined;
}

/**
 * Put the texts `literals` recorded back into `entry`, the value parsed from the line `at` describes with those
 * literals emptied (text-literals.ts). Where a record points (`message.content[i]`, `message.results[j].parts[k]`,
 * followed structurally, whatever the entry is), an object whose `text` is the emptied `''` either becomes a
 * file-backed part reading from `source` — when `entry` is a message entry, the place is its role's text place and
 * the part is exactly `{ type: 'text', text }` — or gets its text decoded now (a thinking block, a part with more
 * keys, any other entry). A record whose place holds anything else was a value `JSON.parse` dropped (a repeated key)
 * and is ignored. Returns the file offset just past the last literal left in the file, or 0.
 */
export function attachFileTexts(
  entry: unknown,
  literals: MessageTextLiterals,
  at: LineBytes,
  source: SessionText,
): number {
  let last = 0;
  const message = field(entry, 'message');
  const role = field(message, 'role');
  const isMessage = field(entry, 'type') === 'message';
  for (let r = 0; r < literals.count; r++) {
    const j = literals.result[r] as number;
    const k = literals.part[r] as number;
    const parts =
      j === -1 ? field(message, 'content') : field(field(field(message, 'results'), String(j)), 'parts');
    if (!Array.isArray(parts)) continue;
    const part = parts[k] as { type?: unknown; text?: unknown } | undefined;
    if (typeof part !== 'object' || part === null || part.text !== '') continue;
    const s = literals.starts[r] as number;
    const e = literals.ends[r] as number;
    const place = j === -1 ? role === 'user' || role === 'assistant' : role === 'tool';
    // Its own keys, counted without an array: exactly `type` and `text` (in either order) to be left in the file.
    let keys = 0;
    let textFirst = false;
    for (const key in part) {
      if (keys === 0) textFirst = key === 'text';
      keys++;
    }
    if (isMessage && place && part.type === 'text' && keys === 2) {
      const end = at.fileOffset + (e - at.start);
      const length = literals.lengths[r] as number;
      const crc = literals.crcs[r] as number;
      parts[k] = fileTextPart(source, at.fileOffset + (s - at.start), end, crc, length, textFirst);
      if (end > last) last = end;
    } else {
      part.text = JSON.parse(at.buf.toString('utf8', s, e)) as string;
    }
  }
  return last;
}
