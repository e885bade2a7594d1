/**
 * The writer side of a session file (format: docs/session-format.md).
 *
 * Contracts:
 * - One writer per file: `create`/`open` take `FILE.lock` (see file-lock.ts) and fail with `ERR_SESSION_LOCKED` while
 *   another live process, or another `SessionLog` in this process, has it. `close()` releases it.
 * - Each append is one `write(2)` of one whole line (JSON + `\n`) on a file descriptor opened with O_APPEND, so a
 *   crash leaves at most a torn LAST line, which `loadSession` skips with a warning and `open` cuts off before
 *   appending. If a write fails (e.g. ENOSPC) the file is truncated back to its previous end and the error rethrown.
 * - `fsync: true` makes every append durable before it returns (slower; default off).
 * - Appended values are checked first (`ERR_INVALID_ARGUMENT` for a malformed message or for data JSON would not
 *   round-trip, such as `undefined`, `Date`, `Uint8Array` or `NaN`), so a log never holds a line it cannot load.
 * - The log keeps the current conversation (`conversation`), equal to what `loadSession` returns for the file. It
 *   holds references to the appended messages: do not mutate a message after appending it.
 * - Opening is lazy, as `loadSession` is, on the same two paths: a file that mentions no compaction is parsed in
 *   one pass, as with `eager: true`; otherwise the file is indexed (session-index.ts) and only the current
 *   conversation is parsed. On the index path the entries the file held when it was opened are parsed when something
 *   needs them: `entries` (all, on its first read), `branch()` (the new branch's conversation and model), with
 *   synchronous reads. Such a read checks the file still holds what this log opened and wrote (the same inode, not
 *   shorter than after its last write nor rewritten in place, and each line's id/parent/type; lines appended by a
 *   writer that ignored the lock are not a change, and are not read) and fails with `ERR_SESSION_CHANGED` otherwise; a damaged line
 *   fails it as `loadSession` would (`ERR_SESSION_CORRUPT` / `ERR_SESSION_FORMAT`, with the line number).
 *   `eager: true` parses every line at open.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, truncateSync, writeSync } from 'node:fs';
import type { Conversation, Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import { mentionsCompaction } from './compaction-probe.js';
import { FileLock } from './file-lock.js';
import type { TornLine } from './jsonl-reader.js';
import { type EagerState, type LoadSessionOptions, readEagerly } from './load-session.js';
import {
  type CompactionInput,
  compactionEntry,
  customEntry,
  invalid,
  messageEntry,
  modelChangeEntry,
} from './new-entries.js';
import {
  type ConversationView,
  type LazyEntries,
  modelOnBranch,
  resolveBranch,
} from './resolve-conversation.js';
import {
  type CompactionEntry,
  type CustomEntry,
  type MessageEntry,
  type ModelChangeEntry,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
} from './session-entry.js';
import { adoptFileIdentity, openSessionIndex, type ParsedRun, type SessionIndex } from './session-index.js';
import type { SessionWarning } from './session-warning.js';
import type { SessionWriter } from './session-writer.js';
import { nestingProblem, tooDeep } from './validate-entry.js';

export interface SessionLogOptions extends LoadSessionOptions {
  /** fsync the file after every append (default false). */
  fsync?: boolean;
}

export interface CreateSessionOptions extends SessionLogOptions {
  /** Model id recorded in the header. */
  model?: string;
  /** Workspace root recorded in the header. */
  workspace?: string;
  /** Session id (default: 16 random hex digits). */
  id?: string;
}

/** The entries a file held when a log opened it, by position in file order: parsed on demand, or all in memory. */
interface OpenedEntries {
  readonly size: number;
  idAt(i: number): string;
  parentAt(i: number): string | null;
  typeAt(i: number): SessionEntry['type'];
  positionOf(id: string): number | undefined;
  /** The entries at these positions (ascending); a fresh array. */
  read(positions: readonly number[]): SessionEntry[];
  /** Every entry, in file order, reusing the entries in `known`; a fresh array the caller owns. */
  all(known: readonly ParsedRun[]): SessionEntry[];
}

/** A lazy open's entries: through the index (synchronous reads; its errors). */
function indexed(index: SessionIndex): OpenedEntries {
  return {
    size: index.size,
    idAt: (i) => index.ids[i] as string,
    parentAt: (i) => index.parents[i] as string | null,
    typeAt: (i) => index.types[i] as SessionEntry['type'],
    positionOf: (id) => index.positionOf(id),
    read: (positions) => index.readAt(positions),
    all: (known) => index.readAll(known),
  };
}

/** An eager open's entries, all parsed. Positions by id are built on the first `positionOf`. */
function inMemory(entries: readonly SessionEntry[], byId: ReadonlyMap<string, SessionEntry>): OpenedEntries {
  const size = entries.length;
  let positions: Map<string, number> | undefined;
  return {
    size,
    idAt: (i) => (entries[i] as SessionEntry).id,
    parentAt: (i) => (entries[i] as SessionEntry).parentId,
    typeAt: (i) => (entries[i] as SessionEntry).type,
    positionOf: (id) => {
      if (!byId.has(id)) return undefined;
      if (positions === undefined) {
        positions = new Map();
        for (let i = 0; i < size; i++) positions.set((entries[i] as SessionEntry).id, i);
      }
      return positions.get(id);
    },
    read: (wanted) => wanted.map((i) => entries[i] as SessionEntry),
    all: () => entries.slice(0, size),
  };
}

/** The end of a session file as `open` found it (from the index or the eager read): what it repairs. */
interface FileEnd {
  headerMissing: boolean;
  fileBytes: number;
  torn?: TornLine | undefined;
  unterminated: boolean;
}

/** The file, lock and append position of a `SessionLog` (`create` sets them too, for a new file). */
interface OpenedForAppend {
  path: string;
  header: SessionHeader;
  /** The repairs made before appending (`repaired`, pushed by `openForAppend`). */
  warnings: SessionWarning[];
  fsync: boolean;
  lock: FileLock;
  fd: number;
  size: number;
}

/**
 * Repair the end of `path` so the next append starts a clean line, then open it with O_APPEND: a file without a
 * header is emptied and gets `header` (fsynced when `fsync`), a torn last line is cut off, a missing final newline
 * is written. Each cut is reported in `warnings` (pushed to) as `repaired`. The returned descriptor is the caller's
 * to close; it is closed here if a write fails. I/O errors are thrown as they come.
 */
function openForAppend(
  path: string,
  header: SessionHeader,
  end: FileEnd,
  warnings: SessionWarning[],
  fsync: boolean,
  lock: FileLock,
): OpenedForAppend {
  let size = end.fileBytes;
  if (end.headerMissing) {
    truncateSync(path, 0);
    size = 0;
    warnings.push({
      kind: 'repaired',
      line: 1,
      message: `${path}: wrote a new session header (the file had none; ${end.fileBytes} bytes dropped)`,
    });
  } else if (end.torn) {
    truncateSync(path, end.torn.offset);
    size = end.torn.offset;
    warnings.push({
      kind: 'repaired',
      line: end.torn.line,
      message: `${path}:${end.torn.line}: cut off the incomplete last line (${end.torn.bytes} bytes) before appending`,
    });
  }
  const fd = openSync(path, 'a');
  try {
    if (end.headerMissing) {
      const line = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8');
      writeSync(fd, line);
      if (fsync) fsyncSync(fd);
      size = line.length;
    } else if (!end.torn && end.unterminated) {
      writeSync(fd, '\n');
      size += 1;
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return { path, header, warnings, fsync, lock, fd, size };
}

export class SessionLog implements SessionWriter {
  readonly path: string;
  readonly header: SessionHeader;
  /** What loading reported (in line order; live after a lazy open, see `warnings`). */
  readonly #loadWarnings: readonly SessionWarning[];
  /** The repairs `open` made. */
  readonly #repairs: readonly SessionWarning[];
  readonly #fsync: boolean;
  readonly #lock: FileLock;
  /** The entries the file held at open (positions 0 .. size - 1); null for a new file. */
  readonly #opened: OpenedEntries | null;
  /** The index behind `#opened` after a lazy open (told about this log's own writes); null otherwise. */
  readonly #index: SessionIndex | null;
  /** Entries this log appended (positions index.size ..), and their positions by id. */
  readonly #appended: SessionEntry[] = [];
  readonly #appendedAt = new Map<string, number>();
  /** Every entry, once `entries` was read (kept up to date by appends). */
  #all: SessionEntry[] | undefined;
  /** Entries parsed for the conversation at open, until `entries` takes them over. */
  #known: ParsedRun[] = [];
  #fd: number | null;
  #size: number;
  #leafId: string | null;
  #view: ConversationView;
  #model: string | undefined;

  private constructor(
    init: OpenedForAppend & {
      loadWarnings: readonly SessionWarning[];
      index: SessionIndex | null;
      opened?: OpenedEntries;
      leafId?: string | null;
      view: ConversationView;
      model: string | undefined;
    },
  ) {
    this.path = init.path;
    this.header = init.header;
    this.#loadWarnings = init.loadWarnings;
    this.#repairs = init.warnings;
    this.#fsync = init.fsync;
    this.#lock = init.lock;
    this.#fd = init.fd;
    this.#size = init.size;
    this.#index = init.index;
    this.#opened = init.opened ?? (init.index ? indexed(init.index) : null);
    this.#leafId = init.leafId !== undefined ? init.leafId : (init.index?.leafId ?? null);
    this.#view = init.view;
    this.#model = init.model;
  }

  /**
   * Create a new session file holding only its header. Fails with `ERR_INVALID_ARGUMENT` if `path` already exists
   * (use `open`, or `openOrCreate` for a program that runs more than once), `ERR_SESSION_LOCKED` if another writer
   * holds its lock.
   */
  static async create(path: string, options: CreateSessionOptions = {}): Promise<SessionLog> {
    const header: SessionHeader = {
      type: 'session',
      version: SESSION_FORMAT_VERSION,
      id: options.id ?? randomBytes(8).toString('hex'),
      created: new Date().toISOString(),
    };
    if (options.model !== undefined) header.model = options.model;
    if (options.workspace !== undefined) header.workspace = options.workspace;
    const lock = FileLock.acquire(path);
    let fd: number;
    try {
      fd = openSync(path, 'ax');
    } catch (err) {
      lock.release();
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw invalid(
          `session file ${path} already exists; use SessionLog.open (or SessionLog.openOrCreate) to append to it`,
        );
      }
      throw err;
    }
    const log = new SessionLog({
      path,
      header,
      warnings: [],
      loadWarnings: [],
      fsync: options.fsync ?? false,
      lock,
      fd,
      size: 0,
      index: null,
      view: { messages: [], entryIds: [] },
      model: header.model,
    });
    try {
      log.#writeLine(header);
    } catch (err) {
      log.close();
      throw err;
    }
    return log;
  }

  /**
   * Open an existing session file for appending: take its lock, load it (same checks and errors as `loadSession`,
   * lazily unless `eager`: see the module comment), and repair its end — a torn last line is cut off (reported in
   * `warnings` as `repaired`), a missing final newline is written — so the next append starts a clean line. A file
   * without a header (empty, or a first line torn by a crash before anything was recorded) gets a new header
   * (warnings `no_header` and `repaired`). Nothing is written before every load-time check passed.
   */
  static async open(path: string, options: SessionLogOptions = {}): Promise<SessionLog> {
    const lock = FileLock.acquire(path);
    let fd: number | undefined;
    try {
      // No compaction in sight: one pass parsing every line is the fastest open (see loadSession).
      if (options.eager || !(await mentionsCompaction(path)))
        return SessionLog.#fromEager(path, await readEagerly(path, options), options, lock);
      const index = await openSessionIndex(path, options);
      const known: ParsedRun[] = [];
      const view = index.conversationView(known);
      const opened = openForAppend(path, index.header, index, [], options.fsync ?? false, lock);
      fd = opened.fd;
      const loadWarnings = index.warnings;
      if (index.headerMissing) {
        return new SessionLog({
          ...opened,
          loadWarnings,
          index: null,
          view: { messages: [], entryIds: [] },
          model: index.header.model,
        });
      }
      adoptFileIdentity(index, fstatSync(fd));
      const log = new SessionLog({ ...opened, loadWarnings, index, view, model: index.model });
      log.#known = known;
      return log;
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw err;
    }
  }

  /**
   * A log over a file read whole (every line parsed: `eager: true`, or a file with no compaction), after the same
   * repairs. The caller holds `lock` and releases it if this throws.
   */
  static #fromEager(path: string, state: EagerState, options: SessionLogOptions, lock: FileLock): SessionLog {
    const { header, entries, leafId, model } = state.session;
    const end = { ...state.read, headerMissing: state.headerMissing };
    const opened = openForAppend(path, header, end, [], options.fsync ?? false, lock);
    const log = new SessionLog({
      ...opened,
      loadWarnings: state.session.warnings,
      index: null,
      opened: inMemory(entries, state.byId),
      leafId,
      view: state.view,
      model,
    });
    log.#all = entries;
    return log;
  }

  /**
   * Open `path` if it exists, otherwise create it with `options` (header fields apply only when creating).
   * Same errors as `open` and `create`.
   */
  static async openOrCreate(path: string, options: CreateSessionOptions = {}): Promise<SessionLog> {
    try {
      return await SessionLog.open(path, options);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    try {
      return await SessionLog.create(path, options);
    } catch (err) {
      // Lost a race with another creator: the file exists now.
      if (!(err instanceof PantoError && err.code === 'ERR_INVALID_ARGUMENT')) throw err;
      return await SessionLog.open(path, options);
    }
  }

  /**
   * What loading the file reported when it was opened (torn/unterminated/empty lines, lines not valid UTF-8, no
   * header; in line order), then the repairs `open` made. A new array each call. After a lazy open, a line first read
   * later (by `entries` or `branch()`) that is not valid UTF-8 adds its `invalid_utf8` warning then.
   */
  get warnings(): readonly SessionWarning[] {
    return [...this.#loadWarnings, ...this.#repairs];
  }

  /** The current conversation (a new array each call; the messages are shared, do not mutate them). */
  get conversation(): Conversation {
    return { messages: [...this.#view.messages] };
  }

  /** Id of the entry the next append will be attached to. */
  get leafId(): string | null {
    return this.#leafId;
  }

  /** The current model: the latest `model_change` on the current branch, else the header's `model`. */
  get model(): string | undefined {
    return this.#model;
  }

  /**
   * Every entry of the file in file order (read-only view, owned by the log; appends extend it). The first read
   * parses the entries the file held at open that were not parsed yet (synchronous reads); it throws as described in
   * the module comment (`ERR_SESSION_CORRUPT`, `ERR_SESSION_FORMAT`, `ERR_SESSION_CHANGED`), and a later read tries
   * again. After that it costs nothing.
   */
  get entries(): readonly SessionEntry[] {
    if (this.#all === undefined) {
      const all = this.#opened?.all(this.#known) ?? [];
      for (const e of this.#appended) all.push(e);
      this.#all = all;
      this.#known = [];
    }
    return this.#all;
  }

  /** Number of entries in the file (those it held at open and those appended since); reads nothing. */
  get size(): number {
    return this.#based() + this.#appended.length;
  }

  get closed(): boolean {
    return this.#fd === null;
  }

  /** Append one message. Returns the entry written. */
  appendMessage(message: Message): MessageEntry {
    const entry = messageEntry(message, this.#base());
    this.#append(entry);
    this.#view.messages.push(message);
    this.#view.entryIds.push(entry.id);
    return entry;
  }

  /**
   * Record a model switch (not part of the conversation). Afterwards `model` (and a reload's `model`) is `change.model`.
   * Throws `ERR_INVALID_ARGUMENT` for an empty model id or non-string `api`/`provider`.
   */
  appendModelChange(change: { model: string; api?: string; provider?: string }): ModelChangeEntry {
    const entry = modelChangeEntry(change, this.#base());
    this.#append(entry);
    this.#model = entry.model;
    return entry;
  }

  /** Append a host event (not part of the conversation). `data` must be plain JSON. */
  appendCustom(customType: string, data: unknown): CustomEntry {
    const entry = customEntry(customType, data, this.#base());
    this.#append(entry);
    return entry;
  }

  /**
   * Record a compaction computed by `compact()` over this log's `conversation`. Afterwards `conversation` (and a
   * reload) is the compacted one; the summarized messages stay in the file. Throws `ERR_INVALID_ARGUMENT` if the
   * record does not fit the current conversation.
   */
  appendCompaction(record: CompactionInput): CompactionEntry {
    const { entry, view } = compactionEntry(record, this.#view, this.#base());
    this.#append(entry);
    this.#view = view;
    return entry;
  }

  /** Nothing to wait for: every append was written when it returned (the interface's `flush`). */
  async flush(): Promise<void> {}

  /**
   * Continue from an earlier entry: the conversation becomes the path to `entryId` and the next append is attached
   * under it. Nothing is written until that append (the file's leaf is its last entry), so a branch with no append
   * does not survive a reload.
   */
  branch(entryId: string): void {
    const at = this.#positionOf(entryId);
    if (at === undefined) throw invalid(`no entry ${entryId} in this session`);
    const path: number[] = [];
    for (let i: number | undefined = at; i !== undefined; ) {
      path.push(i);
      const parent = this.#parentAt(i);
      const p: number | undefined = parent === null ? undefined : this.#positionOf(parent);
      // Parents are earlier entries (checked at open; appends attach to known entries), so this ends.
      if (parent !== null && (p === undefined || p >= i))
        throw new PantoError(
          'ERR_SESSION_FORMAT',
          `${this.path}: entry ${this.#idAt(i)} has no earlier parent`,
        );
      i = p;
    }
    path.reverse();
    const tree = this.#lazy();
    const view = resolveBranch(path, tree);
    const model = modelOnBranch(path, tree, this.header.model);
    this.#leafId = entryId;
    this.#view = view;
    this.#model = model;
  }

  /** Release the lock and close the file. Idempotent. */
  close(): void {
    if (this.#fd !== null) {
      const fd = this.#fd;
      this.#fd = null;
      try {
        closeSync(fd);
      } finally {
        this.#lock.release();
      }
    }
  }

  #base(): { id: string; parentId: string | null; timestamp: string } {
    if (this.#fd === null) throw invalid(`session log ${this.path} is closed`);
    let id: string;
    do id = randomBytes(6).toString('hex');
    while (this.#positionOf(id) !== undefined);
    return { id, parentId: this.#leafId, timestamp: new Date().toISOString() };
  }

  #append(entry: SessionEntry): void {
    this.#writeLine(entry);
    this.#appendedAt.set(entry.id, this.#based() + this.#appended.length);
    this.#appended.push(entry);
    this.#all?.push(entry);
    this.#leafId = entry.id;
  }

  /** Number of entries the file held at open. */
  #based(): number {
    return this.#opened?.size ?? 0;
  }

  #positionOf(id: string): number | undefined {
    return this.#opened?.positionOf(id) ?? this.#appendedAt.get(id);
  }

  #idAt(i: number): string {
    const base = this.#based();
    return i < base ? (this.#opened as OpenedEntries).idAt(i) : (this.#appended[i - base] as SessionEntry).id;
  }

  #parentAt(i: number): string | null {
    const base = this.#based();
    return i < base
      ? (this.#opened as OpenedEntries).parentAt(i)
      : (this.#appended[i - base] as SessionEntry).parentId;
  }

  /** The entry tree by position: the file's entries at open through the index, then the appended ones. */
  #lazy(): LazyEntries {
    const opened = this.#opened;
    const base = this.#based();
    return {
      typeAt: (i) =>
        (i < base
          ? (opened as OpenedEntries).typeAt(i)
          : this.#appended[i - base]?.type) as SessionEntry['type'],
      positionOf: (id) => this.#positionOf(id),
      read: (positions) => {
        let split = 0;
        while (split < positions.length && (positions[split] as number) < base) split++;
        const old = split === 0 ? [] : (opened as OpenedEntries).read(positions.slice(0, split));
        for (let k = split; k < positions.length; k++)
          old.push(this.#appended[(positions[k] as number) - base] as SessionEntry);
        return old;
      },
      offBranch: (compaction) =>
        new PantoError(
          'ERR_SESSION_FORMAT',
          `${this.path}: compaction ${compaction.id} keeps from entry ${compaction.firstKeptEntryId}, which is not on its branch`,
        ),
    };
  }

  #writeLine(value: SessionHeader | SessionEntry): void {
    const fd = this.#fd;
    if (fd === null) throw invalid(`session log ${this.path} is closed`);
    // What a load would refuse is never written.
    const deep = nestingProblem(value, `the ${value.type} entry`);
    if (deep) throw invalid(`${this.path}: cannot append: ${deep}`);
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch (err) {
      // Nested deeper than JSON.stringify's stack allows, or a string past V8's limit: nothing was written.
      if (err instanceof RangeError)
        throw invalid(`${this.path}: ${tooDeep(`the ${value.type} entry`, err)}`);
      throw err;
    }
    const line = Buffer.from(`${text}\n`, 'utf8');
    try {
      let off = 0;
      while (off < line.length) off += writeSync(fd, line, off, line.length - off);
      if (this.#fsync) fsyncSync(fd);
    } catch (err) {
      try {
        ftruncateSync(fd, this.#size);
      } catch {
        // the original error is the one to report; a later open repairs a torn tail
      }
      this.#adopt(fd);
      throw err;
    }
    this.#size += line.length;
    this.#adopt(fd);
  }

  /** After this log's own write: later lazy reads expect the file as it is now (see the module comment). */
  #adopt(fd: number): void {
    if (this.#index === null) return;
    try {
      adoptFileIdentity(this.#index, fstatSync(fd));
    } catch {
      // fstat of an open descriptor does not fail in practice; if it did, the next lazy read reports the change
    }
  }
}
