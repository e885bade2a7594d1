/**
 * The conversation model: messages, blocks and the parts they hold. Plain JSON-serialisable data (no classes, no
 * Uint8Array) so that the session log, compaction and every provider serializer read the same shapes.
 *
 * Invariants:
 * - Images and documents appear only in user messages and in tool results, never in system or assistant messages.
 * - A stored image is already valid for every provider we target (format, side, bytes): base64 happens once, when a
 *   part is stored, and serializers place the string as is.
 */

import type { ResultPart } from './tool.js';

export type { ResultPart };

/** Image types every provider accepts. */
export type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  mediaType: ImageMediaType;
  /** Base64 (standard alphabet, padded, no data: prefix, no line breaks). */
  data: string;
  width: number;
  height: number;
}

export interface DocumentPart {
  type: 'document';
  mediaType: 'application/pdf';
  /** Base64 of the PDF file. */
  data: string;
  /** File name shown to the model, e.g. `report.pdf`. */
  name?: string;
  /** Page count when known. */
  pages?: number;
}

/** What a conversation stores; what serializers read. */
export type StoredPart = TextPart | ImagePart | DocumentPart;

export interface TextBlock {
  type: 'text';
  text: string;
}

/** Model reasoning returned by some providers; `signature` must be sent back unchanged where a provider needs it. */
export interface ThinkingBlock {
  type: 'thinking';
  text: string;
  signature?: string;
  /** True when the provider returned only an opaque/redacted form (kept in `signature`). */
  redacted?: boolean;
}

export interface ToolCallBlock {
  type: 'tool_call';
  /** Provider-assigned call id (Anthropic `tool_use.id`, OpenAI `call_id`, Gemini `functionCall.id` or synthesised). */
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Provider-specific opaque data to echo back (e.g. Gemini `thoughtSignature`). */
  providerData?: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  toolName: string;
  parts: StoredPart[];
  isError: boolean;
  /** Host-facing presentation data (e.g. `{path}`), persisted, never sent to a model. Never holds image bytes. */
  meta?: Record<string, unknown>;
  /**
   * The approval decision for a call that needed one (`ToolDecl.needsApproval`): persisted with the result, never sent
   * to a model. A declined call did not run; its result is the error `declined by the user: <reason>`.
   */
  approval?: ToolApproval;
}

/** How a call that needed approval was decided. */
export interface ToolApproval {
  approved: boolean;
  /** Why it was declined (as the host or the user said). */
  reason?: string;
}

/** Token usage a provider reported for one answer. The context it measured is the sum of all four fields. */
export interface Usage {
  /** Input tokens NOT read from a prompt cache (every surface's parser subtracts cached tokens). */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from a prompt cache. */
  cacheReadTokens?: number;
  /** Input tokens written to a prompt cache (Anthropic). */
  cacheWriteTokens?: number;
}

/**
 * Why the model stopped: `end` (finished), `tool_use` (wants tools run), `max_tokens`, `refusal`,
 * `aborted` (cancelled by the host), `error`, `other`.
 */
export type StopReason = 'end' | 'tool_use' | 'max_tokens' | 'refusal' | 'aborted' | 'error' | 'other';

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: StoredPart[];
}

export interface AssistantMessage {
  role: 'assistant';
  content: Array<TextBlock | ThinkingBlock | ToolCallBlock>;
  stopReason?: StopReason;
  usage?: Usage;
  /** Model id that produced this message. */
  model?: string;
  /** Provider error text when `stopReason` is `error`. */
  errorMessage?: string;
}

/** The results of one assistant turn's tool calls, in call order. */
export interface ToolResultsMessage {
  role: 'tool';
  results: ToolResultBlock[];
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultsMessage;

export interface Conversation {
  messages: Message[];
}

/** A user message from text and/or parts. */
export function userMessage(...content: Array<string | StoredPart>): UserMessage {
  return {
    role: 'user',
    content: content.map((c) => (typeof c === 'string' ? { type: 'text', text: c } : c)),
  };
}

/** Describe one stored part in prose, e.g. `[image: image/png 1200x800]`, `[document: report.pdf]`. */
export function describePart(part: StoredPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
      return `[image: ${part.mediaType} ${part.width}x${part.height}]`;
    case 'document': {
      const pages = part.pages === undefined ? '' : `, ${part.pages} page${part.pages === 1 ? '' : 's'}`;
      return `[document: ${part.name ?? part.mediaType}${pages}]`;
    }
  }
}

/** Parts as prose for readers that only take text (summaries, transcripts, text-only models). Joined by newlines. */
export function partsToText(parts: readonly StoredPart[]): string {
  return parts.map(describePart).join('\n');
}

/** The tool calls of an assistant message, in order. */
export function toolCallsOf(message: AssistantMessage): ToolCallBlock[] {
  return message.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
}

/** The result of a call that failed or did not run: one text part saying why, `isError: true`. */
export function toolErrorResult(call: Pick<ToolCallBlock, 'id' | 'name'>, text: string): ToolResultBlock {
  return {
    type: 'tool_result',
    toolUseId: call.id,
    toolName: call.name,
    parts: [{ type: 'text', text }],
    isError: true,
  };
}

/** The concatenated text of an assistant message. */
export function assistantText(message: AssistantMessage): string {
  return message.content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

/**
 * How a provider charges for an image, used by token estimates: `fixed` (a flat estimate), `anthropic`
 * (ceil(w/28)*ceil(h/28) after its resize), `openai-tile` (85 + 170 per 512 px tile after fit-2048/short-768),
 * `openai-patch` (ceil(w/32)*ceil(h/32), capped), `gemini` (258 per 768 px tile, 258 when both sides <= 384).
 */
export type ImageTokenRule = 'fixed' | 'anthropic' | 'openai-tile' | 'openai-patch' | 'gemini';
