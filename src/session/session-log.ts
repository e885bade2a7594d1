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
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, ftruncateSync, openSync, truncateSync, writeSync } from 'node:fs';
import type { Conversation, Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import { FileLock } from './file-lock.js';
import {
  currentModel,
  type LoadSessionOptions,
  readSessionState,
  type SessionWarning,
} from './load-session.js';
import { type ConversationView, pathToLeaf, resolveConversation } from './resolve-conversation.js';
import {
  type CompactionEntry,
  type CustomEntry,
  type MessageEntry,
  type ModelChangeEntry,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
} from './session-entry.js';
import { jsonProblem, messageJsonProblem, messageProblem } from './validate-entry.js';

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

/**
 * What `appendCompaction` records; `compact()` returns it as `compaction` (its `CompactionRecord`, the same shape —
 * compaction/ and session/ import nothing from each other; test/compaction/compaction-record.test-d.ts keeps the two
 * identical). `firstKeptIndex` and `messageCountBefore` refer to the conversation that was compacted, which must be
 * this log's `conversation`.
 */
export interface CompactionInput {
  summary: string;
  /** Messages that replace `messages[0 .. firstKeptIndex)` (kept system messages, then the summary message). */
  replacement: Message[];
  firstKeptIndex: number;
  messageCountBefore: number;
  tokensBefore: number;
  tokensAfter: number;
}

function invalid(message: string): PantoError {
  return new PantoError('ERR_INVALID_ARGUMENT', message);
}

function checkMessage(message: Message, where: string): void {
  const problem = messageProblem(message, where) ?? messageJsonProblem(message, where);
  if (problem) throw invalid(`cannot append: ${problem}`);
}

export class SessionLog {
  readonly path: string;
  readonly header: SessionHeader;
  /** What loading the file reported when it was opened (torn/unterminated last line, repairs). */
  readonly warnings: readonly SessionWarning[];
  readonly #fsync: boolean;
  readonly #lock: FileLock;
  readonly #entries: SessionEntry[];
  readonly #byId: Map<string, SessionEntry>;
  #fd: number | null;
  #size: number;
  #leafId: string | null;
  #view: ConversationView;

  private constructor(init: {
    path: string;
    header: SessionHeader;
    warnings: SessionWarning[];
    fsync: boolean;
    lock: FileLock;
    fd: number;
    size: number;
    entries: SessionEntry[];
    byId: Map<string, SessionEntry>;
    leafId: string | null;
    view: ConversationView;
  }) {
    this.path = init.path;
    this.header = init.header;
    this.warnings = init.warnings;
    this.#fsync = init.fsync;
    this.#lock = init.lock;
    this.#fd = init.fd;
    this.#size = init.size;
    this.#entries = init.entries;
    this.#byId = init.byId;
    this.#leafId = init.leafId;
    this.#view = init.view;
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
      fsync: options.fsync ?? false,
      lock,
      fd,
      size: 0,
      entries: [],
      byId: new Map(),
      leafId: null,
      view: { messages: [], entryIds: [] },
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
   * Open an existing session file for appending: take its lock, load it (same checks and errors as `loadSession`),
   * and repair its end — a torn last line is cut off (reported in `warnings` as `repaired`), a missing final newline
   * is written — so the next append starts a clean line. A file without a header (empty, or a first line torn by a
   * crash before anything was recorded) gets a new header (warnings `no_header` and `repaired`).
   */
  static async open(path: string, options: SessionLogOptions = {}): Promise<SessionLog> {
    const lock = FileLock.acquire(path);
    try {
      const state = await readSessionState(path, options);
      const warnings = [...state.warnings];
      let size = state.read.fileBytes;
      if (state.headerMissing) {
        truncateSync(path, 0);
        const fd = openSync(path, 'a');
        const line = Buffer.from(`${JSON.stringify(state.header)}\n`, 'utf8');
        try {
          writeSync(fd, line);
          if (options.fsync) fsyncSync(fd);
        } catch (err) {
          closeSync(fd);
          throw err;
        }
        warnings.push({
          kind: 'repaired',
          line: 1,
          message: `${path}: wrote a new session header (the file had none; ${state.read.fileBytes} bytes dropped)`,
        });
        return new SessionLog({
          path,
          header: state.header,
          warnings,
          fsync: options.fsync ?? false,
          lock,
          fd,
          size: line.length,
          entries: [],
          byId: new Map(),
          leafId: null,
          view: { messages: [], entryIds: [] },
        });
      }
      if (state.read.torn) {
        truncateSync(path, state.read.torn.offset);
        size = state.read.torn.offset;
        warnings.push({
          kind: 'repaired',
          line: state.read.torn.line,
          message: `${path}:${state.read.torn.line}: cut off the incomplete last line (${state.read.torn.bytes} bytes) before appending`,
        });
      }
      const fd = openSync(path, 'a');
      if (!state.read.torn && state.read.unterminated) {
        writeSync(fd, '\n');
        size += 1;
      }
      return new SessionLog({
        path,
        header: state.header,
        warnings,
        fsync: options.fsync ?? false,
        lock,
        fd,
        size,
        entries: state.entries,
        byId: state.byId,
        leafId: state.leafId,
        view: state.view,
      });
    } catch (err) {
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
    return currentModel(pathToLeaf(this.#byId, this.#leafId), this.header.model);
  }

  /** Every entry of the file in file order (read-only view). */
  get entries(): readonly SessionEntry[] {
    return this.#entries;
  }

  get closed(): boolean {
    return this.#fd === null;
  }

  /** Append one message. Returns the entry written. */
  appendMessage(message: Message): MessageEntry {
    checkMessage(message, 'message');
    const entry: MessageEntry = { type: 'message', ...this.#base(), message };
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
    if (change === null || typeof change !== 'object') throw invalid('model change must be an object');
    if (typeof change.model !== 'string' || change.model === '')
      throw invalid('model change: model must be a non-empty string');
    const entry: ModelChangeEntry = { type: 'model_change', ...this.#base(), model: change.model };
    for (const key of ['api', 'provider'] as const) {
      const v = change[key];
      if (v === undefined) continue;
      if (typeof v !== 'string') throw invalid(`model change: ${key} must be a string`);
      entry[key] = v;
    }
    this.#append(entry);
    return entry;
  }

  /** Append a host event (not part of the conversation). `data` must be plain JSON. */
  appendCustom(customType: string, data: unknown): CustomEntry {
    if (typeof customType !== 'string' || customType === '')
      throw invalid('customType must be a non-empty string');
    if (data === undefined) throw invalid('custom entry data must be a JSON value (got undefined)');
    const problem = jsonProblem(data, 'data');
    if (problem) throw invalid(`cannot append: ${problem}`);
    const entry: CustomEntry = { type: 'custom', ...this.#base(), customType, data };
    this.#append(entry);
    return entry;
  }

  /**
   * Record a compaction computed by `compact()` over this log's `conversation`. Afterwards `conversation` (and a
   * reload) is the compacted one; the summarized messages stay in the file. Throws `ERR_INVALID_ARGUMENT` if the
   * record does not fit the current conversation.
   */
  appendCompaction(record: CompactionInput): CompactionEntry {
    const { messages, entryIds } = this.#view;
    if (record === null || typeof record !== 'object') throw invalid('compaction must be an object');
    if (record.messageCountBefore !== messages.length) {
      throw invalid(
        `compaction was computed for ${record.messageCountBefore} messages but the log's conversation has ${messages.length}`,
      );
    }
    const first = record.firstKeptIndex;
    if (!Number.isInteger(first) || first < 0 || first > messages.length) {
      throw invalid(`compaction firstKeptIndex ${first} is out of range 0..${messages.length}`);
    }
    if (typeof record.summary !== 'string') throw invalid('compaction summary must be a string');
    for (const key of ['tokensBefore', 'tokensAfter'] as const) {
      const n = record[key];
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
        throw invalid(`compaction ${key} must be a finite number >= 0, got ${String(n)}`);
      }
    }
    if (!Array.isArray(record.replacement))
      throw invalid('compaction replacement must be an array of messages');
    record.replacement.forEach((m, i) => {
      checkMessage(m, `replacement[${i}]`);
    });
    // Kept messages that are themselves replacements of an earlier compaction carry over into this replacement.
    let k = first;
    while (k < messages.length && entryIds[k] === null) k++;
    const replacement = [...record.replacement, ...messages.slice(first, k)];
    const entry: CompactionEntry = {
      type: 'compaction',
      ...this.#base(),
      summary: record.summary,
      replacement,
      firstKeptEntryId: k < messages.length ? (entryIds[k] as string) : null,
      tokensBefore: record.tokensBefore,
      tokensAfter: record.tokensAfter,
    };
    this.#append(entry);
    this.#view = {
      messages: [...replacement, ...messages.slice(k)],
      entryIds: [...replacement.map(() => null), ...entryIds.slice(k)],
    };
    return entry;
  }

  /**
   * Continue from an earlier entry: the conversation becomes the path to `entryId` and the next append is attached
   * under it. Nothing is written until that append (the file's leaf is its last entry), so a branch with no append
   * does not survive a reload.
   */
  branch(entryId: string): void {
    if (!this.#byId.has(entryId)) throw invalid(`no entry ${entryId} in this session`);
    this.#leafId = entryId;
    this.#view = resolveConversation(pathToLeaf(this.#byId, entryId));
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
    while (this.#byId.has(id));
    return { id, parentId: this.#leafId, timestamp: new Date().toISOString() };
  }

  #append(entry: SessionEntry): void {
    this.#writeLine(entry);
    this.#entries.push(entry);
    this.#byId.set(entry.id, entry);
    this.#leafId = entry.id;
  }

  #writeLine(value: SessionHeader | SessionEntry): void {
    const fd = this.#fd;
    if (fd === null) throw invalid(`session log ${this.path} is closed`);
    const line = Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
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
      throw err;
    }
    this.#size += line.length;
  }
}
