/**
 * What an agent (or any host) needs of an open, appending session log: `SessionLog` (a JSONL file) and the logs a
 * `SessionStore` opens (session-store/) implement it. One writer per session: whoever holds a `SessionWriter` holds
 * the session's lock until `close()`.
 *
 * Appends are synchronous: each returns the entry once it is checked and taken into `conversation`. A file log has
 * written it by then; a store log may still be sending it (in order) — `flush()` resolves once every append so far is
 * stored and rejects with the first failure, after which every append throws that failure (an append that lost the
 * session's lock is refused, never interleaved with another writer's).
 */

import type { Conversation, Message } from '../conversation.js';
import type { CompactionInput, UploadInput } from './new-entries.js';
import type {
  CompactionEntry,
  CustomEntry,
  MessageEntry,
  ModelChangeEntry,
  ModelUsage,
  SessionEntry,
  SessionHeader,
  UploadEntry,
} from './session-entry.js';
import type { SessionWarning } from './session-warning.js';

export interface SessionWriter {
  readonly header: SessionHeader;
  /** The current conversation (a new array each call; the messages are shared, do not mutate them). */
  readonly conversation: Conversation;
  /** Id of the entry the next append will be attached to. */
  readonly leafId: string | null;
  /** The current model: the latest `model_change` on the current branch, else the header's `model`. */
  readonly model: string | undefined;
  /** What loading reported, then the repairs opening made. */
  readonly warnings: readonly SessionWarning[];
  /** Number of entries (those stored at open and those appended since). */
  readonly size: number;
  /**
   * The usage of every answer the session holds (all branches), per model: counted at open (from the latest
   * compaction's `usageBefore` on), kept up to date by appends. Reading it does no I/O and never throws.
   */
  readonly usage: readonly ModelUsage[];
  /**
   * Every entry in order (all branches). A file log parses what its lazy open did not on first read (see
   * `SessionLog.entries`); a store log opened without `eager` throws `ERR_INVALID_ARGUMENT` until `loadEntries()`.
   */
  readonly entries: readonly SessionEntry[];
  readonly closed: boolean;
  appendMessage(message: Message): MessageEntry;
  appendModelChange(change: { model: string; api?: string; provider?: string }): ModelChangeEntry;
  appendCustom(customType: string, data: unknown): CustomEntry;
  appendCompaction(record: CompactionInput): CompactionEntry;
  /**
   * Record provider files uploaded (or ids no longer usable) for one provider account (see `UploadEntry`). Optional:
   * an agent on a writer without it keeps its uploads in memory only.
   */
  appendUpload?(record: UploadInput): UploadEntry;
  /**
   * Every upload entry of the session, all branches, in order: what the session uploaded and removed, so a resume
   * reuses the ids. Reads only those entries (a lazily opened file log reads their lines; a store log queries them).
   */
  uploadEntries?(): Promise<readonly UploadEntry[]>;
  /** Resolves when every append so far is stored; rejects with the first append that failed. */
  flush(): Promise<void>;
  /** Flush what can be, release the lock, close. Idempotent. */
  close(): void | Promise<void>;
}
