/** Small pieces the four serializers share: data URLs, tool-result text, tool schemas. */

import type { DocumentPart, ImagePart } from '../../conversation.js';
import { PantoError } from '../../errors.js';
import type { JsonSchema, ToolDecl } from '../../tool.js';
import { resolveModel } from '../model/model-catalog.js';
import type { ModelInfo } from '../model/model-info.js';
import type { PreparedPart, PreparedResult } from './prepared.js';

/** Text sent for a tool result that has no parts at all. */
export const EMPTY_RESULT_TEXT = '(no output)';

/** `data:<type>;base64,<data>` by concatenation — the stored base64 is placed as is, never re-encoded. */
export function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

/** Data URLs already built for stored parts (see `partDataUrl`). */
const dataUrls = new WeakMap<ImagePart | DocumentPart, { data: string; url: string }>();

/**
 * The data URL of a stored image/PDF, built once per part and reused by every later request. An agent sends the whole
 * history each turn; rebuilding a fresh multi-megabyte `data:` string per part per request made `JSON.stringify` of a
 * Chat/Responses body ~2x the cost of the same body with reused strings (bench:serialize). The cache is keyed weakly
 * by the part object (freed with it) and checked against the part's current `data`. Cost: one extra string of the
 * base64's size per part sent through a data-URL surface, for as long as the part is alive.
 */
export function partDataUrl(part: ImagePart | DocumentPart): string {
  const cached = dataUrls.get(part);
  if (cached !== undefined && cached.data === part.data) return cached.url;
  const url = dataUrl(part.mediaType, part.data);
  dataUrls.set(part, { data: part.data, url });
  return url;
}

/** The non-empty text parts (including placeholders) of a prepared part list, joined by newlines. */
export function textOf(parts: readonly PreparedPart[]): string {
  let out = '';
  for (const p of parts) {
    if (p.kind !== 'text' || p.text.length === 0) continue;
    out = out.length === 0 ? p.text : `${out}\n${p.text}`;
  }
  return out;
}

/** How many images and documents a prepared part list still carries. */
export function countMedia(parts: readonly PreparedPart[]): { images: number; documents: number } {
  let images = 0;
  let documents = 0;
  for (const p of parts) {
    if (p.kind === 'image') images++;
    else if (p.kind === 'document') documents++;
  }
  return { images, documents };
}

/** `1 image`, `2 images and 1 PDF document`, ... */
export function describeAttachments(count: { images: number; documents: number }): string {
  const items: string[] = [];
  if (count.images > 0) items.push(`${count.images} image${count.images === 1 ? '' : 's'}`);
  if (count.documents > 0) items.push(`${count.documents} PDF document${count.documents === 1 ? '' : 's'}`);
  return items.join(' and ');
}

/**
 * Text of a result on surfaces that have no error flag (OpenAI): `Error: ` in front of an error result's text unless
 * it already says so.
 */
export function flagError(result: PreparedResult, text: string): string {
  if (!result.isError || /^error\b/i.test(text)) return text;
  return `Error: ${text}`;
}

/** The label that introduces a tool call's attachments where they cannot sit inside the result itself. */
export function attachmentsLabel(result: PreparedResult): string {
  return `Attachments from tool call ${result.toolUseId} (${result.toolName}):`;
}

/**
 * A tool's input schema as an object schema.
 * @throws PantoError `ERR_INVALID_ARGUMENT` when it declares a `type` other than `object`.
 */
export function objectSchema(tool: ToolDecl): JsonSchema & { type: 'object' } {
  const schema = tool.inputSchema;
  if (schema.type !== undefined && schema.type !== 'object') {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `tool '${tool.name}': inputSchema must describe an object (type 'object'), got type ${JSON.stringify(schema.type)}`,
    );
  }
  return schema.type === 'object'
    ? (schema as JsonSchema & { type: 'object' })
    : { ...schema, type: 'object' };
}

/** A `ModelInfo` as given, or the catalog's (or the text-only default) for an id. */
export function modelOf(model: ModelInfo | string): ModelInfo {
  return typeof model === 'string' ? resolveModel(model) : model;
}

/**
 * A tool-call id a surface accepts, derived deterministically from a stored id (so a call and its result still match):
 * characters outside `allowed` become `_`; an id longer than `maxLength` keeps its head and gets an FNV-1a hash of the
 * whole id as tail. Ids that already fit are returned unchanged.
 */
export function surfaceCallId(id: string, allowed: RegExp | undefined, maxLength: number): string {
  const cleaned = allowed ? id.replace(allowed, '_') : id;
  if (cleaned === id && id.length > 0 && id.length <= maxLength) return id;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const tail = `_${hash.toString(16).padStart(8, '0')}`;
  return `${cleaned.slice(0, Math.max(0, maxLength - tail.length))}${tail}`;
}

/**
 * A document's name as a wire title/filename: `undefined` for an absent, empty or whitespace-only name; a name longer
 * than `maxLength` UTF-16 units is shortened to fit — its head, an ellipsis, and its extension (up to 16 characters)
 * kept — without splitting a surrogate pair.
 */
export function documentName(name: string | undefined, maxLength: number): string | undefined {
  if (name === undefined || name.trim() === '') return undefined;
  if (name.length <= maxLength) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  let head = name.slice(0, Math.max(0, maxLength - ext.length - 1));
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
  return `${head}…${ext}`;
}

/**
 * The `filename` OpenAI gets for a PDF (`input_file` / `file` parts): the stored name, `document.pdf` when it is
 * absent, empty or blank. The spec sets no length limit; names over 255 characters (the usual file-system limit) are
 * shortened all the same.
 */
export function pdfFilename(name: string | undefined): string {
  return documentName(name, 255) ?? 'document.pdf';
}

/**
 * A tool name in a history call/result as a surface accepts it, derived deterministically (a call and its result keep
 * the same name; see `surfaceCallId`): characters outside `[a-zA-Z0-9_-]` become `_`, a name over `maxLength` or an
 * empty one gets a hash tail. OpenAI Chat rejects other characters in `messages[].tool_calls[].function.name`
 * ("string does not match pattern ^[a-zA-Z0-9_-]+$", mcp-use/mcp-use#90); Gemini's `FunctionCall.name` is
 * `^[a-zA-Z0-9_-]{1,64}$`; Anthropic's `tool_use.name` is 1–200 characters. A name that fits is unchanged — and every
 * tool a surface can declare fits, so only names recorded through another provider change.
 */
export function surfaceToolName(name: string, maxLength: number): string {
  return surfaceCallId(name, /[^a-zA-Z0-9_-]/g, maxLength);
}

/** `text` with each lone surrogate replaced by U+FFFD (the APIs reject JSON holding one); the same string if none. */
export function wellFormed(text: string): string {
  // ES2024 string methods (Node >= 20); the project's TypeScript lib predates them.
  const s = text as unknown as { isWellFormed(): boolean; toWellFormed(): string };
  return s.isWellFormed() ? text : s.toWellFormed();
}
