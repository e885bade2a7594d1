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
 */

const PROBE = 'panto\u0001probe';
const PROBE_LITERAL = JSON.stringify(PROBE);

/** Members no stream parser reads that change in every event, with the JSON kind of their value. */
const IGNORED_MEMBERS: ReadonlyArray<[string, HoleKind]> = [
  ['obfuscation', 'string'],
  ['sequence_number', 'integer'],
];

export type HoleKind = 'value' | 'string' | 'integer';

export class DeltaTemplate<Tag> {
  /** Fixed text: `segments[0] hole[0] segments[1] ... hole[n-1] segments[n]`. */
  readonly #segments: string[];
  readonly #holes: HoleKind[];
  /** What the caller needs to apply a matched value (block index, delta kind...). */
  readonly tag: Tag;

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
  ): DeltaTemplate<Tag> | undefined {
    const quotedKey = `"${key}"`;
    let at = data.lastIndexOf(quotedKey);
    // Try the last few occurrences of the key (the delta field is normally the last one).
    for (let tries = 0; at !== -1 && tries < 4; tries++) {
      const literal = literalAfterKey(data, at + quotedKey.length);
      if (literal !== undefined) {
        const template = withHoles(data, literal, tag);
        if (template !== undefined && proves(template, read)) return template;
      }
      at = at === 0 ? -1 : data.lastIndexOf(quotedKey, at - 1);
    }
    return undefined;
  }

  /** The text of the learned shape with `fill(kind)` in each hole. */
  fill(fill: (kind: HoleKind) => string): string {
    let out = this.#segments[0] as string;
    for (let i = 0; i < this.#holes.length; i++) {
      out += fill(this.#holes[i] as HoleKind) + (this.#segments[i + 1] as string);
    }
    return out;
  }

  /** The delta string of `data` when it has this shape, else `undefined` (see the contract above). */
  match(data: string): string | undefined {
    const segments = this.#segments;
    const holes = this.#holes;
    let pos = 0;
    let valueStart = -1;
    let valueEnd = -1;
    let decode = false;
    for (let i = 0; ; i++) {
      const seg = segments[i] as string;
      // `slice(...) ===` compares with a native memory compare; `startsWith` walks the text far more slowly in V8.
      if (data.slice(pos, pos + seg.length) !== seg) return undefined;
      pos += seg.length;
      if (i === holes.length) break;
      const kind = holes[i];
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
): DeltaTemplate<Tag> | undefined {
  const spans: Array<{ start: number; end: number; kind: HoleKind }> = [{ ...value, kind: 'value' }];
  for (const [name, kind] of IGNORED_MEMBERS) {
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

/**
 * True when the probe string in the value hole (and other values in the ignored holes) parses and `read` finds the
 * probe: the value hole is the field the caller reads, whatever the ignored members hold.
 */
function proves<Tag>(
  template: DeltaTemplate<Tag>,
  read: (parsed: Record<string, unknown>) => unknown,
): boolean {
  try {
    const probe: unknown = JSON.parse(
      template.fill((kind) => (kind === 'value' ? PROBE_LITERAL : kind === 'integer' ? '7' : '"x"')),
    );
    return probe !== null && typeof probe === 'object' && read(probe as Record<string, unknown>) === PROBE;
  } catch {
    return false;
  }
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

  match(data: string): boolean {
    const templates = this.#templates;
    for (let i = 0; i < templates.length; i++) {
      const t = templates[i] as DeltaTemplate<Tag>;
      const v = t.match(data);
      if (v !== undefined) {
        this.tag = t.tag;
        this.value = v;
        return true;
      }
    }
    return false;
  }

  /** Learn the shape of a fully parsed event (see `DeltaTemplate.learn`); a no-op once the learning budget is spent. */
  learn(data: string, key: string, read: (parsed: Record<string, unknown>) => unknown, tag: Tag): void {
    if (this.#learns >= MAX_LEARNS) return;
    this.#learns++;
    const t = DeltaTemplate.learn(data, key, read, tag);
    if (t === undefined) return;
    this.#templates.unshift(t);
    if (this.#templates.length > MAX_TEMPLATES) this.#templates.pop();
  }
}
