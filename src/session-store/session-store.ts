/**
 * The storage boundary of session logs: one interface, a JSONL file store (the default, byte-compatible with the
 * files `SessionLog` writes) and a PostgreSQL store for hosts that run agents on several machines
 * (docs/session-format.md, "Session stores"). Every store keeps the same entries in the same JSON text, so a session
 * moves between stores without loss (`exportLines` / `importLines`).
 */

import { PantoError } from '../errors.js';
import type { LoadedSession } from '../session/load-session.js';
import type { SessionWriter } from '../session/session-writer.js';

/** A session id: 1-128 characters of `A-Z a-z 0-9 . _ -`, not starting with `.` (a file name in the JSONL store). */
const SESSION_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** `id` when it is a valid session id; else `ERR_INVALID_ARGUMENT` (never a path or a query fragment). */
export function checkSessionId(id: unknown): string {
  if (typeof id !== 'string' || !SESSION_ID.test(id)) {
    const shown =
      typeof id === 'string' ? JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id) : typeof id;
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `session id ${shown} is not valid: 1-128 characters of A-Z a-z 0-9 . _ -, not starting with "."`,
    );
  }
  return id;
}

export interface CreateStoredSessionOptions {
  /** Session id (default: 16 random hex digits). */
  id?: string;
  /** Model id recorded in the header. */
  model?: string;
  /** Workspace root recorded in the header. */
  workspace?: string;
}

export interface OpenStoredSessionOptions {
  /** Read every entry at open (`entries` ready), not only the current conversation. Default false. */
  eager?: boolean;
  /**
   * How long to wait for another writer to release the session (ms). Default 0: `ERR_SESSION_LOCKED` at once. The
   * JSONL store never waits (its lock belongs to a process on one machine).
   */
  lockTimeoutMs?: number;
}

/** A session as `list()` shows it. */
export interface StoredSessionInfo {
  id: string;
  /** ISO 8601 creation time (the header's). */
  created: string;
  /** The current model, when known. */
  model?: string;
  /** Number of entries (the header not counted). */
  entries: number;
}

/** An open session of a store: a `SessionWriter` that can also continue from an earlier entry. */
export interface StoredSessionWriter extends SessionWriter {
  /**
   * Continue from entry `entryId`: any entry of the session, also one before the latest compaction. The conversation
   * and model become those of the path to it and the next append attaches under it; nothing is stored until that
   * append (the leaf is the last entry stored), so a branch with no append does not survive a reopen. `await` it: a
   * file log (`SessionLog`) branches at once, a database log first reads the path from the database. Errors:
   * `ERR_INVALID_ARGUMENT` for an id the session does not hold (or a closed log), `ERR_SESSION_FORMAT` for a broken
   * path, `ERR_SESSION_LOCKED` when a database log no longer holds the session.
   */
  branch(entryId: string): void | Promise<void>;
}

export interface SessionStore {
  /** Create a new session and open it for appending (its lock held). `ERR_INVALID_ARGUMENT` when the id exists. */
  create(options?: CreateStoredSessionOptions): Promise<StoredSessionWriter>;
  /**
   * Open session `id` for appending: take its lock (`ERR_SESSION_LOCKED` while another writer holds it), read the
   * current conversation from the latest compaction on, repair a file's torn end. `ERR_SESSION_NOT_FOUND` when there
   * is no such session.
   */
  open(id: string, options?: OpenStoredSessionOptions): Promise<StoredSessionWriter>;
  /** Read session `id` without locking it (`entries` ready with `eager`). */
  load(id: string, options?: { eager?: boolean }): Promise<LoadedSession>;
  /** The sessions in the store, oldest first. */
  list(): Promise<StoredSessionInfo[]>;
  /**
   * The session as JSONL lines (header first, no newlines), in order: what a file of it holds. Streams: read a page at
   * a time as the consumer takes them, never the whole session.
   */
  exportLines(id: string): AsyncIterable<string>;
  /**
   * Store a session given as JSONL lines (header first; each checked as a load checks it, nothing stored unless all
   * pass). Streams: lines are checked and stored as they come, only each entry's id and parent kept, so memory does
   * not grow with the entries' size. Returns its id. `ERR_INVALID_ARGUMENT` when a session with that id exists.
   */
  importLines(lines: AsyncIterable<string> | Iterable<string>): Promise<string>;
  /** Release the store's resources (open logs stay usable until closed, as the store allows). */
  close(): Promise<void>;
}
