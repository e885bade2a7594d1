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
import { checkedEntry, checkedHeader, EntryTree } from './entry-tree.js';
import {
  finalLine,
  formatError,
  type JsonlReadOptions,
  lineTooLong,
  parseLine,
  readLimits,
} from './jsonl-reader.js';
import { type LeadingFields, leadingFields, leadingText } from './leading-fields.js';
import {
  CR,
  decodeLines,
  type LastLine,
  type LineBlock,
  NEWLINE,
  openRegularFile,
  READ_FLAGS,
  readLines,
} from './line-reader.js';
import { type ConversationView, modelOnBranch, resolveBranch } from './resolve-conversation.js';
import type { SessionEntry, SessionHeader } from './session-entry.js';
import { headerlessSession, LineWarnings, type SessionWarning, type TornLine } from './session-warning.js';

export type SessionIndexOptions = JsonlReadOptions;

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

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function changed(path: string, problem: string): PantoError {
  return new PantoError('ERR_SESSION_CHANGED', `${path}: ${problem}`);
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
  readonly #warnings = new LineWarnings(this.path);
  /** What opening reported, in line order; live: a line first read later may add `invalid_utf8` (do not mutate). */
  readonly warnings: readonly SessionWarning[] = this.#warnings.list;
  /** Per entry `i`: its line's byte offset at `2i` and length at `2i + 1` (`lineRef`). */
  #refs = new Float64Array(2048);
  #identity: FileIdentity | undefined;
  /** Bytes at the file's start the index was made from (less a torn last line): a read needs them unchanged. */
  #covered = 0;
  /** True while the covered bytes end inside a line (an unterminated last line): its newline may follow them. */
  #openEnd = false;
  readonly #chunkBytes: number;
  /**
   * Entries parsed while opening (lines not in the leading-field form), appended, or kept by `conversationView(true)`:
   * reads take them as they are.
   */
  readonly #parsed = new Map<number, SessionEntry>();
  /** While `conversationView(true)` runs: `readAt` keeps what it parsed in `#parsed`. */
  #keep = false;
  /** Opening: the header once read, and the lines seen. */
  #header: SessionHeader | undefined;
  #lineNo = 0;

  private constructor(path: string, chunkBytes: number) {
    super(path);
    this.#chunkBytes = chunkBytes;
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
      const stop = nl > s && buf[nl - 1] === CR ? nl - 1 : nl;
      const line = ++this.#lineNo;
      const at = offset + (s - start);
      const from = s;
      s = nl + 1;
      if (stop === from) {
        this.#warnings.empty(line);
        continue;
      }
      const lead =
        this.#header === undefined
          ? undefined
          : leadingFields(buf, from, stop, this.ids[this.ids.length - 1]);
      if (lead === undefined) {
        this.#addParsed(line, at, stop - from, this.#parseBytes(line, buf.subarray(from, stop), true));
        continue;
      }
      try {
        this.#add(line, at, stop - from, lead);
      } catch (err) {
        // The one-pass reader parses a line before it checks its links: a line that is not JSON is CORRUPT first.
        this.#parseBytes(line, buf.subarray(from, stop), false);
        throw err;
      }
    }
  }

  /** Line `line`'s bytes as a JSON value; bytes not valid UTF-8 decode to U+FFFD (an `invalid_utf8` when `warn`). */
  #parseBytes(line: number, bytes: Buffer, warn: boolean): unknown {
    if (warn && !isUtf8(bytes)) this.#warnings.invalidUtf8(line);
    return parseLine(this.path, line, bytes.toString('utf8'));
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
    const i = 2 * (this.size - 1);
    if (i === this.#refs.length) {
      const refs = this.#refs;
      this.#refs = new Float64Array(2 * i);
      this.#refs.set(refs);
    }
    this.#refs[i] = offset;
    this.#refs[i + 1] = bytes;
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

  /** Opening's end: the fields it sets, and the current model (the latest model_change on the branch, read now). */
  #end(identity: FileIdentity, torn: TornLine | undefined, unterminated: boolean): void {
    const header = this.#header ?? headerlessSession(this.path, this.#warnings.list);
    this.#identity = identity;
    this.#covered = torn ? torn.offset : identity.size;
    this.#openEnd = unterminated;
    Object.assign(this, {
      header,
      headerMissing: this.#header === undefined,
      leafId: this.ids[this.ids.length - 1] ?? null,
      model: modelOnBranch(this.branchTo(this.size - 1), this, header.model),
      fileBytes: identity.size,
      torn,
      unterminated,
    });
  }

  /**
   * @internal For `SessionLog`, the file's one writer: after its own append or repair, `stat` is the state later reads
   * expect (the indexed lines are unchanged; the file only grew or lost a torn tail past them).
   */
  adopt(stat: FileIdentity): void {
    this.#identity = stat;
    this.#covered = stat.size;
    this.#openEnd = false;
  }

  override appendEntry(entry: SessionEntry, offset: number, bytes: number): void {
    this.#add(this.lineOf(this.size - 1) + 1, offset, bytes, entry);
    this.#parsed.set(this.size - 1, entry);
  }

  /**
   * The entry with this id, parsed and checked now.
   * @throws PantoError `ERR_INVALID_ARGUMENT` for an id not in the index; `ERR_SESSION_CORRUPT` / `ERR_SESSION_FORMAT`
   *   for a damaged line; `ERR_SESSION_CHANGED` when the file changed since it was indexed.
   */
  async entry(id: string): Promise<SessionEntry> {
    return (await this.entries([id]))[0] as SessionEntry;
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
  override readAt(positions: readonly number[]): SessionEntry[] {
    for (const i of positions) {
      if (!Number.isInteger(i) || i < 0 || i >= this.ids.length)
        throw new PantoError('ERR_INVALID_ARGUMENT', `${this.path}: no entry at position ${i}`);
    }
    const sorted = [...new Set(positions)].sort((a, b) => a - b);
    const read = this.#read(sorted);
    const at = this.#keep ? this.#parsed : new Map<number, SessionEntry>();
    for (let j = 0; j < sorted.length; j++) at.set(sorted[j] as number, read[j] as SessionEntry);
    return positions.map((i) => at.get(i) as SessionEntry);
  }

  /** Every entry in file order, read as `readAt`. */
  readAll(): SessionEntry[] {
    return this.#read([...this.ids.keys()]);
  }

  /**
   * The current conversation with each message's entry id, read synchronously. `keep`: the index keeps the entries
   * it parsed (later reads, `readAll` and `usage` take them as they are).
   */
  conversationView(keep = false): ConversationView {
    this.#keep = keep;
    try {
      return resolveBranch(this.branchTo(this.size - 1), this);
    } finally {
      this.#keep = false;
    }
  }

  /** The current conversation (resolve-conversation.ts), from the compaction that applies on. @throws as `entry`. */
  async conversation(): Promise<Conversation> {
    return { messages: this.conversationView().messages };
  }

  /** Read and check every line and the conversation, as an eager `loadSession` does. @throws as `entry`. */
  async verify(): Promise<void> {
    const all = [...this.ids.keys()];
    for (let s = 0; s < all.length; s += 4096) this.#read(all.slice(s, s + 4096));
    this.conversationView();
  }

  override lineBytes(i: number): number {
    return this.#parsed.has(i) ? 0 : this.lineRef(i).bytes;
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
        const start = this.lineRef(indices[k] as number).offset;
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
          while (n < last && this.lineRef(indices[n + 1] as number).offset - start === to)
            to = this.#lineStop(indices[++n] as number, buf, start, fileBytes);
          let j = k;
          decodeLines(buf, this.lineRef(indices[k] as number).offset - start, to, (text, invalidUtf8) => {
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

  /** Where entry `i`'s line is in the file. */
  lineRef(i: number): SessionLineRef {
    return {
      line: this.lineOf(i),
      offset: this.#refs[2 * i] as number,
      bytes: this.#refs[2 * i + 1] as number,
    };
  }

  /**
   * Where entry `i`'s line ends in `buf` (which holds the file from offset `start`), just past its newline (an
   * optional CR, then a newline; or the file's end, for an unterminated last line).
   * @throws ERR_SESSION_CHANGED when the bytes after the line are not such an end: the file was rewritten.
   */
  #lineStop(i: number, buf: Buffer, start: number, fileBytes: number): number {
    const ref = this.lineRef(i);
    let p = ref.offset - start + ref.bytes;
    if (start + p < fileBytes && buf[p] === CR) p++;
    if (start + p === fileBytes) return p;
    if (buf[p] !== NEWLINE)
      throw changed(this.path, `line ${ref.line} no longer ends where it was indexed; the file changed`);
    return p + 1;
  }

  /** File offset just past entry `i`'s line end (its optional CR and newline), in a file of `fileBytes`. */
  #lineEnd(i: number, fileBytes: number): number {
    const ref = this.lineRef(i);
    return Math.min(ref.offset + ref.bytes + 2, fileBytes);
  }

  /** `value` (parsed from `text`) is a valid entry matching what the index holds for entry `i`. */
  #check(i: number, value: unknown, text: string): SessionEntry {
    const line = this.lineOf(i);
    const e = checkedEntry(this.path, line, value, text.length);
    const [id, type, parentId] = [this.ids[i], this.typeAt(i), this.parentOf(i)];
    if (e.id !== id || e.parentId !== parentId || e.type !== type) {
      const what = `entry ${e.id} (${e.type}, parent ${e.parentId}) is not the indexed ${id} (${type}, parent ${parentId})`;
      // The line still begins with the fields it was indexed by: the line itself lies (a repeated key later in it
      // says otherwise). Else the file was rewritten under the reader.
      const lead = leadingText(text);
      if (lead !== undefined && lead.id === id && lead.parentId === parentId && lead.type === type)
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
