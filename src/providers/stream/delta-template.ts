/**
 * A learned shape of a streaming delta event, so the common case skips `JSON.parse` of the whole event.
 *
 * Providers send thousands of events that differ only in one string: Anthropic
 * `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"…"}}`, an OpenAI Chat chunk whose id,
 * model, fingerprint and `finish_reason: null` repeat in every chunk. After one event of that shape was parsed in full,
 * `DeltaTemplate.learn` records the text before the delta's string literal (`prefix`) and after it (`suffix`), and
 * proves the literal's position by parsing `prefix + probe + suffix` and reading the probe back through the same field.
 *
 * Contract of `match(data)`: it returns a string only when `data` is exactly `prefix + L + suffix` where `L` is one
 * valid JSON string literal — then `data` is valid JSON equal to the learned event except for that field, and the
 * returned value is `JSON.parse(L)`. Anything else (another shape, an escape that does not decode, a raw control
 * character, an unterminated literal) returns `undefined` and the caller parses `data` in full, so the fast path can
 * never accept what `JSON.parse` would reject nor read a different field.
 */

const PROBE = 'panto\u0001probe';
const PROBE_LITERAL = JSON.stringify(PROBE);

export class DeltaTemplate<Tag> {
  readonly prefix: string;
  readonly suffix: string;
  /** What the caller needs to apply a matched value (block index, delta kind...). */
  readonly tag: Tag;
  readonly #minLength: number;

  private constructor(prefix: string, suffix: string, tag: Tag) {
    this.prefix = prefix;
    this.suffix = suffix;
    this.tag = tag;
    this.#minLength = prefix.length + suffix.length + 2;
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
        const prefix = data.slice(0, literal.start);
        const suffix = data.slice(literal.end);
        try {
          const probe: unknown = JSON.parse(prefix + PROBE_LITERAL + suffix);
          if (
            probe !== null &&
            typeof probe === 'object' &&
            read(probe as Record<string, unknown>) === PROBE
          ) {
            return new DeltaTemplate(prefix, suffix, tag);
          }
        } catch {
          // not this occurrence
        }
      }
      at = at === 0 ? -1 : data.lastIndexOf(quotedKey, at - 1);
    }
    return undefined;
  }

  /** The delta string of `data` when it has this shape, else `undefined` (see the contract above). */
  match(data: string): string | undefined {
    const len = data.length;
    if (len < this.#minLength) return undefined;
    const start = this.prefix.length;
    const end = len - this.suffix.length; // one past the closing quote
    if (data.charCodeAt(start) !== 34 || data.charCodeAt(end - 1) !== 34) return undefined;
    // `slice(...) ===` compares with a native memory compare; `startsWith` walks the prefix far more slowly in V8.
    if (data.slice(0, start) !== this.prefix || data.slice(end) !== this.suffix) return undefined;
    // Plain text (no quote, backslash or control character) is the literal's content as is; anything else is decoded
    // (or rejected) by JSON.parse of the literal alone.
    for (let i = start + 1; i < end - 1; i++) {
      const c = data.charCodeAt(i);
      if (c === 34 || c === 92 || c < 32) return decodeLiteral(data.slice(start, end));
    }
    return data.slice(start + 1, end - 1);
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
