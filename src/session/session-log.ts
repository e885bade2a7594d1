/**
 * The writer side of a session file (format: docs/session-format.md).
 *
 * - One writer per file: `create`/`open` take `FILE.lock` (file-lock.ts), else `ERR_SESSION_LOCKED`; `close()`
 *   releases it.
 * - Each append is one `write(2)` of one whole line on an O_APPEND descriptor, so a crash leaves at most a torn last
 *   line (skipped by a load, cut off by `open`). A failed write is truncated back and rethrown. `fsync: true` makes
 *   every append durable before it returns.
 * - Appended values are checked first (`ERR_INVALID_ARGUMENT`): a log never holds a line it cannot load.
 * - `conversation` equals what `loadSession` returns for the file; it shares the appended messages (do not mutate).
 * - Opening is lazy on `loadSession`'s two paths. On the index path `entries` and `branch()` parse the lines they
 *   need then, synchronously, and fail as a lazy `LoadedSession.entries` does (`ERR_SESSION_CHANGED` when the file
 *   changed other than by growing). `usage` is counted at open and never reads.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, truncateSync, writeSync } from 'node:fs';
import type { Conversation, Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import { addAnswer, sessionUsage } from './answer-usage.js';
import { mentionsCompaction } from './compaction-probe.js';
import { FileLock } from './file-lock.js';
import type { TornLine } from './jsonl-reader.js';
import { type LoadSessionOptions, readEagerly } from './load-session.js';
import {
  type CompactionInput,
  compactionEntry,
  customEntry,
  invalid,
  messageEntry,
  modelChangeEntry,
  type UploadInput,
  uploadEntry,
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
  type ModelUsage,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
  type UploadEntry,
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
  /** The repairs made before appending (`repaired`). */
  warnings: SessionWarning[];
  fsync: boolean;
  lock: FileLock;
  fd: number;
  size: number;
}

/**
 * Repair the end of `path` so the next append starts a clean line, then open it with O_APPEND: a file without a
 * header is emptied and gets `header` (fsynced when `fsync`), a torn last line is cut off, a missing final newline
 * is written. Each cut is reported in the returned `warnings` as `repaired`. The returned descriptor is the caller's
 * to close; it is closed here if a write fails. I/O errors are thrown as they come.
 */
function openForAppend(
  path: string,
  header: SessionHeader,
  end: FileEnd,
  fsync: boolean,
  lock: FileLock,
): OpenedForAppend {
  const warnings: SessionWarning[] = [];
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
  /**
   * After a lazy open, the index of the entries the file held then (positions 0 .. size - 1; told about this log's
   * own writes); null otherwise.
   */
  readonly #index: SessionIndex | null;
  /** Entries this log appended (positions index.size ..; from 0 with every entry read at open), by id too. */
  readonly #appended: SessionEntry[];
  readonly #appendedAt = new Map<string, number>();
  /** Every entry, once `entries` was read after a lazy open (kept up to date by appends). */
  #all: SessionEntry[] | undefined;
  /** Entries parsed for the conversation at open, until `entries` takes them over. */
  #known: ParsedRun[] = [];
  #fd: number | null;
  #size: number;
  #leafId: string | null;
  #view: ConversationView;
  #model: string | undefined;
  readonly #usage: ModelUsage[];

  private constructor(
    init: OpenedForAppend & {
      loadWarnings: readonly SessionWarning[];
      index: SessionIndex | null;
      entries?: SessionEntry[];
      leafId?: string | null;
      view: ConversationView;
      model: string | undefined;
      usage: ModelUsage[];
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
    this.#appended = init.entries ?? [];
    for (let i = 0; i < this.#appended.length; i++)
      this.#appendedAt.set((this.#appended[i] as SessionEntry).id, i);
    this.#leafId = init.leafId !== undefined ? init.leafId : (init.index?.leafId ?? null);
    this.#view = init.view;
    this.#model = init.model;
    this.#usage = init.usage;
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
      usage: [],
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
   * Open an existing session file for appending: take its lock, load it (as `loadSession`; also counting `usage`),
   * then repair its end (a torn last line cut off, a missing newline written, a missing header written: `repaired`
   * warnings). Nothing is written before every load-time check passed.
   */
  static async open(path: string, options: SessionLogOptions = {}): Promise<SessionLog> {
    const lock = FileLock.acquire(path);
    let fd: number | undefined;
    try {
      const fsync = options.fsync ?? false;
      // No compaction in sight: one pass parsing every line is the fastest open (see loadSession).
      if (options.eager || !(await mentionsCompaction(path))) {
        const { session, view, read, headerMissing } = await readEagerly(path, options);
        return new SessionLog({
          ...openForAppend(path, session.header, { ...read, headerMissing }, fsync, lock),
          loadWarnings: session.warnings,
          index: null,
          entries: session.entries,
          leafId: session.leafId,
          view,
          model: session.model,
          usage: sessionUsage(session.entries),
        });
      }
      const index = await openSessionIndex(path, options);
      const known: ParsedRun[] = [];
      const view = index.conversationView(known);
      const usage = index.usage(known);
      const opened = openForAppend(path, index.header, index, fsync, lock);
      fd = opened.fd;
      // A file without a header held no entry: its index stays empty, and the file is now the new header alone.
      adoptFileIdentity(index, fstatSync(fd));
      const log = new SessionLog({
        ...opened,
        loadWarnings: index.warnings,
        index,
        view,
        model: index.model,
        usage,
      });
      log.#known = known;
      return log;
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw err;
    }
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

  /** What loading reported (live after a lazy open, as `LoadedSession.warnings`), then the repairs; a new array. */
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

  /** Every entry in file order (owned by the log; appends extend it). The first read may throw: module comment. */
  get entries(): readonly SessionEntry[] {
    if (this.#index === null) return this.#appended;
    if (this.#all === undefined) {
      const all = this.#index.readAll(this.#known);
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

  /** The usage of every answer in the file, per model (see `SessionWriter.usage`): no I/O, never throws. */
  get usage(): readonly ModelUsage[] {
    return this.#usage;
  }

  /** Append one message. Returns the entry written. */
  appendMessage(message: Message): MessageEntry {
    const entry = messageEntry(message, this.#base());
    this.#append(entry);
    this.#view.messages.push(message);
    this.#view.entryIds.push(entry.id);
    addAnswer(this.#usage, message);
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
   * Record provider files uploaded (or ids no longer usable) for one provider account; not part of the conversation.
   * Throws `ERR_INVALID_ARGUMENT` naming a bad field (see `UploadEntry`).
   */
  appendUpload(record: UploadInput): UploadEntry {
    const entry = uploadEntry(record, this.#base());
    this.#append(entry);
    return entry;
  }

  /**
   * Every upload entry of the file (all branches) in file order, appended ones included. After a lazy open only the
   * upload lines are read (synchronously; errors as `entries`).
   */
  async uploadEntries(): Promise<readonly UploadEntry[]> {
    const isUpload = (e: SessionEntry): e is UploadEntry => e.type === 'upload';
    if (this.#all !== undefined) return this.#all.filter(isUpload);
    const types = this.#index?.types ?? [];
    const positions: number[] = [];
    for (let i = 0; i < types.length; i++) if (types[i] === 'upload') positions.push(i);
    const out =
      positions.length === 0 ? [] : (this.#index as SessionIndex).readAt(positions).filter(isUpload);
    for (const e of this.#appended) if (isUpload(e)) out.push(e);
    return out;
  }

  /**
   * Record a compaction computed by `compact()` over this log's `conversation`. Afterwards `conversation` (and a
   * reload) is the compacted one; the summarized messages stay in the file. Throws `ERR_INVALID_ARGUMENT` if the
   * record does not fit the current conversation.
   */
  appendCompaction(record: CompactionInput): CompactionEntry {
    const { entry, view } = compactionEntry(record, this.#view, this.#base(), this.#usage);
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
      // Parents are earlier entries (checked at open; appends attach to known entries), so this ends.
      const parent = this.#parentAt(i);
      i = parent === null ? undefined : this.#positionOf(parent);
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
    return this.#index?.size ?? 0;
  }

  #positionOf(id: string): number | undefined {
    return this.#index?.positionOf(id) ?? this.#appendedAt.get(id);
  }

  #parentAt(i: number): string | null {
    const base = this.#based();
    return i < base
      ? ((this.#index as SessionIndex).parents[i] as string | null)
      : (this.#appended[i - base] as SessionEntry).parentId;
  }

  /** The entry tree by position: the file's entries at open through the index, then the appended ones. */
  #lazy(): LazyEntries {
    const base = this.#based();
    return {
      typeAt: (i) => (this.#index?.types[i] ?? this.#appended[i - base]?.type) as SessionEntry['type'],
      positionOf: (id) => this.#positionOf(id),
      read: (positions) => {
        let split = 0;
        while (split < positions.length && (positions[split] as number) < base) split++;
        const old = split === 0 ? [] : (this.#index as SessionIndex).readAt(positions.slice(0, split));
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
