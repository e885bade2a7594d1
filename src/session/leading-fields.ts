/**
 * The leading fields of a session line read from its text: `{"type":T,"id":I,"parentId":P` followed by `,` or `}`,
 * as `SessionLog` writes every entry — the same form, with the same limits, that `openSessionIndex` reads from a
 * line's first bytes (session-index.ts: a known entry type, ids of printable ASCII without `\`, the whole form
 * within the line's first `LEADING_BYTES` bytes). The index trusts those fields for a line it does not parse, so a
 * line whose JSON says otherwise later (a repeated `type`, `id` or `parentId` key: `JSON.parse` keeps the LAST
 * occurrence) would read differently on the two paths; every path refuses such a line with `ERR_SESSION_FORMAT`.
 */

import type { SessionEntry } from './session-entry.js';

/** Bytes of a line's start that may hold the leading fields (the index examines no more). */
export const LEADING_BYTES = 512;

export interface LeadingFields {
  type: SessionEntry['type'];
  id: string;
  parentId: string | null;
}

const TYPE_NAMES: SessionEntry['type'][] = ['message', 'compaction', 'custom', 'model_change', 'upload'];
const TYPE_KEY = '{"type":"';
const ID_KEY = '","id":"';
const PARENT_KEY = '","parentId":';

/** End (index of the closing quote) of an id starting at `at`, or -1 (not printable ASCII without `\`, or cut). */
function idEnd(text: string, at: number, end: number): number {
  for (let k = at; k < end; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x22) return k;
    if (c < 0x20 || c > 0x7e || c === 0x5c) return -1;
  }
  return -1;
}

/**
 * The leading fields `text` (one line, without its newline) begins with, or undefined when it does not begin in that
 * form. Every character of the form is ASCII, so character positions are byte positions and the `LEADING_BYTES`
 * bound is the index's. `previousId` (the entry before, most often the parent) is returned as the parent when it is
 * the parent, so the index keeps one string for both.
 */
export function leadingFields(text: string, previousId = ''): LeadingFields | undefined {
  const end = Math.min(text.length, LEADING_BYTES);
  if (!text.startsWith(TYPE_KEY)) return undefined;
  let p = TYPE_KEY.length;
  const type = TYPE_NAMES.find((t) => text.startsWith(t, p) && text.charCodeAt(p + t.length) === 0x22);
  if (type === undefined || p + type.length >= end) return undefined;
  p += type.length;
  if (!text.startsWith(ID_KEY, p) || p + ID_KEY.length > end) return undefined;
  p += ID_KEY.length;
  const idStop = idEnd(text, p, end);
  if (idStop === -1) return undefined;
  const id = text.slice(p, idStop);
  p = idStop;
  if (!text.startsWith(PARENT_KEY, p) || p + PARENT_KEY.length > end) return undefined;
  p += PARENT_KEY.length;
  let parentId: string | null;
  if (text.startsWith('null', p) && p + 4 <= end) {
    parentId = null;
    p += 4;
  } else {
    if (p >= end || text.charCodeAt(p) !== 0x22) return undefined;
    const stop = idEnd(text, p + 1, end);
    if (stop === -1) return undefined;
    parentId =
      stop - (p + 1) === previousId.length && text.startsWith(previousId, p + 1)
        ? previousId
        : text.slice(p + 1, stop);
    p = stop + 1;
  }
  if (p >= end) return undefined;
  const c = text.charCodeAt(p);
  if (c !== 0x2c && c !== 0x7d) return undefined;
  return { type, id, parentId };
}

/** The position past `s` when `text` holds it at `p` (-1: not there, or `p` is -1). */
function past(text: string, p: number, s: string): number {
  return p !== -1 && text.startsWith(s, p) ? p + s.length : -1;
}

/**
 * Problem with an entry whose line begins with leading fields that its parsed value contradicts (a repeated key), or
 * null. `entry` is the parsed line (already a valid entry).
 */
export function repeatedKeyProblem(text: string, entry: SessionEntry): string | null {
  if (!text.startsWith(TYPE_KEY)) return null;
  // The common case, checked without parsing the form (or building a string): the line begins with the entry's own
  // fields, then `,` or `}`.
  const { type, id, parentId } = entry;
  let p = past(text, past(text, past(text, past(text, TYPE_KEY.length, type), ID_KEY), id), PARENT_KEY);
  p = parentId === null ? past(text, p, 'null') : past(text, past(text, past(text, p, '"'), parentId), '"');
  const next = p === -1 ? -1 : text.charCodeAt(p);
  if (next === 0x2c || next === 0x7d) return null;
  const lead = leadingFields(text);
  if (lead === undefined) return null;
  if (lead.type === entry.type && lead.id === entry.id && lead.parentId === entry.parentId) return null;
  return (
    `entry ${entry.id} (${entry.type}, parent ${entry.parentId}) begins as ${lead.id} (${lead.type}, parent ` +
    `${lead.parentId}): the line repeats a key`
  );
}
