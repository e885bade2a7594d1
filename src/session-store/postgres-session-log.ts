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
import {
  type CompactionInput,
  compactionEntry,
  customEntry,
  type EntryBase,
  invalid,
  messageEntry,
  modelChangeEntry,
} from '../session/new-entries.js';
import type { ConversationView } from '../session/resolve-conversation.js';
import type {
  CompactionEntry,
  CustomEntry,
  MessageEntry,
  ModelChangeEntry,
  SessionEntry,
  SessionHeader,
} from '../session/session-entry.js';
import type { SessionWarning } from '../session/session-warning.js';
import type { SessionWriter } from '../session/session-writer.js';
import { nestingProblem } from '../session/validate-entry.js';

/** The part of a `pg` client the log uses. */
export interface PgClient {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

type LockedClient = PgClient & { release(destroy?: boolean): void };

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
  #view: ConversationView;
  #leafId: string | null;
  #model: string | undefined;
  #size: number;
  /** Every entry, when the open read them all (`eager`, or a session with no compaction); else undefined. */
  #entries: SessionEntry[] | undefined;
  /** Ids appended by this log (ids in the store are unique per session: a collision fails the store). */
  #writes: Promise<void> = Promise.resolve();
  #failure: unknown;
  #closed = false;

  /** @internal Use `PostgresSessionStore.open` / `create`. */
  constructor(init: {
    client: LockedClient;
    key: string;
    header: SessionHeader;
    view: ConversationView;
    leafId: string | null;
    model: string | undefined;
    size: number;
    entries: SessionEntry[] | undefined;
  }) {
    this.#client = init.client;
    this.#key = init.key;
    this.#token = tokens.get(init.client) as string;
    this.header = init.header;
    this.#view = init.view;
    this.#leafId = init.leafId;
    this.#model = init.model;
    this.#size = init.size;
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
    const { entry, view } = compactionEntry(record, this.#view, this.#base());
    this.#store(entry);
    this.#view = view;
    return entry;
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
