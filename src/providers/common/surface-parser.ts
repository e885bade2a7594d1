/**
 * The shape shared by the four per-surface stream parsers.
 *
 * Contract: `accept` is fed SSE events in order and emits `StreamEvent`s through the `MessageBuilder`'s callback; it
 * throws a `ProviderError` when the stream carries an error (Anthropic `error` event, Responses `error` /
 * `response.failed`, an `{error}` chunk on Chat or Gemini). `complete` turns true when the surface's own end marker
 * was seen (`message_stop`, `[DONE]` or a finish reason, `response.completed`/`incomplete`, a Gemini `finishReason`).
 * `ended` turns true on the event after which nothing more is expected. `result()` returns the finished message; `partial()` the message so far, for an error or abort.
 */

import type { AssistantMessage, StopReason } from '../../conversation.js';
import { ProviderError } from '../transport/provider-error.js';
import type { SseEvent } from '../transport/sse-parser.js';
import type { MessageBuilder } from './message-builder.js';

export interface SurfaceStreamParser {
  readonly builder: MessageBuilder;
  readonly complete: boolean;
  /**
   * The surface's last event was seen: nothing more belongs to the response (Anthropic `message_stop`, Chat `[DONE]`
   * or the usage chunk after the finish reason, Responses `response.completed`/`incomplete`, a Gemini finish). The
   * transport stops waiting for the body's end soon after, so a server that keeps the connection open (or sends
   * keep-alives) after it cannot hang the turn. `complete` but not yet `ended` (a Chat finish reason, before its usage
   * chunk): the transport waits a bounded grace for the rest, then ends the turn with what it has.
   */
  readonly ended: boolean;
  accept(event: SseEvent): void;
  result(): AssistantMessage;
  partial(stopReason: Extract<StopReason, 'error' | 'aborted'>, errorMessage?: string): AssistantMessage;
}

/** Options of the per-surface parser constructors (not part of the package API). */
export interface StreamParserOptions {
  /**
   * Learn delta templates and apply matching events without a full `JSON.parse` (default true). False parses every
   * event in full: the reference path the tests compare the fast path against.
   */
  deltaTemplates?: boolean;
}

/**
 * True for the `[DONE]` sentinel OpenAI-compatible servers (and openai-node's own Responses fixtures) send after the
 * last event. Every parser ignores it, as the official SDKs do: it never fails or completes a stream by itself.
 */
export function isDoneSentinel(data: string): boolean {
  return data === '[DONE]';
}

/** SSE `event` names of events that only keep a connection alive. */
const KEEP_ALIVE_EVENTS: ReadonlySet<string> = new Set(['ping', 'keepalive', 'response.keep_alive']);

/** A `data` object whose `type` (its first member, as every sender writes it) names a keep-alive. */
const KEEP_ALIVE_DATA = /^\{\s*"type"\s*:\s*"(?:ping|keepalive|response\.keep_alive)"\s*[,}]/;

/**
 * True for an event that carries nothing of the response and only keeps the connection alive: Anthropic's `ping`
 * (`event: ping`, `{"type": "ping"}`, sent every ~15–30 s while a model thinks), the OpenAI Responses `keepalive`
 * event (`{"type":"keepalive","sequence_number":n}`, undocumented, sent on long-running requests; openai-node #1964)
 * and OpenRouter's former Responses `response.keep_alive`. SSE comments (`: ping`, `: OPENROUTER PROCESSING`) never
 * become events at all. Such events do not count as progress (see `progressTimeoutMs`). Every event goes through
 * here: the anchored pattern rejects any other event within its first few characters, without parsing it.
 */
export function isKeepAliveEvent(event: SseEvent): boolean {
  return KEEP_ALIVE_EVENTS.has(event.event) || KEEP_ALIVE_DATA.test(event.data);
}

/** The `type` values of keep-alive `data` objects (see `KEEP_ALIVE_DATA`). */
const KEEP_ALIVE_TYPES = ['ping', 'keepalive', 'response.keep_alive'];

/**
 * True while an event that has not fully arrived may still turn out to be a keep-alive: `head` is what
 * `SseParser.pendingHead` gives (`undefined`: not judgeable yet). A keep-alive cut across two reads
 * (`data: {"type":"pi` … `ng"}`) must not count as progress for its first half; an event whose head already rules
 * out a keep-alive (a 20 MB base64 image still arriving) does.
 */
export function mayBeKeepAlive(head: { event: string; data: string } | undefined): boolean {
  if (head === undefined) return true;
  if (KEEP_ALIVE_EVENTS.has(head.event)) return true;
  const p = head.data;
  if (KEEP_ALIVE_DATA.test(p)) return true;
  // Is `p` a prefix of `{ "type" : "<keep-alive type>"` followed by white space? Walk the pattern by hand.
  let i = 0;
  const skipSpace = () => {
    while (i < p.length && /\s/.test(p.charAt(i))) i++;
  };
  /** Consume `lit` (or the part of it `p` still has); false on a mismatch. */
  const take = (lit: string) => {
    const n = Math.min(lit.length, p.length - i);
    if (p.slice(i, i + n) !== lit.slice(0, n)) return false;
    i += n;
    return true;
  };
  for (const step of ['{', ' ', '"type"', ' ', ':', ' ', '"']) {
    if (step === ' ') skipSpace();
    else if (!take(step)) return false;
    if (i === p.length) return true;
  }
  const rest = p.slice(i);
  return KEEP_ALIVE_TYPES.some((t) => {
    const closed = `${t}"`;
    return closed.startsWith(rest) || (rest.startsWith(closed) && /^\s*$/.test(rest.slice(closed.length)));
  });
}

/** Parse an SSE `data` field as a JSON object, or throw a non-retryable `ProviderError` quoting it. */
export function parseJsonData(api: string, data: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(data);
    if (v !== null && typeof v === 'object') return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ProviderError({
    api,
    providerMessage: `malformed stream event (not a JSON object): ${data.slice(0, 200)}`,
    retryable: false,
  });
}
