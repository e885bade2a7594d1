/**
 * A learned shape of a streaming delta event, so the common case skips `JSON.parse` of the whole event.
 *
 * Providers send thousands of events that differ only in one string: Anthropic
 * `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"…"}}`, an OpenAI Chat chunk whose id,
 * model, fingerprint and `finish_reason: null` repeat in every chunk. After one event of that shape was parsed in full,
 * `DeltaTemplate.learn` records the event as fixed text around the delta's string literal, and proves the literal's
 * position by parsing the event with a probe string in its place and reading the probe back through the same field.
 * Members the stream parsers never read and that change in every event — OpenAI's `obfuscation` padding (a string) and
 * the Responses `sequence_number` (an integer) — are holes: any value of that kind is accepted there.
 *
 * Contract of `match(data)`: it returns a string only when `data` is the learned fixed text with one valid JSON string
 * literal `L` in the delta's place and, in each hole, a plain JSON string (no escapes) or a JSON integer as learned —
 * then `data` is valid JSON equal to the learned event except for the delta and the ignored members, and the returned
 * value is `JSON.parse(L)`. Anything else (another shape, an escape that does not decode, a raw control character, an
 * unterminated literal) returns `undefined` and the caller parses `data` in full, so the fast path never accepts what
 * `JSON.parse` would reject nor reads a different field.
 *
 * Object templates (`learn(..., { numbers: true })`, for events whose numbers change in every event, like Gemini's
 * cumulative `usageMetadata`): every JSON number of the event is a hole too, and none are ignored. The probe parse
 * fills the numbers with distinct probe values and the template keeps the probe's parsed object, with the place (parent
 * object and key) where the delta and each number landed. After a successful `match`, `object()` writes the matched
 * delta and numbers into those places and returns that object: it then deep-equals `JSON.parse(data)` (same keys in the
 * same order, same values; numbers are read with the JSON number grammar and converted as `JSON.parse` converts them).
 * The object is reused by the next match, so the caller must not keep any part of it.
 */

const PROBE = 'panto\u0001probe';
const PROBE_LITERAL = JSON.stringify(PROBE);

/** Members no stream parser reads that change in every event, with the JSON kind of their value. */
const IGNORED_MEMBERS: ReadonlyArray<[string, HoleKind]> = [
  ['obfuscation', 'string'],
  ['sequence_number', 'integer'],
];

/**
 * `value`: the delta string (read); `string` / `integer`: an ignored member; `number`: any JSON number, read into
 * `numbers` (object templates only).
 */
export type HoleKind = 'value' | 'string' | 'integer' | 'number';

/** Where a hole's value lives in an object template's parsed object. */
interface Target {
  parent: Record<string | number, unknown>;
  key: string | number;
}

/** Options of `DeltaTemplate.learn`. */
export interface LearnOptions {
  /** Make every JSON number a read hole and keep the parsed object (see "Object templates" above). */
  numbers?: boolean;
}

/** Probe values of number holes: `PROBE_NUMBER_BASE + n`, distinct integers that JSON.parse reads exactly. */
const PROBE_NUMBER_BASE = 2 ** 52;
/** Object templates are refused for events nested deeper than this (the proof walks the parsed event recursively). */
const MAX_OBJECT_DEPTH = 64;

export class DeltaTemplate<Tag> {
  /** Fixed text: `segments[0] hole[0] segments[1] ... hole[n-1] segments[n]`. */
  readonly #segments: string[];
  readonly #holes: HoleKind[];
  /** What the caller needs to apply a matched value (block index, delta kind...). */
  readonly tag: Tag;
  /** The numbers read by the last successful `match`, in hole order (object templates). */
  readonly numbers: number[] = [];
  /** Object templates: the probe's parsed object and where the delta and each number hole landed in it. */
  #object: Record<string, unknown> | undefined;
  #valueTarget: Target | undefined;
  #numberTargets: Target[] = [];

  /** Use `DeltaTemplate.learn`: a template built by hand carries no proof of its value position. */
  constructor(segments: string[], holes: HoleKind[], tag: Tag) {
    this.#segments = segments;
    this.#holes = holes;
    this.tag = tag;
  }

  /**
   * Learn the shape of `data` (an event already parsed in full and handled by the caller), whose delta string is the
   * value of the last `"key"` member that `read` finds again in the probe parse. Returns `undefined` when the
   * position cannot be proven (then the caller keeps parsing such events in full).
   */
  static learn<Tag>(
    data: string,
    key: string,
    read: (parsed: Record<string, unknown>) => unknown,
    tag: Tag,
    options: LearnOptions = {},
  ): DeltaTemplate<Tag> | undefined {
    const quotedKey = `"${key}"`;
    let at = data.lastIndexOf(quotedKey);
    // Try the last few occurrences of the key (the delta field is normally the last one).
    for (let tries = 0; at !== -1 && tries < 4; tries++) {
      const literal = literalAfterKey(data, at + quotedKey.length);
      if (literal !== undefined) {
        const template = withHoles(data, literal, tag, options.numbers === true);
        // (`?.` cannot reach a private method.)
        if (template) {
          if (template.#prove(read, options.numbers === true)) return template;
        }
      }
      at = at === 0 ? -1 : data.lastIndexOf(quotedKey, at - 1);
    }
    return undefined;
  }

  /** The text of the learned shape with `fill(kind, n)` in each hole (`n`: the hole's index among its kind). */
  fill(fill: (kind: HoleKind, n: number) => string): string {
    let out = this.#segments[0] as string;
    const seen = { value: 0, string: 0, integer: 0, number: 0 };
    for (let i = 0; i < this.#holes.length; i++) {
      const kind = this.#holes[i] as HoleKind;
      out += fill(kind, seen[kind]++) + (this.#segments[i + 1] as string);
    }
    return out;
  }

  /**
   * True when the probe string in the value hole (and other values in the other holes) parses and `read` finds the
   * probe: the value hole is the field the caller reads, whatever the other holes hold. An object template also needs
   * the probe string and each probe number exactly once in the parsed object (a number under a duplicate key that a
   * later member overrides is not found, and the template is refused); it keeps the object and those places.
   */
  #prove(read: (parsed: Record<string, unknown>) => unknown, asObject: boolean): boolean {
    let probe: unknown;
    try {
      probe = JSON.parse(
        this.fill((kind, n) =>
          kind === 'value'
            ? PROBE_LITERAL
            : kind === 'number'
              ? String(PROBE_NUMBER_BASE + n)
              : kind === 'integer'
                ? '7'
                : '"x"',
        ),
      );
    } catch {
      return false;
    }
    if (probe === null || typeof probe !== 'object' || read(probe as Record<string, unknown>) !== PROBE)
      return false;
    if (!asObject) return true;
    const count = this.#holes.filter((k) => k === 'number').length;
    const found: Array<Target | undefined> = new Array(count).fill(undefined);
    let value: Target | undefined;
    let ok = true;
    const visit = (parent: Record<string | number, unknown>, key: string | number, depth: number): void => {
      const v = parent[key];
      if (typeof v === 'number') {
        const n = v - PROBE_NUMBER_BASE;
        if (!Number.isInteger(n) || n < 0 || n >= count || found[n] !== undefined || key === '__proto__')
          ok = false;
        else found[n] = { parent, key };
      } else if (v === PROBE) {
        if (value !== undefined || key === '__proto__') ok = false;
        else value = { parent, key };
      } else if (v !== null && typeof v === 'object') walk(v as Record<string | number, unknown>, depth + 1);
    };
    const walk = (node: Record<string | number, unknown>, depth: number): void => {
      if (depth > MAX_OBJECT_DEPTH) ok = false;
      else if (Array.isArray(node)) for (let i = 0; ok && i < node.length; i++) visit(node, i, depth);
      else for (const k of Object.keys(node)) if (ok) visit(node, k, depth);
    };
    walk(probe as Record<string | number, unknown>, 0);
    if (!ok || value === undefined || found.some((t) => t === undefined)) return false;
    this.#object = probe as Record<string, unknown>;
    this.#valueTarget = value;
    this.#numberTargets = found as Target[];
    this.numbers.length = count;
    return true;
  }

  /** True for a template learned with `numbers: true`, whose `object()` is available. */
  get isObject(): boolean {
    return this.#object !== undefined;
  }

  /**
   * The parsed event of the last successful `match` of an object template (see the contract above): the learned
   * object with the matched delta and numbers written in. Reused by the next match; `undefined` for other templates.
   */
  object(value: string): Record<string, unknown> | undefined {
    const object = this.#object;
    if (object === undefined) return undefined;
    const vt = this.#valueTarget as Target;
    vt.parent[vt.key] = value;
    const targets = this.#numberTargets;
    const numbers = this.numbers;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i] as Target;
      t.parent[t.key] = numbers[i];
    }
    return object;
  }

  /** The delta string of `data` when it has this shape, else `undefined` (see the contract above). */
  match(data: string): string | undefined {
    const segments = this.#segments;
    const holes = this.#holes;
    let pos = 0;
    let valueStart = -1;
    let valueEnd = -1;
    let decode = false;
    let n = 0;
    for (let i = 0; ; i++) {
      const seg = segments[i] as string;
      // `indexOf(seg, pos) === pos` is the fastest prefix test in V8 (no substring; `startsWith` at an offset is slow). A
      // mismatch scans the rest of `data` once at most per segment.
      if (data.indexOf(seg, pos) !== pos) return undefined;
      pos += seg.length;
      if (i === holes.length) break;
      const kind = holes[i];
      if (kind === 'number') {
        const end = numberEnd(data, pos);
        if (end === -1) return undefined;
        this.numbers[n++] = numberValue(data, pos, end);
        pos = end;
        continue;
      }
      if (kind === 'integer') {
        const first = data.charCodeAt(pos);
        if (!(first >= 48 && first <= 57)) return undefined;
        pos++;
        if (first === 48) continue; // JSON: no leading zeros
        while (data.charCodeAt(pos) >= 48 && data.charCodeAt(pos) <= 57) pos++;
        continue;
      }
      if (data.charCodeAt(pos) !== 34 /* " */) return undefined;
      const from = pos;
      for (pos++; ; pos++) {
        const c = data.charCodeAt(pos);
        if (c === 34) break;
        if (!(c >= 32)) return undefined; // a control character, or the end of the data (NaN)
        if (c === 92 /* \ */) {
          if (kind !== 'value') return undefined;
          decode = true;
          pos++;
        }
      }
      pos++;
      if (kind === 'value') {
        valueStart = from;
        valueEnd = pos;
      }
    }
    if (pos !== data.length) return undefined;
    if (!decode) return data.slice(valueStart + 1, valueEnd - 1);
    return decodeLiteral(data.slice(valueStart, valueEnd));
  }
}

function decodeLiteral(literal: string): string | undefined {
  try {
    const value: unknown = JSON.parse(literal);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The template of `data` with the delta literal `value` and the ignored members as holes. An ignored member is a hole
 * only when its key occurs once, outside the delta literal, with a value of its kind written without escapes.
 */
function withHoles<Tag>(
  data: string,
  value: { start: number; end: number },
  tag: Tag,
  numbers: boolean,
): DeltaTemplate<Tag> | undefined {
  const spans: Array<{ start: number; end: number; kind: HoleKind }> = [{ ...value, kind: 'value' }];
  if (numbers) {
    // Every number token outside string literals (an object template reads them all and ignores nothing).
    for (let i = 0; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (c === 34) {
        for (i++; i < data.length && data.charCodeAt(i) !== 34; i++) if (data.charCodeAt(i) === 92) i++;
      } else if (c === 45 || (c >= 48 && c <= 57)) {
        const end = numberEnd(data, i);
        if (end === -1) return undefined;
        if (i >= value.end || end <= value.start) spans.push({ start: i, end, kind: 'number' });
        i = end - 1;
      }
    }
  }
  for (const [name, kind] of numbers ? [] : IGNORED_MEMBERS) {
    const marker = `"${name}":`;
    const at = data.indexOf(marker);
    if (at === -1 || data.indexOf(marker, at + 1) !== -1) continue;
    if (at < value.end && at + marker.length > value.start) continue;
    const start = at + marker.length;
    let end = start;
    if (kind === 'integer') {
      while (end < data.length && data.charCodeAt(end) >= 48 && data.charCodeAt(end) <= 57) end++;
      if (end === start || (data.charCodeAt(start) === 48 && end > start + 1)) continue;
    } else {
      if (data.charCodeAt(start) !== 34) continue;
      end = start + 1;
      while (end < data.length && data.charCodeAt(end) !== 34) {
        const c = data.charCodeAt(end);
        if (c < 32 || c === 92) break;
        end++;
      }
      if (data.charCodeAt(end) !== 34) continue;
      end++;
    }
    if (start < value.end && end > value.start) continue;
    spans.push({ start, end, kind });
  }
  spans.sort((a, b) => a.start - b.start);
  const segments: string[] = [];
  const holes: HoleKind[] = [];
  let pos = 0;
  for (const span of spans) {
    segments.push(data.slice(pos, span.start));
    holes.push(span.kind);
    pos = span.end;
  }
  segments.push(data.slice(pos));
  return new DeltaTemplate(segments, holes, tag);
}

/** The string literal that is the value of the member whose key ends at `from`, as `[start, end)` (quotes included). */
function literalAfterKey(data: string, from: number): { start: number; end: number } | undefined {
  let i = skipSpace(data, from);
  if (data.charCodeAt(i) !== 58 /* : */) return undefined;
  i = skipSpace(data, i + 1);
  if (data.charCodeAt(i) !== 34 /* " */) return undefined;
  const start = i;
  for (i++; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34) return { start, end: i + 1 };
  }
  return undefined;
}

/**
 * The end of the JSON number (RFC 8259 grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`) that starts at
 * `from`, or -1 when none starts there. What follows is not looked at (the template's next segment checks it).
 */
function numberEnd(data: string, from: number): number {
  let i = from;
  if (data.charCodeAt(i) === 45 /* - */) i++;
  let c = data.charCodeAt(i);
  if (c === 48) i++;
  else if (c >= 49 && c <= 57) {
    i++;
    while (isDigit(data.charCodeAt(i))) i++;
  } else return -1;
  if (data.charCodeAt(i) === 46 /* . */) {
    i++;
    if (!isDigit(data.charCodeAt(i))) return -1;
    while (isDigit(data.charCodeAt(i))) i++;
  }
  c = data.charCodeAt(i);
  if (c === 101 || c === 69 /* e E */) {
    i++;
    c = data.charCodeAt(i);
    if (c === 43 || c === 45) i++;
    if (!isDigit(data.charCodeAt(i))) return -1;
    while (isDigit(data.charCodeAt(i))) i++;
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * The value of the JSON number `data[start, end)` (valid per `numberEnd`), as `JSON.parse` gives it: short
 * non-negative integers are summed exactly (below 2^53), anything else goes through `Number`, whose string-to-double
 * conversion is the one `JSON.parse` uses (correctly rounded; `-0` stays `-0`, overflow gives ±Infinity).
 */
function numberValue(data: string, start: number, end: number): number {
  if (end - start <= 15) {
    let v = 0;
    let i = start;
    for (; i < end; i++) {
      const c = data.charCodeAt(i);
      if (c < 48 || c > 57) break;
      v = v * 10 + (c - 48);
    }
    if (i === end) return v;
  }
  return Number(data.slice(start, end));
}

function skipSpace(data: string, i: number): number {
  let j = i;
  for (;;) {
    const c = data.charCodeAt(j);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return j;
    j++;
  }
}

/** Templates kept per stream, most recently learned first. */
const MAX_TEMPLATES = 4;
/** Learning costs one extra parse of the event; a stream whose shapes keep changing stops learning after this many. */
const MAX_LEARNS = 32;

/**
 * The few delta shapes of one stream (e.g. an Anthropic thinking block then a text block). `match` returns true and
 * sets `tag`/`value` when `data` has a learned shape.
 */
export class DeltaTemplateSet<Tag> {
  readonly #templates: DeltaTemplate<Tag>[] = [];
  #learns = 0;
  /** Set by a successful `match`. */
  tag: Tag | undefined;
  /** Set by a successful `match`. */
  value = '';
  /** Set by a successful `match`: the template that matched. */
  template: DeltaTemplate<Tag> | undefined;

  match(data: string): boolean {
    const templates = this.#templates;
    for (let i = 0; i < templates.length; i++) {
      const t = templates[i] as DeltaTemplate<Tag>;
      const v = t.match(data);
      if (v !== undefined) {
        this.tag = t.tag;
        this.value = v;
        this.template = t;
        return true;
      }
    }
    return false;
  }

  /**
   * The parsed event of the last successful `match` when the matching template is an object template (see
   * `DeltaTemplate.object`), else `undefined`.
   */
  object(): Record<string, unknown> | undefined {
    return this.template?.object(this.value);
  }

  /** Never learn (so never match): every event takes the full parse. */
  disable(): void {
    this.#learns = MAX_LEARNS;
  }

  /** Learn the shape of a fully parsed event (see `DeltaTemplate.learn`); a no-op once the learning budget is spent. */
  learn(
    data: string,
    key: string,
    read: (parsed: Record<string, unknown>) => unknown,
    tag: Tag,
    options?: LearnOptions,
  ): void {
    if (this.#learns >= MAX_LEARNS) return;
    this.#learns++;
    const t = DeltaTemplate.learn(data, key, read, tag, options);
    if (t === undefined) return;
    this.#templates.unshift(t);
    if (this.#templates.length > MAX_TEMPLATES) this.#templates.pop();
  }
}
