/**
 * An MCP server's tool declaration made safe to offer to the model and to validate calls against.
 *
 * A server is third-party code; its `tools/list` reaches every provider request (as tool declarations) and the agent's
 * argument validator (Ajv, `src/tools/validate-args.ts`). So:
 * - `pattern` / `patternProperties` are taken out of the input schema. Ajv runs them with JavaScript's backtracking
 *   `RegExp`, synchronously: a pattern like `^(a|a)*$` and a model-written argument of 30 `a`s and a `!` would hold
 *   the event loop for seconds to hours. The pattern stays visible to the model as a sentence in that schema's
 *   `description`; the server, which owns the rule, still checks it. Leaving them out only ever accepts more calls
 *   (`additionalProperties` is dropped next to `patternProperties`, and `unevaluatedProperties` everywhere once any
 *   `patternProperties` went, so names those patterns allowed stay allowed). Every keyword's value is walked, unknown
 *   and vendor ones included (Ajv follows a JSON-pointer `$ref` anywhere); only the data keywords (`const`, `enum`,
 *   `default`, `examples`, `example`) are copied unwalked, and a `$ref` / `$dynamicRef` / `$recursiveRef` pointing
 *   into one of them makes the tool refused (left out, with the reason).
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

/**
 * Keywords whose value is data, not schemas: copied as they are, never walked (a `pattern` key in a `default` value is
 * data). A `$ref` into one of them is refused, since that data would then be compiled as a schema unsanitised.
 */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords whose value maps names to schemas (the names are NOT keywords). */
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
  'patternProperties',
]);
/** Keywords that point at another schema by URI; their JSON-pointer fragment is checked. */
const REF_KEYWORDS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

export type SafeSchema = { ok: true; schema: JsonSchema } | { ok: false; problem: string };

/** The input schema to declare and validate with, or why the tool cannot be offered. Never throws. */
export function safeInputSchema(raw: unknown): SafeSchema {
  if (!isRecord(raw)) return { ok: true, schema: { type: 'object' } };
  // Depth first: JSON.stringify itself overflows the stack on a schema 10 000 levels deep.
  const ctx: WalkContext = { root: raw, dropUnevaluated: false, removedPatternProperties: false };
  let out = walk(raw, 0, ctx);
  if (typeof out !== 'symbol' && ctx.removedPatternProperties) {
    // `unevaluatedProperties` sees what `patternProperties` evaluated, in this schema and in its subschemas: with those
    // gone it would refuse names the original accepted. Dropping it only ever accepts more calls.
    ctx.dropUnevaluated = true;
    out = walk(raw, 0, ctx);
  }
  if (out === TOO_DEEP) {
    return { ok: false, problem: `its input schema nests deeper than ${MAX_SCHEMA_DEPTH} levels` };
  }
  if (typeof out === 'symbol') return { ok: false, problem: ctx.refProblem ?? 'its input schema is invalid' };
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
const BAD_REF = Symbol('bad ref');

interface WalkContext {
  /** The raw top-level schema, that local `#/...` pointers resolve in. */
  root: Record<string, unknown>;
  /** Second pass: `unevaluatedProperties` is left out everywhere. */
  dropUnevaluated: boolean;
  /** Set by the walk when a `patternProperties` was taken out. */
  removedPatternProperties: boolean;
  /** Why a `$ref` was refused. */
  refProblem?: string;
}

/**
 * A copy of `schema` without regex keywords, walking EVERY keyword's value (objects as schemas, arrays element-wise),
 * unknown and vendor keywords included: Ajv follows a JSON-pointer `$ref` into any of them. Only the data keywords are
 * copied unwalked.
 */
function walk(schema: unknown, depth: number, ctx: WalkContext): unknown {
  if (Array.isArray(schema)) {
    if (depth > MAX_SCHEMA_DEPTH) return TOO_DEEP;
    const arr: unknown[] = [];
    for (const s of schema) {
      const v = walk(s, depth + 1, ctx);
      if (typeof v === 'symbol') return v;
      arr.push(v);
    }
    return arr;
  }
  if (!isRecord(schema)) return schema;
  if (depth > MAX_SCHEMA_DEPTH) return TOO_DEEP;
  const out: Record<string, unknown> = {};
  const notes: string[] = [];
  const dropAdditional = isRecord(schema.patternProperties);
  for (const [key, value] of Object.entries(schema)) {
    let v: unknown = value;
    if (key === 'pattern' && typeof value === 'string') {
      notes.push(`Must match the regular expression ${value} (checked by the server).`);
      continue;
    }
    if (key === 'patternProperties' && isRecord(value)) {
      ctx.removedPatternProperties = true;
      notes.push(
        `Property names matching ${Object.keys(value).join(', ')} are allowed (checked by the server).`,
      );
      continue;
    }
    if (key === 'additionalProperties' && dropAdditional) continue;
    if (key === 'unevaluatedProperties' && ctx.dropUnevaluated) continue;
    if (REF_KEYWORDS.has(key) && typeof value === 'string') {
      const problem = refIntoData(value, ctx.root);
      if (problem !== undefined) {
        ctx.refProblem = problem;
        return BAD_REF;
      }
    } else if (DATA_KEYWORDS.has(key)) {
      // copied as is
    } else if (SCHEMA_MAP_KEYWORDS.has(key) && isRecord(value)) {
      // Names are not keywords; each value is a schema (`dependencies` may also map to a string array: walked
      // element-wise, strings stay as they are).
      if (depth + 1 > MAX_SCHEMA_DEPTH) return TOO_DEEP;
      const map: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(value)) {
        const s = walk(sub, depth + 1, ctx);
        if (typeof s === 'symbol') return s;
        define(map, name, s);
      }
      v = map;
    } else {
      v = walk(value, depth + 1, ctx);
    }
    if (typeof v === 'symbol') return v;
    define(out, key, v);
  }
  if (notes.length > 0) {
    const before =
      typeof out.description === 'string' && out.description.length > 0 ? `${out.description} ` : '';
    define(out, 'description', `${before}${notes.join(' ')}`);
  }
  return out;
}

/**
 * Why `ref` cannot be allowed, or undefined. Its fragment is read as a JSON pointer (percent-decoded, `~1` and `~0`
 * unescaped); a pointer that steps into a data keyword's value is refused. Where the pointer resolves in `root`,
 * only segments in keyword position count (a property NAMED `default` is fine); where it does not (a pointer relative
 * to another `$id`), any segment that is a data keyword counts. An undecodable fragment is refused.
 */
function refIntoData(ref: string, root: Record<string, unknown>): string | undefined {
  const hash = ref.indexOf('#');
  if (hash < 0) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(hash + 1));
  } catch {
    return `its input schema has a $ref whose fragment cannot be decoded (${JSON.stringify(ref.slice(0, 200))})`;
  }
  if (!fragment.startsWith('/')) return undefined; // a plain-name anchor, not a path
  const segments = fragment
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const refused = `its input schema has a $ref into data (${JSON.stringify(ref.slice(0, 200))}), which is not sanitised`;
  if (hash > 0) return segments.some((s) => DATA_KEYWORDS.has(s)) ? refused : undefined;
  // Walk the pointer through the raw schema, knowing whether each segment names a keyword.
  let cur: unknown = root;
  let keywordPosition = true;
  for (const seg of segments) {
    if (Array.isArray(cur)) {
      cur = cur[Number(seg)];
      keywordPosition = true;
    } else if (isRecord(cur) && Object.hasOwn(cur, seg)) {
      if (keywordPosition && DATA_KEYWORDS.has(seg)) return refused;
      keywordPosition = !(keywordPosition && SCHEMA_MAP_KEYWORDS.has(seg));
      cur = cur[seg];
    } else {
      // Does not resolve from the root (another `$id`, or a dangling ref Ajv reports): judge by names alone.
      return segments.some((s) => DATA_KEYWORDS.has(s)) ? refused : undefined;
    }
  }
  return undefined;
}

function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
