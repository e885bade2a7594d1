/**
 * Where the long texts of a message entry's line are, in bytes, found before the line is parsed: what lets
 * `loadSession` leave them in the file (file-text.ts) without ever decoding them. `MessageTextLiterals.scan` walks the
 * line's JSON structure byte by byte, jumping over strings with `indexOf` (memchr), and records the string value of
 * every `text` key at the two places a message keeps text parts:
 * - `message.content[i].text` (a user or assistant message; `j` is -1),
 * - `message.results[j].parts[k].text` (a tool results message; `i` is `k`).
 * Each recorded literal is then checked as a JSON string (no raw control character, valid escapes; the line is
 * known to be valid UTF-8) and measured in UTF-16 code units without decoding it. `reduced` gives the line with those
 * literals emptied (`""`): the text `JSON.parse` reads instead of the line. A literal that fails the check is not
 * recorded, so `JSON.parse` meets it in the line and reports it as usual.
 *
 * Repeated keys: for every place, the scan keeps the LAST value of a `text` key there (any spelling of the key,
 * escapes included; a later value that is short or not a string removes the record), which is the value `JSON.parse`
 * keeps. A record left from an earlier, overridden container (a repeated `message`, `content`, ... key) is emptied in
 * the reduced line too: harmless, as `JSON.parse` drops that value, and `attach` only uses a record where the parsed
 * part's text is the empty string the reduced line put there.
 */

import { isUtf8 } from 'node:buffer';
import { crc32 } from 'node:zlib';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OBJECT = 0;
const ARRAY = 1;
/**
 * The deepest level the scan keeps state for: `message.results[j].parts[k]` is depth 5. Deeper levels are only
 * counted, so a deeply nested line costs no memory per level, as it costs JSON.parse none.
 */
const DEEPEST = 5;
/** No depth (the scan stops before `d` goes below -1, the depth outside the line's value). */
const NONE = -2;

const OTHER = 0;
const MESSAGE = 1;
const CONTENT = 2;
const RESULTS = 3;
const PARTS = 4;
const TEXT = 5;
const KEYS: ReadonlyArray<readonly [number, Buffer]> = [
  [MESSAGE, Buffer.from('"message"')],
  [CONTENT, Buffer.from('"content"')],
  [RESULTS, Buffer.from('"results"')],
  [PARTS, Buffer.from('"parts"')],
  [TEXT, Buffer.from('"text"')],
];
const NAMES = ['', 'message', 'content', 'results', 'parts', 'text'];
/** The longest escaped spelling of a recognised key: 7 characters of 6 bytes each, and the quotes. */
const LONGEST_KEY = 7 * 6 + 2;

/** Index just past the closing quote of the JSON string whose opening quote is at `i` (at most `end`). */
function stringEnd(buf: Buffer, i: number, end: number): number {
  let j = i + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, j);
    if (q === -1 || q >= end) return end;
    let k = q - 1;
    while (buf[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Which recognised key the literal at [s, e) is (written plainly or with escapes), or OTHER. */
function keyId(buf: Buffer, s: number, e: number): number {
  const n = e - s;
  for (const [id, bytes] of KEYS) {
    if (n !== bytes.length || buf[s + 1] !== bytes[1]) continue;
    let k = 1;
    while (k < n - 1 && buf[s + k] === bytes[k]) k++;
    if (k === n - 1) return id;
  }
  if (n > LONGEST_KEY) return OTHER;
  for (let i = s + 1; i < e - 1; i++) {
    if (buf[i] === BACKSLASH) {
      let key: unknown;
      try {
        key = JSON.parse(buf.toString('utf8', s, e));
      } catch {
        return OTHER; // not a valid literal: JSON.parse reports the line
      }
      const id = NAMES.indexOf(key as string);
      return id > 0 ? id : OTHER;
    }
  }
  return OTHER;
}

const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

/** Per byte of valid UTF-8 inside a JSON string: the UTF-16 units it starts, or SPECIAL (a control byte, `\\`). */
const SPECIAL = 3;
const UNITS = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  // ASCII and the lead byte of a 2- or 3-byte sequence start one unit, a 4-byte sequence two; continuations none.
  UNITS[b] = b < 0x20 || b === BACKSLASH ? SPECIAL : b < 0x80 ? 1 : b < 0xc0 ? 0 : b < 0xf0 ? 1 : 2;
}

/** 32-bit views of the buffers' memory (for `literalLength`'s word-at-a-time pass), by ArrayBuffer. */
const WORDS = new WeakMap<ArrayBufferLike, Uint32Array>();

function wordsOf(buf: Buffer): Uint32Array {
  let words = WORDS.get(buf.buffer);
  if (words === undefined) {
    words = new Uint32Array(buf.buffer, 0, buf.buffer.byteLength >>> 2);
    WORDS.set(buf.buffer, words);
  }
  return words;
}

/** How many of the bits 7, 15, 23, 31 of `m` are set (`m` has no other bit). */
function count4(m: number): number {
  return Math.imul((m >>> 7) & 0x01010101, 0x01010101) >>> 24;
}

/**
 * The UTF-16 length of the JSON string literal at [s, e) of valid UTF-8 bytes, or -1 when it is not a valid JSON
 * string (a raw control character, a bad escape). Four aligned bytes at a time where none of them is a control byte
 * or a backslash (SWAR: such a word adds 4, less its continuation bytes, plus its 4-byte sequence leads, whatever the
 * byte order); byte by byte elsewhere.
 */
export function literalLength(buf: Buffer, s: number, e: number): number {
  let units = 0;
  const stop = e - 1;
  const words = wordsOf(buf);
  const base = buf.byteOffset;
  let i = s + 1;
  while (i < stop) {
    if (((base + i) & 3) === 0 && i + 4 <= stop) {
      const w = words[(base + i) >>> 2] as number;
      const x = w ^ 0x5c5c5c5c;
      // Any byte below 0x20, or equal to 0x5c (a zero byte of x): the classic has-less / has-zero word tests.
      if (((((w - 0x20202020) & ~w) | ((x - 0x01010101) & ~x)) & 0x80808080) === 0) {
        const continuation = w & ~(w << 1) & 0x80808080; // 10xxxxxx
        const lead4 = w & (w << 1) & (w << 2) & (w << 3) & 0x80808080; // 1111xxxx
        units += 4 - count4(continuation) + count4(lead4);
        i += 4;
        continue;
      }
    }
    const u = UNITS[buf[i] as number] as number;
    if (u !== SPECIAL) {
      units += u;
      i++;
      continue;
    }
    if (buf[i] !== BACKSLASH) return -1; // a raw control character
    const c = buf[i + 1] as number;
    if (c === 0x75) {
      if (i + 5 >= stop) return -1;
      if (
        !(
          HEX[buf[i + 2] as number] &&
          HEX[buf[i + 3] as number] &&
          HEX[buf[i + 4] as number] &&
          HEX[buf[i + 5] as number]
        )
      )
        return -1;
      i += 6;
    } else if (i + 1 < stop && SIMPLE_ESCAPE[c]) {
      i += 2;
    } else return -1;
    units++;
  }
  return units;
}

/**
 * One number per place `(j, k)` (`j` -1 for `message.content`) while both fit exactly, else a string: what
 * `#remove` looks a place up by (a line of many long texts would otherwise cost a scan of the records per text).
 */
function placeKey(j: number, k: number): number | string {
  return j < 0x1000000 && k < 0x10000000 ? (j + 1) * 0x10000000 + k : `${j},${k}`;
}

/** Records a line may hold before places are looked up in a map rather than by a scan of the records. */
const LINEAR_RECORDS = 16;

/** The long `text` literals of one message line (reused across lines: `scan` resets it). */
export class MessageTextLiterals {
  /** Number of records. */
  count = 0;
  /** Per record: the result index `j` (or -1 for `message.content`) and the part index. */
  readonly result: number[] = [];
  readonly part: number[] = [];
  /** Per record: the literal's bytes [start, end) in the scanned buffer, quotes included. */
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  /** Per record: the decoded text's length in UTF-16 code units. */
  readonly lengths: number[] = [];
  /** Per record: the CRC-32 of the literal's bytes (quotes included), as a signed 32-bit integer. */
  readonly crcs: number[] = [];
  readonly #kind: number[] = [];
  /** Per depth: an object's current key (a recognised id), or an array's current index. */
  readonly #at: number[] = [];

  /**
   * Record the `text` literals of at least `minBytes` bytes (quotes included) at a message's two text places, in
   * the JSON value at buf[start, end) (a line known to be valid JSON and valid UTF-8 when `reduced` is used).
   */
  scan(buf: Buffer, start: number, end: number, minBytes: number): void {
    this.count = 0;
    this.#byPlace = null;
    const kind = this.#kind;
    const at = this.#at;
    let d = -1;
    let expectKey = false;
    /** Depth whose current key is `text` at a text place, awaiting its value; NONE if none (-1 is a depth). */
    let pending = NONE;
    let i = start;
    while (i < end) {
      const c = buf[i] as number;
      if (c === QUOTE) {
        const e = stringEnd(buf, i, end);
        if (d > DEEPEST) {
          // Below the text places: nothing there is recorded (and no state is kept for those depths).
        } else if (expectKey) {
          const id = keyId(buf, i, e);
          at[d] = id;
          expectKey = false;
          if (id === TEXT && (d === 3 || d === 5) && this.#textPlace(d)) {
            this.#remove(d);
            pending = d;
          }
        } else if (pending === d) {
          pending = NONE;
          if (e - i >= minBytes) this.#add(d, i, e);
        }
        i = e;
        continue;
      }
      if (c === COMMA) {
        if (d < 0 || d > DEEPEST) {
          // outside the value (not valid JSON), or below the text places
        } else if (kind[d] === OBJECT) expectKey = true;
        else at[d] = (at[d] as number) + 1;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        pending = NONE;
        d++;
        if (d <= DEEPEST) {
          kind[d] = c === OPEN_OBJECT ? OBJECT : ARRAY;
          at[d] = c === OPEN_OBJECT ? OTHER : 0;
        }
        expectKey = c === OPEN_OBJECT;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        d--;
        expectKey = false;
        if (d < -1) {
          // More closed than opened: not valid JSON, which JSON.parse reports; nothing is recorded.
          this.count = 0;
          return;
        }
      } else if (c > 0x20 && c !== 0x3a) {
        pending = NONE; // a number, true, false or null: not a string value
      }
      i++;
    }
  }

  /** True when depth `d` (whose key is `text`) is `message.content[i]` (d 3) or `message.results[j].parts[k]` (d 5). */
  #textPlace(d: number): boolean {
    const kind = this.#kind;
    const at = this.#at;
    if (
      kind[0] !== OBJECT ||
      at[0] !== MESSAGE ||
      kind[1] !== OBJECT ||
      kind[2] !== ARRAY ||
      kind[d] !== OBJECT
    )
      return false;
    if (d === 3) return at[1] === CONTENT;
    return at[1] === RESULTS && kind[3] === OBJECT && at[3] === PARTS && kind[4] === ARRAY;
  }

  /**
   * Record index by place (`placeKey`), built once a line has more than `LINEAR_RECORDS` records (a line of many long
   * texts would otherwise cost a scan of the records per `text` key); null until then.
   */
  #byPlace: Map<number | string, number> | null = null;

  /** Index of the record at place (j, k), or -1. */
  #find(j: number, k: number): number {
    if (this.#byPlace !== null) return this.#byPlace.get(placeKey(j, k)) ?? -1;
    for (let r = 0; r < this.count; r++) if (this.result[r] === j && this.part[r] === k) return r;
    return -1;
  }

  #remove(d: number): void {
    if (this.count === 0) return;
    const j = d === 3 ? -1 : (this.#at[2] as number);
    const k = this.#at[d === 3 ? 2 : 4] as number;
    const r = this.#find(j, k);
    if (r === -1) return;
    this.#byPlace?.delete(placeKey(j, k));
    const last = this.count - 1;
    if (r !== last) {
      this.result[r] = this.result[last] as number;
      this.part[r] = this.part[last] as number;
      this.starts[r] = this.starts[last] as number;
      this.ends[r] = this.ends[last] as number;
      this.#byPlace?.set(placeKey(this.result[r] as number, this.part[r] as number), r);
    }
    this.count = last;
  }

  #add(d: number, s: number, e: number): void {
    const j = d === 3 ? -1 : (this.#at[2] as number);
    const k = this.#at[d === 3 ? 2 : 4] as number;
    const r = this.count++;
    this.result[r] = j;
    this.part[r] = k;
    this.starts[r] = s;
    this.ends[r] = e;
    if (this.#byPlace !== null) this.#byPlace.set(placeKey(j, k), r);
    else if (this.count > LINEAR_RECORDS) {
      this.#byPlace = new Map();
      for (let q = 0; q < this.count; q++) {
        this.#byPlace.set(placeKey(this.result[q] as number, this.part[q] as number), q);
      }
    }
  }

  /**
   * Drop the records whose literal is not a valid JSON string (JSON.parse will report it), measure the rest and take
   * their CRC-32; sort them by position. Needs the scanned bytes to be valid UTF-8.
   */
  check(buf: Buffer): void {
    let kept = 0;
    for (let r = 0; r < this.count; r++) {
      const s = this.starts[r] as number;
      const e = this.ends[r] as number;
      const units = literalLength(buf, s, e);
      if (units < 0) continue;
      this.result[kept] = this.result[r] as number;
      this.part[kept] = this.part[r] as number;
      this.starts[kept] = s;
      this.ends[kept] = e;
      this.lengths[kept] = units;
      this.crcs[kept] = crc32(buf.subarray(s, e)) | 0;
      kept++;
    }
    this.count = kept;
    // Insertion sort by start (a handful of records; usually already in order).
    for (let r = 1; r < kept; r++) {
      for (let q = r; q > 0 && (this.starts[q - 1] as number) > (this.starts[q] as number); q--) {
        for (const arr of [this.result, this.part, this.starts, this.ends, this.lengths, this.crcs]) {
          const t = arr[q] as number;
          arr[q] = arr[q - 1] as number;
          arr[q - 1] = t;
        }
      }
    }
  }

  /**
   * Take the `count` records at `records[first * RECORD_INTS …]`, as `LineScanner.scan` wrote them (a line already scanned
   * and checked, on another thread), in place of `scan` + `check`.
   */
  load(records: Int32Array, first: number, count: number): void {
    this.#byPlace = null;
    for (let r = 0; r < count; r++) {
      const at = (first + r) * RECORD_INTS;
      this.starts[r] = records[at] as number;
      this.ends[r] = records[at + 1] as number;
      this.result[r] = records[at + 2] as number;
      this.part[r] = records[at + 3] as number;
      this.lengths[r] = records[at + 4] as number;
      this.crcs[r] = records[at + 5] as number;
    }
    this.count = count;
  }

  /** Scratch bytes for `reduced` (grown as needed). */
  #scratch = Buffer.allocUnsafe(4096);

  /**
   * The line buf[start, end) decoded with every recorded literal emptied to `""` (call after `check`). The kept bytes
   * are copied together and decoded once: a flat string (`JSON.parse` reads a concatenation twice as slowly).
   */
  reduced(buf: Buffer, start: number, end: number): string {
    const size = this.reducedBytes(start, end);
    if (size > this.#scratch.length)
      this.#scratch = Buffer.allocUnsafe(Math.max(size, this.#scratch.length * 2));
    const n = this.reduceInto(buf, start, end, this.#scratch, 0);
    return this.#scratch.toString('utf8', 0, n);
  }

  /** How many bytes `reduceInto` writes for the line [start, end). */
  reducedBytes(start: number, end: number): number {
    let size = end - start;
    for (let r = 0; r < this.count; r++) size -= (this.ends[r] as number) - (this.starts[r] as number) - 2;
    return size;
  }

  /** Write the bytes of the line buf[start, end) with every recorded literal emptied at out[at…]; the end offset. */
  reduceInto(buf: Buffer, start: number, end: number, out: Buffer, at: number): number {
    let n = at;
    let from = start;
    for (let r = 0; r < this.count; r++) {
      n += buf.copy(out, n, from, (this.starts[r] as number) + 1);
      from = (this.ends[r] as number) - 1;
    }
    n += buf.copy(out, n, from, end);
    return n;
  }
}

/** Int32s per record in `ScannedLines.records`: start, end, result, part, length, crc. */
export const RECORD_INTS = 6;
/**
 * Int32s per line in `ScannedLines.lines`: the line's start, its first record, its record count, and where its reduced
 * bytes start and end in `ScannedLines.reduced`.
 */
export const LINE_INTS = 5;

/** What `LineScanner.scan` found: the lines with long texts, and their records (positions in the scanned buffer). */
export interface ScannedLines {
  /** Per line with at least one record, in file order: `LINE_INTS` int32s. */
  lines: Int32Array;
  /** Per record: `RECORD_INTS` int32s (`MessageTextLiterals` after `check`). */
  records: Int32Array;
  /** The bytes of those lines with their recorded literals emptied (`MessageTextLiterals.reduced`), one after another. */
  reduced: Uint8Array;
}

/**
 * Scans chunks of lines for their long texts (`scan`), reusing its scratch arrays from one chunk to the next: what the
 * read-ahead worker (text-scan-worker.ts) runs on each chunk.
 */
export class LineScanner {
  readonly #literals = new MessageTextLiterals();
  #lines: Int32Array = new Int32Array(64 * LINE_INTS);
  #records: Int32Array = new Int32Array(64 * RECORD_INTS);
  #reduced = Buffer.allocUnsafeSlow(64 * 1024);

  /**
   * Scan and check every line of buf[from, to) — `from` a line's first byte, each line ending with a newline at or
   * before `to` — as a loader does one line at a time before parsing it (line-texts.ts `reduce`): a trailing CR is not
   * part of the line, and an empty line or one that is not valid UTF-8 is not scanned. Positions are in `buf`. The
   * arrays returned are the caller's (copies of the scratch).
   */
  scan(buf: Buffer, from: number, to: number, minBytes: number): ScannedLines {
    const literals = this.#literals;
    let lines = this.#lines;
    let records = this.#records;
    let reduced = this.#reduced;
    let reducedEnd = 0;
    let lineCount = 0;
    let recordCount = 0;
    const allValid = isUtf8(buf.subarray(from, to));
    let s = from;
    while (s < to) {
      const nl = buf.indexOf(0x0a, s);
      if (nl === -1 || nl >= to) break;
      const stop = nl > s && buf[nl - 1] === 0x0d ? nl - 1 : nl;
      if (stop > s && (allValid || isUtf8(buf.subarray(s, nl)))) {
        literals.scan(buf, s, stop, minBytes);
        if (literals.count > 0) literals.check(buf);
        const n = literals.count;
        if (n > 0) {
          if ((lineCount + 1) * LINE_INTS > lines.length) lines = grown(lines, (lineCount + 1) * LINE_INTS);
          if ((recordCount + n) * RECORD_INTS > records.length) {
            records = grown(records, (recordCount + n) * RECORD_INTS);
          }
          const size = literals.reducedBytes(s, stop);
          if (reducedEnd + size > reduced.length) {
            const more = Buffer.allocUnsafeSlow(Math.max(reducedEnd + size, reduced.length * 2));
            reduced.copy(more, 0, 0, reducedEnd);
            reduced = more;
          }
          const l = lineCount * LINE_INTS;
          lines[l] = s;
          lines[l + 1] = recordCount;
          lines[l + 2] = n;
          lines[l + 3] = reducedEnd;
          reducedEnd = literals.reduceInto(buf, s, stop, reduced, reducedEnd);
          lines[l + 4] = reducedEnd;
          lineCount++;
          for (let r = 0; r < n; r++) {
            const at = recordCount * RECORD_INTS;
            records[at] = literals.starts[r] as number;
            records[at + 1] = literals.ends[r] as number;
            records[at + 2] = literals.result[r] as number;
            records[at + 3] = literals.part[r] as number;
            records[at + 4] = literals.lengths[r] as number;
            records[at + 5] = literals.crcs[r] as number;
            recordCount++;
          }
        }
      }
      s = nl + 1;
    }
    this.#lines = lines;
    this.#records = records;
    this.#reduced = reduced;
    return {
      lines: lines.slice(0, lineCount * LINE_INTS),
      records: records.slice(0, recordCount * RECORD_INTS),
      reduced: new Uint8Array(reduced.buffer, reduced.byteOffset, reducedEnd).slice(),
    };
  }
}

function grown(a: Int32Array, need: number): Int32Array {
  const b = new Int32Array(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}
