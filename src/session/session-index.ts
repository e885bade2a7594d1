/**
 * A lazily parsed session file: `openSessionIndex` makes one pass over the file's bytes and keeps, per entry, its id,
 * parent, type and line position (a few dozen bytes per entry), taken from the line's first bytes when the line is in
 * `SessionLog`'s form (leading-fields.ts) and by parsing it otherwise. Entries are parsed when asked for; the file's
 * text is never all held.
 *
 * Opening checks the header, the tree and line lengths; a line the index did not parse is checked when it is read
 * (JSON, entry shape, and the same type/id/parentId as indexed). `verify()` checks every line, as `loadSession` does.
 *
 * The indexed bytes must not change while the index is used, but the file may grow (an agent appending): every read
 * checks the file still holds them (same inode, not shorter, not rewritten in place, the last line ending where it
 * did) and fails with `ERR_SESSION_CHANGED` otherwise. `SessionLog`, the file's locked writer, tells its index about
 * its own appends and repairs. Reads are synchronous underneath (`readAt`, `readAll`, `conversationView`).
 */

import { isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import type { Conversation } from '../conversation.js';
import { PantoError } from '../errors.js';
import { addAnswer, copyUsage } from './answer-usage.js';
import { checkedEntry, checkedHeader, EntryTree } from './entry-tree.js';
import {
  finalLine,
  formatError,
  type JsonlReadOptions,
  lineTooLong,
  parseLine,
  readLimits,
} from './jsonl-reader.js';
import { LEADING_BYTES, type LeadingFields, leadingFields } from './leading-fields.js';
import { CR, decodeLines, type LastLine, type LineBlock, NEWLINE, readLines } from './line-reader.js';
import { openRegularFile, READ_FLAGS } from './regular-file.js';
import { type ConversationView, resolveBranch } from './resolve-conversation.js';
import type { CompactionEntry, ModelUsage, SessionEntry, SessionHeader } from './session-entry.js';
import { headerlessSession, LineWarnings, type SessionWarning, type TornLine } from './session-warning.js';

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

/** The `fstat` fields a read compares with the file as it was indexed. */
type FileIdentity = Pick<Stats, 'size' | 'mtimeMs' | 'ino' | 'dev'>;

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
/** Bytes of lines `usage()` parses before it counts and drops them. */
const USAGE_BATCH_BYTES = 8 * 1024 * 1024;

const latin1 = (b: Buffer, end: number): string =>
  (b as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(0, end);

function changed(path: string, problem: string): PantoError {
  return new PantoError('ERR_SESSION_CHANGED', `${path}: ${problem}`);
}

/** The entries of `runs` by position. */
function byPosition(runs: readonly ParsedRun[]): Map<number, SessionEntry> {
  const map = new Map<number, SessionEntry>();
  for (const run of runs) {
    for (let k = 0; k < run.positions.length; k++)
      map.set(run.positions[k] as number, run.entries[k] as SessionEntry);
  }
  return map;
}

/** Bytes as a JSON value; bytes that are not valid UTF-8 decode to U+FFFD and `onInvalidUtf8` is told the line. */
function parseBytes(
  path: string,
  line: number,
  bytes: Buffer,
  onInvalidUtf8: (line: number) => void,
): unknown {
  if (!isUtf8(bytes)) onInvalidUtf8(line);
  return parseLine(path, line, bytes.toString('utf8'));
}

/**
 * The index of one session file. Arrays are parallel, one element per entry in file order (the header is not an
 * entry). Get one with `openSessionIndex`.
 */
export class SessionIndex extends EntryTree {
  /** The header (a new one, not in the file, when `headerMissing`). */
  declare readonly header: SessionHeader;
  /** Id of the last entry, or `null` when the file holds only a header. */
  declare readonly leafId: string | null;
  /** The current model: the latest `model_change` on the path to the leaf, else the header's `model`. */
  declare readonly model: string | undefined;
  /** Bytes of the file that was indexed. */
  declare readonly fileBytes: number;
  /** The last line, when it ended without a newline and did not parse (skipped; a `torn_line` warning). */
  declare readonly torn: TornLine | undefined;
  /** True when the last line parsed but has no trailing newline (an appender must write one first). */
  declare readonly unterminated: boolean;
  /** True when the file has no header (see the `no_header` warning): `header` is a new one, not in the file. */
  declare readonly headerMissing: boolean;
  readonly #warnings: LineWarnings;
  /** What opening reported, in line order; live: a line first read later may add `invalid_utf8` (do not mutate). */
  readonly warnings: readonly SessionWarning[];
  readonly #lines: SessionLineRef[] = [];
  readonly lines: readonly SessionLineRef[] = this.#lines;
  #identity: FileIdentity | undefined;
  /** Bytes at the file's start the index was made from (less a torn last line): a read needs them unchanged. */
  #covered = 0;
  /** True while the covered bytes end inside a line (an unterminated last line): its newline may follow them. */
  #openEnd = false;
  readonly #chunkBytes: number;
  /** Entries parsed while opening (lines not in the leading-field form, the current model's change) or appended. */
  readonly #parsed = new Map<number, SessionEntry>();
  /** Where `read` pushes the runs it parsed (`conversationView`). */
  #record: ParsedRun[] | undefined;
  /** Opening: the header once read, and the lines seen. */
  #header: SessionHeader | undefined;
  #lineNo = 0;
  readonly #onInvalidUtf8 = (line: number) => this.#warnings.invalidUtf8(line);

  private constructor(path: string, chunkBytes: number) {
    super(path);
    this.#warnings = new LineWarnings(path);
    this.warnings = this.#warnings.list;
    this.#chunkBytes = chunkBytes;
  }

  static {
    adoptFileIdentity = (index, stat) => {
      index.#identity = stat;
      index.#covered = stat.size;
      index.#openEnd = false;
    };
  }

  /** @internal Use `openSessionIndex`. */
  static async open(path: string, options: SessionIndexOptions): Promise<SessionIndex> {
    const { chunkBytes, maxLineBytes } = readLimits(options);
    const fh = await openRegularFile(path);
    try {
      const identity = await fh.stat();
      const index = new SessionIndex(path, chunkBytes);
      const read = await readLines(
        fh,
        {
          chunkBytes,
          maxLineBytes,
          limit: identity.size,
          tooLong: () => lineTooLong(path, index.#lineNo + 1, maxLineBytes),
        },
        (block) => index.#block(block),
      );
      const torn = read.last === undefined ? undefined : index.#last(read.last);
      const problem =
        read.fileBytes !== identity.size
          ? 'it shrank'
          : prefixChange(await fh.stat(), identity, torn ? torn.offset : identity.size);
      if (problem !== null) throw changed(path, `the file changed while it was being indexed (${problem})`);
      index.#end(identity, torn, read.last !== undefined && torn === undefined);
      return index;
    } finally {
      await fh.close();
    }
  }

  /** Opening: the complete lines of a block, each indexed from its leading fields or else parsed. */
  #block({ buf, start, end, offset }: LineBlock): void {
    for (let s = start; s < end; ) {
      const nl = buf.indexOf(NEWLINE, s);
      const bytes = buf.subarray(s, nl > s && buf[nl - 1] === CR ? nl - 1 : nl);
      const line = ++this.#lineNo;
      const at = offset + (s - start);
      s = nl + 1;
      if (bytes.length === 0) {
        this.#warnings.empty(line);
        continue;
      }
      const lead = this.#lead(bytes);
      if (lead === undefined) {
        this.#addParsed(line, at, bytes.length, parseBytes(this.path, line, bytes, this.#onInvalidUtf8));
        continue;
      }
      try {
        this.#add(line, at, bytes.length, lead);
      } catch (err) {
        // The one-pass reader parses a line before it checks its links: a line that is not JSON is CORRUPT first.
        parseBytes(this.path, line, bytes, () => {});
        throw err;
      }
    }
  }

  /** The leading fields a line (after the header) begins with, else undefined (the first 128 bytes, then more). */
  #lead(bytes: Buffer): LeadingFields | undefined {
    if (this.#header === undefined) return undefined;
    const previous = this.ids[this.ids.length - 1];
    const lead = leadingFields(latin1(bytes, Math.min(bytes.length, 128)), previous);
    if (lead !== undefined || bytes.length <= 128) return lead;
    return leadingFields(latin1(bytes, Math.min(bytes.length, LEADING_BYTES)), previous);
  }

  /** Opening: the last line, without a newline: loaded when it parses, else torn (skipped, returned). */
  #last(last: LastLine): TornLine | undefined {
    const line = ++this.#lineNo;
    const end = finalLine(this.path, line, last, this.#header === undefined, this.#warnings);
    if ('torn' in end) return end.torn;
    if (end.text !== '') this.#addParsed(line, last.offset, last.bytes.length, end.value);
    return undefined;
  }

  #add(line: number, offset: number, bytes: number, { type, id, parentId }: LeadingFields): void {
    this.link(line, type, id, parentId);
    this.#lines.push({ line, offset, bytes });
  }

  /** A line read whole: the header, or an entry not in SessionLog's leading-field form. */
  #addParsed(line: number, offset: number, bytes: number, value: unknown): void {
    if (this.#header === undefined) {
      this.#header = checkedHeader(this.path, line, value);
      return;
    }
    const e = checkedEntry(this.path, line, value);
    this.#add(line, offset, bytes, e);
    this.#parsed.set(this.size - 1, e);
  }

  /** Opening's end: the fields it sets, and the current model (the latest model_change on the branch, parsed now). */
  #end(identity: FileIdentity, torn: TornLine | undefined, unterminated: boolean): void {
    const header = this.#header ?? headerlessSession(this.path, this.#warnings.list);
    this.#identity = identity;
    this.#covered = torn ? torn.offset : identity.size;
    this.#openEnd = unterminated;
    const at = this.branch().findLast((i) => this.types[i] === 'model_change');
    const change = at === undefined ? undefined : this.#read([at])[0];
    if (at !== undefined && change !== undefined) this.#parsed.set(at, change);
    Object.assign(this, {
      header,
      headerMissing: this.#header === undefined,
      leafId: this.ids[this.ids.length - 1] ?? null,
      model: change?.type === 'model_change' ? change.model : header.model,
      fileBytes: identity.size,
      torn,
      unterminated,
    });
  }

  override appendEntry(entry: SessionEntry, offset: number, bytes: number): void {
    this.#add(this.size === 0 ? 2 : this.lineOf(this.size - 1) + 1, offset, bytes, entry);
    this.#parsed.set(this.size - 1, entry);
  }

  /** Indices (into `ids`) of the entries from the root to the leaf, in order. */
  branch(): readonly number[] {
    return this.branchTo(this.size - 1);
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
   * The entries with these ids, in the order asked (an id may repeat), parsed and checked now; nearby lines in one
   * read. @throws as `entry` (an unknown id fails before anything is read).
   */
  async entries(ids: readonly string[]): Promise<SessionEntry[]> {
    return this.readAt(
      ids.map((id) => {
        const i = this.positionOf(id);
        if (i === undefined)
          throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry ${id} in the session`);
        return i;
      }),
    );
  }

  /** `entries` by position (indices into `ids`), with synchronous reads; out of range: `ERR_INVALID_ARGUMENT`. */
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

  /** Every entry in file order, read as `readAt`; those in `known` (runs read earlier) are taken as they are. */
  readAll(known: readonly ParsedRun[] = []): SessionEntry[] {
    const all: SessionEntry[] = new Array(this.ids.length);
    for (const [i, e] of byPosition(known)) all[i] = e;
    const missing: number[] = [];
    for (let i = 0; i < all.length; i++) if (all[i] === undefined) missing.push(i);
    const read = this.#read(missing);
    for (let k = 0; k < missing.length; k++) all[missing[k] as number] = read[k] as SessionEntry;
    return all;
  }

  /** The current conversation with each message's entry id, read synchronously; parsed runs pushed to `record`. */
  conversationView(record?: ParsedRun[]): ConversationView {
    this.#record = record;
    try {
      return resolveBranch(this.branch(), this);
    } finally {
      this.#record = undefined;
    }
  }

  override read(positions: readonly number[]): SessionEntry[] {
    const entries = this.#read(positions);
    this.#record?.push({ positions, entries });
    return entries;
  }

  /** The current conversation (resolve-conversation.ts), from the compaction that applies on. @throws as `entry`. */
  async conversation(): Promise<Conversation> {
    return { messages: this.conversationView().messages };
  }

  /** Read and check every line and the conversation, as an eager `loadSession` does. @throws as `entry`. */
  async verify(): Promise<void> {
    const chunk = 4096;
    for (let s = 0; s < this.ids.length; s += chunk) {
      const run: number[] = [];
      for (let i = s; i < Math.min(s + chunk, this.ids.length); i++) run.push(i);
      this.#read(run);
    }
    this.conversationView();
  }

  /**
   * The usage of the session's answers (answer-usage.ts), read now: the compactions from the last back to the latest
   * that records `usageBefore`, then the messages after it (a few MiB at a time; those in `known` are not read
   * again). Throws as `entry`, for any line it reads.
   */
  usage(known: readonly ParsedRun[] = []): ModelUsage[] {
    const parsed = byPosition(known);
    let totals: ModelUsage[] = [];
    let from = 0;
    for (let i = this.ids.length - 1; i >= 0; i--) {
      if (this.types[i] !== 'compaction') continue;
      const c = (parsed.get(i) ?? this.#read([i])[0]) as CompactionEntry;
      if (c.usageBefore !== undefined) {
        totals = copyUsage(c.usageBefore);
        from = i + 1;
        break;
      }
    }
    // The messages after it, in file order, reading a few MiB of lines not parsed yet at a time.
    for (let i = from; i < this.ids.length; ) {
      const start = i;
      const unread: number[] = [];
      for (let bytes = 0; i < this.ids.length && bytes < USAGE_BATCH_BYTES; i++) {
        if (this.types[i] !== 'message' || parsed.has(i)) continue;
        unread.push(i);
        bytes += this.#ref(i).bytes;
      }
      const read = this.#read(unread);
      for (let k = 0; k < unread.length; k++) parsed.set(unread[k] as number, read[k] as SessionEntry);
      for (let j = start; j < i; j++) {
        const e = this.types[j] === 'message' ? parsed.get(j) : undefined;
        if (e?.type === 'message') addAnswer(totals, e.message);
        parsed.delete(j);
      }
    }
    return totals;
  }

  /** 1-based line number of entry `i` (an index into `ids`). */
  override lineOf(i: number): number {
    return (this.lines[i] as SessionLineRef).line;
  }

  /** The file's size now, after checking it still holds the indexed bytes. */
  #checkIdentity(fd: number): number {
    const st = fstatSync(fd);
    const problem = !st.isFile()
      ? 'it is no longer a regular file'
      : (prefixChange(st, this.#identity as FileIdentity, this.#covered) ?? this.#seamProblem(fd, st.size));
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
        // Lines that follow each other, each ending where it was indexed, are decoded together.
        while (k <= last) {
          let to = this.#lineStop(indices[k] as number, buf, start, fileBytes);
          let n = k;
          while (n < last && this.#ref(indices[n + 1] as number).offset - start === to)
            to = this.#lineStop(indices[++n] as number, buf, start, fileBytes);
          let j = k;
          decodeLines(buf, this.#ref(indices[k] as number).offset - start, to, (text, invalidUtf8) => {
            if (j > n) throw changed(this.path, 'a line indexed whole holds a newline now; the file changed');
            const i = indices[j] as number;
            const line = this.lineOf(i);
            if (invalidUtf8) this.#warnings.invalidUtf8(line);
            out[j++] = this.#check(i, parseLine(this.path, line, text), text);
          });
          k = n + 1;
        }
      }
      this.#checkIdentity(fd);
    } finally {
      closeSync(fd);
    }
    return out;
  }

  #ref(i: number): SessionLineRef {
    return this.lines[i] as SessionLineRef;
  }

  /**
   * Where entry `i`'s line ends in `buf` (which holds the file from offset `start`), just past its newline (an
   * optional CR, then a newline; or the file's end, for an unterminated last line).
   * @throws ERR_SESSION_CHANGED when the bytes after the line are not such an end: the file was rewritten.
   */
  #lineStop(i: number, buf: Buffer, start: number, fileBytes: number): number {
    const ref = this.#ref(i);
    let p = ref.offset - start + ref.bytes;
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

  /** `value` (parsed from `text`) is a valid entry matching what the index holds for entry `i`. */
  #check(i: number, value: unknown, text: string): SessionEntry {
    const line = this.lineOf(i);
    const e = checkedEntry(this.path, line, value);
    if (e.id !== this.ids[i] || e.parentId !== this.parents[i] || e.type !== this.types[i]) {
      const what = `entry ${e.id} (${e.type}, parent ${e.parentId}) is not the indexed ${this.ids[i]} (${this.types[i]}, parent ${this.parents[i]})`;
      // The line still begins with the fields it was indexed by: the line itself lies (a repeated key later in it
      // says otherwise). Else the file was rewritten under the reader.
      const lead = leadingFields(text);
      if (
        lead !== undefined &&
        lead.id === this.ids[i] &&
        lead.parentId === this.parents[i] &&
        lead.type === this.types[i]
      )
        throw formatError(this.path, line, `${what}: the line repeats a key`);
      throw new PantoError('ERR_SESSION_CHANGED', `${this.path}:${line}: ${what}; the file changed`);
    }
    return e;
  }
}

/**
 * Index a session file written by `SessionLog` (see the module comment). Phases: the scan, the last line without a
 * newline (torn or loaded), the check that the file did not change meanwhile, the index. Errors as `loadSession`'s
 * for what opening reads (a torn last line and a missing header as there too); `ERR_SESSION_CHANGED` when the file
 * changed while indexed, other than by growing (bytes appended meanwhile are not indexed).
 */
export function openSessionIndex(path: string, options: SessionIndexOptions = {}): Promise<SessionIndex> {
  return SessionIndex.open(path, options);
}
