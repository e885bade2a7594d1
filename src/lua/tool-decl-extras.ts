/**
 * The optional parts of a Lua tool table besides `name`, `description`, `parameters`, `handler`, `capabilities`:
 *
 * - `output_schema`: a JSON Schema (a table) of the tool's `structured` result; it must describe an object
 *   (`type = "object"`, added when missing), as MCP's `outputSchema` must.
 * - `read_only`, `destructive`, `idempotent`, `open_world`: booleans, the MCP tool annotations `readOnlyHint`,
 *   `destructiveHint`, `idempotentHint`, `openWorldHint`.
 *
 * - `icons`: a list of `{ src = "https://..." or "data:image/...", mime_type = "image/png", sizes = { "48x48" },
 *   theme = "light" | "dark" }`, MCP tool icons (checked by `checkToolIcons`).
 *
 * Read raw (a metatable never runs). A wrong type is a load error naming the field.
 */

import type { LuaState } from 'fengari';
import fengari from 'fengari';
import type { ToolAnnotations, ToolIcon } from '../tool.js';
import { checkToolIcons } from '../tools/tool-icons.js';
import { LuaConversionError, luaToJson, pushString, typeName } from './lua-values.js';
import { normalizeSchema } from './schema-arrays.js';

const { lua } = fengari;

const ANNOTATIONS: Array<[string, keyof ToolAnnotations]> = [
  ['read_only', 'readOnly'],
  ['destructive', 'destructive'],
  ['idempotent', 'idempotent'],
  ['open_world', 'openWorld'],
];

export interface DeclExtras {
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
  icons?: ToolIcon[];
}

/** The extras of the tool table at `idx` of `T`, or the load error (prefixed with `where`). */
export function readDeclExtras(
  T: LuaState,
  idx: number,
  where: string,
  maxTextBytes: number,
): DeclExtras | string {
  const abs = lua.lua_absindex(T, idx);
  const out: DeclExtras = {};
  const annotations: ToolAnnotations = {};
  for (const [key, field] of ANNOTATIONS) {
    pushString(T, key);
    lua.lua_rawget(T, abs);
    const t = lua.lua_type(T, -1);
    const value = lua.lua_toboolean(T, -1);
    lua.lua_pop(T, 1);
    if (t === lua.LUA_TNIL) continue;
    if (t !== lua.LUA_TBOOLEAN) return `${where}: '${key}' must be true or false, got ${typeName(T, t)}`;
    (annotations as Record<string, boolean>)[field] = value;
  }
  if (Object.keys(annotations).length > 0) out.annotations = annotations;

  const icons = readIcons(T, abs, where, maxTextBytes);
  if (typeof icons === 'string') return icons;
  if (icons) out.icons = icons;

  pushString(T, 'output_schema');
  lua.lua_rawget(T, abs);
  const t = lua.lua_type(T, -1);
  try {
    if (t === lua.LUA_TNIL) return out;
    if (t !== lua.LUA_TTABLE) return `${where}: 'output_schema' must be a table, got ${typeName(T, t)}`;
    const value = luaToJson(T, lua.lua_gettop(T), 'output_schema', { maxStringBytes: maxTextBytes });
    if (Array.isArray(value) || value === null || typeof value !== 'object') {
      return `${where}: 'output_schema' must be a JSON Schema object`;
    }
    let schema = normalizeSchema(value) as Record<string, unknown>;
    if (schema.type === undefined) schema = { type: 'object', ...schema };
    if (schema.type !== 'object') {
      return `${where}: 'output_schema' must describe an object (type = "object"): the structured result is a table`;
    }
    out.outputSchema = schema;
    return out;
  } catch (err) {
    if (err instanceof LuaConversionError) return `${where}: ${err.message}`;
    throw err;
  } finally {
    lua.lua_pop(T, 1);
  }
}

function readIcons(
  T: LuaState,
  abs: number,
  where: string,
  maxTextBytes: number,
): ToolIcon[] | undefined | string {
  pushString(T, 'icons');
  lua.lua_rawget(T, abs);
  const t = lua.lua_type(T, -1);
  try {
    if (t === lua.LUA_TNIL) return undefined;
    if (t !== lua.LUA_TTABLE) return `${where}: 'icons' must be a list of tables, got ${typeName(T, t)}`;
    const value = luaToJson(T, lua.lua_gettop(T), 'icons', { maxStringBytes: maxTextBytes });
    // An empty table converts to {}: no icons.
    const list = Array.isArray(value) ? value : isEmptyObject(value) ? [] : value;
    const renamed = Array.isArray(list)
      ? list.map((i) => {
          if (typeof i !== 'object' || i === null || Array.isArray(i) || !('mime_type' in i)) return i;
          const { mime_type, ...rest } = i as Record<string, unknown>;
          return { ...rest, mimeType: mime_type };
        })
      : list;
    const { icons, problems } = checkToolIcons(renamed);
    if (problems.length > 0) return `${where}: 'icons': ${problems[0]}`;
    return icons.length > 0 ? icons : undefined;
  } catch (err) {
    if (err instanceof LuaConversionError) return `${where}: ${err.message}`;
    throw err;
  } finally {
    lua.lua_pop(T, 1);
  }
}

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}
