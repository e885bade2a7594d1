/**
 * Shape checks for session lines and for values handed to the log. Each check returns a problem description (naming
 * the offending field) or `null`; callers turn it into `ERR_SESSION_FORMAT` (loading) or `ERR_INVALID_ARGUMENT`
 * (appending). Checks are structural and O(number of fields), plus each image/PDF's claims against the head of its
 * data (media/stored-media.ts: at most 64 KiB read, never the whole payload).
 */

import type { DocumentPart, ImagePart, Message } from '../conversation.js';
import { checkStoredMedia } from '../media/stored-media.js';
import { SESSION_FORMAT_VERSION } from './session-entry.js';

type Obj = Record<string, unknown>;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const STOP_REASONS = new Set(['end', 'tool_use', 'max_tokens', 'refusal', 'aborted', 'error', 'other']);

/**
 * `v` as an error message shows it: a string quoted and cut to 40 characters, a number or boolean as is, anything
 * else by its kind. Never `JSON.stringify` of the value: a value nested 100k levels deep would throw `RangeError`,
 * and a megabyte string would make a megabyte message.
 */
export function shown(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
    case 'number':
    case 'boolean':
      return String(v);
    case 'undefined':
      return 'nothing';
    default:
      return v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`;
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optional(o: Obj, key: string, type: 'string' | 'number' | 'boolean' | 'object', where: string) {
  const v = o[key];
  if (v === undefined) return null;
  if (type === 'object' ? !isObj(v) : typeof v !== type) return `${where}.${key} must be a ${type}`;
  return null;
}

/**
 * The first problem `check` finds in the items of the array `v` (each named `where[i]`), or null. Each item is checked
 * as `''` first (checks are pure), so its name is built only for a problem.
 */
function eachProblem(
  v: unknown,
  where: string,
  check: (item: unknown, at: string) => string | null,
): string | null {
  if (!Array.isArray(v)) return `${where} must be an array`;
  for (let i = 0; i < v.length; i++) if (check(v[i], '') !== null) return check(v[i], `${where}[${i}]`);
  return null;
}

function isNonEmptyString(v: unknown): boolean {
  return typeof v === 'string' && v !== '';
}

function isDimension(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}

/** Problem with a stored part (text | image | document), or null. */
export function partProblem(p: unknown, where: string): string | null {
  if (!isObj(p)) return `${where} must be an object`;
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' ? null : `${where}.text must be a string`;
    case 'image':
      if (typeof p.mediaType !== 'string' || !IMAGE_TYPES.has(p.mediaType)) {
        return `${where}.mediaType must be one of ${[...IMAGE_TYPES].join(', ')}`;
      }
      if (typeof p.data !== 'string') return `${where}.data must be a base64 string`;
      if (!isDimension(p.width) || !isDimension(p.height))
        return `${where} needs positive integer width and height`;
      return mediaProblem(p as unknown as ImagePart, where);
    case 'document':
      if (p.mediaType !== 'application/pdf') return `${where}.mediaType must be application/pdf`;
      if (typeof p.data !== 'string') return `${where}.data must be a base64 string`;
      if (p.pages !== undefined && !isDimension(p.pages)) return `${where}.pages must be a positive integer`;
      return optional(p, 'name', 'string', where) ?? mediaProblem(p as unknown as DocumentPart, where);
    default:
      return `${where}.type must be text, image or document (got ${shown(p.type)})`;
  }
}

/** A stored image/PDF whose bytes say otherwise than its fields (or are no image/PDF at all), or null. */
function mediaProblem(part: ImagePart | DocumentPart, where: string): string | null {
  const verdict = checkStoredMedia(part);
  if (verdict.kind === 'ok') return null;
  return `${where}: ${verdict.kind === 'rejected' ? verdict.rejected : verdict.lie}`;
}

function assistantBlockProblem(b: unknown, where: string): string | null {
  if (!isObj(b)) return `${where} must be an object`;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? null : `${where}.text must be a string`;
    case 'thinking':
      if (typeof b.text !== 'string') return `${where}.text must be a string`;
      return optional(b, 'signature', 'string', where) ?? optional(b, 'redacted', 'boolean', where);
    case 'tool_call':
      if (typeof b.id !== 'string' || typeof b.name !== 'string') return `${where} needs string id and name`;
      if (!isObj(b.input)) return `${where}.input must be an object`;
      return optional(b, 'providerData', 'object', where);
    default:
      return `${where}.type must be text, thinking or tool_call (got ${shown(b.type)})`;
  }
}

function toolResultProblem(r: unknown, where: string): string | null {
  if (!isObj(r) || r.type !== 'tool_result') return `${where} must be a tool_result block`;
  if (typeof r.toolUseId !== 'string' || typeof r.toolName !== 'string') {
    return `${where} needs string toolUseId and toolName`;
  }
  if (typeof r.isError !== 'boolean') return `${where}.isError must be a boolean`;
  return (
    eachProblem(r.parts, `${where}.parts`, partProblem) ??
    optional(r, 'meta', 'object', where) ??
    approvalProblem(r.approval, `${where}.approval`)
  );
}

/** A tool result's approval decision: `{approved: boolean, reason?: string}` when present. */
function approvalProblem(a: unknown, where: string): string | null {
  if (a === undefined) return null;
  if (!isObj(a) || typeof a.approved !== 'boolean')
    return `${where} must be {approved: boolean, reason?: string}`;
  return optional(a, 'reason', 'string', where);
}

/** Problem with a conversation message, or null. */
export function messageProblem(m: unknown, where: string): string | null {
  if (!isObj(m)) return `${where} must be an object`;
  switch (m.role) {
    case 'system':
      return typeof m.content === 'string' ? null : `${where}.content must be a string`;
    case 'user':
      return eachProblem(m.content, `${where}.content`, partProblem);
    case 'assistant': {
      const problem = eachProblem(m.content, `${where}.content`, assistantBlockProblem);
      if (problem) return problem;
      if (m.stopReason !== undefined && !STOP_REASONS.has(m.stopReason as string)) {
        return `${where}.stopReason is not a known stop reason`;
      }
      return (
        optional(m, 'usage', 'object', where) ??
        optional(m, 'model', 'string', where) ??
        optional(m, 'errorMessage', 'string', where)
      );
    }
    case 'tool':
      return eachProblem(m.results, `${where}.results`, toolResultProblem);
    default:
      return `${where}.role must be system, user, assistant or tool (got ${shown(m.role)})`;
  }
}

/** Problem with a header line, a format version newer than this library reads included, or null. */
export function readableHeaderProblem(h: unknown): string | null {
  if (!isObj(h) || h.type !== 'session') return 'line 1 is not a session header ({"type":"session",...})';
  if (typeof h.version !== 'number' || !Number.isInteger(h.version) || h.version < 1) {
    return 'header.version must be a positive integer';
  }
  if (typeof h.id !== 'string' || typeof h.created !== 'string') return 'header needs string id and created';
  const problem =
    optional(h, 'model', 'string', 'header') ??
    optional(h, 'workspace', 'string', 'header') ??
    nestingProblem(h, 'header');
  if (problem) return problem;
  return h.version > SESSION_FORMAT_VERSION
    ? `session format version ${h.version} is newer than this library reads (${SESSION_FORMAT_VERSION})`
    : null;
}

/**
 * Deepest nesting of arrays and objects a session line may hold (the line's own object is level 1). `JSON.parse`
 * reads any depth, but `JSON.stringify`, `structuredClone` and every recursive walk overflow the stack a few thousand
 * levels down, so a deeper entry would load and then break every request, print and save of the session.
 */
export const MAX_JSON_DEPTH = 512;

/** Problem with a value nested deeper than `MAX_JSON_DEPTH`, or null. Any depth is safe: the walk stops there. */
export function nestingProblem(value: unknown, where: string): string | null {
  return typeof value === 'object' && value !== null && deeper(value, MAX_JSON_DEPTH)
    ? `${where} is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`
    : null;
}

/** Whether the array or object `v` nests more than `levels` levels (itself one of them); recursion stops at 0. */
function deeper(v: object, levels: number): boolean {
  if (levels === 0) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const c: unknown = v[i];
      if (typeof c === 'object' && c !== null && deeper(c, levels - 1)) return true;
    }
  } else {
    for (const k in v) {
      const c: unknown = (v as Obj)[k];
      if (typeof c === 'object' && c !== null && deeper(c, levels - 1)) return true;
    }
  }
  return false;
}

/**
 * Problem with an entry line (not the header), or null. `chars`: the length of the line's text, when known; a line
 * of at most `2 * MAX_JSON_DEPTH + 1` characters cannot nest too deeply (each level takes two brackets), so its
 * value is not walked for that.
 */
export function entryProblem(e: unknown, chars = Number.POSITIVE_INFINITY): string | null {
  return entryShapeProblem(e) ?? (chars > 2 * MAX_JSON_DEPTH + 1 ? nestingProblem(e, 'entry') : null);
}

function entryShapeProblem(e: unknown): string | null {
  if (!isObj(e)) return 'entry must be a JSON object';
  if (!isNonEmptyString(e.id)) return 'entry.id must be a non-empty string';
  if (e.parentId !== null && typeof e.parentId !== 'string') return 'entry.parentId must be a string or null';
  if (typeof e.timestamp !== 'string') return 'entry.timestamp must be a string';
  switch (e.type) {
    case 'message':
      return messageProblem(e.message, 'entry.message');
    case 'compaction': {
      if (typeof e.summary !== 'string') return 'entry.summary must be a string';
      if (e.firstKeptEntryId !== null && typeof e.firstKeptEntryId !== 'string') {
        return 'entry.firstKeptEntryId must be a string or null';
      }
      if (typeof e.tokensBefore !== 'number' || typeof e.tokensAfter !== 'number') {
        return 'entry.tokensBefore and entry.tokensAfter must be numbers';
      }
      return (
        eachProblem(e.replacement, 'entry.replacement', messageProblem) ??
        (e.usageBefore === undefined ? null : eachProblem(e.usageBefore, 'entry.usageBefore', usageProblem))
      );
    }
    case 'custom':
      if (!isNonEmptyString(e.customType)) return 'entry.customType must be a non-empty string';
      return e.data === undefined ? 'entry.data is missing' : null;
    case 'model_change':
      if (!isNonEmptyString(e.model)) return 'entry.model must be a non-empty string';
      return optional(e, 'api', 'string', 'entry') ?? optional(e, 'provider', 'string', 'entry');
    case 'upload':
      return uploadProblem(e, 'entry');
    default:
      return `entry.type must be message, compaction, custom, model_change or upload (got ${shown(e.type)})`;
  }
}

const USAGE_COUNTS = ['requests', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'];

/** Problem with one per-model count of a compaction's `usageBefore` (each count a safe integer >= 0), or null. */
function usageProblem(t: unknown, where: string): string | null {
  if (!isObj(t)) return `${where} must be an object`;
  if (t.model !== undefined && typeof t.model !== 'string') return `${where}.model must be a string`;
  for (const key of USAGE_COUNTS) {
    const n = t[key];
    if (!Number.isSafeInteger(n) || (n as number) < 0)
      return `${where}.${key} must be an integer >= 0 (got ${shown(n)})`;
  }
  return null;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** Problem with the fields of an upload entry (or of what an append records), or null. */
export function uploadProblem(e: Obj, where: string): string | null {
  for (const key of ['api', 'baseUrl', 'account'] as const) {
    if (!isNonEmptyString(e[key])) return `${where}.${key} must be a non-empty string`;
  }
  if (e.files === undefined && e.removed === undefined) return `${where} needs files or removed`;
  return (
    (e.files === undefined ? null : eachProblem(e.files, `${where}.files`, uploadedFileProblem)) ??
    (e.removed === undefined
      ? null
      : eachProblem(e.removed, `${where}.removed`, (id, at) =>
          typeof id === 'string' ? null : `${at} must be a string`,
        ))
  );
}

function uploadedFileProblem(f: unknown, at: string): string | null {
  if (!isObj(f)) return `${at} must be an object`;
  if (typeof f.sha256 !== 'string' || !SHA256.test(f.sha256)) return `${at}.sha256 must be 64 hex digits`;
  if (!isNonEmptyString(f.id)) return `${at}.id must be a non-empty string`;
  if (typeof f.mediaType !== 'string') return `${at}.mediaType must be a string`;
  if (typeof f.bytes !== 'number' || !Number.isInteger(f.bytes) || f.bytes < 0)
    return `${at}.bytes must be an integer >= 0`;
  return optional(f, 'uri', 'string', at) ?? optional(f, 'expiresAt', 'string', at);
}

/**
 * Problem that would make `value` change on a JSON round trip (undefined, functions, symbols, bigint, non-finite
 * numbers, class instances such as Date/Map/Uint8Array, cycles), or null. Used on host-supplied `meta`, tool `input`
 * and custom `data` before they are written.
 */
export function jsonProblem(value: unknown, where: string): string | null {
  try {
    return jsonProblemIn(value, where, new Set());
  } catch (err) {
    // A value nested deeper than the stack allows (JSON.stringify would fail on it too): refused, never a RangeError.
    if (err instanceof RangeError) return tooDeep(where, err);
    throw err;
  }
}

/** The problem for a value `JSON.stringify` (or a walk of it) cannot take: nested too deeply, or too large. */
export function tooDeep(where: string, err: RangeError): string {
  return `${where} is nested too deeply or too large to be written as JSON (${err.message})`;
}

function jsonProblemIn(value: unknown, where: string, seen: Set<object>): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(value) ? null : `${where} is not a finite number`;
    case 'object': {
      if (value === null) return null;
      if (seen.has(value)) return `${where} is a cycle`;
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            const problem = jsonProblemIn(value[i], `${where}[${i}]`, seen);
            if (problem) return problem;
          }
          return null;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          return `${where} is a ${(value as object).constructor?.name ?? 'class instance'}, not plain JSON data`;
        }
        for (const [k, v] of Object.entries(value)) {
          const problem = jsonProblemIn(v, `${where}.${k}`, seen);
          if (problem) return problem;
        }
        return null;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return `${where} is ${typeof value}, which JSON cannot hold`;
  }
}

function optionalJsonProblem(value: unknown, where: string): string | null {
  return value === undefined ? null : jsonProblem(value, where);
}

/**
 * JSON problems in the host-supplied free-form fields of a message (tool inputs, provider data, usage, meta); the
 * message has no shape problem (`messageProblem`).
 */
export function messageJsonProblem(m: Message, where: string): string | null {
  if (m.role === 'assistant') {
    const call = (b: unknown, at: string) => {
      const c = b as Obj;
      if (c.type !== 'tool_call') return null;
      return jsonProblem(c.input, `${at}.input`) ?? optionalJsonProblem(c.providerData, `${at}.providerData`);
    };
    return eachProblem(m.content, `${where}.content`, call) ?? optionalJsonProblem(m.usage, `${where}.usage`);
  }
  if (m.role !== 'tool') return null;
  return eachProblem(m.results, `${where}.results`, (r, at) =>
    optionalJsonProblem((r as Obj).meta, `${at}.meta`),
  );
}
