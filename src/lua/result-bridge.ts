/**
 * The result bridge: what a Lua handler returned -> `ResultPart[]` (+ meta), or an exact error the model can read.
 *
 * Accepted shapes (docs/lua-tools.md "Return shapes"):
 * - a string -> one text part;
 * - a table `{ text = string?, attachments = { {data = string, media_type = string?, name = string?}, ... }?,
 *   meta = table?, structured = table? }` -> a text part (when `text` is given) followed by one media part per
 *   attachment, in order; `structured` (a record: the tool's structured result, served over MCP as
 *   `structuredContent`) goes to `meta.structuredContent`, and is the text, as JSON, when there is no `text`;
 * - `nil, "message"` (the Lua failure convention) -> a tool error with that message; `nil, {code = 1}` -> a tool
 *   error `error object: {"code":1}` (any JSON-able value; others are named by type).
 *
 * Tables are read RAW: a metatable on a result (`__index`, `__pairs`, `__len`) never runs in the host. All text is
 * capped at `maxTextBytes` (error messages and strings in `meta` too).
 *
 * Attachment bytes cross WITHOUT copying: `data` of a media part is a Buffer view of the Lua string's bytes. Lua
 * strings are immutable, so the view stays valid and unchanged; consumers must treat it as read-only.
 */

import type { LuaState } from 'fengari';
import fengari from 'fengari';
import type { MediaResultPart, ResultPart } from '../tool.js';
import { LuaConversionError, luaToJson, typeName, viewBytes } from './lua-values.js';
import { capText } from './text-cap.js';

const { lua, to_luastring } = fengari;

/** Push `t[key]` (raw: no `__index`) of the table at absolute index `idx`. */
function rawGetField(L: LuaState, idx: number, key: Uint8Array): void {
  lua.lua_pushlstring(L, key, key.length);
  lua.lua_rawget(L, idx);
}

/** The string at `idx` as text capped at `max` bytes. */
function cappedText(L: LuaState, idx: number, max: number, what?: string): string {
  return capText(lua.lua_tolstring(L, idx) ?? new Uint8Array(0), max, what);
}

/** Field names, encoded once (fengari would encode a JS string key on every access). */
const K = {
  text: to_luastring('text'),
  attachments: to_luastring('attachments'),
  meta: to_luastring('meta'),
  structured: to_luastring('structured'),
  data: to_luastring('data'),
  media_type: to_luastring('media_type'),
  name: to_luastring('name'),
};

/** Caps applied to one handler result. */
export interface ResultCaps {
  /** Max UTF-8 bytes of returned text; longer text is cut with a note saying so. */
  maxTextBytes: number;
  /** Max total bytes of all attachments of one result; more is an error. */
  maxAttachmentBytes: number;
}

export type HandlerResult =
  | { ok: true; parts: ResultPart[]; meta?: Record<string, unknown> }
  | { ok: false; error: string };

const SHAPE_HINT = 'return a string or a table {text=..., attachments=...}';
const RESULT_KEYS = new Set(['text', 'attachments', 'meta', 'structured']);
const ATTACHMENT_KEYS = new Set(['data', 'media_type', 'name']);

/**
 * Read a handler's results from the stack of `L`: `nresults` values starting at absolute index `base`. Never throws
 * for a bad shape (returns `{ok:false, error}`); leaves the stack as it found it.
 */
export function readHandlerResult(
  L: LuaState,
  base: number,
  nresults: number,
  caps: ResultCaps,
): HandlerResult {
  const top = lua.lua_gettop(L);
  try {
    return read(L, base, nresults, caps);
  } catch (err) {
    if (err instanceof LuaConversionError) return { ok: false, error: err.message };
    throw err;
  } finally {
    lua.lua_settop(L, top);
  }
}

function read(L: LuaState, base: number, nresults: number, caps: ResultCaps): HandlerResult {
  const t = nresults > 0 ? lua.lua_type(L, base) : lua.LUA_TNIL;
  if (t === lua.LUA_TSTRING) {
    return { ok: true, parts: [textPart(viewBytes(L, base) ?? Buffer.alloc(0), caps)] };
  }
  if (t === lua.LUA_TNIL) {
    if (nresults >= 2) return { ok: false, error: failureMessage(L, base + 1, caps.maxTextBytes) };
    return { ok: false, error: `handler returned nothing (nil); ${SHAPE_HINT}` };
  }
  if (t !== lua.LUA_TTABLE) {
    return { ok: false, error: `handler returned a ${typeName(L, t)}; ${SHAPE_HINT}` };
  }
  const unknown = unknownKeys(L, base, RESULT_KEYS);
  if (unknown) {
    return {
      ok: false,
      error: `result table has unknown field '${unknown}' (expected text, attachments, meta, structured)`,
    };
  }

  const parts: ResultPart[] = [];
  rawGetField(L, base, K.text);
  const textType = lua.lua_type(L, -1);
  if (textType === lua.LUA_TSTRING) parts.push(textPart(viewBytes(L, -1) ?? Buffer.alloc(0), caps));
  else if (textType !== lua.LUA_TNIL) {
    return { ok: false, error: `'text' must be a string, got ${typeName(L, textType)}` };
  }
  lua.lua_pop(L, 1);

  rawGetField(L, base, K.attachments);
  const attType = lua.lua_type(L, -1);
  if (attType === lua.LUA_TTABLE) {
    const attIdx = lua.lua_gettop(L);
    const media = readAttachments(L, attIdx, caps);
    if (typeof media === 'string') return { ok: false, error: media };
    parts.push(...media);
  } else if (attType !== lua.LUA_TNIL) {
    return {
      ok: false,
      error: `'attachments' must be a list (table) of attachments, got ${typeName(L, attType)}`,
    };
  }
  lua.lua_pop(L, 1);

  rawGetField(L, base, K.structured);
  const structuredType = lua.lua_type(L, -1);
  let structured: Record<string, unknown> | undefined;
  if (structuredType === lua.LUA_TTABLE) {
    const value = luaToJson(L, lua.lua_gettop(L), 'structured', { maxStringBytes: caps.maxTextBytes });
    // An empty table reads as an empty list: as a record it is `{}`.
    if (Array.isArray(value) && value.length > 0) {
      return { ok: false, error: `'structured' must be a record (a table with named fields), got a list` };
    }
    structured = Array.isArray(value) ? {} : (value as Record<string, unknown>);
    if (textType === lua.LUA_TNIL) {
      parts.unshift(textPart(Buffer.from(JSON.stringify(structured), 'utf8'), caps));
    }
  } else if (structuredType !== lua.LUA_TNIL) {
    return { ok: false, error: `'structured' must be a table, got ${typeName(L, structuredType)}` };
  }
  lua.lua_pop(L, 1);

  if (textType === lua.LUA_TNIL && attType === lua.LUA_TNIL && structured === undefined) {
    return {
      ok: false,
      error: `result table has neither 'text' nor 'attachments' nor 'structured'; ${SHAPE_HINT}`,
    };
  }

  rawGetField(L, base, K.meta);
  const metaType = lua.lua_type(L, -1);
  let meta: Record<string, unknown> | undefined;
  if (metaType === lua.LUA_TTABLE) {
    const value = luaToJson(L, lua.lua_gettop(L), 'meta', { maxStringBytes: caps.maxTextBytes });
    // An empty table or a sequence is not a record: keep records only, wrap anything else.
    meta = Array.isArray(value) ? { items: value } : (value as Record<string, unknown>);
  } else if (metaType !== lua.LUA_TNIL) {
    return { ok: false, error: `'meta' must be a table, got ${typeName(L, metaType)}` };
  }
  lua.lua_pop(L, 1);

  if (structured !== undefined) meta = { ...meta, structuredContent: structured };
  return meta === undefined ? { ok: true, parts } : { ok: true, parts, meta };
}

function readAttachments(L: LuaState, attIdx: number, caps: ResultCaps): MediaResultPart[] | string {
  const n = lua.lua_rawlen(L, attIdx);
  let count = 0;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, attIdx)) {
    count++;
    lua.lua_pop(L, 1);
  }
  if (count !== n) {
    return `'attachments' must be a list {a1, a2, ...} with no holes and no named keys`;
  }
  const out: MediaResultPart[] = [];
  let total = 0;
  for (let i = 1; i <= n; i++) {
    const where = `attachments[${i}]`;
    lua.lua_rawgeti(L, attIdx, i);
    const idx = lua.lua_gettop(L);
    const at = lua.lua_type(L, idx);
    if (at !== lua.LUA_TTABLE)
      return `${where} must be a table {data=..., media_type=...}, got ${typeName(L, at)}`;
    const unknown = unknownKeys(L, idx, ATTACHMENT_KEYS);
    if (unknown) return `${where} has unknown field '${unknown}' (expected data, media_type, name)`;

    rawGetField(L, idx, K.data);
    const data = viewBytes(L, -1);
    if (data === null) return `${where} has no 'data' string`;
    lua.lua_pop(L, 1);
    total += data.byteLength;
    if (total > caps.maxAttachmentBytes) {
      return `attachments total more than ${caps.maxAttachmentBytes} bytes (the per-call cap); ${where} brings it to ${total}`;
    }
    const part: MediaResultPart = { type: 'media', data };

    rawGetField(L, idx, K.media_type);
    const mt = lua.lua_type(L, -1);
    if (mt === lua.LUA_TSTRING) part.mediaType = cappedText(L, -1, 256);
    else if (mt !== lua.LUA_TNIL) return `${where}.media_type must be a string, got ${typeName(L, mt)}`;
    lua.lua_pop(L, 1);

    rawGetField(L, idx, K.name);
    const nt = lua.lua_type(L, -1);
    if (nt === lua.LUA_TSTRING) part.name = cappedText(L, -1, 1024);
    else if (nt !== lua.LUA_TNIL) return `${where}.name must be a string, got ${typeName(L, nt)}`;
    lua.lua_pop(L, 2);

    out.push(part);
  }
  return out;
}

/** The first key of the table at `idx` that is not in `allowed` (as text), or null. */
function unknownKeys(L: LuaState, idx: number, allowed: Set<string>): string | null {
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx)) {
    const kt = lua.lua_type(L, -2);
    const key = kt === lua.LUA_TSTRING ? cappedText(L, -2, 200, 'key') : null;
    if (key === null || !allowed.has(key)) {
      const shown =
        key ?? (kt === lua.LUA_TNUMBER ? `[${lua.lua_tonumber(L, -2)}]` : `<${typeName(L, kt)} key>`);
      lua.lua_pop(L, 2);
      return shown;
    }
    lua.lua_pop(L, 1);
  }
  return null;
}

function textPart(bytes: Uint8Array, caps: ResultCaps): ResultPart {
  return { type: 'text', text: capText(bytes, caps.maxTextBytes, 'output') };
}

/** The message of `return nil, <value>`: a string as is, a number as text, a table as JSON; all capped. */
function failureMessage(L: LuaState, idx: number, max: number): string {
  const t = lua.lua_type(L, idx);
  if (t === lua.LUA_TSTRING) return cappedText(L, idx, max, 'message');
  if (t === lua.LUA_TNUMBER || t === lua.LUA_TBOOLEAN || t === lua.LUA_TTABLE) {
    try {
      const text = JSON.stringify(luaToJson(L, idx, 'error', { maxStringBytes: max }));
      return capText(Buffer.from(t === lua.LUA_TTABLE ? `error object: ${text}` : text), max, 'message');
    } catch (err) {
      if (err instanceof LuaConversionError) return `handler failed with an error object (${err.message})`;
      throw err;
    }
  }
  if (t === lua.LUA_TNIL) return `handler returned nothing (nil); ${SHAPE_HINT}`;
  return `handler failed with a ${typeName(L, t)} value`;
}
