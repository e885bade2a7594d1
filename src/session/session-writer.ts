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
import type { CompactionInput } from './new-entries.js';
import type {
  CompactionEntry,
  CustomEntry,
  MessageEntry,
  ModelChangeEntry,
  SessionEntry,
  SessionHeader,
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
   * Every entry in order (all branches). A file log parses what its lazy open did not on first read (see
   * `SessionLog.entries`); a store log opened without `eager` throws `ERR_INVALID_ARGUMENT` until `loadEntries()`.
   */
  readonly entries: readonly SessionEntry[];
  readonly closed: boolean;
  appendMessage(message: Message): MessageEntry;
  appendModelChange(change: { model: string; api?: string; provider?: string }): ModelChangeEntry;
  appendCustom(customType: string, data: unknown): CustomEntry;
  appendCompaction(record: CompactionInput): CompactionEntry;
  /** Resolves when every append so far is stored; rejects with the first append that failed. */
  flush(): Promise<void>;
  /** Flush what can be, release the lock, close. Idempotent. */
  close(): void | Promise<void>;
}
