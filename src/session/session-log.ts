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
import { addAnswer } from './answer-usage.js';
import { FileLock } from './file-lock.js';
import { EntryCollector, type LoadSessionOptions, readSession, type SessionSource } from './load-session.js';
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
import { type ConversationView, modelOnBranch, resolveBranch } from './resolve-conversation.js';
import {
  type CompactionEntry,
  type CustomEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type ModelUsage,
  newHeader,
  type SessionEntry,
  type SessionHeader,
  type UploadEntry,
} from './session-entry.js';
import { SessionIndex } from './session-index.js';
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

/** A log's file, lock and entries (`create` and `open` make one). */
interface LogState {
  fd: number | null;
  /** Bytes in the file: where the next append starts. */
  size: number;
  readonly lock: FileLock;
  readonly fsync: boolean;
  /** What loading reported (in line order; live after a lazy open, see `warnings`). */
  readonly loadWarnings: readonly SessionWarning[];
  /** The repairs `open` made. */
  readonly repairs: readonly SessionWarning[];
  /** Every entry: the file's index after a lazy open (told about this log's own writes), else all in memory. */
  readonly tree: SessionIndex | EntryCollector;
  /** Every entry, once `entries` was read after a lazy open (kept up to date by appends). */
  all?: SessionEntry[];
  leafId: string | null;
  view: ConversationView;
  model: string | undefined;
  readonly usage: ModelUsage[];
}

/**
 * Repair the end of `path` so the next append starts a clean line, then open it with O_APPEND: a file without a
 * header is emptied and gets `header` (fsynced when `fsync`), a torn last line is cut off, a missing final newline
 * is written. Each cut is reported in `repairs` as `repaired`. The returned descriptor is the caller's to close; it
 * is closed here if a write fails. I/O errors are thrown as they come.
 */
function openForAppend(
  path: string,
  header: SessionHeader,
  end: SessionSource['end'],
  fsync: boolean,
): { fd: number; size: number; repairs: SessionWarning[] } {
  const repairs: SessionWarning[] = [];
  let size = end.fileBytes;
  if (end.headerMissing) {
    truncateSync(path, 0);
    size = 0;
    repairs.push({
      kind: 'repaired',
      line: 1,
      message: `${path}: wrote a new session header (the file had none; ${end.fileBytes} bytes dropped)`,
    });
  } else if (end.torn) {
    truncateSync(path, end.torn.offset);
    size = end.torn.offset;
    repairs.push({
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
  return { fd, size, repairs };
}

export class SessionLog implements SessionWriter {
  readonly #s: LogState;

  private constructor(
    readonly path: string,
    readonly header: SessionHeader,
    state: LogState,
  ) {
    this.#s = state;
  }

  /**
   * Create a new session file holding only its header. Fails with `ERR_INVALID_ARGUMENT` if `path` already exists
   * (use `open`, or `openOrCreate` for a program that runs more than once), `ERR_SESSION_LOCKED` if another writer
   * holds its lock.
   */
  static async create(path: string, options: CreateSessionOptions = {}): Promise<SessionLog> {
    const header = newHeader(options);
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
    const log = new SessionLog(path, header, {
      fd,
      size: 0,
      lock,
      fsync: options.fsync ?? false,
      loadWarnings: [],
      repairs: [],
      tree: new EntryCollector(path),
      leafId: null,
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
      const { session, tree, view, end } = await readSession(path, options);
      const usage = tree.usage();
      const fsync = options.fsync ?? false;
      const opened = openForAppend(path, session.header, end, fsync);
      fd = opened.fd;
      // A file without a header held no entry: its index stays empty, and the file is now the new header alone.
      if (tree instanceof SessionIndex) tree.adopt(fstatSync(fd));
      return new SessionLog(path, session.header, {
        ...opened,
        lock,
        fsync,
        loadWarnings: session.warnings,
        tree,
        leafId: session.leafId,
        view,
        model: session.model,
        usage,
      });
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
    return [...this.#s.loadWarnings, ...this.#s.repairs];
  }

  /** The current conversation (a new array each call; the messages are shared, do not mutate them). */
  get conversation(): Conversation {
    return { messages: [...this.#s.view.messages] };
  }

  /** Id of the entry the next append will be attached to. */
  get leafId(): string | null {
    return this.#s.leafId;
  }

  /** The current model: the latest `model_change` on the current branch, else the header's `model`. */
  get model(): string | undefined {
    return this.#s.model;
  }

  /** Every entry in file order (owned by the log; appends extend it). The first read may throw: module comment. */
  get entries(): readonly SessionEntry[] {
    const s = this.#s;
    if (s.tree instanceof EntryCollector) return s.tree.entries;
    s.all ??= s.tree.readAll();
    return s.all;
  }

  /** Number of entries in the file (those it held at open and those appended since); reads nothing. */
  get size(): number {
    return this.#s.tree.size;
  }

  get closed(): boolean {
    return this.#s.fd === null;
  }

  /** The usage of every answer in the file, per model (see `SessionWriter.usage`): no I/O, never throws. */
  get usage(): readonly ModelUsage[] {
    return this.#s.usage;
  }

  /** Append one message. Returns the entry written. */
  appendMessage(message: Message): MessageEntry {
    const entry = messageEntry(message, this.#base());
    this.#append(entry);
    this.#s.view.messages.push(message);
    this.#s.view.entryIds.push(entry.id);
    addAnswer(this.#s.usage, message);
    return entry;
  }

  /**
   * Record a model switch (not part of the conversation). Afterwards `model` (and a reload's `model`) is `change.model`.
   * Throws `ERR_INVALID_ARGUMENT` for an empty model id or non-string `api`/`provider`.
   */
  appendModelChange(change: { model: string; api?: string; provider?: string }): ModelChangeEntry {
    const entry = modelChangeEntry(change, this.#base());
    this.#append(entry);
    this.#s.model = entry.model;
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
    const { all, tree } = this.#s;
    if (all !== undefined) return all.filter(isUpload);
    const positions = tree.ids.map((_, i) => i).filter((i) => tree.typeAt(i) === 'upload');
    return positions.length === 0 ? [] : tree.readAt(positions).filter(isUpload);
  }

  /**
   * Record a compaction computed by `compact()` over this log's `conversation`. Afterwards `conversation` (and a
   * reload) is the compacted one; the summarized messages stay in the file. Throws `ERR_INVALID_ARGUMENT` if the
   * record does not fit the current conversation.
   */
  appendCompaction(record: CompactionInput): CompactionEntry {
    const { entry, view } = compactionEntry(record, this.#s.view, this.#base(), this.#s.usage);
    this.#append(entry);
    this.#s.view = view;
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
    const { tree } = this.#s;
    const at = tree.positionOf(entryId);
    if (at === undefined) throw invalid(`no entry ${entryId} in this session`);
    const path = tree.branchTo(at);
    const view = resolveBranch(path, tree);
    const model = modelOnBranch(path, tree, this.header.model);
    Object.assign(this.#s, { leafId: entryId, view, model });
  }

  /** Release the lock and close the file. Idempotent. */
  close(): void {
    const s = this.#s;
    if (s.fd !== null) {
      const fd = s.fd;
      s.fd = null;
      try {
        closeSync(fd);
      } finally {
        s.lock.release();
      }
    }
  }

  #base(): { id: string; parentId: string | null; timestamp: string } {
    if (this.#s.fd === null) throw invalid(`session log ${this.path} is closed`);
    let id: string;
    do id = randomBytes(6).toString('hex');
    while (this.#s.tree.has(id));
    return { id, parentId: this.#s.leafId, timestamp: new Date().toISOString() };
  }

  #append(entry: SessionEntry): void {
    const s = this.#s;
    const offset = s.size;
    this.#writeLine(entry);
    s.tree.appendEntry(entry, offset, s.size - offset - 1);
    s.all?.push(entry);
    s.leafId = entry.id;
  }

  #writeLine(value: SessionHeader | SessionEntry): void {
    const s = this.#s;
    const fd = s.fd;
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
      if (s.fsync) fsyncSync(fd);
      s.size += line.length;
    } catch (err) {
      try {
        ftruncateSync(fd, s.size);
      } catch {
        // the original error is the one to report; a later open repairs a torn tail
      }
      throw err;
    } finally {
      this.#adopt(fd);
    }
  }

  /** After this log's own write: later lazy reads expect the file as it is now (see the module comment). */
  #adopt(fd: number): void {
    const { tree } = this.#s;
    if (!(tree instanceof SessionIndex)) return;
    try {
      tree.adopt(fstatSync(fd));
    } catch {
      // fstat of an open descriptor does not fail in practice; if it did, the next lazy read reports the change
    }
  }
}
