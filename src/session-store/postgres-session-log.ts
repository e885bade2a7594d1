/**
 * An open session of the PostgreSQL store (postgres-session-store.ts): the `SessionWriter` an agent appends to.
 *
 * Appends are checked and taken into `conversation` at once (as with a file log) and stored in order, one statement
 * each, on the connection that holds the session's advisory lock. The statement stores the entry only while the
 * session's `writer` column still names this log, in the same transaction as the entry's row, so an entry is stored
 * whole or not at all (a `kill -9` mid-append leaves no half row), and an append after the lock was lost — the
 * connection dropped, another process took the session over — is refused (`ERR_SESSION_LOCKED`), never interleaved.
 * `flush()` resolves once everything appended so far is stored; after a failed store every later append throws that
 * failure. `close()` flushes, releases the lock and the connection.
 */

import { randomBytes } from 'node:crypto';
import type { Conversation, Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import { addAnswer } from '../session/answer-usage.js';
import { corruptLine } from '../session/jsonl-reader.js';
import {
  type CompactionInput,
  compactionEntry,
  customEntry,
  type EntryBase,
  invalid,
  messageEntry,
  modelChangeEntry,
  type UploadInput,
  uploadEntry,
} from '../session/new-entries.js';
import { type ConversationView, resolveConversation } from '../session/resolve-conversation.js';
import type {
  CompactionEntry,
  CustomEntry,
  MessageEntry,
  ModelChangeEntry,
  ModelUsage,
  SessionEntry,
  SessionHeader,
  UploadEntry,
} from '../session/session-entry.js';
import type { SessionWarning } from '../session/session-warning.js';
import type { SessionWriter } from '../session/session-writer.js';
import { entryProblem, nestingProblem } from '../session/validate-entry.js';

/** The part of a `pg` client the log uses. */
export interface PgClient {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

type LockedClient = PgClient & { release(destroy?: boolean): void };

/** An entry's columns without its body: a step of a branch's path. */
interface PathRow {
  seq: string;
  id: string;
  parent_id: string | null;
  type: string;
}

const tokens = new WeakMap<object, string>();
/** The advisory-lock namespace of the store ('pant'). */
export const LOCK_CLASS = 0x70616e74 | 0;

/** The advisory-lock key of session row `key` (int4, as `pg_try_advisory_lock(int, int)` takes). */
export function lockKey(key: string): number {
  return Number(BigInt(key) % 2147483647n);
}

/** A lost connection (admin shutdown, connection failure, no SQLSTATE at all) takes the session's lock with it. */
function connectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code !== 'string' || code.startsWith('57P') || code.startsWith('08');
}

export class PostgresSessionLog implements SessionWriter {
  readonly header: SessionHeader;
  readonly warnings: readonly SessionWarning[] = [];
  readonly #client: LockedClient;
  readonly #key: string;
  readonly #token: string;
  readonly #maxEntryBytes: number;
  #view: ConversationView;
  #leafId: string | null;
  #model: string | undefined;
  #size: number;
  readonly #usage: ModelUsage[];
  /** Every entry, when the open read them all (`eager`, or a session with no compaction); else undefined. */
  #entries: SessionEntry[] | undefined;
  /** Ids appended by this log (ids in the store are unique per session: a collision fails the store). */
  #writes: Promise<void> = Promise.resolve();
  #failure: unknown;
  #closed = false;
  /** A `branch()` is reading: appends (which would attach to the old leaf) are refused until it settles. */
  #branching = false;

  /** @internal Use `PostgresSessionStore.open` / `create`. */
  constructor(init: {
    client: LockedClient;
    key: string;
    header: SessionHeader;
    view: ConversationView;
    leafId: string | null;
    model: string | undefined;
    size: number;
    usage: ModelUsage[];
    entries: SessionEntry[] | undefined;
    maxEntryBytes: number;
  }) {
    this.#client = init.client;
    this.#maxEntryBytes = init.maxEntryBytes;
    this.#key = init.key;
    this.#token = tokens.get(init.client) as string;
    this.header = init.header;
    this.#view = init.view;
    this.#leafId = init.leafId;
    this.#model = init.model;
    this.#size = init.size;
    this.#usage = init.usage;
    this.#entries = init.entries;
    // The connection died (the server restarted, an administrator ended it, the network went): the lock went with it.
    this.#client.on('error', (err) => {
      this.#failure ??= new PantoError(
        'ERR_SESSION_LOCKED',
        `session ${this.header.id}: the connection and with it the session's lock are lost (${err.message}); open the session again`,
        { cause: err },
      );
    });
  }

  /** @internal A new writer token for `client` (the store marks the session with it when it takes the lock). */
  static newToken(client: object): string {
    const token = randomBytes(12).toString('hex');
    tokens.set(client, token);
    return token;
  }

  /**
   * @internal Unlock and close a lock connection (closed, not returned to the pool: its error listeners go with it,
   * and a connection in doubt is never reused).
   */
  static async release(client: LockedClient, key: string): Promise<void> {
    try {
      await client.query('SELECT pg_advisory_unlock($1, $2::int)', [LOCK_CLASS, lockKey(key)]);
    } catch {
      // the connection is gone, and the lock with it
    }
    client.release(true);
  }

  get conversation(): Conversation {
    return { messages: [...this.#view.messages] };
  }

  get leafId(): string | null {
    return this.#leafId;
  }

  get model(): string | undefined {
    return this.#model;
  }

  get size(): number {
    return this.#size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The usage of every answer in the session, per model (see `SessionWriter.usage`): no I/O, never throws. */
  get usage(): readonly ModelUsage[] {
    return this.#usage;
  }

  /** Every entry; `ERR_INVALID_ARGUMENT` when the open read only the conversation (open with `{ eager: true }`). */
  get entries(): readonly SessionEntry[] {
    if (this.#entries === undefined) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `session ${this.header.id}: entries were not read (only the conversation from the latest compaction); open with { eager: true }`,
      );
    }
    return this.#entries;
  }

  appendMessage(message: Message): MessageEntry {
    const entry = messageEntry(message, this.#base());
    this.#store(entry);
    this.#view.messages.push(message);
    this.#view.entryIds.push(entry.id);
    addAnswer(this.#usage, message);
    return entry;
  }

  appendModelChange(change: { model: string; api?: string; provider?: string }): ModelChangeEntry {
    const entry = modelChangeEntry(change, this.#base());
    this.#model = entry.model;
    this.#store(entry);
    return entry;
  }

  appendCustom(customType: string, data: unknown): CustomEntry {
    const entry = customEntry(customType, data, this.#base());
    this.#store(entry);
    return entry;
  }

  appendCompaction(record: CompactionInput): CompactionEntry {
    const { entry, view } = compactionEntry(record, this.#view, this.#base(), this.#usage);
    this.#store(entry);
    this.#view = view;
    return entry;
  }

  appendUpload(record: UploadInput): UploadEntry {
    const entry = uploadEntry(record, this.#base());
    this.#store(entry);
    return entry;
  }

  /** Every upload entry of the session in order: from the entries read at open, else queried (after the writes). */
  async uploadEntries(): Promise<readonly UploadEntry[]> {
    const isUpload = (e: SessionEntry): e is UploadEntry => e.type === 'upload';
    if (this.#entries !== undefined) return this.#entries.filter(isUpload);
    await this.flush();
    let rows: Array<{ seq: string; body: string }>;
    try {
      rows = (
        await this.#client.query<{ seq: string; body: string }>(
          "SELECT seq, body FROM panto_session_entries WHERE session_key = $1 AND type = 'upload' ORDER BY seq",
          [this.#key],
        )
      ).rows;
    } catch (err) {
      throw new PantoError(
        'ERR_SESSION_STORE',
        `session ${this.header.id}: reading its upload entries failed (${(err as Error)?.message ?? String(err)})`,
        { cause: err },
      );
    }
    return rows.map((r) => {
      const line = Number(r.seq) + 2;
      let value: unknown;
      try {
        value = JSON.parse(r.body);
      } catch (err) {
        throw new PantoError('ERR_SESSION_CORRUPT', `session ${this.header.id}:${line}: not valid JSON`, {
          cause: err,
        });
      }
      const problem =
        entryProblem(value) ?? ((value as SessionEntry).type === 'upload' ? null : 'not an upload entry');
      if (problem)
        throw new PantoError('ERR_SESSION_FORMAT', `session ${this.header.id}:${line}: ${problem}`);
      return value as UploadEntry;
    });
  }

  /**
   * Continue from entry `entryId` (see `StoredSessionWriter.branch`): after the appends so far are stored, the path
   * from it to the root is read (ids, parents and types only, each parent an earlier row), then the entries the
   * conversation needs — from the latest compaction on the path (its kept entry on), else all the path's — and the
   * latest model change on it. Checks, on the lock's connection, that this log still holds the session.
   */
  async branch(entryId: string): Promise<void> {
    if (this.#closed) throw invalid(`session ${this.header.id} is closed`);
    if (typeof entryId !== 'string') throw invalid(`no entry ${String(entryId)} in this session`);
    if (this.#branching)
      throw invalid(`session ${this.header.id}: a branch is already pending; await it first`);
    this.#branching = true;
    try {
      await this.#branchTo(entryId);
    } finally {
      this.#branching = false;
    }
  }

  async #branchTo(entryId: string): Promise<void> {
    await this.flush();
    const where = `session ${this.header.id}`;
    let path: PathRow[];
    try {
      const held = await this.#client.query<{ held: boolean }>(
        'SELECT writer = $2 AS held FROM panto_sessions WHERE key = $1',
        [this.#key, this.#token],
      );
      if (held.rows[0]?.held !== true) {
        this.#failure ??= new PantoError(
          'ERR_SESSION_LOCKED',
          `${where}: this log no longer holds the session (another writer took it over); open it again`,
        );
        throw this.#failure;
      }
      path = (
        await this.#client.query<PathRow>(
          `WITH RECURSIVE path AS (
             SELECT seq, id, parent_id, type FROM panto_session_entries WHERE session_key = $1 AND id = $2
             UNION ALL
             SELECT e.seq, e.id, e.parent_id, e.type FROM path p JOIN panto_session_entries e
               ON e.session_key = $1 AND e.id = p.parent_id AND e.seq < p.seq)
           SELECT seq, id, parent_id, type FROM path`,
          [this.#key, entryId],
        )
      ).rows;
    } catch (err) {
      throw this.#readError(err);
    }
    if (path.length === 0) throw invalid(`no entry ${entryId} in this session`);
    const root = path[path.length - 1] as PathRow;
    if (root.parent_id !== null)
      throw new PantoError('ERR_SESSION_FORMAT', `${where}: entry ${root.id} has no earlier parent`);
    path.reverse();
    // The conversation needs the path from the latest compaction's kept entry (or the compaction) on, else all of it.
    let from = 0;
    const c = path.findLastIndex((r) => r.type === 'compaction');
    if (c !== -1) {
      const [compaction] = await this.#bodies([path[c] as PathRow]);
      const kept = compaction?.type === 'compaction' ? compaction.firstKeptEntryId : null;
      from = kept === null ? c : path.findIndex((r) => r.id === kept);
      if (from === -1 || (kept !== null && from >= c))
        throw new PantoError(
          'ERR_SESSION_FORMAT',
          `${where}: compaction ${(path[c] as PathRow).id} keeps from entry ${kept}, which is not on its branch`,
        );
    }
    const change = path.findLastIndex((r) => r.type === 'model_change');
    const read = await this.#bodies(
      change !== -1 && change < from ? [path[change] as PathRow, ...path.slice(from)] : path.slice(from),
    );
    const branch = read.slice(read.length - (path.length - from));
    const model =
      change === -1
        ? this.header.model
        : (read.find((e) => e.id === (path[change] as PathRow).id) as ModelChangeEntry).model;
    this.#view = resolveConversation(branch);
    this.#model = model;
    this.#leafId = entryId;
  }

  /** The entries of these path rows (ascending), parsed and checked against their columns; refused past the size limit. */
  async #bodies(rows: readonly PathRow[]): Promise<SessionEntry[]> {
    const where = `session ${this.header.id}`;
    let got: Array<PathRow & { body: string | null; bytes: number }>;
    try {
      got = (
        await this.#client.query<PathRow & { body: string | null; bytes: number }>(
          `SELECT seq, id, parent_id, type, CASE WHEN octet_length(body) <= $3 THEN body END AS body,
             octet_length(body) AS bytes
           FROM panto_session_entries WHERE session_key = $1 AND seq = ANY($2::bigint[]) ORDER BY seq`,
          [this.#key, rows.map((r) => r.seq), this.#maxEntryBytes],
        )
      ).rows;
    } catch (err) {
      throw this.#readError(err);
    }
    if (got.length !== rows.length)
      throw new PantoError(
        'ERR_SESSION_FORMAT',
        `${where}: entries of the branch went missing while it was read`,
      );
    return got.map((r) => {
      const line = Number(r.seq) + 2;
      if (r.body === null)
        throw new PantoError(
          'ERR_SESSION_CORRUPT',
          `${where}:${line}: ${r.bytes} bytes, longer than maxEntryBytes (${this.#maxEntryBytes}); refusing to load it`,
        );
      return rowEntry(where, line, r.body, r);
    });
  }

  /** A failed read: typed as the store types it (a lost connection loses the lock: `ERR_SESSION_LOCKED`). */
  #readError(err: unknown): PantoError {
    if (err instanceof PantoError) return err;
    const e = err as { message?: string; code?: string };
    if (connectionLost(err)) {
      this.#failure ??= new PantoError(
        'ERR_SESSION_LOCKED',
        `session ${this.header.id}: the connection and with it the session's lock are lost (${e?.message ?? String(err)}); open the session again`,
        { cause: err },
      );
      return this.#failure as PantoError;
    }
    return new PantoError(
      'ERR_SESSION_STORE',
      `session ${this.header.id}: reading failed (${e?.message ?? String(err)}${e?.code ? `, ${e.code}` : ''})`,
      { cause: err },
    );
  }

  async flush(): Promise<void> {
    await this.#writes;
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Flush, release the lock and the connection. Rejects with a failed store (the lock is released either way). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.flush();
    } finally {
      try {
        await this.#client.query('UPDATE panto_sessions SET writer = NULL WHERE key = $1 AND writer = $2', [
          this.#key,
          this.#token,
        ]);
        await PostgresSessionLog.release(this.#client, this.#key);
      } catch {
        this.#client.release(true);
      }
    }
  }

  #base(): EntryBase {
    if (this.#closed) throw invalid(`session ${this.header.id} is closed`);
    if (this.#failure !== undefined) throw this.#failure;
    if (this.#branching)
      throw invalid(`session ${this.header.id}: cannot append while branch() is pending; await it`);
    return {
      id: randomBytes(6).toString('hex'),
      parentId: this.#leafId,
      timestamp: new Date().toISOString(),
    };
  }

  /** Queue the entry's store (in order) and take it as this log's: leaf, size, entries. */
  #store(entry: SessionEntry): void {
    const deep = nestingProblem(entry, `the ${entry.type} entry`);
    if (deep) throw invalid(`session ${this.header.id}: cannot append: ${deep}`);
    const body = JSON.stringify(entry);
    const model = this.#model ?? null;
    this.#leafId = entry.id;
    this.#size++;
    this.#entries?.push(entry);
    this.#writes = this.#writes.then(async () => {
      if (this.#failure !== undefined) return;
      try {
        const r = await this.#client.query<{ seq: string }>(
          `WITH s AS (
             UPDATE panto_sessions SET entry_count = entry_count + 1, updated = now(), model = $3
             WHERE key = $1 AND writer = $2 RETURNING key, entry_count - 1 AS seq)
           INSERT INTO panto_session_entries (session_key, seq, id, parent_id, type, body)
           SELECT key, seq, $4, $5, $6, $7 FROM s RETURNING seq`,
          [this.#key, this.#token, model, entry.id, entry.parentId, entry.type, body],
        );
        if (r.rows.length === 0) {
          this.#failure = new PantoError(
            'ERR_SESSION_LOCKED',
            `session ${this.header.id}: this log no longer holds the session (another writer took it over); entry ${entry.id} was not stored`,
          );
        }
      } catch (err) {
        const e = err as { message?: string; code?: string };
        this.#failure = connectionLost(err)
          ? new PantoError(
              'ERR_SESSION_LOCKED',
              `session ${this.header.id}: entry ${entry.id} was not stored; the connection and with it the session's lock are lost (${e?.message ?? String(err)}); open the session again`,
              { cause: err },
            )
          : new PantoError(
              'ERR_SESSION_STORE',
              `session ${this.header.id}: entry ${entry.id} was not stored (${e?.message ?? String(err)}${e?.code ? `, ${e.code}` : ''})`,
              { cause: err },
            );
      }
    });
  }
}

/**
 * Row `row`'s body `text` (line `line` of `where` in the file form) as a checked entry.
 * @throws PantoError `ERR_SESSION_CORRUPT` when it is not JSON; `ERR_SESSION_FORMAT` when it is not an entry or its
 *   columns (id, parent, type) do not match its JSON.
 */
export function rowEntry(
  where: string,
  line: number,
  text: string,
  row: { id: string; parent_id: string | null; type: string },
): SessionEntry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corruptLine(where, line, err);
  }
  const problem = entryProblem(value);
  if (problem) throw new PantoError('ERR_SESSION_FORMAT', `${where}:${line}: ${problem}`);
  const e = value as SessionEntry;
  if (e.id !== row.id || e.parentId !== row.parent_id || e.type !== row.type)
    throw new PantoError('ERR_SESSION_FORMAT', `${where}:${line}: the row's columns do not match its JSON`);
  return e;
}
