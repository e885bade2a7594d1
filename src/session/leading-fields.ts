/**
 * The leading fields of a session line: `{"type":T,"id":I,"parentId":P` followed by `,` or `}`,
 * as `SessionLog` writes every entry — the same form, with the same limits, that `openSessionIndex` reads from a
 * line's first bytes (session-index.ts: a known entry type, ids of printable ASCII without `\`, the whole form
 * within the line's first `LEADING_BYTES` bytes). The index trusts those fields for a line it does not parse, so a
 * line whose JSON says otherwise later (a repeated `type`, `id` or `parentId` key: `JSON.parse` keeps the LAST
 * occurrence) would read differently on the two paths; every path refuses such a line with `ERR_SESSION_FORMAT`.
 */

import { ENTRY_TYPES, type SessionEntry } from './session-entry.js';

/** Bytes of a line's start that may hold the leading fields (the index examines no more). */
export const LEADING_BYTES = 512;

export interface LeadingFields {
  type: SessionEntry['type'];
  id: string;
  parentId: string | null;
}

const TYPE_KEY = '{"type":"';
const ID_KEY = '","id":"';
const PARENT_KEY = '","parentId":';
const bytesOf = (s: string): Buffer => Buffer.from(s, 'latin1');
/** `b[start, end)` as a string of one character per byte. */
const latin1 = (b: Buffer, start: number, end: number): string =>
  (b as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end);
const TYPES = ENTRY_TYPES.map((t) => ({ type: t, bytes: bytesOf(`${t}"`) }));
const [TYPE_BYTES, ID_BYTES, PARENT_BYTES, NULL_BYTES] = [TYPE_KEY, ID_KEY, PARENT_KEY, 'null'].map(
  bytesOf,
) as [Buffer, Buffer, Buffer, Buffer];

/** The position past `s` when `b` holds it at `p` before `end`, else -1. */
function at(b: Uint8Array, p: number, end: number, s: Uint8Array): number {
  if (p + s.length > end) return -1;
  for (let k = 0; k < s.length; k++) if (b[p + k] !== s[k]) return -1;
  return p + s.length;
}

/** End (index of the closing quote) of an id starting at `p`, or -1 (not printable ASCII without `\`, or cut). */
function idEnd(b: Uint8Array, p: number, end: number): number {
  for (let k = p; k < end; k++) {
    const c = b[k] as number;
    if (c === 0x22) return k;
    if (c < 0x20 || c > 0x7e || c === 0x5c) return -1;
  }
  return -1;
}

/**
 * The leading fields the line `b[start, stop)` (without its newline) begins with, or undefined when it does not begin
 * in that form within its first `LEADING_BYTES` bytes. `previousId` (the entry before, most often the parent) is
 * returned as the parent when it is the parent, so the index keeps one string for both. A line as text: `leadingText`.
 */
export function leadingFields(
  b: Buffer,
  start = 0,
  stop = b.length,
  previousId = '',
): LeadingFields | undefined {
  const end = Math.min(stop, start + LEADING_BYTES);
  let p = at(b, start, end, TYPE_BYTES);
  if (p === -1) return undefined;
  const t = TYPES.find((x) => at(b, p, end, x.bytes) !== -1);
  if (t === undefined) return undefined;
  p = at(b, p + t.bytes.length - 1, end, ID_BYTES);
  const idStop = p === -1 ? -1 : idEnd(b, p, end);
  if (idStop === -1) return undefined;
  const id = latin1(b, p, idStop);
  p = at(b, idStop, end, PARENT_BYTES);
  if (p === -1) return undefined;
  let parentId: string | null = null;
  if (at(b, p, end, NULL_BYTES) !== -1) p += 4;
  else {
    const stop = p < end && b[p] === 0x22 ? idEnd(b, p + 1, end) : -1;
    if (stop === -1) return undefined;
    parentId = latin1(b, p + 1, stop);
    if (parentId === previousId) parentId = previousId;
    p = stop + 1;
  }
  const c = p < end ? b[p] : -1;
  return c === 0x2c || c === 0x7d ? { type: t.type, id, parentId } : undefined;
}

/** `leadingFields` of a line's text (the form is ASCII: any other character ends it). */
export function leadingText(text: string): LeadingFields | undefined {
  return leadingFields(Buffer.from(text.slice(0, LEADING_BYTES), 'utf8'));
}

/** Per entry type, the start of a line in the leading-field form up to its id: `{"type":T,"id":"`. */
const TYPE_PREFIXES = new Map(ENTRY_TYPES.map((t) => [t as string, `${TYPE_KEY}${t}${ID_KEY}`]));

/** The position past `entry`'s own leading fields when `text` begins with them, else -1 (no string is built). */
function pastOwnFields(text: string, { type, id, parentId }: SessionEntry): number {
  const prefix = TYPE_PREFIXES.get(type) as string;
  if (!text.startsWith(prefix) || !text.startsWith(id, prefix.length)) return -1;
  let p = prefix.length + id.length;
  if (!text.startsWith(PARENT_KEY, p)) return -1;
  p += PARENT_KEY.length;
  if (parentId === null) return text.startsWith('null', p) ? p + 4 : -1;
  const quoted = text.charCodeAt(p) === 0x22 && text.startsWith(parentId, p + 1);
  p += parentId.length + 1;
  return quoted && text.charCodeAt(p) === 0x22 ? p + 1 : -1;
}

/**
 * Problem with an entry whose line begins with leading fields that its parsed value contradicts (a repeated key), or
 * null. `entry` is the parsed line (already a valid entry).
 */
export function repeatedKeyProblem(text: string, entry: SessionEntry): string | null {
  // The common case: the line begins with the entry's own fields, then `,` or `}`.
  const p = pastOwnFields(text, entry);
  const next = p === -1 ? -1 : text.charCodeAt(p);
  if (next === 0x2c || next === 0x7d || !text.startsWith(TYPE_KEY)) return null;
  const lead = leadingText(text);
  if (lead === undefined) return null;
  if (lead.type === entry.type && lead.id === entry.id && lead.parentId === entry.parentId) return null;
  return (
    `entry ${entry.id} (${entry.type}, parent ${entry.parentId}) begins as ${lead.id} (${lead.type}, parent ` +
    `${lead.parentId}): the line repeats a key`
  );
}
