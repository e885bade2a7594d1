/**
 * Request-body validators compiled from the published schemas (JSON Schema 2020-12, Ajv2020).
 *
 * OpenAI answers 400 "Unknown parameter" for any key its spec does not list, but the OpenAPI-derived schema leaves
 * objects open. `closeObjects` makes that rule part of the schema: every object schema that lists `properties` (or
 * combines them through `allOf`) gets `unevaluatedProperties: false` — except the schemas that are themselves `allOf`
 * members (a member sees only its own keys; the schema holding the `allOf` sees them all). The Anthropic and Gemini
 * schemas are already closed (`additionalProperties: false`).
 *
 * Formats: `byte` is checked — standard padded base64 for Anthropic and OpenAI (the stored base64 travels as is);
 * for Gemini the proto3 JSON mapping's rule: standard or URL-safe alphabet, padding optional (so the documented
 * `skip_thought_signature_validator` placeholder is valid bytes). `uri` must have a scheme (a `data:` URL has one);
 * `float` is any number.
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

type Node = Record<string, unknown>;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** proto3 JSON `bytes`: either alphabet, with or without padding (never a lone trailing character). */
const PROTO3_BYTES = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Add `unevaluatedProperties: false` where the OpenAI unknown-key rule needs it (see the module doc). Mutates. */
export function closeObjects(doc: Node): Node {
  const named = ((doc.components as Node | undefined)?.schemas ?? {}) as Record<string, Node>;
  const resolve = (node: Node): Node => {
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      return named[ref.slice('#/components/schemas/'.length)] ?? node;
    }
    return node;
  };
  const fragments = new Set<Node>();
  const markFragment = (node: Node): void => {
    const target = resolve(node);
    if (fragments.has(target)) return;
    fragments.add(node);
    fragments.add(target);
    for (const member of Array.isArray(target.allOf) ? target.allOf : [])
      if (isNode(member)) markFragment(member);
  };
  const findAllOf = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) findAllOf(v);
      return;
    }
    if (!isNode(value)) return;
    if (Array.isArray(value.allOf)) for (const m of value.allOf) if (isNode(m)) markFragment(m);
    for (const v of Object.values(value)) findAllOf(v);
  };
  findAllOf(doc);
  const close = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) close(v);
      return;
    }
    if (!isNode(value)) return;
    const objectLike = isNode(value.properties) || Array.isArray(value.allOf);
    if (
      objectLike &&
      !fragments.has(value) &&
      !('additionalProperties' in value) &&
      !('unevaluatedProperties' in value)
    ) {
      value.unevaluatedProperties = false;
    }
    for (const v of Object.values(value)) close(v);
  };
  close(doc);
  return doc;
}

export interface BodyValidator {
  /** The schema file it was compiled from. */
  file: string;
  /** Error lines (`<path>: <message>`), empty when the body is valid. */
  check(body: unknown): string[];
}

/** Compile `root` (a name under `components.schemas`) of the schema document in `file`. */
export function compileValidator(
  file: string,
  doc: Node,
  root: string,
  rules: { closeUnknownKeys: boolean; proto3Bytes: boolean },
): BodyValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('byte', rules.proto3Bytes ? PROTO3_BYTES : BASE64);
  ajv.addFormat('uri', /^[A-Za-z][A-Za-z0-9+.-]*:/);
  ajv.addFormat('float', { type: 'number', validate: () => true });
  const prepared = rules.closeUnknownKeys ? closeObjects(structuredClone(doc)) : doc;
  ajv.addSchema({ ...prepared, $id: 'wire-schema' });
  const validate = ajv.getSchema(`wire-schema#/components/schemas/${root}`) as ValidateFunction | undefined;
  if (!validate) throw new Error(`${file}: no schema components.schemas.${root}`);
  return {
    file,
    check(body) {
      if (validate(body)) return [];
      return summarize(validate.errors ?? []);
    },
  };
}

/**
 * Ajv reports every union member's complaint; keep the deepest errors (the member meant is the one that got furthest)
 * and name unknown keys plainly.
 */
function summarize(errors: ErrorObject[]): string[] {
  const depth = (e: ErrorObject) => e.instancePath.split('/').length;
  const deepest = Math.max(...errors.map(depth));
  const unknown = (e: ErrorObject) =>
    e.keyword === 'unevaluatedProperties' || e.keyword === 'additionalProperties';
  const lines = errors
    .filter((e) => unknown(e) || depth(e) >= deepest - 1)
    .map((e) => {
      const params = e.params as Record<string, unknown>;
      if (unknown(e)) {
        return `${e.instancePath || '/'}: unknown key '${String(params.unevaluatedProperty ?? params.additionalProperty)}'`;
      }
      return `${e.instancePath || '/'}: ${e.message ?? e.keyword} ${JSON.stringify(params)}`;
    });
  return [...new Set(lines)].slice(0, 12);
}
