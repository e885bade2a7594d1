/**
 * Tool-argument validation against a tool's JSON Schema, with Ajv.
 *
 * Each schema is compiled once and cached by object identity (a `WeakMap`), so a turn pays only the compiled
 * validator's cost per call; an equal schema in a new object reuses the validator compiled for its JSON text. Schemas declaring draft-07 / draft-06 (`$schema`) are compiled by Ajv's draft-07 class;
 * every other schema (no `$schema`, 2019-09, 2020-12) by its 2020-12 class — the dialect MCP tool schemas use.
 *
 * Validation never changes the arguments: no type coercion, no defaults, no property removal. The model sees exactly
 * which argument was wrong and can send a corrected call.
 *
 * Ajv (~10 MB of heap and ~80 ms) is loaded on the first schema compile, not when libpanto is imported: a host that
 * never dispatches a tool call never loads it. Ajv is CommonJS, so `require` loads it synchronously and
 * `validateArgs` stays synchronous.
 */

import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ToolCallBlock } from '../conversation.js';
import type { JsonSchema } from '../tool.js';

/**
 * Why a call's argument text could not be used: the response parsers leave a call whose arguments were not a JSON
 * object with `input: {}` and `providerData.invalidArguments: {raw, error}`. Returns undefined for a call whose
 * arguments parsed. `message` is the model-readable result text (it quotes up to 500 characters of the raw text);
 * `reason` is the parse error alone.
 */
export function unparsedArguments(call: ToolCallBlock): { message: string; reason: string } | undefined {
  const invalid = call.providerData?.invalidArguments as { raw?: unknown; error?: unknown } | undefined;
  if (invalid === undefined || invalid === null) return undefined;
  const reason = String(invalid.error);
  const raw = String(invalid.raw ?? '');
  const shown = raw.length > 500 ? `${raw.slice(0, 500)}…` : raw;
  return {
    message: `The arguments of this ${call.name} call were not a JSON object (${reason}); the tool did not run. Arguments received: ${shown}`,
    reason,
  };
}

/** Outcome of validating one call's arguments. `message` is model-readable and names path, rule and value. */
export type ArgsCheck = { ok: true } | { ok: false; message: string };

type Compiled = ValidateFunction | { schemaError: string };

const cache = new WeakMap<object, Compiled>();
/** Validators by schema JSON, oldest evicted first; bounds the memory of sources that rebuild schema objects. */
const byContent = new Map<string, Compiled>();
const MAX_BY_CONTENT = 512;
let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;

const OPTIONS = {
  allErrors: true,
  // Tool schemas in the wild carry keywords Ajv does not know (`examples` is fine, vendor `x-*` keys are common);
  // unknown keywords must not make a tool unusable.
  strict: false,
  // No ajv-formats: `format` is an annotation, never a reason to reject a call.
  validateFormats: false,
  // Only the arguments' own properties count: without this `{}` "has" `constructor` and `__proto__` (inherited), so a
  // property of that name is checked against `Object` and a `required` one is never missing.
  ownProperties: true,
  logger: false,
} as const;

/** Required on first use (the same module instances `import 'ajv'` would give). */
const require = createRequire(import.meta.url);

function compilerFor(schema: JsonSchema): Ajv | Ajv2020 {
  const dialect = schema.$schema;
  if (typeof dialect === 'string' && /draft-0[67]/.test(dialect)) {
    ajv07 ??= new (require('ajv') as { Ajv: typeof Ajv }).Ajv(OPTIONS);
    return ajv07;
  }
  ajv2020 ??= new (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(OPTIONS);
  return ajv2020;
}

function compile(schema: unknown): Compiled {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return {
      schemaError: `its input schema is ${schema === null ? 'null' : typeof schema}, not a JSON Schema object`,
    };
  }
  const hit = cache.get(schema);
  if (hit) return hit;
  // Identity miss: a source may rebuild equal schema objects; reuse the validator compiled for equal content.
  let key: string | undefined;
  try {
    key = JSON.stringify(schema);
  } catch {
    key = undefined; // cyclic: Ajv reports it below
  }
  let compiled = key === undefined ? undefined : byContent.get(key);
  if (compiled === undefined) {
    try {
      compiled = compilerFor(schema as JsonSchema).compile(schema);
    } catch (err) {
      compiled = { schemaError: `its input schema does not compile: ${(err as Error).message}` };
    }
    if (key !== undefined) {
      if (byContent.size >= MAX_BY_CONTENT) byContent.delete(byContent.keys().next().value as string);
      byContent.set(key, compiled);
    }
  }
  cache.set(schema, compiled);
  return compiled;
}

/**
 * Validate `args` against `schema` for tool `toolName`. Never throws: an invalid schema (the tool author's bug) is
 * reported as a failed check whose message says so.
 */
export function validateArgs(toolName: string, schema: unknown, args: unknown): ArgsCheck {
  const compiled = compile(schema);
  if (typeof compiled !== 'function') {
    return { ok: false, message: `Tool '${toolName}' cannot be called: ${compiled.schemaError}.` };
  }
  let valid: boolean;
  try {
    valid = compiled(args) as boolean;
  } catch (err) {
    // A recursive schema walks arguments as deep as they go: 100k levels of nesting overflow the stack.
    return {
      ok: false,
      message: `Invalid arguments for tool '${toolName}': they could not be checked (${(err as Error).message}); they are probably nested too deeply. Send a flatter call.`,
    };
  }
  if (valid) return { ok: true };
  const problems = (compiled.errors ?? []).map((e) => describeError(e, args));
  return {
    ok: false,
    message: `Invalid arguments for tool '${toolName}':\n${problems.map((p) => `- ${p}`).join('\n')}\nFix the arguments and call the tool again.`,
  };
}

/** One Ajv error as `at <path>: <what> (rule: <keyword>), received <value>`. */
function describeError(e: ErrorObject, args: unknown): string {
  const where = e.instancePath === '' ? 'the arguments object' : e.instancePath;
  const value = valueAt(args, e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `at ${where}: missing required property '${String(params.missingProperty)}' (rule: required)`;
    case 'additionalProperties': {
      const prop = String(params.additionalProperty);
      const received = isRecord(value) ? value[prop] : undefined;
      return `at ${where}: property '${prop}' is not allowed (rule: additionalProperties), received ${show(received)}`;
    }
    case 'enum':
      return `at ${where}: must be one of ${show(params.allowedValues)} (rule: enum), received ${show(value)}`;
    default:
      return `at ${where}: ${e.message ?? 'is invalid'} (rule: ${e.keyword}), received ${show(value)}`;
  }
}

/** Resolve a JSON Pointer (RFC 6901) into `root`; undefined when the path does not exist. */
function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let cur: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isRecord(cur)) cur = cur[key];
    else return undefined;
  }
  return cur;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const MAX_SHOWN = 120;

/** A value as short JSON for an error message. */
function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}… (${s.length} chars)` : s;
}
