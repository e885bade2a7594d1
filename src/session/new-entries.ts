/**
 * Building the entries an appending log writes, shared by `SessionLog` (a file) and the session stores' logs: each
 * value is checked first (`ERR_INVALID_ARGUMENT`, nothing built), then the entry is built on `base` (id, parent,
 * timestamp); the caller writes it and then takes the new conversation view (compaction) or model (model change).
 */

import type { Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import type { ConversationView } from './resolve-conversation.js';
import type { CompactionEntry, CustomEntry, MessageEntry, ModelChangeEntry } from './session-entry.js';
import { jsonProblem, messageJsonProblem, messageProblem } from './validate-entry.js';

/**
 * What `appendCompaction` records; `compact()` returns it as `compaction` (its `CompactionRecord`, the same shape —
 * compaction/ and session/ import nothing from each other; test/compaction/compaction-record.test-d.ts keeps the two
 * identical). `firstKeptIndex` and `messageCountBefore` refer to the conversation that was compacted, which must be
 * the log's `conversation`.
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

/** Id, parent and time of a new entry. */
export interface EntryBase {
  id: string;
  parentId: string | null;
  timestamp: string;
}

export function invalid(message: string): PantoError {
  return new PantoError('ERR_INVALID_ARGUMENT', message);
}

function checkMessage(message: Message, where: string): void {
  const problem = messageProblem(message, where) ?? messageJsonProblem(message, where);
  if (problem) throw invalid(`cannot append: ${problem}`);
}

export function messageEntry(message: Message, base: EntryBase): MessageEntry {
  checkMessage(message, 'message');
  return { type: 'message', ...base, message };
}

/** Throws `ERR_INVALID_ARGUMENT` for an empty model id or non-string `api`/`provider`. */
export function modelChangeEntry(
  change: { model: string; api?: string; provider?: string },
  base: EntryBase,
): ModelChangeEntry {
  if (change === null || typeof change !== 'object') throw invalid('model change must be an object');
  if (typeof change.model !== 'string' || change.model === '')
    throw invalid('model change: model must be a non-empty string');
  const entry: ModelChangeEntry = { type: 'model_change', ...base, model: change.model };
  for (const key of ['api', 'provider'] as const) {
    const v = change[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw invalid(`model change: ${key} must be a string`);
    entry[key] = v;
  }
  return entry;
}

/** `data` must be plain JSON. */
export function customEntry(customType: string, data: unknown, base: EntryBase): CustomEntry {
  if (typeof customType !== 'string' || customType === '')
    throw invalid('customType must be a non-empty string');
  if (data === undefined) throw invalid('custom entry data must be a JSON value (got undefined)');
  const problem = jsonProblem(data, 'data');
  if (problem) throw invalid(`cannot append: ${problem}`);
  return { type: 'custom', ...base, customType, data };
}

/**
 * The compaction entry for `record` over the conversation `view`, and the view after it. Throws
 * `ERR_INVALID_ARGUMENT` if the record does not fit the conversation.
 */
export function compactionEntry(
  record: CompactionInput,
  view: ConversationView,
  base: EntryBase,
): { entry: CompactionEntry; view: ConversationView } {
  const { messages, entryIds } = view;
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
    ...base,
    summary: record.summary,
    replacement,
    firstKeptEntryId: k < messages.length ? (entryIds[k] as string) : null,
    tokensBefore: record.tokensBefore,
    tokensAfter: record.tokensAfter,
  };
  return {
    entry,
    view: {
      messages: [...replacement, ...messages.slice(k)],
      entryIds: [...replacement.map(() => null), ...entryIds.slice(k)],
    },
  };
}
