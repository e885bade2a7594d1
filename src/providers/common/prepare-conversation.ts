/**
 * The surface-independent first half of every serializer: pair tool calls with their results, skip failed turns,
 * hoist system messages, and decide which images/PDFs go into this request (capability gating, host omissions and
 * the request guard — see media-plan.ts). Pure: reads the conversation, never changes it.
 */

import type {
  AssistantMessage,
  Conversation,
  DocumentPart,
  ImageMediaType,
  ImagePart,
  Message,
  StoredPart,
  ToolCallBlock,
  ToolResultBlock,
} from '../../conversation.js';
import { resolveModel } from '../model/model-catalog.js';
import type { ModelInfo } from '../model/model-info.js';
import { type MediaItem, planMedia } from './media-plan.js';
import type {
  PreparedConversation,
  PreparedDocument,
  PreparedImage,
  PreparedPart,
  PreparedResult,
  PreparedTurn,
} from './prepared.js';
import { partKey, type SerializeOptions, type SerializeWarning } from './serialize-options.js';
import { wellFormed } from './serializer-common.js';

/** Text of the error result sent for a tool call that has none in the conversation. */
export const MISSING_RESULT_TEXT = 'No result was recorded for this tool call (the turn was interrupted).';

export function messagesOf(conversation: Conversation | readonly Message[]): readonly Message[] {
  return Array.isArray(conversation) ? conversation : (conversation as Conversation).messages;
}

export function prepareConversation(
  conversation: Conversation | readonly Message[],
  model: ModelInfo,
  options: SerializeOptions,
): PreparedConversation {
  const messages = messagesOf(conversation);
  const warnings: SerializeWarning[] = [];
  const turns: PreparedTurn[] = [];
  const media: MediaItem[] = [];
  const systems: string[] = options.system ? [options.system] : [];
  let textBytes = (options.system?.length ?? 0) + (options.tools ? JSON.stringify(options.tools).length : 0);

  /**
   * The open turn's calls (ids as sent), the ids their results name (before `uniqueCallIds`), and the results found,
   * by call index.
   */
  let pending:
    | { calls: ToolCallBlock[]; storedIds: string[]; results: Array<PreparedResult | undefined> }
    | undefined;
  const skippedCalls = new Set<string>();
  /** Call ids sent so far: an id used again (in one message or a later turn) is sent under a new one. */
  const sentIds = new Set<string>();
  const orphans: string[] = [];
  const missing: string[] = [];

  const flush = (): void => {
    if (!pending) return;
    const results = pending.calls.map((call, k): PreparedResult => {
      const found = pending?.results[k];
      if (found) return found;
      missing.push(call.id);
      return {
        toolUseId: call.id,
        toolName: call.name,
        isError: true,
        parts: [{ kind: 'text', text: MISSING_RESULT_TEXT }],
        synthetic: true,
      };
    });
    turns.push({ role: 'tool', results });
    pending = undefined;
  };

  /** Parts replaced because they cannot be sent at all (malformed, unknown type, bytes that are no image/PDF). */
  const rejected = new Map<string, string[]>();
  const cap = textCap(model);
  /** Keys of the text parts cut to `cap`. */
  const cut: string[] = [];

  const prepareParts = (
    parts: readonly StoredPart[],
    messageIndex: number,
    blockIndex: number,
  ): PreparedPart[] => {
    const out: PreparedPart[] = new Array(parts.length);
    /** Text characters this message / result may still carry (see `textCap`). */
    let room = cap;
    for (let partIndex = 0; partIndex < parts.length; partIndex++) {
      const ref = { messageIndex, blockIndex, partIndex };
      const checked = checkPart(parts[partIndex]);
      if ('rejected' in checked) {
        out[partIndex] = { kind: 'text', text: `[${checked.noun} omitted: ${checked.rejected}]` };
        const reason = `${checked.noun}: ${checked.rejected}`;
        const keys = rejected.get(reason) ?? [];
        keys.push(partKey(ref));
        rejected.set(reason, keys);
        continue;
      }
      const part = checked.part;
      if (part.type === 'text') {
        let text = part.text;
        if (text.length > room) {
          text = cutText(text, room, model);
          cut.push(partKey(ref));
        }
        room = Math.max(0, room - text.length);
        out[partIndex] = { kind: 'text', text };
        textBytes += text.length + 32;
        continue;
      }
      const key = partKey(ref);
      const prepared: PreparedImage | PreparedDocument =
        part.type === 'image' ? { kind: 'image', part, key } : { kind: 'document', part, key };
      out[partIndex] = prepared;
      media.push({ prepared, list: out, index: partIndex, ref });
    }
    return out;
  };

  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    switch (message.role) {
      case 'system':
        systems.push(wellFormed(message.content));
        textBytes += message.content.length;
        break;
      case 'user':
        flush();
        turns.push({ role: 'user', parts: prepareParts(message.content, i, 0) });
        break;
      case 'assistant': {
        flush();
        const cleaned = cleanAssistant(message);
        const calls = cleaned.message.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
        const failed = message.stopReason === 'error' || message.stopReason === 'aborted';
        if (failed || cleaned.problem !== undefined) {
          for (const call of calls) skippedCalls.add(call.id);
          const why = failed
            ? message.stopReason === 'error'
              ? 'ended in an error'
              : 'was aborted'
            : `holds a tool call whose input ${cleaned.problem}`;
          warnings.push({
            code: 'turn-skipped',
            message: `assistant message ${i} ${why}; it and its tool results were left out of the request`,
          });
          break;
        }
        textBytes += cleaned.textBytes;
        const unique = uniqueCallIds(cleaned.message, sentIds);
        turns.push({ role: 'assistant', message: unique, sameApi: sameApi(message, model) });
        if (calls.length > 0) {
          pending = {
            calls: unique.content.filter((b): b is ToolCallBlock => b.type === 'tool_call'),
            storedIds: calls.map((c) => c.id),
            results: new Array(calls.length),
          };
        }
        break;
      }
      case 'tool':
        message.results.forEach((stored: ToolResultBlock, j) => {
          const result = cleanResultIds(stored);
          // The first call of the open turn with this id that has no result yet (ids may repeat).
          const k =
            pending?.storedIds.findIndex((id, n) => id === result.toolUseId && !pending?.results[n]) ?? -1;
          const target = k >= 0 ? pending?.calls[k] : undefined;
          if (pending && target) {
            // The call's own id and name: Gemini pairs a response with its call by name.
            pending.results[k] = {
              toolUseId: target.id,
              toolName: target.name,
              isError: result.isError,
              parts: prepareParts(result.parts, i, j),
              synthetic: false,
            };
          } else if (!skippedCalls.has(result.toolUseId)) {
            orphans.push(result.toolUseId);
          }
        });
        break;
    }
  }
  flush();

  if (missing.length > 0) {
    warnings.push({
      code: 'missing-tool-result',
      message: `${missing.length} tool call(s) had no result (${missing.join(', ')}); an error result saying so was sent`,
    });
  }
  if (orphans.length > 0) {
    warnings.push({
      code: 'orphan-tool-result',
      message: `${orphans.length} tool result(s) matched no preceding tool call (${orphans.join(', ')}) and were left out`,
    });
  }

  if (cut.length > 0) {
    warnings.push({
      code: 'request-limit',
      message: `${cut.length} text part${cut.length === 1 ? ' was' : 's were'} cut to fit one message's text limit of ${cap} characters for model '${model.id}'`,
      parts: cut,
    });
  }
  for (const [reason, keys] of rejected) {
    warnings.push({
      code: 'unsupported-input',
      message: `${keys.length} part${keys.length === 1 ? '' : 's'} replaced by a placeholder: ${reason}`,
      parts: keys,
    });
  }
  warnings.push(...planMedia(media, model, options, textBytes));
  return { system: systems.length > 0 ? systems.join('\n\n') : undefined, turns, warnings };
}

/** Whether an assistant message came from the wire API `model` is spoken to through. */
function sameApi(message: AssistantMessage, model: ModelInfo): boolean {
  if (!message.model || message.model === model.id) return true;
  return resolveModel(message.model).api === model.api;
}

/** The ids and name of a stored result as they are matched against the (cleaned) calls: lone surrogates replaced. */
function cleanResultIds(result: ToolResultBlock): ToolResultBlock {
  const toolUseId = wellFormed(result.toolUseId);
  const toolName = wellFormed(result.toolName);
  return toolUseId === result.toolUseId && toolName === result.toolName
    ? result
    : { ...result, toolUseId, toolName };
}

/**
 * `message` with every tool-call id not yet in `sent` kept and every repeated one (twice in one message, or again in a
 * later turn — some servers number calls `call_0`, `call_1`, ... per turn) renamed `<id>_<n>`, `n` from 2; the APIs
 * reject a request whose call ids are not unique. Adds the ids to `sent`. A new message only when one was renamed.
 */
function uniqueCallIds(message: AssistantMessage, sent: Set<string>): AssistantMessage {
  let content: AssistantMessage['content'] | undefined;
  message.content.forEach((block, b) => {
    if (block.type !== 'tool_call') return;
    let id = block.id;
    for (let n = 2; sent.has(id); n++) id = `${block.id}_${n}`;
    sent.add(id);
    if (id === block.id) return;
    content ??= [...message.content];
    content[b] = { ...block, id };
  });
  return content === undefined ? message : { ...message, content };
}

/** `\uD800`–`\uDFFF` escapes that `JSON.stringify` writes for lone surrogates (paired ones stay raw), not escaped. */
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g;

/**
 * An assistant message as it can go on the wire: lone surrogates in texts, call ids, names and inputs replaced by
 * U+FFFD (a new message only when something changed), and its text size. `problem` says why a call's input cannot be
 * sent at all (not a JSON object, or `JSON.stringify` fails — e.g. nested deeper than the stack allows).
 */
function cleanAssistant(message: AssistantMessage): {
  message: AssistantMessage;
  textBytes: number;
  problem?: string;
} {
  let textBytes = 0;
  let changed = false;
  const content = message.content.map((block) => {
    if (block.type !== 'tool_call') {
      textBytes += block.text.length + 32;
      const text = wellFormed(block.text);
      if (text === block.text) return block;
      changed = true;
      return { ...block, text };
    }
    return block;
  });
  for (let b = 0; b < content.length; b++) {
    const block = content[b] as AssistantMessage['content'][number];
    if (block.type !== 'tool_call') continue;
    const input: unknown = block.input;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      const kind = input === null ? 'null' : Array.isArray(input) ? 'an array' : `a ${typeof input}`;
      return { message, textBytes, problem: `is ${kind}, not a JSON object (call ${wellFormed(block.id)})` };
    }
    let json: string;
    try {
      json = JSON.stringify(input);
    } catch (err) {
      return {
        message,
        textBytes,
        problem: `cannot be written as JSON (call ${wellFormed(block.id)}: ${(err as Error).message})`,
      };
    }
    textBytes += json.length + 64;
    const id = wellFormed(block.id);
    const name = wellFormed(block.name);
    LONE_SURROGATE_ESCAPE.lastIndex = 0;
    const fixInput = LONE_SURROGATE_ESCAPE.test(json);
    if (id === block.id && name === block.name && !fixInput) continue;
    changed = true;
    const fixed: ToolCallBlock = { ...block, id, name };
    if (fixInput) {
      fixed.input = JSON.parse(json.replace(LONE_SURROGATE_ESCAPE, '$1\\ufffd')) as Record<string, unknown>;
    }
    content[b] = fixed;
  }
  return { message: changed ? { ...message, content } : message, textBytes };
}

/**
 * Whether `data` is standard, padded base64 (the `ImagePart.data` / `DocumentPart.data` contract). A character-class
 * scan and index checks: a whole-string regex with a repeated group overflows the regex stack on multi-megabyte data.
 */
function isBase64(data: string): boolean {
  if (data.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(data)) return false;
  const pad = data.indexOf('=');
  return pad === -1 || pad === data.length - 1 || (pad === data.length - 2 && data.endsWith('='));
}

type CheckedPart = { part: StoredPart } | { rejected: string; noun: string };

/** Verdicts on stored image/PDF parts, checked once per part object and data string. */
const checkedMedia = new WeakMap<object, { data: unknown; mediaType: unknown; verdict: CheckedPart }>();

/**
 * A stored part as it can be sent, or why it cannot: text with lone surrogates replaced; an image whose bytes are PNG,
 * JPEG, GIF or WebP (its `mediaType` corrected from the bytes when it lies — the APIs reject a mismatch); a PDF whose
 * bytes start with `%PDF-`; base64 written another common way rewritten to the standard padded form
 * (`standardBase64`). Empty data, data that is not base64, and parts of unknown shape are rejected. A request never fails because a tool or a restored session stored a malformed part.
 */
function checkPart(raw: unknown): CheckedPart {
  if (typeof raw !== 'object' || raw === null) {
    return { noun: 'part', rejected: `it is ${raw === null ? 'null' : typeof raw}, not a part object` };
  }
  const part = raw as Record<string, unknown>;
  if (part.type === 'text') {
    if (typeof part.text !== 'string') return { noun: 'text', rejected: 'its text is not a string' };
    const text = wellFormed(part.text);
    return { part: text === part.text ? (raw as StoredPart) : { type: 'text', text } };
  }
  if (part.type !== 'image' && part.type !== 'document') {
    return {
      noun: 'part',
      rejected: `its type ${JSON.stringify(part.type) ?? 'undefined'} is not text, image or document`,
    };
  }
  const cached = checkedMedia.get(raw);
  if (cached !== undefined && cached.data === part.data && cached.mediaType === part.mediaType) {
    return cached.verdict;
  }
  const verdict = checkMedia(raw as ImagePart | DocumentPart, part.type);
  checkedMedia.set(raw, { data: part.data, mediaType: part.mediaType, verdict });
  return verdict;
}

function checkMedia(part: ImagePart | DocumentPart, noun: 'image' | 'document'): CheckedPart {
  const stored: unknown = part.data;
  if (typeof stored !== 'string') return { noun, rejected: 'its data is not a string' };
  if (stored.length === 0) return { noun, rejected: 'its data is empty' };
  const data = isBase64(stored) ? stored : standardBase64(stored);
  if (data === undefined) return { noun, rejected: 'its data is not valid base64' };
  if (noun === 'document') {
    if (!data.startsWith('JVBERi0')) return { noun, rejected: 'its data is not a PDF file' };
    if (data === stored && part.mediaType === 'application/pdf') return { part };
    return { part: { ...(part as unknown as DocumentPart), data, mediaType: 'application/pdf' } };
  }
  const image = part as ImagePart;
  const mediaType = sniffImage(data);
  if (mediaType === undefined) return { noun, rejected: 'its data is not a PNG, JPEG, GIF or WebP image' };
  // The side limits (Anthropic 8000 px, 2000 px with more than 20 images) are checked on width/height: the header's.
  const size = imageSize(data, mediaType);
  const width = size?.width ?? image.width;
  const height = size?.height ?? image.height;
  if (data === stored && mediaType === image.mediaType && width === image.width && height === image.height) {
    return { part };
  }
  return { part: { ...image, data, mediaType, width, height } };
}

/**
 * Width and height from an image's header: PNG `IHDR`, GIF screen descriptor, WebP `VP8 ` / `VP8L` / `VP8X`, JPEG
 * start-of-frame (looked for in the first 64 KiB). Undefined when the header does not say.
 */
function imageSize(data: string, type: ImageMediaType): { width: number; height: number } | undefined {
  const head = Buffer.from(data.slice(0, type === 'image/jpeg' ? 87_384 : 40), 'base64');
  if (type === 'image/png' && head.length >= 24) {
    return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  }
  if (type === 'image/gif' && head.length >= 10) {
    return { width: head.readUInt16LE(6), height: head.readUInt16LE(8) };
  }
  if (type === 'image/webp' && head.length >= 30) {
    const chunk = head.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return { width: 1 + head.readUIntLE(24, 3), height: 1 + head.readUIntLE(27, 3) };
    if (chunk === 'VP8L') {
      const bits = head.readUInt32LE(21);
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
    }
    if (chunk === 'VP8 ')
      return { width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff };
    return undefined;
  }
  if (type === 'image/jpeg') {
    let o = 2;
    while (o + 9 < head.length && head[o] === 0xff) {
      const marker = head[o + 1] as number;
      if (marker === 0xff) {
        o++;
        continue;
      }
      const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (sof) return { width: head.readUInt16BE(o + 7), height: head.readUInt16BE(o + 5) };
      o += 2 + head.readUInt16BE(o + 2);
    }
  }
  return undefined;
}

/**
 * Base64 written another common way, as the standard padded form the APIs take, or undefined: a `data:…;base64,`
 * prefix, line breaks or spaces (MIME), the URL-safe alphabet, missing padding.
 */
function standardBase64(data: string): string | undefined {
  let out = data.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
  if (/[-_]/.test(out)) out = out.replace(/-/g, '+').replace(/_/g, '/');
  if (out.length % 4 === 1) return undefined;
  if (out.length % 4 !== 0 && !out.endsWith('=')) out = out.padEnd(out.length + 4 - (out.length % 4), '=');
  return out.length > 0 && isBase64(out) ? out : undefined;
}

/** The image type of base64 data from its first bytes (magic numbers), or undefined. */
function sniffImage(data: string): ImageMediaType | undefined {
  const head = Buffer.from(data.slice(0, 16), 'base64');
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.toString('latin1', 0, 4) === 'GIF8') return 'image/gif';
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return undefined;
}

/** OpenAI Responses: `input_text.text` and a `function_call_output`'s string `output` hold at most 10 MiB characters. */
const RESPONSES_TEXT_MAX = 10 * 1024 * 1024;

/**
 * The most text characters one user message or one tool result carries in a request: a quarter of the model's request
 * size (a character is up to 3 bytes of UTF-8, plus JSON escapes), and on OpenAI Responses the 10 MiB string limit
 * less 64 KiB for the placeholders and labels joined to it. A text beyond it could never be sent.
 */
function textCap(model: ModelInfo): number {
  const cap = Math.floor(model.limits.requestBytes / 4);
  return model.api === 'openai-responses' ? Math.min(cap, RESPONSES_TEXT_MAX - 64 * 1024) : cap;
}

/** `text` cut to about `room` characters (never inside a surrogate pair), ending in a note saying how much was cut. */
function cutText(text: string, room: number, model: ModelInfo): string {
  const note = (n: number) => `\n[${n} more characters were cut: the request limit for model '${model.id}']`;
  let keep = Math.max(0, room - note(text.length).length);
  const last = text.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--;
  return `${text.slice(0, keep)}${note(text.length - keep)}`;
}
