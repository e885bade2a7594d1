/**
 * JSON Schema positions that must hold arrays. A Lua tool writes its `parameters` as a Lua table, and an empty Lua
 * table converts to `{}`; in these positions that would make the schema invalid (`required = {}` -> "data/required
 * must be array" on every call), so `normalizeSchema` turns an empty object there into `[]` at load time.
 */

/** Keywords whose value is an array (of names, values or schemas). */
const ARRAY_KEYWORDS = new Set([
  'required',
  'enum',
  'anyOf',
  'oneOf',
  'allOf',
  'prefixItems',
  'examples',
  'type',
]);
/** Keywords whose value is ONE schema. */
const SCHEMA_KEYWORDS = new Set([
  'items',
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
/** Keywords whose value maps names to schemas (the names are NOT keywords). */
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Return `schema` with empty objects in array-valued keyword positions replaced by `[]`, recursively. */
export function normalizeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normalizeSchema);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    let v = value;
    if (ARRAY_KEYWORDS.has(key) && isRecord(v) && Object.keys(v).length === 0) v = [];
    else if (ARRAY_KEYWORDS.has(key) && Array.isArray(v) && key !== 'enum' && key !== 'examples') {
      v = v.map(normalizeSchema);
    } else if (SCHEMA_KEYWORDS.has(key)) v = normalizeSchema(v);
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isRecord(v)) {
      const map: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(v)) {
        Object.defineProperty(map, name, {
          value: normalizeSchema(sub),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      v = map;
    }
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
