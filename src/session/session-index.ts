/**
 * A lazily parsed session file: `openSessionIndex` makes one pass over the file's bytes and keeps, per entry, only
 * its id, parent, type and where its line is (byte offset and length). Entries are parsed when asked for: `entry(id)`
 * one line, `conversation()` only the lines on the current branch after its latest compaction. Memory: the index
 * (a few dozen bytes per entry) plus what the caller asks for; the file's text is never all held.
 *
 * How the index is read without parsing: `SessionLog` writes every entry as `{"type":…,"id":…,"parentId":…,` (that
 * key order, ids in ASCII), so those fields are taken from the line's first bytes. A line in any other form (another
 * writer, non-ASCII or escaped ids) is parsed in full while indexing and checked as `loadSession` checks it. The
 * header, the model change the current model comes from, and an unterminated last line (torn or not, decided as
 * `loadSession` decides it) are parsed while opening too.
 *
 * What is checked when: opening checks the header, the tree (unique ids, parents earlier in the file) and line
 * lengths; a line the index did not parse is checked when it is read (valid JSON, a valid entry, and the same
 * type/id/parentId as its leading fields), so a damaged line in an old branch costs nothing until it is read.
 * `verify()` reads every line and checks all of it, as `loadSession` does. Bytes that are not valid UTF-8
 * (`SessionLog` never writes them) are read as U+FFFD, as `loadSession` reads them, and the line gets an
 * `invalid_utf8` warning in `warnings` when it is first parsed (at open for the lines opening parses).
 *
 * The indexed bytes must not change while the index is used, but the file may grow: an index is of the file as it
 * was when opening began (bytes appended while or after it is made — an agent still writing the session — are not
 * indexed, and a line a write in progress cut off there reads as a torn last line), and its reads return the entries
 * as of then. Every read checks the file still holds those bytes — the same inode, not shorter than them (a torn last
 * line, which no entry comes from, may be cut off), not rewritten in place (same size, another mtime), the last
 * indexed line still ending where it did — and re-checks each line's id, parent and type, so a file changed on disk
 * fails with `ERR_SESSION_CHANGED` instead of returning wrong data (a line that still begins as indexed but says
 * otherwise in a repeated key later is the line's own lie: `ERR_SESSION_FORMAT`). Reopen the index to see the new
 * state. `SessionLog`, the file's locked writer, tells its index about its own appends and repairs.
 *
 * Reads are synchronous underneath (`readAt`, `readAll`, `conversationView` return directly; `entry`, `entries`,
 * `conversation`, `verify` wrap them in a promise): `loadSession` and `SessionLog` parse lazily behind getters. A read
 * of page-cached lines blocks the event loop for about as long as parsing them does.
 */

import { isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Conversation } from '../conversation.js';
import { PantoError } from '../errors.js';
import { type FileIdentity, fileIdentity, prefixChange } from './file-identity.js';
import { SessionText, type TextInFileOptions, textInFileSettings } from './file-text.js';
import {
  BATCH_BYTES,
  type EmptyRun,
  emptyRunMessage,
  type TornLine,
  tornLineProblem,
} from './jsonl-reader.js';
import { LEADING_BYTES } from './leading-fields.js';
import { LineTexts } from './line-texts.js';
import { openRegularFile, READ_FLAGS } from './regular-file.js';
import { type ConversationView, type LazyEntries, resolveBranch } from './resolve-conversation.js';
import type { SessionEntry, SessionHeader } from './session-entry.js';
import { headerlessSession, invalidUtf8Warning, type SessionWarning } from './session-warning.js';
import { entryProblem, readableHeaderProblem } from './validate-entry.js';

export interface SessionIndexOptions {
  /** Bytes read per call (default 4 MiB). */
  chunkBytes?: number;
  /** Longest line accepted, in bytes (default 256 MiB). A longer line fails with `ERR_SESSION_CORRUPT`. */
  maxLineBytes?: number;
  /**
   * Leave the long texts of a large session in the file (`LoadSessionOptions.textInFile`: same type and defaults;
   * the file size compared with `minFileBytes` is the size at indexing). Every message line the index parses — the
   * conversation, `entry`, `entries`, `readAt`, `readAll`, lines parsed while opening — gets file-backed text parts
   * (file-text.ts) for its texts of at least `minTextBytes`; such a part's read checks the file as the index's reads
   * do (same inode and device, the indexed bytes not shortened nor rewritten in place) and throws
   * `ERR_SESSION_CHANGED` otherwise. `false`: every text in memory.
   */
  textInFile?: false | TextInFileOptions;
}

/** Entries a read returned, with their positions (indices into `ids`). */
export interface ParsedRun {
  positions: readonly number[];
  entries: readonly SessionEntry[];
}

/** Where an entry's line is in the file. */
export interface SessionLineRef {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Length in bytes, without the newline (and without a trailing CR). */
  bytes: number;
}

const DEFAULT_CHUNK = 4 * 1024 * 1024;
const DEFAULT_MAX_LINE = 256 * 1024 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;
/** Bytes of a line's start examined for the leading fields. */
const HEAD = LEADING_BYTES;
const TYPE_KEY = Buffer.from('{"type":"', 'latin1');
const ID_KEY = Buffer.from('","id":"', 'latin1');
const PARENT_KEY = Buffer.from('","parentId":', 'latin1');
const NULL = Buffer.from('null', 'latin1');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** The entry types by the length of their name (all four differ). */
const TYPE_BY_LENGTH = new Map<number, { name: SessionEntry['type']; bytes: Buffer }>(
  (['message', 'compaction', 'custom', 'model_change'] as const).map((t) => [
    t.length,
    { name: t, bytes: Buffer.from(t, 'latin1') },
  ]),
);
const latin1 = (b: Buffer, start: number, end: number): string =>
  (b as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end);

function hasAt(b: Buffer, at: number, end: number, what: Buffer): boolean {
  if (at + what.length > end) return false;
  for (let k = 0; k < what.length; k++) if (b[at + k] !== what[k]) return false;
  return true;
}

/** End of an id starting at `at`: the index of its closing quote, or -1 (not printable ASCII without `\`, or cut). */
function idEnd(b: Buffer, at: number, end: number): number {
  for (let k = at; k < end; k++) {
    const c = b[k] as number;
    if (c === 0x22) return k;
    if (c < 0x20 || c > 0x7e || c === 0x5c) return -1;
  }
  return -1;
}

type EntryType = SessionEntry['type'];

/**
 * @internal For `SessionLog`, the file's one writer: after its own append or repair it makes `stat` the state later
 * reads expect (the indexed lines are unchanged; the file only grew or lost a torn tail past them). Not exported
 * from the package.
 */
export let adoptFileIdentity: (index: SessionIndex, stat: FileIdentity) => void;

function corrupt(path: string, line: number, problem: string, cause?: unknown): PantoError {
  return new PantoError(
    'ERR_SESSION_CORRUPT',
    `${path}:${line}: ${problem}`,
    cause === undefined ? undefined : { cause },
  );
}

function formatError(path: string, line: number, problem: string): PantoError {
  return new PantoError('ERR_SESSION_FORMAT', `${path}:${line}: ${problem}`);
}

/**
 * Bytes [start, end) of `buf` as a JSON value. Bytes that are not valid UTF-8 decode to U+FFFD (as `loadSession`'s
 * reader decodes them) and `onInvalidUtf8` is told the line.
 */
function parseBytes(
  path: string,
  line: number,
  buf: Buffer,
  start: number,
  end: number,
  onInvalidUtf8: (line: number) => void,
  texts: LineTexts | null = null,
  fileOffset = 0,
): unknown {
  const bytes = buf.subarray(start, end);
  const valid = isUtf8(bytes);
  if (texts !== null) {
    texts.clear();
    // Long texts emptied (valid UTF-8 only: literals are measured on it); the line itself when that does not parse,
    // so its error is the one reported.
    const reduced = valid ? texts.reduce(buf, start, end, fileOffset) : undefined;
    if (reduced !== undefined) {
      try {
        return JSON.parse(reduced);
      } catch {
        texts.clear();
      }
    }
  }
  if (!valid) onInvalidUtf8(line);
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw corrupt(
      path,
      line,
      `not valid JSON (${(err as Error).message}); the session file is damaged at this line`,
      err,
    );
  }
}

/**
 * Record an `invalid_utf8` warning for `line` in `warnings` (kept in line order, a line at most once; before a
 * torn/unterminated report of the same line, as `loadSession` orders them).
 */
function noteInvalidUtf8(path: string, warnings: SessionWarning[], line: number): void {
  let at = warnings.length;
  for (let k = 0; k < warnings.length; k++) {
    const w = warnings[k] as SessionWarning;
    if (w.line === line && w.kind === 'invalid_utf8') return;
    if (w.line > line || (w.line === line && (w.kind === 'unterminated_line' || w.kind === 'torn_line'))) {
      at = k;
      break;
    }
  }
  warnings.splice(at, 0, invalidUtf8Warning(path, line));
}

/**
 * The index of one session file. Arrays are parallel, one element per entry in file order (the header is not an
 * entry). Get one with `openSessionIndex`.
 */
export class SessionIndex {
  readonly path: string;
  readonly header: SessionHeader;
  /** Id of the last entry, or `null` when the file holds only a header. */
  readonly leafId: string | null;
  /** The current model: the latest `model_change` on the path to the leaf, else the header's `model`. */
  readonly model: string | undefined;
  /**
   * What opening reported, in line order; lines read later that hold bytes that are not valid UTF-8 add their
   * `invalid_utf8` warning here when they are first read (the array is the index's, live; do not mutate it).
   */
  readonly warnings: readonly SessionWarning[];
  readonly ids: readonly string[];
  readonly parents: readonly (string | null)[];
  /** Entry types as the lines' leading fields give them (checked against the entry when it is read). */
  readonly types: readonly EntryType[];
  readonly lines: readonly SessionLineRef[];
  /** Bytes of the file that was indexed. */
  readonly fileBytes: number;
  /** The last line, when it ended without a newline and did not parse (skipped; a `torn_line` warning). */
  readonly torn: TornLine | undefined;
  /** True when the last line parsed but has no trailing newline (an appender must write one first). */
  readonly unterminated: boolean;
  /** True when the file has no header (see the `no_header` warning): `header` is a new one, not in the file. */
  readonly headerMissing: boolean;
  readonly #byId: Map<string, number>;
  #identity: FileIdentity;
  /**
   * Bytes at the file's start the index was made from (the file's size at open, less a torn last line, which no
   * entry comes from; the size after the writer's own last write for `SessionLog`): a read needs them unchanged.
   */
  #covered: number;
  /** True while the covered bytes end inside a line (an unterminated last line): its newline may follow them. */
  #openEnd: boolean;
  readonly #chunkBytes: number;
  /** Entries parsed while opening (lines not in the leading-field form, the current model's change); kept. */
  readonly #parsed: Map<number, SessionEntry>;
  #branch: number[] | undefined;
  /** Where parsed lines leave their long texts (`textInFile`), or null. Its source checks what `#checkIdentity` does. */
  readonly #texts: LineTexts | null;

  /** @internal Use `openSessionIndex`. */
  constructor(state: {
    path: string;
    header: SessionHeader;
    warnings: SessionWarning[];
    ids: string[];
    parents: (string | null)[];
    types: EntryType[];
    lines: SessionLineRef[];
    byId: Map<string, number>;
    identity: FileIdentity;
    chunkBytes: number;
    parsed: Map<number, SessionEntry>;
    model: string | undefined;
    torn: TornLine | undefined;
    unterminated: boolean;
    headerMissing: boolean;
    texts: LineTexts | null;
  }) {
    this.path = state.path;
    this.header = state.header;
    this.warnings = state.warnings;
    this.ids = state.ids;
    this.parents = state.parents;
    this.types = state.types;
    this.lines = state.lines;
    this.fileBytes = state.identity.size;
    this.#byId = state.byId;
    this.#identity = state.identity;
    this.#covered = state.torn ? state.torn.offset : state.identity.size;
    this.#openEnd = state.unterminated;
    this.#chunkBytes = state.chunkBytes;
    this.#parsed = state.parsed;
    this.leafId = state.ids.length > 0 ? (state.ids[state.ids.length - 1] as string) : null;
    this.model = state.model;
    this.torn = state.torn;
    this.unterminated = state.unterminated;
    this.headerMissing = state.headerMissing;
    this.#texts = state.texts;
  }

  static {
    adoptFileIdentity = (index, stat) => {
      index.#identity = fileIdentity(stat);
      index.#covered = stat.size;
      index.#openEnd = false;
      // The file-backed texts expect what the index expects.
      index.#texts?.source.settle(index.#identity, stat.size);
    };
  }

  /** Number of entries. */
  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** Position (index into `ids`) of the entry with this id, or `undefined`. */
  positionOf(id: string): number | undefined {
    return this.#byId.get(id);
  }

  /**
   * Indices (into `ids`) of the entries from the root to the leaf, in order.
   * @throws PantoError `ERR_SESSION_FORMAT` when the parent links do not reach the root (cannot happen for an index
   *   that opened: parents are checked to be earlier entries).
   */
  branch(): readonly number[] {
    if (this.#branch) return this.#branch;
    const path: number[] = [];
    let i = this.ids.length - 1;
    while (i >= 0) {
      path.push(i);
      const parent = this.parents[i] as string | null;
      if (parent === null) break;
      const p = this.#byId.get(parent);
      if (p === undefined || p >= i)
        throw formatError(this.path, this.lineOf(i), `parent ${parent} is not earlier`);
      i = p;
    }
    this.#branch = path.reverse();
    return this.#branch;
  }

  /**
   * The entry with this id, parsed and checked now.
   * @throws PantoError `ERR_INVALID_ARGUMENT` for an id not in the index; `ERR_SESSION_CORRUPT` / `ERR_SESSION_FORMAT`
   *   for a damaged line; `ERR_SESSION_CHANGED` when the file changed since it was indexed.
   */
  async entry(id: string): Promise<SessionEntry> {
    const i = this.#byId.get(id);
    if (i === undefined)
      throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry ${id} in the session`);
    const [entry] = this.#read([i]);
    return entry as SessionEntry;
  }

  /**
   * The entries with these ids, in the order asked (an id may repeat), parsed and checked now. One open and stat of
   * the file for all of them; their lines are read in file order, nearby lines in one read, and each line is parsed
   * once however often its id is asked for.
   * @throws as `entry` (an unknown id fails before anything is read).
   */
  async entries(ids: readonly string[]): Promise<SessionEntry[]> {
    const wanted: number[] = new Array(ids.length);
    for (let j = 0; j < ids.length; j++) {
      const id = ids[j] as string;
      const i = this.#byId.get(id);
      if (i === undefined)
        throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry ${id} in the session`);
      wanted[j] = i;
    }
    return this.readAt(wanted);
  }

  /**
   * The entries at these positions (indices into `ids`), in the order asked, parsed and checked now, with synchronous
   * reads (for callers that cannot await, such as `SessionLog`'s getters; the event loop waits for the reads). Same
   * reading, caching and errors as `entries`; a position out of range fails with `ERR_INVALID_ARGUMENT`.
   */
  readAt(positions: readonly number[]): SessionEntry[] {
    let ascending = true;
    for (let j = 0; j < positions.length; j++) {
      const i = positions[j] as number;
      if (!Number.isInteger(i) || i < 0 || i >= this.ids.length)
        throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry at position ${i}`);
      if (j > 0 && i <= (positions[j - 1] as number)) ascending = false;
    }
    if (ascending) return this.#read(positions);
    const sorted = [...new Set(positions)].sort((a, b) => a - b);
    const read = this.#read(sorted);
    const at = new Map<number, SessionEntry>();
    for (let j = 0; j < sorted.length; j++) at.set(sorted[j] as number, read[j] as SessionEntry);
    return positions.map((i) => at.get(i) as SessionEntry);
  }

  /**
   * Every entry in file order, parsed and checked now (synchronous reads, as `readAt`). Entries in `known` (runs an
   * earlier read of this index returned, e.g. those `conversationView` recorded) are taken as they are, not read
   * again, so the result shares their objects.
   */
  readAll(known: readonly ParsedRun[] = []): SessionEntry[] {
    const all: SessionEntry[] = new Array(this.ids.length);
    for (const run of known) {
      for (let k = 0; k < run.positions.length; k++)
        all[run.positions[k] as number] = run.entries[k] as SessionEntry;
    }
    const missing: number[] = [];
    for (let i = 0; i < all.length; i++) if (all[i] === undefined) missing.push(i);
    const read = this.#read(missing);
    for (let k = 0; k < missing.length; k++) all[missing[k] as number] = read[k] as SessionEntry;
    return all;
  }

  /**
   * The current conversation with, for each message, the id of the entry that holds it (`null` for a compaction's
   * replacement), read as `conversation()` reads it, synchronously. The entries it parses are appended to `record`,
   * when given (for `readAll`).
   */
  conversationView(record?: ParsedRun[]): ConversationView {
    return resolveBranch(this.branch(), this.#lazy(record));
  }

  #lazy(record?: ParsedRun[]): LazyEntries {
    return {
      typeAt: (i) => this.types[i] as EntryType,
      positionOf: (id) => this.#byId.get(id),
      read: (positions) => {
        const entries = this.#read(positions);
        record?.push({ positions, entries });
        return entries;
      },
      offBranch: (compaction, i) =>
        formatError(
          this.path,
          this.lineOf(i),
          `compaction ${compaction.id} keeps from entry ${compaction.firstKeptEntryId}, which is not on its branch`,
        ),
    };
  }

  /**
   * The current conversation, as `loadSession` resolves it (see resolve-conversation.ts): reads and parses only the
   * compaction that applies and the message entries that follow from it on the current branch.
   * @throws as `entry`, for any line it reads.
   */
  async conversation(): Promise<Conversation> {
    return { messages: this.conversationView().messages };
  }

  /**
   * Read and check every line, as `loadSession` does (it also resolves the conversation, so a compaction that keeps
   * from an entry off its branch is reported). Entries are parsed and dropped, one read chunk at a time.
   * @throws as `entry`, for the first damaged line.
   */
  async verify(): Promise<void> {
    const all: number[] = [];
    for (let i = 0; i < this.ids.length; i++) all.push(i);
    const chunk = 4096;
    for (let s = 0; s < all.length; s += chunk) this.#read(all.slice(s, s + chunk));
    this.conversationView();
  }

  /** 1-based line number of entry `i` (an index into `ids`). */
  lineOf(i: number): number {
    return (this.lines[i] as SessionLineRef).line;
  }

  /** Whether entry `i`'s line, on disk now, begins with the leading fields the index took from it. */
  #leadsAsIndexed(i: number): boolean {
    const parent = this.parents[i] as string | null;
    const lead = Buffer.from(
      `{"type":"${this.types[i]}","id":"${this.ids[i]}","parentId":${parent === null ? 'null' : `"${parent}"`}`,
      'latin1',
    );
    const ref = this.lines[i] as SessionLineRef;
    if (lead.length > ref.bytes) return false;
    const got = Buffer.alloc(lead.length);
    try {
      const fd = openSync(this.path, READ_FLAGS);
      try {
        if (readSync(fd, got, 0, lead.length, ref.offset) !== lead.length) return false;
      } finally {
        closeSync(fd);
      }
    } catch {
      return false;
    }
    return got.equals(lead);
  }

  /** The file's size now, after checking it still holds the indexed bytes (see `prefixChange`). */
  #checkIdentity(fd: number): number {
    const st = fstatSync(fd);
    const problem = !st.isFile()
      ? 'it is no longer a regular file'
      : (prefixChange(st, this.#identity, this.#covered) ?? this.#seamProblem(fd, st.size));
    if (problem !== null) {
      throw new PantoError(
        'ERR_SESSION_CHANGED',
        `${this.path}: the file changed since it was indexed (${problem}); open the index again`,
      );
    }
    return st.size;
  }

  /**
   * When the file grew past the covered bytes: null if they still end a line (a newline is their last byte or, for an
   * unterminated last line, follows it), else why not — the appended bytes extend an indexed line.
   */
  #seamProblem(fd: number, fileBytes: number): string | null {
    const covered = this.#covered;
    if (fileBytes <= covered || covered === 0) return null;
    const b = Buffer.alloc(3);
    readSync(fd, b, 0, 3, covered - 1);
    const ends =
      b[0] === NEWLINE || (this.#openEnd && (b[1] === NEWLINE || (b[1] === CR && b[2] === NEWLINE)));
    return ends ? null : 'its indexed last line was extended';
  }

  /** Parse and check entries `indices` (ascending file order), reading runs of nearby lines in one read. */
  #read(indices: readonly number[]): SessionEntry[] {
    const out: SessionEntry[] = new Array(indices.length);
    const fd = openSync(this.path, READ_FLAGS);
    try {
      // The file may have grown since it was indexed (appends): lines are read as indexed, and each must still end
      // where it did (an unterminated last line now followed by anything but a newline fails).
      const fileBytes = this.#checkIdentity(fd);
      let buf = Buffer.allocUnsafe(0);
      let k = 0;
      while (k < indices.length) {
        const first = indices[k] as number;
        const cached = this.#parsed.get(first);
        if (cached) {
          out[k++] = cached;
          continue;
        }
        // One read from this line's start through as many of the next wanted lines as fit in a chunk (always the
        // whole first line, plus one byte to see its newline).
        const start = (this.lines[first] as SessionLineRef).offset;
        let end = this.#lineEnd(first, fileBytes);
        let last = k;
        while (last + 1 < indices.length) {
          const next = indices[last + 1] as number;
          const nextEnd = this.#lineEnd(next, fileBytes);
          if (nextEnd - start > this.#chunkBytes || this.#parsed.has(next)) break;
          end = nextEnd;
          last++;
        }
        const length = Math.min(end, fileBytes) - start;
        if (buf.length < length)
          buf = Buffer.allocUnsafe(Math.max(length, Math.min(this.#chunkBytes, 1 << 20)));
        const bytesRead = readSync(fd, buf, 0, length, start);
        if (bytesRead !== length) {
          throw new PantoError(
            'ERR_SESSION_CHANGED',
            `${this.path}: the file is shorter than when it was indexed`,
          );
        }
        while (k <= last) {
          // Lines k.. that follow each other in the file and each end with a newline are decoded as one batch of at
          // most BATCH_BYTES (see #parseBatch); any other line on its own.
          const first = indices[k] as number;
          const from = (this.lines[first] as SessionLineRef).offset - start;
          let to = this.#terminatedEnd(first, buf, from, length);
          let n = k;
          while (to !== -1 && n < last && to - from < BATCH_BYTES) {
            const next = indices[n + 1] as number;
            if ((this.lines[next] as SessionLineRef).offset - start !== to) break;
            const nextTo = this.#terminatedEnd(next, buf, to, length);
            if (nextTo === -1 || nextTo - from > BATCH_BYTES) break;
            to = nextTo;
            n++;
          }
          // With texts left in the file each line is scanned and decoded on its own (see line-texts.ts).
          if (to !== -1 && this.#texts === null && this.#parseBatch(indices, k, n, buf, from, to, out)) {
            k = n + 1;
            continue;
          }
          for (; k <= n; k++) {
            const i = indices[k] as number;
            const ref = this.lines[i] as SessionLineRef;
            const at = ref.offset - start;
            const value = parseLine(
              this.path,
              ref,
              buf,
              at,
              at + ref.bytes,
              fileBytes,
              (line) => noteInvalidUtf8(this.path, this.warnings as SessionWarning[], line),
              this.#texts,
            );
            out[k] = this.#check(i, value);
            this.#texts?.attach(value);
          }
        }
      }
      this.#checkIdentity(fd);
    } finally {
      closeSync(fd);
    }
    return out;
  }

  /**
   * Where the line of entry `i`, starting at `at` in `buf` (which holds `length` bytes), ends just past its newline,
   * when its line ends as indexed (an optional CR, then a newline) inside `buf`; else -1.
   */
  #terminatedEnd(i: number, buf: Buffer, at: number, length: number): number {
    let p = at + (this.lines[i] as SessionLineRef).bytes;
    if (p < length && buf[p] === CR) p++;
    return p < length && buf[p] === NEWLINE ? p + 1 : -1;
  }

  /**
   * Entries indices[k..n], whose lines follow each other in buf[from, to) each ending with a newline, decoded with
   * one `toString` and parsed line by line from slices of it, into `out`. Returns false (nothing parsed) when the
   * bytes are not valid UTF-8 or hold another number of newlines than lines: the caller then parses line by line,
   * which reports the exact line. Otherwise the same values and errors as `parseLine` + `#check` per line: valid UTF-8
   * decodes line by line to the same text, and each slice ends where the line's newline is.
   */
  #parseBatch(
    indices: readonly number[],
    k: number,
    n: number,
    buf: Buffer,
    from: number,
    to: number,
    out: SessionEntry[],
  ): boolean {
    const bytes = buf.subarray(from, to);
    if (!isUtf8(bytes)) return false;
    const text = bytes.toString('utf8');
    const values: unknown[] = [];
    let p = 0;
    for (let j = k; j <= n; j++) {
      const nl = text.indexOf('\n', p);
      if (nl === -1) return false;
      const stop = nl > p && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
      values.push(text.slice(p, stop));
      p = nl + 1;
    }
    if (p !== text.length) return false;
    for (let j = k; j <= n; j++) {
      const i = indices[j] as number;
      let value: unknown;
      try {
        value = JSON.parse(values[j - k] as string);
      } catch (err) {
        throw corrupt(
          this.path,
          this.lineOf(i),
          `not valid JSON (${(err as Error).message}); the session file is damaged at this line`,
          err,
        );
      }
      out[j] = this.#check(i, value);
    }
    return true;
  }

  /** File offset just past entry `i`'s newline (or its end, for an unterminated last line), in a file of `fileBytes`. */
  #lineEnd(i: number, fileBytes: number): number {
    const ref = this.lines[i] as SessionLineRef;
    return Math.min(ref.offset + ref.bytes + 2, fileBytes);
  }

  /** `value` is a valid entry matching what the index holds for entry `i`. */
  #check(i: number, value: unknown): SessionEntry {
    const line = this.lineOf(i);
    const problem = entryProblem(value);
    if (problem) throw formatError(this.path, line, problem);
    const e = value as SessionEntry;
    if (e.id !== this.ids[i] || e.parentId !== this.parents[i] || e.type !== this.types[i]) {
      const what = `entry ${e.id} (${e.type}, parent ${e.parentId}) is not the indexed ${this.ids[i]} (${this.types[i]}, parent ${this.parents[i]})`;
      // The line still begins with the fields it was indexed by: the line itself lies (a repeated key later in it
      // says otherwise). Else the file was rewritten under the reader.
      if (this.#leadsAsIndexed(i)) throw formatError(this.path, line, `${what}: the line repeats a key`);
      throw new PantoError('ERR_SESSION_CHANGED', `${this.path}:${line}: ${what}; the file changed`);
    }
    return e;
  }
}

/**
 * Line bytes [start, end) of `buf` parsed, after checking the line ends where the index says (a newline, an optional
 * CR before it, or the end of the file).
 */
function parseLine(
  path: string,
  ref: SessionLineRef,
  buf: Buffer,
  start: number,
  end: number,
  fileBytes: number,
  onInvalidUtf8: (line: number) => void,
  texts: LineTexts | null,
): unknown {
  const fileEnd = ref.offset + ref.bytes;
  let next = end;
  if (fileEnd < fileBytes && buf[next] === CR) next++;
  if (ref.offset + (next - start) < fileBytes && buf[next] !== NEWLINE) {
    throw new PantoError(
      'ERR_SESSION_CHANGED',
      `${path}:${ref.line}: the line no longer ends where it was indexed`,
    );
  }
  return parseBytes(path, ref.line, buf, start, end, onInvalidUtf8, texts, ref.offset);
}

/**
 * Index a session file written by `SessionLog` (see the module comment for what is parsed and checked when).
 *
 * Errors (`PantoError`), as `loadSession` for what opening reads: `ERR_SESSION_CORRUPT` for a line longer than
 * `maxLineBytes` or a line it parses that is not valid JSON; `ERR_SESSION_FORMAT` for a bad or newer header, a
 * duplicate id, a parent that is not an earlier entry, or a parsed line that is not a valid entry;
 * `ERR_SESSION_CHANGED` when the file changed while it was being indexed (other than
 * by growing: the bytes appended meanwhile are not indexed). A torn last line is skipped with a warning,
 * and a file with no header opens as an empty session, as with `loadSession`. `ERR_INVALID_ARGUMENT` when `path` is
 * not a regular file. File-system errors propagate.
 */
export async function openSessionIndex(
  path: string,
  options: SessionIndexOptions = {},
): Promise<SessionIndex> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE;
  if (!(chunkBytes > 0) || !(maxLineBytes > 0)) {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'chunkBytes and maxLineBytes must be positive');
  }
  const inFile = textInFileSettings(options.textInFile);
  const fh = await openRegularFile(path);
  try {
    const st = await fh.stat();
    const identity = fileIdentity(st);
    // Its covered bytes are settled with the index's once the torn last line, if any, is known.
    const texts =
      inFile !== null && identity.size >= inFile.minFileBytes
        ? new LineTexts(new SessionText(path, identity, identity.size), inFile.minTextBytes)
        : null;
    const ids: string[] = [];
    const parents: (string | null)[] = [];
    const types: EntryType[] = [];
    const lines: SessionLineRef[] = [];
    const byId = new Map<string, number>();
    const parsed = new Map<number, SessionEntry>();
    const warnings: SessionWarning[] = [];
    let header: SessionHeader | undefined;
    let modelChanges = 0;
    let torn: TornLine | undefined;
    let unterminated = false;

    const addEntry = (
      line: number,
      offset: number,
      bytes: number,
      type: EntryType,
      id: string,
      parentId: string | null,
    ) => {
      // One hash operation per entry (an id already present leaves the size unchanged, and fails the open); a parent
      // that is the previous entry needs no lookup.
      const known = byId.size;
      byId.set(id, ids.length);
      if (byId.size === known) throw formatError(path, line, `duplicate entry id ${id}`);
      if (parentId !== null && parentId !== ids[ids.length - 1] && (parentId === id || !byId.has(parentId))) {
        throw formatError(path, line, `parentId ${parentId} does not name an earlier entry`);
      }
      ids.push(id);
      parents.push(parentId);
      types.push(type);
      lines.push({ line, offset, bytes });
      if (type === 'model_change') modelChanges++;
    };

    /** A line read whole: the header, or an entry not in SessionLog's leading-field form. */
    const addParsed = (line: number, offset: number, bytes: number, value: unknown) => {
      if (header === undefined) {
        const problem = readableHeaderProblem(value);
        if (problem) throw formatError(path, line, problem);
        header = value as SessionHeader;
        return;
      }
      const problem = entryProblem(value);
      if (problem) throw formatError(path, line, problem);
      const e = value as SessionEntry;
      addEntry(line, offset, bytes, e.type, e.id, e.parentId);
      parsed.set(ids.length - 1, e);
    };

    const readWhole = async (offset: number, bytes: number): Promise<Buffer> => {
      const b = Buffer.allocUnsafe(bytes);
      const { bytesRead } = await fh.read(b, 0, bytes, offset);
      if (bytesRead !== bytes) {
        throw new PantoError('ERR_SESSION_CHANGED', `${path}: the file shrank while it was being indexed`);
      }
      return b;
    };

    const size = Math.min(chunkBytes, maxLineBytes + 1);
    const buf = Buffer.allocUnsafe(Math.max(size, HEAD));
    // The current line: where it starts, and its first bytes (up to HEAD) when it spans reads.
    let lineStart = 0;
    let lineNo = 0;
    const head = Buffer.allocUnsafe(HEAD);
    let headLen = 0;
    let filePos = 0;
    /** Last byte of the previous read (a CR before a newline that starts the next read). */
    let lastByte = 0;

    const onInvalidUtf8 = (line: number) => noteInvalidUtf8(path, warnings, line);
    const tooLong = (line: number) =>
      corrupt(path, line, `line is longer than maxLineBytes (${maxLineBytes} bytes); refusing to load it`);

    // The leading fields of the last line `leading` matched; the previous entry's id bytes (a parent is most often
    // the entry just before, and then its string is reused).
    let leadType: EntryType = 'message';
    let leadId = '';
    let leadParent: string | null = null;
    const prevIdBytes = Buffer.allocUnsafe(64);
    let prevIdLen = -1;
    let prevId = '';

    /** Whether bytes [start, end) of `b` begin with SessionLog's leading fields; sets leadType/leadId/leadParent. */
    const leading = (b: Buffer, start: number, end: number): boolean => {
      if (!hasAt(b, start, end, TYPE_KEY)) return false;
      let p = start + TYPE_KEY.length;
      const typeEnd = b.indexOf(0x22, p);
      const type = TYPE_BY_LENGTH.get(typeEnd - p);
      if (typeEnd === -1 || typeEnd >= end || !type || !hasAt(b, p, typeEnd, type.bytes)) return false;
      p = typeEnd;
      if (!hasAt(b, p, end, ID_KEY)) return false;
      p += ID_KEY.length;
      const idStop = idEnd(b, p, end);
      if (idStop === -1) return false;
      const idStart = p;
      p = idStop;
      if (!hasAt(b, p, end, PARENT_KEY)) return false;
      p += PARENT_KEY.length;
      let parent: string | null;
      if (hasAt(b, p, end, NULL)) {
        parent = null;
        p += NULL.length;
      } else {
        if (p >= end || b[p] !== 0x22) return false;
        const stop = idEnd(b, p + 1, end);
        if (stop === -1) return false;
        const len = stop - (p + 1);
        let same = len === prevIdLen;
        for (let k = 0; same && k < len; k++) same = b[p + 1 + k] === prevIdBytes[k];
        parent = same ? prevId : latin1(b, p + 1, stop);
        p = stop + 1;
      }
      if (p >= end || (b[p] !== 0x2c && b[p] !== 0x7d)) return false;
      leadType = type.name;
      leadId = latin1(b, idStart, idStop);
      leadParent = parent;
      const len = idStop - idStart;
      if (len <= prevIdBytes.length) {
        b.copy(prevIdBytes, 0, idStart, idStop);
        prevIdLen = len;
        prevId = leadId;
      } else prevIdLen = -1;
      return true;
    };

    /** The common line: complete in `b`, after the header, in SessionLog's form. False: take `onLine`. */
    const fastLine = (b: Buffer, start: number, nl: number, total: number, endsWithCr: boolean): boolean => {
      const bytes = endsWithCr ? total - 1 : total;
      if (header === undefined || bytes <= 0 || bytes > maxLineBytes) return false;
      if (!leading(b, start, Math.min(nl, start + HEAD) - (endsWithCr && nl - start <= HEAD ? 1 : 0)))
        return false;
      lineNo++;
      const offset = lineStart;
      lineStart += total + 1;
      try {
        addEntry(lineNo, offset, bytes, leadType, leadId, leadParent);
      } catch (err) {
        throw damagedFirst(err, lineNo, b.subarray(start, start + bytes));
      }
      return true;
    };

    /**
     * The error for a line read by its leading fields only that failed a link check (`err`: duplicate id, bad
     * parent): `ERR_SESSION_CORRUPT` when the whole line is not valid JSON — the one-pass reader parses a line before
     * it checks its links, and both paths must give one code for one damaged line — else `err`.
     */
    const damagedFirst = (err: unknown, line: number, whole: Buffer): unknown => {
      try {
        parseBytes(path, line, whole, 0, whole.length, () => {});
      } catch (notJson) {
        return notJson;
      }
      return err;
    };

    let emptyRun: { run: EmptyRun; warning: SessionWarning } | undefined;
    const endEmptyRun = () => {
      if (emptyRun) emptyRun.warning.message = emptyRunMessage(path, emptyRun.run);
      emptyRun = undefined;
    };

    /** A complete line [lineStart, lineStart + total) whose first bytes are `first` (at most HEAD of them). */
    const onLine = async (first: Buffer, total: number, terminated: boolean, endsWithCr: boolean) => {
      lineNo++;
      const offset = lineStart;
      lineStart += total + (terminated ? 1 : 0);
      const bytes = total > 0 && endsWithCr ? total - 1 : total;
      if (bytes > maxLineBytes) throw tooLong(lineNo);
      if (bytes === 0) {
        if (terminated) {
          // One warning per run of consecutive empty lines (its message is written when the run ends).
          if (emptyRun !== undefined && emptyRun.run.line + emptyRun.run.count === lineNo)
            emptyRun.run.count++;
          else {
            endEmptyRun();
            const warning: SessionWarning = { kind: 'empty_line', line: lineNo, message: '' };
            warnings.push(warning);
            emptyRun = { run: { line: lineNo, count: 1 }, warning };
          }
        }
        return;
      }
      endEmptyRun();
      if (header !== undefined && terminated && leading(first, 0, Math.min(bytes, first.length))) {
        try {
          addEntry(lineNo, offset, bytes, leadType, leadId, leadParent);
        } catch (err) {
          throw damagedFirst(
            err,
            lineNo,
            bytes <= first.length ? first.subarray(0, bytes) : await readWhole(offset, bytes),
          );
        }
        return;
      }
      const whole = bytes <= first.length ? first : await readWhole(offset, bytes);
      // A byte order mark before the header is skipped, as loadSession skips it.
      const from = lineNo === 1 && hasAt(whole, 0, bytes, BOM) ? BOM.length : 0;
      if (!terminated) {
        // The last line without a newline: torn (skipped) unless it parses, as loadSession decides.
        let value: unknown;
        try {
          value = JSON.parse(whole.toString('utf8', from, bytes));
        } catch (err) {
          const problem = tornLineProblem(whole.subarray(0, bytes), header === undefined);
          if (problem) throw corrupt(path, lineNo, problem, err);
          torn = { line: lineNo, offset, bytes: total };
          warnings.push({
            kind: 'torn_line',
            line: lineNo,
            message:
              `${path}:${lineNo}: last line is incomplete (${total} bytes, likely a crash mid-write); ` +
              'skipped, everything before it loaded',
          });
          return;
        }
        if (!isUtf8(whole.subarray(0, bytes))) onInvalidUtf8(lineNo);
        addParsed(lineNo, offset, bytes, value);
        unterminated = true;
        warnings.push({
          kind: 'unterminated_line',
          line: lineNo,
          message: `${path}: last line has no trailing newline; loaded`,
        });
        return;
      }
      // An entry line (never the header) leaves its long texts in the file once its checks passed.
      const lineTexts = header === undefined ? null : texts;
      const value = parseBytes(path, lineNo, whole, from, bytes, onInvalidUtf8, lineTexts, offset);
      addParsed(lineNo, offset, bytes, value);
      lineTexts?.attach(value);
    };

    // The file as it was at the stat above: bytes appended since (a writer still running) are not indexed, and a
    // line cut off there by a write in progress reads as a torn last line.
    for (;;) {
      const want = Math.min(size, identity.size - filePos);
      if (want <= 0) break;
      const { bytesRead } = await fh.read(buf, 0, want, filePos);
      if (bytesRead === 0) break;
      const chunkStart = filePos;
      filePos += bytesRead;
      let s = 0;
      for (;;) {
        const nl = buf.indexOf(NEWLINE, s);
        if (nl === -1 || nl >= bytesRead) break;
        const total = chunkStart + nl - lineStart;
        if (headLen > 0 || lineStart < chunkStart) {
          // The line began in an earlier read: its head was kept.
          const room = Math.min(HEAD - headLen, nl - s);
          buf.copy(head, headLen, s, s + room);
          headLen += room;
          await onLine(head.subarray(0, headLen), total, true, (nl > 0 ? buf[nl - 1] : lastByte) === CR);
        } else {
          const cr = nl > 0 && buf[nl - 1] === CR;
          if (!fastLine(buf, s, nl, total, cr))
            await onLine(buf.subarray(s, Math.min(nl, s + HEAD)), total, true, cr);
        }
        headLen = 0;
        s = nl + 1;
      }
      if (s < bytesRead) {
        const room = Math.min(HEAD - headLen, bytesRead - s);
        buf.copy(head, headLen, s, s + room);
        headLen += room;
        if (filePos - lineStart > maxLineBytes + 1) throw tooLong(lineNo + 1);
      }
      lastByte = buf[bytesRead - 1] as number;
    }
    if (lineStart < filePos)
      await onLine(head.subarray(0, headLen), filePos - lineStart, false, lastByte === CR);
    endEmptyRun();
    const end = await fh.stat();
    const problem =
      filePos !== identity.size
        ? 'it shrank'
        : prefixChange(end, identity, torn ? torn.offset : identity.size);
    if (problem !== null) {
      throw new PantoError(
        'ERR_SESSION_CHANGED',
        `${path}: the file changed while it was being indexed (${problem})`,
      );
    }

    const headerMissing = header === undefined;
    if (header === undefined) header = headerlessSession(path, warnings);
    texts?.source.settle(identity, torn ? torn.offset : identity.size);
    const state = {
      path,
      header,
      warnings,
      ids,
      parents,
      types,
      lines,
      byId,
      identity,
      chunkBytes,
      parsed,
      torn,
      unterminated,
      headerMissing,
      texts,
    };
    const index = new SessionIndex({ ...state, model: undefined });
    // The current model: the latest model_change on the branch (that one line is parsed now).
    let model = header.model;
    if (modelChanges > 0) {
      const branch = index.branch();
      for (let k = branch.length - 1; k >= 0; k--) {
        const i = branch[k] as number;
        if (types[i] === 'model_change') {
          const e = await index.entry(ids[i] as string);
          if (e.type === 'model_change') model = e.model;
          parsed.set(i, e);
          break;
        }
      }
    }
    return model === undefined ? index : new SessionIndex({ ...state, model });
  } finally {
    await fh.close();
  }
}
