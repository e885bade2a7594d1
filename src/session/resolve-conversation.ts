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

/**
 * The conversation along `path` (see the module comment for the rules). `ERR_SESSION_FORMAT` for a compaction whose
 * `firstKeptEntryId` is not earlier on the path.
 */
export function resolveConversation(path: readonly SessionEntry[]): ConversationView {
  return resolveBranch([...path.keys()], {
    typeAt: (i) => (path[i] as SessionEntry).type,
    positionOf: (id) => {
      const k = path.findIndex((e) => e.id === id);
      return k === -1 ? undefined : k;
    },
    readAt: (wanted) => wanted.map((i) => path[i] as SessionEntry),
    offBranch: (compaction) =>
      new PantoError(
        'ERR_SESSION_FORMAT',
        `compaction ${compaction.id} keeps from entry ${compaction.firstKeptEntryId}, which is not on its branch`,
      ),
  });
}

/**
 * What `resolveBranch` needs of a lazily parsed tree: each entry is known by its position in file order (its type
 * without parsing it) and parsed on request.
 */
export interface LazyEntries {
  /** Type of the entry at position `i`. */
  typeAt(i: number): SessionEntry['type'];
  /** Position of the entry with this id, if any. */
  positionOf(id: string): number | undefined;
  /** The entries at these positions, parsed and checked; throws typed errors. */
  readAt(positions: readonly number[]): SessionEntry[];
  /** The error for a compaction (at position `i`) whose `firstKeptEntryId` is not earlier on its branch. */
  offBranch(compaction: CompactionEntry, i: number): PantoError;
}

/**
 * The conversation along `branch` (positions from the root to the leaf, ascending), as `resolveConversation` gives
 * it, reading only the latest compaction and the entries that follow from it (never the replaced history).
 */
export function resolveBranch(branch: readonly number[], tree: LazyEntries): ConversationView {
  let c = -1;
  for (let k = branch.length - 1; k >= 0; k--) {
    if (tree.typeAt(branch[k] as number) === 'compaction') {
      c = k;
      break;
    }
  }
  const messages: Message[] = [];
  const entryIds: Array<string | null> = [];
  // Every entry on the branch from the start is read, not only those indexed as messages: a line indexed as `custom`
  // that parses as a message (a repeated `type` key, leading-fields.ts) is then refused, never silently dropped.
  // Read a few thousand at a time (no list of every entry on the branch is held at once), and at least once.
  const addMessages = (from: number, to: number, skip = -1) => {
    let k = from;
    do {
      const wanted: number[] = [];
      for (; k < to && wanted.length < 4096; k++) if (branch[k] !== skip) wanted.push(branch[k] as number);
      for (const e of tree.readAt(wanted)) {
        if (e.type === 'message') {
          messages.push(e.message);
          entryIds.push(e.id);
        }
      }
    } while (k < to);
  };
  if (c === -1) {
    addMessages(0, branch.length);
    return { messages, entryIds };
  }
  const at = branch[c] as number;
  const compaction = tree.readAt([at])[0] as CompactionEntry;
  for (const m of compaction.replacement) {
    messages.push(m);
    entryIds.push(null);
  }
  let from = c + 1;
  if (compaction.firstKeptEntryId !== null) {
    const kept = tree.positionOf(compaction.firstKeptEntryId);
    const k = kept === undefined ? -1 : branch.indexOf(kept);
    if (k === -1 || k >= c) throw tree.offBranch(compaction, at);
    from = k;
  }
  addMessages(from, branch.length, at);
  return { messages, entryIds };
}

/** The model of the latest `model_change` on `branch` (that one entry is read), else `fallback`. */
export function modelOnBranch(
  branch: readonly number[],
  tree: LazyEntries,
  fallback: string | undefined,
): string | undefined {
  for (let k = branch.length - 1; k >= 0; k--) {
    const i = branch[k] as number;
    if (tree.typeAt(i) === 'model_change') {
      const e = tree.readAt([i])[0];
      return e?.type === 'model_change' ? e.model : fallback;
    }
  }
  return fallback;
}
