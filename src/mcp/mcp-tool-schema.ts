/**
 * An MCP server's tool declaration made safe to offer to the model and to validate calls against.
 *
 * A server is third-party code; its `tools/list` reaches every provider request (as tool declarations) and the agent's
 * argument validator (Ajv, `src/agent/validate-args.ts`). So:
 * - `pattern` / `patternProperties` are taken out of the input schema. Ajv runs them with JavaScript's backtracking
 *   `RegExp`, synchronously: a pattern like `^(a|a)*$` and a model-written argument of 30 `a`s and a `!` would hold
 *   the event loop for seconds to hours. The pattern stays visible to the model as a sentence in that schema's
 *   `description`; the server, which owns the rule, still checks it. Leaving them out only ever accepts more calls
 *   (`additionalProperties` is dropped next to `patternProperties`, so names those patterns allowed stay allowed).
 * - An input schema over `MAX_SCHEMA_CHARS` of JSON or nested deeper than `MAX_SCHEMA_DEPTH` schemas is refused (the
 *   tool is left out, with the reason): it would be sent with every request, or overflow the stack of whoever walks it.
 * - A description over `MAX_DESCRIPTION_CHARS` is cut, saying so.
 * - Keys such as `__proto__` stay plain data (objects are built with `defineProperty`, never `obj[key] = v`).
 *
 * Everything else is copied as it is; the top level is always `type: "object"` (a non-object schema becomes the empty
 * object schema, as the MCP spec requires object inputs).
 */

import type { JsonSchema } from '../tool.js';

export const MAX_SCHEMA_CHARS = 256 * 1024;
export const MAX_SCHEMA_DEPTH = 64;
export const MAX_DESCRIPTION_CHARS = 16 * 1024;

/** Keywords whose value is ONE schema. */
const SCHEMA_KEYWORDS = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
]);
/** Keywords whose value is an array of schemas (`items` may be either). */
const SCHEMA_ARRAY_KEYWORDS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to schemas (the names are NOT keywords). */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);

export type SafeSchema = { ok: true; schema: JsonSchema } | { ok: false; problem: string };

/** The input schema to declare and validate with, or why the tool cannot be offered. Never throws. */
export function safeInputSchema(raw: unknown): SafeSchema {
  if (!isRecord(raw)) return { ok: true, schema: { type: 'object' } };
  // Depth first: JSON.stringify itself overflows the stack on a schema 10 000 levels deep.
  const out = walk(raw, 0);
  if (out === TOO_DEEP) {
    return { ok: false, problem: `its input schema nests deeper than ${MAX_SCHEMA_DEPTH} levels` };
  }
  let chars: number;
  try {
    chars = JSON.stringify(out).length;
  } catch (err) {
    return { ok: false, problem: `its input schema cannot be serialized (${(err as Error).message})` };
  }
  if (chars > MAX_SCHEMA_CHARS) {
    return {
      ok: false,
      problem: `its input schema is ${chars} characters of JSON, over the limit of ${MAX_SCHEMA_CHARS}`,
    };
  }
  define(out as Record<string, unknown>, 'type', 'object');
  return { ok: true, schema: out as JsonSchema };
}

/** `text` cut to `MAX_DESCRIPTION_CHARS`, saying how long it was. */
export function safeDescription(text: string): string {
  if (text.length <= MAX_DESCRIPTION_CHARS) return text;
  return `${text.slice(0, MAX_DESCRIPTION_CHARS)}… [description cut: ${text.length} characters]`;
}

const TOO_DEEP = Symbol('too deep');

function walk(schema: unknown, depth: number): unknown {
  if (!isRecord(schema)) return schema;
  if (depth > MAX_SCHEMA_DEPTH) return TOO_DEEP;
  const out: Record<string, unknown> = {};
  const notes: string[] = [];
  const dropAdditional = isRecord(schema.patternProperties);
  for (const [key, value] of Object.entries(schema)) {
    let v = value;
    if (key === 'pattern' && typeof value === 'string') {
      notes.push(`Must match the regular expression ${value} (checked by the server).`);
      continue;
    }
    if (key === 'patternProperties' && isRecord(value)) {
      notes.push(
        `Property names matching ${Object.keys(value).join(', ')} are allowed (checked by the server).`,
      );
      continue;
    }
    if (key === 'additionalProperties' && dropAdditional) continue;
    if (SCHEMA_KEYWORDS.has(key)) v = walk(value, depth + 1);
    else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) {
      v = value.map((s) => walk(s, depth + 1));
      if ((v as unknown[]).includes(TOO_DEEP)) return TOO_DEEP;
    } else if (key === 'items') v = walk(value, depth + 1);
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isRecord(value)) {
      const map: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(value)) {
        const s = walk(sub, depth + 1);
        if (s === TOO_DEEP) return TOO_DEEP;
        define(map, name, s);
      }
      v = map;
    }
    if (v === TOO_DEEP) return TOO_DEEP;
    define(out, key, v);
  }
  if (notes.length > 0) {
    const before =
      typeof out.description === 'string' && out.description.length > 0 ? `${out.description} ` : '';
    define(out, 'description', `${before}${notes.join(' ')}`);
  }
  return out;
}

function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
