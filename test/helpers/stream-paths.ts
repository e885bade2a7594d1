/**
 * Run the same SSE events through a stream parser twice — with learned delta templates (the fast path) and with
 * `deltaTemplates: false` (every event parsed in full by `JSON.parse`, the reference) — and return both outcomes in
 * one comparable shape: every emitted `StreamEvent`, then the finished message or the error message and the partial.
 */

import type { AssistantMessage } from '../../src/conversation.js';
import { AnthropicStreamParser } from '../../src/providers/anthropic-messages/anthropic-stream.js';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import type { StreamParserOptions, SurfaceStreamParser } from '../../src/providers/common/surface-parser.js';
import { GeminiStreamParser } from '../../src/providers/gemini/gemini-stream.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { OpenAIChatStreamParser } from '../../src/providers/openai-chat/openai-chat-stream.js';
import { OpenAIResponsesStreamParser } from '../../src/providers/openai-responses/openai-responses-stream.js';
import { type SseEvent, SseParser } from '../../src/providers/transport/sse-parser.js';
import { seededRandom } from './media-corruption.js';

export interface PathOutcome {
  events: StreamEvent[];
  complete: boolean;
  result?: AssistantMessage;
  error?: string;
  partial?: AssistantMessage;
}

function parserFor(
  api: ModelApi,
  emit: (e: StreamEvent) => void,
  options: StreamParserOptions,
): SurfaceStreamParser {
  switch (api) {
    case 'anthropic-messages':
      return new AnthropicStreamParser(emit, options);
    case 'openai-chat':
      return new OpenAIChatStreamParser(emit, options);
    case 'openai-responses':
      return new OpenAIResponsesStreamParser(emit, options);
    case 'gemini':
      return new GeminiStreamParser(emit, options);
  }
}

/** `events` through one parser; `deltaTemplates` picks the path. */
export function runPath(api: ModelApi, events: SseEvent[], deltaTemplates: boolean): PathOutcome {
  const out: StreamEvent[] = [];
  const parser = parserFor(api, (e) => out.push(e), { deltaTemplates });
  try {
    for (const e of events) parser.accept(e);
    return { events: out, complete: parser.complete, result: parser.result() };
  } catch (err) {
    return {
      events: out,
      complete: parser.complete,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      partial: parser.partial('error'),
    };
  }
}

/** Both paths over `events`: `{ fast, reference }`. */
export function runBothPaths(
  api: ModelApi,
  events: SseEvent[],
): { fast: PathOutcome; reference: PathOutcome } {
  return { fast: runPath(api, events, true), reference: runPath(api, events, false) };
}

/** The SSE events of a `text/event-stream` body. */
export function sseEvents(body: string): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((e) => events.push(e));
  parser.push(body);
  parser.end();
  return events;
}

/**
 * Deep equality that `toEqual` does not give: same keys in the same order, numbers compared with `Object.is` (so
 * `-0` differs from `0`), same prototypes. Returns the path of the first difference, or `undefined`.
 */
export function firstDifference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (typeof a !== typeof b) return `${path}: ${typeof a} vs ${typeof b}`;
  if (a === null || b === null || typeof a !== 'object') {
    return Object.is(a, b) ? undefined : `${path}: ${String(a)} vs ${String(b)}`;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: prototypes differ`;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.join('\u0000') !== kb.join('\u0000')) return `${path}: keys [${ka}] vs [${kb}]`;
  for (const k of ka) {
    const d = firstDifference(
      (a as Record<string, unknown>)[k],
      (b as Record<string, unknown>)[k],
      `${path}.${k}`,
    );
    if (d !== undefined) return d;
  }
  return undefined;
}

/** A small seeded PRNG, so mutation tests are reproducible. */
export const prng = seededRandom;

/** Edits a hostile or careless server might make to one event's data: numbers, escapes, whitespace, truncation. */
const EDITS: Array<(data: string, rnd: () => number) => string> = [
  // Replace one number with a hostile one.
  (d, rnd) => {
    const nums = [...d.matchAll(/-?\d+(\.\d+)?([eE][+-]?\d+)?/g)];
    if (nums.length === 0) return d;
    const m = nums[Math.floor(rnd() * nums.length)] as RegExpMatchArray;
    const hostile = [
      '123456789012345678901234567890',
      '1e400',
      '-1e400',
      '-0',
      '0.0',
      '-12',
      '1.5e-7',
      '9007199254740993',
      '1E+2',
      '01',
      '1.',
      '.5',
      '+1',
      '-',
      '1e',
      'NaN',
      '0x10',
      '1_000',
      '"7"',
      'null',
    ];
    const h = hostile[Math.floor(rnd() * hostile.length)] as string;
    return d.slice(0, m.index) + h + d.slice((m.index ?? 0) + m[0].length);
  },
  // Escape one character of the text as \uXXXX (or an astral pair, or a lone surrogate).
  (d, rnd) => {
    const at = d.indexOf('"text":"');
    if (at === -1) return d;
    const esc = ['\\u00e9', '\\ud83d\\ude00', '\\ud800', '\\u0000', '\\"', '\\\\', '\\/', '\\q', '\\u12'];
    const pos = at + 8;
    return d.slice(0, pos) + (esc[Math.floor(rnd() * esc.length)] as string) + d.slice(pos);
  },
  // Whitespace after a colon or comma (valid JSON, another text).
  (d, rnd) => {
    const seps = [...d.matchAll(/[:,]/g)];
    if (seps.length === 0) return d;
    const m = seps[Math.floor(rnd() * seps.length)] as RegExpMatchArray;
    const ws = [' ', '\n', '\t', '\r\n  '][Math.floor(rnd() * 4)] as string;
    return d.slice(0, (m.index ?? 0) + 1) + ws + d.slice((m.index ?? 0) + 1);
  },
  // Truncate.
  (d, rnd) => d.slice(0, Math.floor(rnd() * d.length)),
  // Reorder the members of the top-level object.
  (d) => {
    try {
      const v = JSON.parse(d);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return d;
      const keys = Object.keys(v).reverse();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(v[k])}`).join(',')}}`;
    } catch {
      return d;
    }
  },
  // Drop or duplicate one character.
  (d, rnd) => {
    const i = Math.floor(rnd() * d.length);
    return rnd() < 0.5 ? d.slice(0, i) + d.slice(i + 1) : d.slice(0, i + 1) + d.slice(i);
  },
];

/** `events` with a few data fields edited (see `EDITS`), the rest unchanged. */
export function mutate(events: SseEvent[], rnd: () => number, edits = 2): SseEvent[] {
  const out = events.map((e) => ({ ...e }));
  for (let k = 0; k < edits && out.length > 0; k++) {
    const i = Math.floor(rnd() * out.length);
    const e = out[i] as SseEvent;
    const edit = EDITS[Math.floor(rnd() * EDITS.length)] as (typeof EDITS)[number];
    out[i] = { ...e, data: edit(e.data, rnd) };
  }
  return out;
}
