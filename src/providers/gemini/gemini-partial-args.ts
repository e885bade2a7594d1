/**
 * Gemini streamed function-call arguments (`FunctionCall.partialArgs`, sent when a request sets
 * `toolConfig.functionCallingConfig.streamFunctionCallArguments`; @google/genai `PartialArg`).
 *
 * A streamed call arrives as a run of `functionCall` parts: the first names the call (`{name, willContinue: true}`),
 * the next carry `partialArgs: [{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue?}]`, and a
 * part without `willContinue` ends the call. `jsonPath` is an RFC 9535 path of names and indexes (`$.recipe.items[0]
 * .name`, `$['a b']`); a string value whose piece says `willContinue: true` goes on in the next piece for the same path.
 *
 * Contract: `apply` never throws. A piece it cannot place (a path it cannot read, a value of no known kind, an index
 * that would leave a hole in an array, a path that runs through a value of another kind) marks the accumulator
 * `invalid` (so do arguments nested deeper than `MAX_ARGUMENT_DEPTH`); `argumentsText()` then returns the raw pieces as JSON text, which the message builder keeps as the call's
 * `providerData.invalidArguments` (so nothing is dropped silently and the agent answers with an error result).
 */

import { MAX_ARGUMENT_DEPTH, nestedDeeperThan } from '../common/argument-depth.js';
import { safeJson, safeString } from '../common/safe-string.js';

type Segment = string | number;
type Container = Record<string, unknown> | unknown[];

export class PartialArgsAccumulator {
  readonly #root: Record<string, unknown> = {};
  readonly #pieces: unknown[] = [];
  /** Paths whose last string piece said `willContinue: true`. */
  readonly #continuing = new Set<string>();
  #invalid: string | undefined;

  /** Seed the arguments with a whole `args` object the starting part carried. */
  constructor(args?: Record<string, unknown>) {
    // Not Object.assign: it would run the `__proto__` setter for an own `__proto__` key (JSON.parse makes one).
    if (args) for (const [k, v] of Object.entries(args)) write(this.#root, k, v);
  }

  /** Why a piece could not be placed, or undefined. */
  get invalid(): string | undefined {
    return this.#invalid;
  }

  apply(pieces: readonly unknown[]): void {
    for (const piece of pieces) {
      this.#pieces.push(piece);
      if (this.#invalid !== undefined) continue;
      const error = this.#applyOne(piece);
      if (error !== undefined) this.#invalid = error;
    }
  }

  /** The arguments as JSON text: the assembled object, or the raw pieces when one could not be placed. */
  argumentsText(): string {
    if (this.#invalid === undefined && nestedDeeperThan(this.#root, MAX_ARGUMENT_DEPTH)) {
      this.#invalid = `arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`;
    }
    return JSON.stringify(this.#invalid === undefined ? this.#root : this.#pieces);
  }

  #applyOne(raw: unknown): string | undefined {
    if (typeof raw !== 'object' || raw === null) return 'a partialArgs entry is not an object';
    const piece = raw as Record<string, unknown>;
    const path = typeof piece.jsonPath === 'string' ? parseJsonPath(piece.jsonPath) : undefined;
    if (path === undefined || path.length === 0) return `unreadable jsonPath ${safeJson(piece.jsonPath)}`;
    let value: unknown;
    if (typeof piece.stringValue === 'string') value = piece.stringValue;
    else if (typeof piece.numberValue === 'number') value = piece.numberValue;
    else if (typeof piece.boolValue === 'boolean') value = piece.boolValue;
    else if ('nullValue' in piece) value = null;
    else return `partialArgs entry for ${safeString(piece.jsonPath)} has no value`;

    let parent: Container = this.#root;
    for (let i = 0; i < path.length - 1; i++) {
      const next = childOf(parent, path[i] as Segment, typeof path[i + 1] === 'number');
      if (next === undefined)
        return `jsonPath ${safeString(piece.jsonPath)} does not fit the arguments so far`;
      parent = next;
    }
    const last = path[path.length - 1] as Segment;
    const key = piece.jsonPath as string;
    const current = read(parent, last);
    const placed =
      typeof value === 'string' && typeof current === 'string' && this.#continuing.has(key)
        ? write(parent, last, current + value)
        : write(parent, last, value);
    if (!placed) return `jsonPath ${key} does not fit the arguments so far`;
    if (typeof value === 'string' && piece.willContinue === true) this.#continuing.add(key);
    else this.#continuing.delete(key);
    return undefined;
  }
}

/** `$`, then `.name`, `[n]`, `['name']` / `["name"]` segments; undefined for anything else. */
export function parseJsonPath(path: string): Segment[] | undefined {
  if (!path.startsWith('$')) return undefined;
  const out: Segment[] = [];
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      const m = /^[^.[\]]+/.exec(path.slice(i + 1));
      if (!m) return undefined;
      out.push(m[0]);
      i += 1 + m[0].length;
    } else if (c === '[') {
      const rest = path.slice(i);
      const index = /^\[(\d{1,9})\]/.exec(rest);
      if (index) {
        out.push(Number(index[1]));
        i += index[0].length;
        continue;
      }
      const quoted = /^\[(['"])((?:\\.|(?!\1).)*)\1\]/.exec(rest);
      if (!quoted) return undefined;
      out.push((quoted[2] as string).replace(/\\(.)/g, '$1'));
      i += quoted[0].length;
    } else {
      return undefined;
    }
  }
  return out;
}

/** The container at `segment` of `parent`, created when absent; undefined when something else is there. */
function childOf(parent: Container, segment: Segment, wantArray: boolean): Container | undefined {
  const existing = read(parent, segment);
  if (existing === undefined) {
    const created: Container = wantArray ? [] : {};
    return write(parent, segment, created) ? created : undefined;
  }
  if (wantArray ? Array.isArray(existing) : isPlainObject(existing)) return existing as Container;
  return undefined;
}

function read(parent: Container, segment: Segment): unknown {
  if (Array.isArray(parent)) return typeof segment === 'number' ? parent[segment] : undefined;
  if (typeof segment !== 'string' || !Object.hasOwn(parent, segment)) return undefined;
  return parent[segment];
}

/** Set `segment` of `parent`; false for a kind mismatch or an index past the end (no holes in arrays). */
function write(parent: Container, segment: Segment, value: unknown): boolean {
  if (Array.isArray(parent)) {
    if (typeof segment !== 'number' || segment > parent.length) return false;
    parent[segment] = value;
    return true;
  }
  if (typeof segment !== 'string') return false;
  // defineProperty: a `__proto__` key is an ordinary own property, as JSON.parse makes it.
  Object.defineProperty(parent, segment, { value, enumerable: true, writable: true, configurable: true });
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
