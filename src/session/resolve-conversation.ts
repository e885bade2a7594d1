/**
 * How a session's entry tree becomes a conversation:
 * 1. The branch is the path from the root to the leaf, following `parentId` (the leaf is the last entry in the file,
 *    so a host that branches by appending under an older entry makes that branch current).
 * 2. If the path holds a compaction entry, the latest one applies: the conversation is its `replacement` messages,
 *    then the messages on the path from `firstKeptEntryId` up to the compaction, then the messages after it.
 * 3. Custom entries never contribute messages.
 */

import type { Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import type { CompactionEntry, SessionEntry } from './session-entry.js';

/** The current conversation and, for each message, the id of the entry that holds it (`null` for a replacement). */
export interface ConversationView {
  messages: Message[];
  entryIds: Array<string | null>;
}

/** Entries from the root to `leafId`, in order. `byId` must hold every ancestor (checked on load). */
export function pathToLeaf(byId: ReadonlyMap<string, SessionEntry>, leafId: string | null): SessionEntry[] {
  const path: SessionEntry[] = [];
  let id = leafId;
  while (id !== null) {
    const entry = byId.get(id);
    if (!entry) throw new PantoError('ERR_SESSION_FORMAT', `entry ${id} is missing from the session`);
    path.push(entry);
    if (path.length > byId.size)
      throw new PantoError('ERR_SESSION_FORMAT', 'entry parent links form a cycle');
    id = entry.parentId;
  }
  return path.reverse();
}

/** The conversation along `path` (see the module comment for the rules). */
export function resolveConversation(path: readonly SessionEntry[]): ConversationView {
  let c = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]?.type === 'compaction') {
      c = i;
      break;
    }
  }
  const messages: Message[] = [];
  const entryIds: Array<string | null> = [];
  const addRange = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const e = path[i];
      if (e?.type === 'message') {
        messages.push(e.message);
        entryIds.push(e.id);
      }
    }
  };
  if (c === -1) {
    addRange(0, path.length);
    return { messages, entryIds };
  }
  const compaction = path[c] as CompactionEntry;
  for (const m of compaction.replacement) {
    messages.push(m);
    entryIds.push(null);
  }
  if (compaction.firstKeptEntryId !== null) {
    const k = path.findIndex((e, i) => i < c && e.id === compaction.firstKeptEntryId);
    if (k === -1) {
      throw new PantoError(
        'ERR_SESSION_FORMAT',
        `compaction ${compaction.id} keeps from entry ${compaction.firstKeptEntryId}, which is not on its branch`,
      );
    }
    addRange(k, c);
  }
  addRange(c + 1, path.length);
  return { messages, entryIds };
}
