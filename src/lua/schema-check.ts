/**
 * A tool's `parameters` checked as JSON Schema when its file loads (against the 2020-12 meta-schema, or draft-07 when
 * it says `$schema` draft-07), so a typo such as `type = "integr"` is a load error naming the field — not a schema
 * sent to every provider request (which a provider then refuses) and failing only when the tool is called.
 *
 * Ajv is loaded on the first check (CommonJS, synchronously), in whichever thread loads the tools.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';

const require = createRequire(import.meta.url);
const OPTIONS = { strict: false, validateFormats: false, logger: false } as const;
let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;

/** What is wrong with `schema` as a JSON Schema (one line per problem), or undefined when it is valid. */
export function schemaProblem(schema: Record<string, unknown>): string | undefined {
  const draft07 = typeof schema.$schema === 'string' && /draft-0[67]/.test(schema.$schema);
  let ajv: Ajv | Ajv2020;
  if (draft07) {
    ajv07 ??= new (require('ajv') as { Ajv: typeof Ajv }).Ajv(OPTIONS);
    ajv = ajv07;
  } else {
    ajv2020 ??= new (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(OPTIONS);
    ajv = ajv2020;
  }
  try {
    if (ajv.validateSchema(schema) !== true) return describe(ajv.errors ?? [], schema);
    // A valid shape can still fail to compile (an unresolvable $ref, a bad regex in `pattern`).
    ajv.compile(schema);
    ajv.removeSchema(schema);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The most specific meta-schema errors, as `parameters.properties.n.type: must be one of … (got "integr")`. */
function describe(errors: readonly ErrorObject[], schema: unknown): string {
  // The meta-schema reports a bad `type` three ways (enum, array, anyOf): keep the deepest error per place.
  const byPath = new Map<string, ErrorObject>();
  for (const e of errors) {
    const prev = byPath.get(e.instancePath);
    if (prev === undefined || e.keyword === 'enum' || (prev.keyword === 'anyOf' && e.keyword !== 'anyOf')) {
      byPath.set(e.instancePath, e);
    }
  }
  return [...byPath.values()]
    .map((e) => {
      const where = `parameters${e.instancePath.replace(/\//g, '.')}`;
      const value = valueAt(schema, e.instancePath);
      const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
      const what = allowed
        ? `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
        : (e.message ?? 'is invalid');
      return `${where}: ${what} (got ${JSON.stringify(value) ?? 'nothing'})`;
    })
    .join('; ');
}

function valueAt(root: unknown, pointer: string): unknown {
  let cur: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
