/**
 * Sessions in PostgreSQL, for hosts that run agents in several processes on several machines: any of them resumes a
 * session by id. The `pg` driver is an optional dependency, loaded when a store connects (never by `import
 * 'libpanto'`).
 *
 * Schema (created on connect when missing; docs/session-format.md):
 * - `panto_sessions`: one row per session — `key` (bigserial), `id` (text, unique), `header` (the header line's JSON
 *   text), `created`, `updated`, `entry_count`, `model` (the current model as of the last append), `writer` (the
 *   token of the log that holds the session).
 * - `panto_session_entries`: one row per entry — `(session_key, seq)` primary key, `id` (unique per session),
 *   `parent_id`, `type`, `body` (the entry's JSON text, exactly the line a file holds). A partial index on the
 *   compaction rows finds the latest compaction at once, so a resume reads O(entries since it).
 *
 * One writer per session: `open`/`create` take `pg_try_advisory_lock` on a connection of their own, held until
 * `close()` and released by the server when that connection dies (a crashed machine never leaves a session locked).
 * Every append is one statement on that connection that also checks the session's `writer` is still this log, so an
 * append that lost its lock fails and is never interleaved with another writer's.
 */

import { PantoError } from '../errors.js';
import { addAnswer, copyUsage } from '../session/answer-usage.js';
import { corruptLine } from '../session/jsonl-reader.js';
import { EntryCollector, type LoadedSession } from '../session/load-session.js';
import { type ConversationView, resolveConversation } from '../session/resolve-conversation.js';
import {
  type ModelUsage,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
} from '../session/session-entry.js';
import { entryProblem, readableHeaderProblem } from '../session/validate-entry.js';
import { ImportChecker } from './import-lines.js';
import { LOCK_CLASS, lockKey, type PgClient, PostgresSessionLog, rowEntry } from './postgres-session-log.js';
import {
  type CreateStoredSessionOptions,
  checkSessionId,
  type OpenStoredSessionOptions,
  type SessionStore,
  type StoredSessionInfo,
} from './session-store.js';

/** The part of a `pg.Pool` the store uses. */
interface PgPool {
  connect(): Promise<PgClient & { release(destroy?: boolean): void }>;
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): void;
}

export interface PostgresSessionStoreOptions {
  /** `postgres://user:password@host:port/database`, or a `pg` pool configuration object. */
  connection: string | Record<string, unknown>;
  /** Longest entry accepted, in bytes of JSON text (default 256 MiB, as `maxLineBytes` for files). */
  maxEntryBytes?: number;
}

const DEFAULT_MAX_ENTRY = 256 * 1024 * 1024;
/** Rows per page read (and per insert of an import). */
const PAGE_ROWS = 500;
/** JSON text per page read or insert of an import, in bytes (a longer single row goes alone). */
const PAGE_BYTES = 2 * 1024 * 1024;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS panto_sessions (
  key bigserial UNIQUE,
  id text PRIMARY KEY,
  header text NOT NULL,
  created timestamptz NOT NULL DEFAULT now(),
  updated timestamptz NOT NULL DEFAULT now(),
  entry_count bigint NOT NULL DEFAULT 0,
  model text,
  writer text
);
CREATE TABLE IF NOT EXISTS panto_session_entries (
  session_key bigint NOT NULL REFERENCES panto_sessions(key) ON DELETE CASCADE,
  seq bigint NOT NULL,
  id text NOT NULL,
  parent_id text,
  type text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (session_key, seq),
  UNIQUE (session_key, id)
);
CREATE INDEX IF NOT EXISTS panto_session_compactions ON panto_session_entries (session_key, seq)
  WHERE type = 'compaction';
`;

/**
 * A database error as a typed one (the driver's message, the SQLSTATE code when there is one). A file-system error (an
 * import's file) is the caller's, not the database's: returned as is.
 */
export function storeError(what: string, err: unknown): PantoError | Error {
  if (err instanceof PantoError) return err;
  const fs = err as { syscall?: unknown; path?: unknown };
  if (err instanceof Error && typeof fs.syscall === 'string' && typeof fs.path === 'string') return err;
  const e = err as { message?: string; code?: string };
  return new PantoError(
    'ERR_SESSION_STORE',
    `${what}: ${e?.message ?? String(err)}${e?.code ? ` (${e.code})` : ''}`,
    { cause: err },
  );
}

interface SessionRow {
  key: string;
  header: string;
  model: string | null;
  entry_count: string;
}

interface EntryRow {
  seq: string;
  id: string;
  parent_id: string | null;
  type: string;
  body: string | null;
  bytes: number;
}

export class PostgresSessionStore implements SessionStore {
  readonly #pool: PgPool;
  readonly #maxEntryBytes: number;

  private constructor(pool: PgPool, maxEntryBytes: number) {
    this.#pool = pool;
    this.#maxEntryBytes = maxEntryBytes;
  }

  /**
   * Connect (a pool of connections) and create the schema when missing. `ERR_INVALID_ARGUMENT` when the `pg` package
   * is not installed or the options are wrong; `ERR_SESSION_STORE` when the database cannot be reached.
   */
  static async connect(options: PostgresSessionStoreOptions | string): Promise<PostgresSessionStore> {
    const o = typeof options === 'string' ? { connection: options } : options;
    if (
      o === null ||
      typeof o !== 'object' ||
      (typeof o.connection !== 'string' && typeof o.connection !== 'object')
    )
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'PostgresSessionStore.connect: connection must be a URL or a pg config',
      );
    const max = o.maxEntryBytes ?? DEFAULT_MAX_ENTRY;
    if (!Number.isInteger(max) || max <= 0)
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'PostgresSessionStore.connect: maxEntryBytes must be a positive integer',
      );
    let pg: { default?: { Pool: new (c: unknown) => PgPool }; Pool?: new (c: unknown) => PgPool };
    try {
      pg = (await import('pg')) as unknown as typeof pg;
    } catch (err) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'the PostgreSQL session store needs the `pg` package (npm install pg)',
        { cause: err },
      );
    }
    const Pool = (pg.default?.Pool ?? pg.Pool) as new (c: unknown) => PgPool;
    const config = typeof o.connection === 'string' ? { connectionString: o.connection } : o.connection;
    const pool = new Pool({ ...config, max: (config as { max?: number }).max ?? 10 });
    // An idle connection the server dropped: the pool replaces it; nothing to crash the host over.
    pool.on('error', () => {});
    try {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // Two processes creating the schema at once would race on CREATE TABLE IF NOT EXISTS.
        await client.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK_CLASS]);
        await client.query(SCHEMA);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => {});
      throw storeError('PostgresSessionStore.connect', err);
    }
    return new PostgresSessionStore(pool, max);
  }

  async create(options: CreateStoredSessionOptions = {}): Promise<PostgresSessionLog> {
    const id = options.id === undefined ? randomId() : checkSessionId(options.id);
    const header: SessionHeader = {
      type: 'session',
      version: SESSION_FORMAT_VERSION,
      id,
      created: new Date().toISOString(),
    };
    if (options.model !== undefined) header.model = options.model;
    if (options.workspace !== undefined) header.workspace = options.workspace;
    let key: string;
    try {
      const r = await this.#pool.query<{ key: string }>(
        'INSERT INTO panto_sessions (id, header, model) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING key',
        [id, JSON.stringify(header), header.model ?? null],
      );
      if (r.rows.length === 0)
        throw new PantoError('ERR_INVALID_ARGUMENT', `session ${id} already exists; open it instead`);
      key = (r.rows[0] as { key: string }).key;
    } catch (err) {
      throw storeError(`create session ${id}`, err);
    }
    const client = await this.#lock(id, key, {});
    return new PostgresSessionLog({
      client,
      key,
      header,
      view: { messages: [], entryIds: [] },
      leafId: null,
      model: header.model,
      size: 0,
      usage: [],
      entries: [],
      maxEntryBytes: this.#maxEntryBytes,
    });
  }

  async open(id: string, options: OpenStoredSessionOptions = {}): Promise<PostgresSessionLog> {
    checkSessionId(id);
    const row = await this.#session(id);
    const client = await this.#lock(id, row.key, options);
    try {
      const state = await this.#read(id, row, options.eager ?? false, client);
      return new PostgresSessionLog({ client, key: row.key, ...state, maxEntryBytes: this.#maxEntryBytes });
    } catch (err) {
      await PostgresSessionLog.release(client, row.key);
      throw err;
    }
  }

  async load(id: string, options: { eager?: boolean } = {}): Promise<LoadedSession> {
    checkSessionId(id);
    const row = await this.#session(id);
    const client = await this.#pool.connect().catch((err: unknown) => {
      throw storeError(`load session ${id}`, err);
    });
    try {
      const s = await this.#read(id, row, options.eager ?? false, client);
      const entries = s.entries;
      return {
        header: s.header,
        conversation: { messages: s.view.messages },
        leafId: s.leafId,
        ...(s.model === undefined ? {} : { model: s.model }),
        warnings: [],
        get entries(): readonly SessionEntry[] {
          if (entries === undefined) throw notLoaded(id);
          return entries;
        },
      };
    } finally {
      client.release();
    }
  }

  async list(): Promise<StoredSessionInfo[]> {
    try {
      const r = await this.#pool.query<{
        id: string;
        header: string;
        model: string | null;
        entry_count: string;
      }>('SELECT id, header, model, entry_count FROM panto_sessions ORDER BY created, key');
      return r.rows.map((row) => {
        let created = '';
        try {
          created = String((JSON.parse(row.header) as SessionHeader).created);
        } catch {
          // a damaged header row: listed without its time
        }
        const info: StoredSessionInfo = { id: row.id, created, entries: Number(row.entry_count) };
        if (row.model !== null) info.model = row.model;
        return info;
      });
    } catch (err) {
      throw storeError('list sessions', err);
    }
  }

  /**
   * Pages of rows in order (keyset by `seq`): at most `PAGE_ROWS` rows and, past the first, `PAGE_BYTES` of JSON
   * text each (the sizes are asked first), so memory stays at one page whatever the session's size.
   */
  async *exportLines(id: string): AsyncIterable<string> {
    checkSessionId(id);
    const row = await this.#session(id);
    yield row.header;
    for (let from = 0; ; ) {
      let sizes: Array<{ seq: string; bytes: number }>;
      try {
        sizes = (
          await this.#pool.query<{ seq: string; bytes: number }>(
            'SELECT seq, octet_length(body) AS bytes FROM panto_session_entries WHERE session_key = $1 AND seq >= $2 ORDER BY seq LIMIT $3',
            [row.key, from, PAGE_ROWS],
          )
        ).rows;
      } catch (err) {
        throw storeError(`session ${id}`, err);
      }
      if (sizes.length === 0) return;
      let last = sizes[0] as { seq: string; bytes: number };
      let bytes = last.bytes;
      for (let i = 1; i < sizes.length; i++) {
        const s = sizes[i] as { seq: string; bytes: number };
        if (bytes + s.bytes > PAGE_BYTES) break;
        bytes += s.bytes;
        last = s;
      }
      const rows = await this.#rows(id, row.key, 'seq >= $2 AND seq <= $3 ORDER BY seq', [from, last.seq]);
      for (const r of rows) yield this.#body(id, r);
      if (sizes.length < PAGE_ROWS && last === sizes[sizes.length - 1]) return;
      from = Number(last.seq) + 1;
    }
  }

  /**
   * In one transaction, the lines inserted in batches (`PAGE_ROWS` rows, `PAGE_BYTES` of text) as they pass the
   * checks; a line that fails (or a lost connection) rolls it all back, so a failed import leaves nothing.
   */
  async importLines(lines: AsyncIterable<string> | Iterable<string>): Promise<string> {
    const checker = new ImportChecker('import');
    let id: string | undefined;
    let client: (PgClient & { release(destroy?: boolean): void }) | undefined;
    let key = '';
    let seq = 0;
    let values: unknown[] = [];
    let tuples: string[] = [];
    let bytes = 0;
    const insert = async (c: PgClient) => {
      if (tuples.length === 0) return;
      const text = `INSERT INTO panto_session_entries (session_key, seq, id, parent_id, type, body) VALUES ${tuples.join(', ')}`;
      const v = values;
      values = [key];
      tuples = [];
      bytes = 0;
      await c.query(text, v);
    };
    try {
      for await (const raw of lines) {
        const line = checker.check(raw);
        if (line === undefined) continue;
        const size = Buffer.byteLength(line.text);
        if (size > this.#maxEntryBytes)
          throw new PantoError(
            'ERR_SESSION_CORRUPT',
            `import:${checker.line}: ${size} bytes, longer than maxEntryBytes (${this.#maxEntryBytes})`,
          );
        const e = line.entry;
        if (e === undefined) {
          id = checkSessionId(checker.header?.id);
          client = await this.#pool.connect();
          await client.query('BEGIN');
          const r = await client.query<{ key: string }>(
            'INSERT INTO panto_sessions (id, header, model) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING key',
            [id, line.text, checker.header?.model ?? null],
          );
          if (r.rows.length === 0)
            throw new PantoError('ERR_INVALID_ARGUMENT', `import: session ${id} already exists`);
          key = (r.rows[0] as { key: string }).key;
          values = [key];
          continue;
        }
        const at = values.length;
        values.push(seq++, e.id, e.parentId, e.type, line.text);
        tuples.push(`($1, $${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5})`);
        bytes += size;
        if (tuples.length >= PAGE_ROWS || bytes >= PAGE_BYTES) await insert(client as PgClient);
      }
      const session = checker.finish();
      const c = client as PgClient;
      await insert(c);
      await c.query('UPDATE panto_sessions SET entry_count = $2, model = $3 WHERE key = $1', [
        key,
        session.entries,
        session.model ?? null,
      ]);
      await c.query('COMMIT');
      return id as string;
    } catch (err) {
      // A connection in doubt (the rollback failed) is closed, never reused.
      const doubt = await client?.query('ROLLBACK').then(
        () => false,
        () => true,
      );
      client?.release(doubt);
      client = undefined;
      throw storeError(`import session ${id ?? ''}`.trimEnd(), err);
    } finally {
      client?.release();
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async #session(id: string): Promise<SessionRow> {
    let rows: SessionRow[];
    try {
      rows = (
        await this.#pool.query<SessionRow>(
          'SELECT key, header, model, entry_count FROM panto_sessions WHERE id = $1',
          [id],
        )
      ).rows;
    } catch (err) {
      throw storeError(`session ${id}`, err);
    }
    const row = rows[0];
    if (row === undefined) throw new PantoError('ERR_SESSION_NOT_FOUND', `no session ${id} in this store`);
    return row;
  }

  /** A connection of its own holding the session's advisory lock (and the session's `writer` mark). */
  async #lock(
    id: string,
    key: string,
    options: OpenStoredSessionOptions,
  ): Promise<PgClient & { release(destroy?: boolean): void }> {
    const wait = options.lockTimeoutMs ?? 0;
    if (!Number.isInteger(wait) || wait < 0)
      throw new PantoError('ERR_INVALID_ARGUMENT', 'lockTimeoutMs must be an integer >= 0');
    let client: PgClient & { release(destroy?: boolean): void };
    try {
      client = await this.#pool.connect();
    } catch (err) {
      throw storeError(`open session ${id}`, err);
    }
    // Until the log listens: a connection lost here fails the open through its next query.
    client.on('error', () => {});
    try {
      let got = false;
      for (const deadline = Date.now() + wait; ; ) {
        const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2::int) AS ok', [
          LOCK_CLASS,
          lockKey(key),
        ]);
        got = (r.rows[0] as { ok: boolean }).ok;
        if (got || Date.now() >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, deadline - Date.now())));
      }
      if (!got) {
        throw new PantoError(
          'ERR_SESSION_LOCKED',
          `session ${id} is open for writing by another process${wait > 0 ? ` (waited ${wait} ms)` : ''}`,
        );
      }
      await client.query('UPDATE panto_sessions SET writer = $2 WHERE key = $1', [
        key,
        PostgresSessionLog.newToken(client),
      ]);
      return client;
    } catch (err) {
      await PostgresSessionLog.release(client, key);
      throw storeError(`open session ${id}`, err);
    }
  }

  /** Entry rows of session `key` matching `where` (`$1` is the key), bodies past the limit left out. */
  async #rows(
    id: string,
    key: string,
    where: string,
    values: unknown[],
    client?: PgClient,
  ): Promise<EntryRow[]> {
    const q = client ?? this.#pool;
    const max = this.#maxEntryBytes;
    try {
      const r = await q.query<EntryRow>(
        `SELECT seq, id, parent_id, type, CASE WHEN octet_length(body) <= ${max} THEN body END AS body, octet_length(body) AS bytes FROM panto_session_entries WHERE session_key = $1 AND ${where}`,
        [key, ...values],
      );
      return r.rows;
    } catch (err) {
      throw storeError(`session ${id}`, err);
    }
  }

  /** The row's JSON text, or `ERR_SESSION_CORRUPT` for one over the size limit. */
  #body(id: string, row: EntryRow): string {
    if (row.body === null)
      throw new PantoError(
        'ERR_SESSION_CORRUPT',
        `session ${id} entry ${Number(row.seq) + 1}: ${row.bytes} bytes, longer than maxEntryBytes (${this.#maxEntryBytes}); refusing to load it`,
      );
    return row.body;
  }

  /**
   * The session as a log starts from: the conversation from the latest compaction on (every row with `eager`, or when
   * there is no compaction, or when the leaf's branch does not pass through the latest compaction).
   */
  async #read(
    id: string,
    row: SessionRow,
    eager: boolean,
    client: PgClient,
  ): Promise<{
    header: SessionHeader;
    view: ConversationView;
    leafId: string | null;
    model: string | undefined;
    size: number;
    usage: ModelUsage[];
    entries: SessionEntry[] | undefined;
  }> {
    const where = `session ${id}`;
    let header: SessionHeader;
    try {
      header = JSON.parse(row.header);
    } catch (err) {
      throw corruptLine(where, 1, err);
    }
    const problem = readableHeaderProblem(header);
    if (problem) throw new PantoError('ERR_SESSION_FORMAT', `${where}:1: ${problem}`);
    const size = Number(row.entry_count);
    const model = row.model ?? header.model;
    if (!eager) {
      const latest = await this.#rows(
        id,
        row.key,
        "type = 'compaction' ORDER BY seq DESC LIMIT 1",
        [],
        client,
      );
      const c = latest[0];
      if (c !== undefined) {
        const partial = await this.#fromCompaction(id, row.key, c, client);
        if (partial !== undefined) return { header, ...partial, model, size, entries: undefined };
      }
    }
    // Every row, checked as an eager load checks a file's lines (line numbers: seq + 2, the header being line 1).
    const collector = new EntryCollector(where);
    collector.add(header, 1, row.header);
    for (let from = 0; ; ) {
      const rows = await this.#rows(
        id,
        row.key,
        'seq >= $2 ORDER BY seq LIMIT $3',
        [from, PAGE_ROWS],
        client,
      );
      for (const r of rows) this.#add(collector, id, r);
      if (rows.length < PAGE_ROWS) break;
      from = Number((rows[rows.length - 1] as EntryRow).seq) + 1;
    }
    const { session, view } = collector.session([]);
    return {
      header,
      view,
      leafId: session.leafId,
      model: session.model,
      size: session.entries.length,
      usage: collector.usage(),
      entries: session.entries,
    };
  }

  /** A row parsed and checked into `collector`, its columns checked against its JSON. */
  #add(collector: EntryCollector, id: string, r: EntryRow): SessionEntry {
    const line = Number(r.seq) + 2;
    const text = this.#body(id, r);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw corruptLine(`session ${id}`, line, err);
    }
    collector.add(value, line, text);
    const e = value as SessionEntry;
    if (e.id !== r.id || e.parentId !== r.parent_id || e.type !== r.type)
      throw new PantoError(
        'ERR_SESSION_FORMAT',
        `session ${id}:${line}: the row's columns do not match its JSON`,
      );
    return e;
  }

  /**
   * The conversation read from the latest compaction `c` on: the rows from its `firstKeptEntryId` (or itself) to the
   * end, and the usage (`c`'s `usageBefore` and the answers after it). Undefined when the leaf's branch does not run
   * through `c` and its kept entry, or `c` records no usage (written before it did): the caller then reads all.
   */
  async #fromCompaction(
    id: string,
    key: string,
    c: EntryRow,
    client: PgClient,
  ): Promise<{ view: ConversationView; leafId: string | null; usage: ModelUsage[] } | undefined> {
    const where = `session ${id}`;
    const compaction = JSON.parse(this.#body(id, c)) as SessionEntry;
    if (compaction.type !== 'compaction' || entryProblem(compaction) !== null) return undefined;
    if (compaction.usageBefore === undefined) return undefined;
    const usage = copyUsage(compaction.usageBefore);
    let from = Number(c.seq);
    if (compaction.firstKeptEntryId !== null) {
      const kept = await this.#rows(id, key, 'id = $2', [compaction.firstKeptEntryId], client);
      if (kept[0] === undefined || Number(kept[0].seq) >= from) return undefined;
      from = Number(kept[0].seq);
    }
    const rows = await this.#rows(id, key, 'seq >= $2 ORDER BY seq', [from], client);
    const byId = new Map<string, SessionEntry>();
    for (const r of rows) {
      const line = Number(r.seq) + 2;
      const e = rowEntry(where, line, this.#body(id, r), r);
      byId.set(e.id, e);
      if (e.type === 'message' && Number(r.seq) > Number(c.seq)) addAnswer(usage, e.message);
    }
    const leaf = rows[rows.length - 1];
    if (leaf === undefined) return undefined;
    // The branch from the leaf back to the kept entry (or the compaction); anything outside the rows read: read all.
    const path: SessionEntry[] = [];
    const stop = compaction.firstKeptEntryId ?? compaction.id;
    for (let e = byId.get(leaf.id); ; ) {
      if (e === undefined || path.length > byId.size) return undefined;
      path.push(e);
      if (e.id === stop) break;
      e = e.parentId === null ? undefined : byId.get(e.parentId);
    }
    path.reverse();
    if (!path.some((e) => e.id === compaction.id)) return undefined;
    return { view: resolveConversation(path), leafId: leaf.id, usage };
  }
}

function notLoaded(id: string): PantoError {
  return new PantoError(
    'ERR_INVALID_ARGUMENT',
    `session ${id}: entries were not read (only the conversation from the latest compaction); load or open with { eager: true }`,
  );
}

function randomId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
}
