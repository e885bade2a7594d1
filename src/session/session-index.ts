/**
 * A lazily parsed session file: `openSessionIndex` makes one pass over the file's bytes and keeps, per entry, only
 * its id, parent, type and where its line is (byte offset and length). Entries are parsed when asked for: `entry(id)`
 * one line, `conversation()` only the lines on the current branch after its latest compaction. Memory: the index
 * (a few dozen bytes per entry) plus what the caller asks for; the file's text is never all held.
 *
 * How the index is read without parsing: `SessionLog` writes every entry as `{"type":…,"id":…,"parentId":…,` (that
 * key order, ids in ASCII), so those fields are taken from the line's first bytes (leading-fields.ts). A line in any
 * other form (another writer, non-ASCII or escaped ids) is parsed in full while indexing and checked as `loadSession`
 * checks it. The header, the model change the current model comes from, and an unterminated last line (torn or not,
 * decided as `loadSession` decides it) are parsed while opening too.
 *
 * What is checked when: opening checks the header, the tree (unique ids, parents earlier in the file) and line
 * lengths; a line the index did not parse is checked when it is read (valid JSON, a valid entry, and the same
 * type/id/parentId as its leading fields), so a damaged line in an old branch costs nothing until it is read.
 * `verify()` reads every line and checks all of it, as `loadSession` does. Bytes that are not valid UTF-8 are read as
 * U+FFFD and the line gets an `invalid_utf8` warning in `warnings` when it is first parsed.
 *
 * The indexed bytes must not change while the index is used, but the file may grow: an index is of the file as it
 * was when opening began (bytes appended later are not indexed, and a line a write in progress cut off there reads as
 * a torn last line), and its reads return the entries as of then. Every read checks the file still holds those bytes
 * — the same inode, not shorter than them (a torn last line may be cut off), not rewritten in place (same size,
 * another mtime), the last indexed line still ending where it did — and re-checks each line's id, parent and type, so
 * a file changed on disk fails with `ERR_SESSION_CHANGED` instead of returning wrong data (a line that still begins
 * as indexed but says otherwise in a repeated key later is the line's own lie: `ERR_SESSION_FORMAT`). `SessionLog`,
 * the file's locked writer, tells its index about its own appends and repairs.
 *
 * Reads are synchronous underneath (`readAt`, `readAll`, `conversationView` return directly; `entry`, `entries`,
 * `conversation`, `verify` wrap them in a promise): `loadSession` and `SessionLog` parse lazily behind getters.
 */

import { isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Conversation } from '../conversation.js';
import { PantoError } from '../errors.js';
import {
  BATCH_BYTES,
  corruptLine,
  type EmptyRun,
  emptyRunMessage,
  type JsonlReadOptions,
  lineTooLong,
  readLimits,
  type TornLine,
  tornLineMessage,
  tornLineProblem,
} from './jsonl-reader.js';
import { LEADING_BYTES, type LeadingFields, leadingFields } from './leading-fields.js';
import { CR, type LineBlock, type LineHead, NEWLINE, readLines } from './line-reader.js';
import { openRegularFile, READ_FLAGS } from './regular-file.js';
import {
  type ConversationView,
  type LazyEntries,
  modelOnBranch,
  resolveBranch,
} from './resolve-conversation.js';
import type { SessionEntry, SessionHeader } from './session-entry.js';
import { headerlessSession, invalidUtf8Warning, type SessionWarning } from './session-warning.js';
import { entryProblem, readableHeaderProblem } from './validate-entry.js';

export type SessionIndexOptions = JsonlReadOptions;

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

type EntryType = SessionEntry['type'];

/** The `fstat` fields a read compares with the file as it was indexed. */
interface FileIdentity {
  size: number;
  mtimeMs: number;
  ino: number;
  dev: number;
}

function fileIdentity(st: FileIdentity): FileIdentity {
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, dev: st.dev };
}

/**
 * Why the file `now` describes may no longer hold the indexed bytes — the first `covered` bytes of the file `was`
 * describes — or null. A file that only grew past them did not change (an agent appending to its session).
 */
function prefixChange(now: FileIdentity, was: FileIdentity, covered: number): string | null {
  if (now.ino !== was.ino || now.dev !== was.dev) return 'it was replaced by another file';
  if (now.size < covered) return `it shrank (size ${was.size} → ${now.size})`;
  if (now.size === was.size && now.mtimeMs !== was.mtimeMs)
    return 'it was rewritten in place (same size, another mtime)';
  return null;
}

/**
 * @internal For `SessionLog`, the file's one writer: after its own append or repair it makes `stat` the state later
 * reads expect (the indexed lines are unchanged; the file only grew or lost a torn tail past them).
 */
export let adoptFileIdentity: (index: SessionIndex, stat: FileIdentity) => void;

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const latin1 = (b: Buffer, end: number): string =>
  (b as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(0, end);

function formatError(path: string, line: number, problem: string): PantoError {
  return new PantoError('ERR_SESSION_FORMAT', `${path}:${line}: ${problem}`);
}

function changed(path: string, problem: string): PantoError {
  return new PantoError('ERR_SESSION_CHANGED', `${path}: ${problem}`);
}

/** Bytes as a JSON value; bytes that are not valid UTF-8 decode to U+FFFD and `onInvalidUtf8` is told the line. */
function parseBytes(
  path: string,
  line: number,
  bytes: Buffer,
  onInvalidUtf8: (line: number) => void,
): unknown {
  if (!isUtf8(bytes)) onInvalidUtf8(line);
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw corruptLine(path, line, err);
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
 * @internal The first phase of opening: every line of the file, as the splitter hands it over, turned into the index's arrays
 * (header parsed, entries by their leading fields, other lines parsed).
 */
export class IndexScan {
  readonly ids: string[] = [];
  readonly parents: (string | null)[] = [];
  readonly types: EntryType[] = [];
  readonly lines: SessionLineRef[] = [];
  readonly byId = new Map<string, number>();
  /** Entries parsed while opening (lines not in the leading-field form). */
  readonly parsed = new Map<number, SessionEntry>();
  readonly warnings: SessionWarning[] = [];
  header: SessionHeader | undefined;
  lineNo = 0;
  torn: TornLine | undefined;
  unterminated = false;
  #emptyRun: { run: EmptyRun; warning: SessionWarning } | undefined;
  readonly onInvalidUtf8 = (line: number) => noteInvalidUtf8(this.path, this.warnings, line);

  constructor(
    readonly path: string,
    readonly fh: FileHandle,
  ) {}

  /** The complete lines of a block (each parsed from the block when it must be). */
  block({ buf, start, end, offset }: LineBlock): void {
    for (let s = start; s < end; ) {
      const nl = buf.indexOf(NEWLINE, s);
      this.#whole(buf.subarray(s, nl > s && buf[nl - 1] === CR ? nl - 1 : nl), offset + (s - start));
      s = nl + 1;
    }
  }

  /** A line that spanned chunks: its head, and the whole line read from the file only when it must be parsed. */
  async long({ head, offset, length, cr }: LineHead): Promise<void> {
    const bytes = cr ? length - 1 : length;
    if (bytes <= head.length) {
      this.#whole(head.subarray(0, bytes), offset);
      return;
    }
    const line = ++this.lineNo;
    this.#endEmptyRun();
    const lead = this.#lead(head);
    if (lead !== undefined) {
      try {
        this.#addEntry(line, offset, bytes, lead);
        return;
      } catch (err) {
        // The one-pass reader parses a line before it checks its links: a line that is not JSON is CORRUPT first.
        parseBytes(this.path, line, await this.#readWhole(offset, bytes), () => {});
        throw err;
      }
    }
    const value = parseBytes(this.path, line, await this.#readWhole(offset, bytes), this.onInvalidUtf8);
    this.#addParsed(line, offset, bytes, value);
  }

  /** A complete line (no newline, no CR) at `offset`. */
  #whole(bytes: Buffer, offset: number): void {
    const line = ++this.lineNo;
    if (bytes.length === 0) {
      this.#empty(line);
      return;
    }
    this.#endEmptyRun();
    const lead = this.#lead(bytes);
    if (lead !== undefined) {
      try {
        this.#addEntry(line, offset, bytes.length, lead);
        return;
      } catch (err) {
        parseBytes(this.path, line, bytes, () => {});
        throw err;
      }
    }
    this.#addParsed(line, offset, bytes.length, parseBytes(this.path, line, bytes, this.onInvalidUtf8));
  }

  /**
   * The leading fields a line (after the header) begins with, from its first bytes; else undefined. The first 128
   * bytes hold them for ids of up to ~40 characters; the index looks at up to LEADING_BYTES when they do not.
   */
  #lead(bytes: Buffer): LeadingFields | undefined {
    if (this.header === undefined) return undefined;
    const previous = this.ids[this.ids.length - 1];
    const lead = leadingFields(latin1(bytes, Math.min(bytes.length, 128)), previous);
    if (lead !== undefined || bytes.length <= 128) return lead;
    return leadingFields(latin1(bytes, Math.min(bytes.length, LEADING_BYTES)), previous);
  }

  /** The last line, without a newline: loaded when it parses, else torn (skipped) when a crash can have left it. */
  async last({ head, offset, length, cr }: LineHead): Promise<void> {
    const line = ++this.lineNo;
    const bytes = cr ? length - 1 : length;
    this.#endEmptyRun();
    if (bytes === 0) {
      this.unterminated = true;
      return;
    }
    const whole = head.length >= bytes ? head.subarray(0, bytes) : await this.#readWhole(offset, bytes);
    let value: unknown;
    try {
      value = JSON.parse(whole.toString('utf8'));
    } catch (err) {
      const problem = tornLineProblem(whole, this.header === undefined);
      if (problem)
        throw new PantoError('ERR_SESSION_CORRUPT', `${this.path}:${line}: ${problem}`, { cause: err });
      this.torn = { line, offset, bytes: length };
      this.warnings.push({ kind: 'torn_line', line, message: tornLineMessage(this.path, this.torn) });
      return;
    }
    if (!isUtf8(whole)) this.onInvalidUtf8(line);
    this.#addParsed(line, offset, bytes, value);
    this.unterminated = true;
    this.warnings.push({
      kind: 'unterminated_line',
      line,
      message: `${this.path}: last line has no trailing newline; loaded`,
    });
  }

  /** Closes the current run of empty lines (its warning's message is written then). */
  #endEmptyRun(): void {
    if (this.#emptyRun) this.#emptyRun.warning.message = emptyRunMessage(this.path, this.#emptyRun.run);
    this.#emptyRun = undefined;
  }

  finish(): void {
    this.#endEmptyRun();
  }

  /** One warning per run of consecutive empty lines. */
  #empty(line: number): void {
    const run = this.#emptyRun;
    if (run !== undefined && run.run.line + run.run.count === line) {
      run.run.count++;
      return;
    }
    this.#endEmptyRun();
    const warning: SessionWarning = { kind: 'empty_line', line, message: '' };
    this.warnings.push(warning);
    this.#emptyRun = { run: { line, count: 1 }, warning };
  }

  async #readWhole(offset: number, bytes: number): Promise<Buffer> {
    const b = Buffer.allocUnsafe(bytes);
    const { bytesRead } = await this.fh.read(b, 0, bytes, offset);
    if (bytesRead !== bytes) throw changed(this.path, 'the file shrank while it was being indexed');
    return b;
  }

  #addEntry(line: number, offset: number, bytes: number, { type, id, parentId }: LeadingFields) {
    const { ids, byId } = this;
    // One hash operation per entry (an id already present leaves the size unchanged); a parent that is the previous
    // entry needs no lookup.
    const known = byId.size;
    byId.set(id, ids.length);
    if (byId.size === known) throw formatError(this.path, line, `duplicate entry id ${id}`);
    if (parentId !== null && parentId !== ids[ids.length - 1] && (parentId === id || !byId.has(parentId))) {
      throw formatError(this.path, line, `parentId ${parentId} does not name an earlier entry`);
    }
    ids.push(id);
    this.parents.push(parentId);
    this.types.push(type);
    this.lines.push({ line, offset, bytes });
  }

  /** A line read whole: the header, or an entry not in SessionLog's leading-field form. */
  #addParsed(line: number, offset: number, bytes: number, value: unknown): void {
    if (this.header === undefined) {
      const problem = readableHeaderProblem(value);
      if (problem) throw formatError(this.path, line, problem);
      this.header = value as SessionHeader;
      return;
    }
    const problem = entryProblem(value);
    if (problem) throw formatError(this.path, line, problem);
    const e = value as SessionEntry;
    this.#addEntry(line, offset, bytes, e);
    this.parsed.set(this.ids.length - 1, e);
  }
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
  /** Bytes at the file's start the index was made from (less a torn last line): a read needs them unchanged. */
  #covered: number;
  /** True while the covered bytes end inside a line (an unterminated last line): its newline may follow them. */
  #openEnd: boolean;
  readonly #chunkBytes: number;
  /** Entries parsed while opening (lines not in the leading-field form, the current model's change); kept. */
  readonly #parsed: Map<number, SessionEntry>;
  #branch: number[] | undefined;

  /** @internal Use `openSessionIndex`. */
  constructor(scan: IndexScan, identity: FileIdentity, chunkBytes: number) {
    this.path = scan.path;
    this.headerMissing = scan.header === undefined;
    this.header = scan.header ?? headerlessSession(scan.path, scan.warnings);
    this.warnings = scan.warnings;
    this.ids = scan.ids;
    this.parents = scan.parents;
    this.types = scan.types;
    this.lines = scan.lines;
    this.fileBytes = identity.size;
    this.#byId = scan.byId;
    this.#identity = identity;
    this.torn = scan.torn;
    this.unterminated = scan.unterminated;
    this.#covered = scan.torn ? scan.torn.offset : identity.size;
    this.#openEnd = scan.unterminated;
    this.#chunkBytes = chunkBytes;
    this.#parsed = scan.parsed;
    this.leafId = scan.ids.length > 0 ? (scan.ids[scan.ids.length - 1] as string) : null;
    // The current model: the latest model_change on the branch (that one line is parsed now, and kept).
    const record: ParsedRun[] = [];
    this.model = modelOnBranch(this.branch(), this.#lazy(record), this.header.model);
    for (const run of record) this.#parsed.set(run.positions[0] as number, run.entries[0] as SessionEntry);
  }

  static {
    adoptFileIdentity = (index, stat) => {
      index.#identity = fileIdentity(stat);
      index.#covered = stat.size;
      index.#openEnd = false;
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

  /** Indices (into `ids`) of the entries from the root to the leaf, in order. */
  branch(): readonly number[] {
    if (this.#branch) return this.#branch;
    const path: number[] = [];
    for (let i = this.ids.length - 1; i >= 0; ) {
      path.push(i);
      const parent = this.parents[i] as string | null;
      if (parent === null) break;
      // Parents are earlier entries (checked while opening), so this ends.
      i = this.#byId.get(parent) as number;
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
    const [entry] = await this.entries([id]);
    return entry as SessionEntry;
  }

  /**
   * The entries with these ids, in the order asked (an id may repeat), parsed and checked now. One open and stat of
   * the file for all of them; their lines are read in file order, nearby lines in one read.
   * @throws as `entry` (an unknown id fails before anything is read).
   */
  async entries(ids: readonly string[]): Promise<SessionEntry[]> {
    return this.readAt(
      ids.map((id) => {
        const i = this.#byId.get(id);
        if (i === undefined)
          throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry ${id} in the session`);
        return i;
      }),
    );
  }

  /**
   * The entries at these positions (indices into `ids`), in the order asked, parsed and checked now, with synchronous
   * reads (for callers that cannot await, such as `SessionLog`'s getters). Same reading and errors as `entries`; a
   * position out of range fails with `ERR_INVALID_ARGUMENT`.
   */
  readAt(positions: readonly number[]): SessionEntry[] {
    for (const i of positions) {
      if (!Number.isInteger(i) || i < 0 || i >= this.ids.length)
        throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry at position ${i}`);
    }
    const sorted = [...new Set(positions)].sort((a, b) => a - b);
    const read = this.#read(sorted);
    const at = new Map<number, SessionEntry>();
    for (let j = 0; j < sorted.length; j++) at.set(sorted[j] as number, read[j] as SessionEntry);
    return positions.map((i) => at.get(i) as SessionEntry);
  }

  /**
   * Every entry in file order, parsed and checked now (synchronous reads, as `readAt`). Entries in `known` (runs an
   * earlier read of this index returned, e.g. those `conversationView` recorded) are taken as they are.
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
   * replacement), read synchronously. The entries it parses are appended to `record`, when given (for `readAll`).
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
   * compaction that applies and the entries that follow from it on the current branch.
   * @throws as `entry`, for any line it reads.
   */
  async conversation(): Promise<Conversation> {
    return { messages: this.conversationView().messages };
  }

  /**
   * Read and check every line, as `loadSession` does (it also resolves the conversation). Entries are parsed and
   * dropped, a few thousand at a time.
   * @throws as `entry`, for the first damaged line.
   */
  async verify(): Promise<void> {
    const chunk = 4096;
    for (let s = 0; s < this.ids.length; s += chunk) {
      const run: number[] = [];
      for (let i = s; i < Math.min(s + chunk, this.ids.length); i++) run.push(i);
      this.#read(run);
    }
    this.conversationView();
  }

  /** 1-based line number of entry `i` (an index into `ids`). */
  lineOf(i: number): number {
    return (this.lines[i] as SessionLineRef).line;
  }

  /** The file's size now, after checking it still holds the indexed bytes. */
  #checkIdentity(fd: number): number {
    const st = fstatSync(fd);
    const problem = !st.isFile()
      ? 'it is no longer a regular file'
      : (prefixChange(st, this.#identity, this.#covered) ?? this.#seamProblem(fd, st.size));
    if (problem !== null)
      throw changed(this.path, `the file changed since it was indexed (${problem}); open the index again`);
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
    // Only a byte order mark is covered (the first line was torn): nothing indexed can be extended.
    if (covered === 3 && readSync(fd, b, 0, 3, 0) === 3 && b.equals(UTF8_BOM)) return null;
    readSync(fd, b, 0, 3, covered - 1);
    const ends =
      b[0] === NEWLINE || (this.#openEnd && (b[1] === NEWLINE || (b[1] === CR && b[2] === NEWLINE)));
    return ends ? null : 'its indexed last line was extended';
  }

  /** Parse and check entries `indices` (ascending, distinct), reading runs of nearby lines in one read. */
  #read(indices: readonly number[]): SessionEntry[] {
    const out: SessionEntry[] = new Array(indices.length);
    const fd = openSync(this.path, READ_FLAGS);
    try {
      // The file may have grown since it was indexed: lines are read as indexed, and each must still end where it did.
      const fileBytes = this.#checkIdentity(fd);
      let buf = Buffer.allocUnsafe(0);
      let k = 0;
      while (k < indices.length) {
        const cached = this.#parsed.get(indices[k] as number);
        if (cached) {
          out[k++] = cached;
          continue;
        }
        // One read from this line's start through as many of the next wanted lines as fit in a chunk (always the
        // whole first line, plus up to two bytes to see its line end).
        const start = this.#ref(indices[k] as number).offset;
        let end = this.#lineEnd(indices[k] as number, fileBytes);
        let last = k;
        while (last + 1 < indices.length) {
          const next = indices[last + 1] as number;
          const nextEnd = this.#lineEnd(next, fileBytes);
          if (nextEnd - start > this.#chunkBytes || this.#parsed.has(next)) break;
          end = nextEnd;
          last++;
        }
        const length = end - start;
        if (buf.length < length)
          buf = Buffer.allocUnsafe(Math.max(length, Math.min(this.#chunkBytes, 1 << 20)));
        if (readSync(fd, buf, 0, length, start) !== length)
          throw changed(this.path, 'the file is shorter than when it was indexed');
        while (k <= last) k = this.#parseRun(indices, k, last, buf, start, fileBytes, out);
      }
      this.#checkIdentity(fd);
    } finally {
      closeSync(fd);
    }
    return out;
  }

  /**
   * Parse entries from indices[k] on (up to indices[last]) out of `buf`, which holds the file from offset `start`:
   * lines that follow each other and each end with a newline are decoded as one batch of at most BATCH_BYTES (one
   * `toString`, each line a slice of it); a line whose bytes are not valid UTF-8 on its own. Returns the next k.
   */
  #parseRun(
    indices: readonly number[],
    k: number,
    last: number,
    buf: Buffer,
    start: number,
    fileBytes: number,
    out: SessionEntry[],
  ): number {
    const from = this.#ref(indices[k] as number).offset - start;
    let to = this.#lineStop(indices[k] as number, buf, from, start, fileBytes);
    let n = k;
    while (n < last && to - from < BATCH_BYTES) {
      const next = indices[n + 1] as number;
      if (this.#ref(next).offset - start !== to) break;
      const nextTo = this.#lineStop(next, buf, to, start, fileBytes);
      if (nextTo - from > BATCH_BYTES) break;
      to = nextTo;
      n++;
    }
    const bytes = buf.subarray(from, to);
    if (n > k && !isUtf8(bytes)) n = k; // find the bad line's number: one line at a time
    const text = n > k ? bytes.toString('utf8') : '';
    let p = 0;
    for (let j = k; j <= n; j++) {
      const i = indices[j] as number;
      const ref = this.#ref(i);
      let value: unknown;
      if (n === k) {
        const at = ref.offset - start;
        value = parseBytes(this.path, ref.line, buf.subarray(at, at + ref.bytes), (line) =>
          noteInvalidUtf8(this.path, this.warnings as SessionWarning[], line),
        );
      } else {
        const nl = text.indexOf('\n', p);
        const line = text.slice(p, nl > p && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl);
        p = nl + 1;
        try {
          value = JSON.parse(line);
        } catch (err) {
          throw corruptLine(this.path, ref.line, err);
        }
      }
      out[j] = this.#check(i, value);
    }
    return n + 1;
  }

  #ref(i: number): SessionLineRef {
    return this.lines[i] as SessionLineRef;
  }

  /**
   * Where entry `i`'s line (at `at` in `buf`, which holds the file from offset `start`) ends, just past its newline
   * (an optional CR, then a newline; or the file's end, for an unterminated last line).
   * @throws ERR_SESSION_CHANGED when the bytes after the line are not such an end: the file was rewritten.
   */
  #lineStop(i: number, buf: Buffer, at: number, start: number, fileBytes: number): number {
    const ref = this.#ref(i);
    let p = at + ref.bytes;
    if (start + p < fileBytes && buf[p] === CR) p++;
    if (start + p === fileBytes) return p;
    if (buf[p] !== NEWLINE)
      throw changed(this.path, `line ${ref.line} no longer ends where it was indexed; the file changed`);
    return p + 1;
  }

  /** File offset just past entry `i`'s line end (its optional CR and newline), in a file of `fileBytes`. */
  #lineEnd(i: number, fileBytes: number): number {
    const ref = this.#ref(i);
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

  /** Whether entry `i`'s line, on disk now, begins with the leading fields the index took from it. */
  #leadsAsIndexed(i: number): boolean {
    const ref = this.#ref(i);
    const got = Buffer.alloc(Math.min(ref.bytes, LEADING_BYTES));
    try {
      const fd = openSync(this.path, READ_FLAGS);
      try {
        readSync(fd, got, 0, got.length, ref.offset);
      } finally {
        closeSync(fd);
      }
    } catch {
      return false;
    }
    const lead = leadingFields(latin1(got, got.length));
    return (
      lead !== undefined &&
      lead.id === this.ids[i] &&
      lead.parentId === this.parents[i] &&
      lead.type === this.types[i]
    );
  }
}

/**
 * Index a session file written by `SessionLog` (see the module comment for what is parsed and checked when). Phases:
 * the scan (every line through the splitter, only each line's head kept when it spans reads), the last line without
 * a newline (torn or loaded), the check that the file did not change meanwhile, the index (header, current model).
 *
 * Errors (`PantoError`), as `loadSession` for what opening reads: `ERR_SESSION_CORRUPT` for a line longer than
 * `maxLineBytes` or a line it parses that is not valid JSON; `ERR_SESSION_FORMAT` for a bad or newer header, a
 * duplicate id, a parent that is not an earlier entry, or a parsed line that is not a valid entry;
 * `ERR_SESSION_CHANGED` when the file changed while it was being indexed (other than by growing: the bytes appended
 * meanwhile are not indexed). A torn last line is skipped with a warning, and a file with no header opens as an empty
 * session, as with `loadSession`. `ERR_INVALID_ARGUMENT` when `path` is not a regular file. File-system errors
 * propagate.
 */
export async function openSessionIndex(
  path: string,
  options: SessionIndexOptions = {},
): Promise<SessionIndex> {
  const { chunkBytes, maxLineBytes } = readLimits(options);
  const fh = await openRegularFile(path);
  try {
    const identity = fileIdentity(await fh.stat());
    const scan = new IndexScan(path, fh);
    const read = await readLines(
      fh,
      {
        chunkBytes,
        maxLineBytes,
        limit: identity.size,
        headBytes: LEADING_BYTES,
        tooLong: () => lineTooLong(path, scan.lineNo + 1, maxLineBytes),
      },
      (block) => scan.block(block),
      (head) => scan.long(head),
    );
    if (read.last) await scan.last(read.last);
    scan.finish();
    const problem =
      read.fileBytes !== identity.size
        ? 'it shrank'
        : prefixChange(await fh.stat(), identity, scan.torn ? scan.torn.offset : identity.size);
    if (problem !== null) throw changed(path, `the file changed while it was being indexed (${problem})`);
    return new SessionIndex(scan, identity, chunkBytes);
  } finally {
    await fh.close();
  }
}
