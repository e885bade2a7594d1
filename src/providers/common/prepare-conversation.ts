/**
 * The surface-independent first half of every serializer: pair tool calls with their results, skip failed turns,
 * hoist system messages, and decide which images/PDFs go into this request (capability gating, host omissions and
 * the request guard — see media-plan.ts). Pure: reads the conversation, never changes it.
 */

import type {
  AssistantMessage,
  Conversation,
  Message,
  StoredPart,
  ToolCallBlock,
  ToolResultBlock,
} from '../../conversation.js';
import { resolveModel } from '../model/model-catalog.js';
import type { ModelInfo } from '../model/model-info.js';
import { type MediaItem, planMedia } from './media-plan.js';
import type {
  FilePlacement,
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

/**
 * `referable` says where the surface can reference an uploaded file instead of sending bytes, by placement and kind
 * (default: nowhere); it matters only when `options.files` is given.
 */
export function prepareConversation(
  conversation: Conversation | readonly Message[],
  model: ModelInfo,
  options: SerializeOptions,
  referable: (where: FilePlacement, kind: 'image' | 'document') => boolean = () => false,
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

  const refer = options.files !== undefined;
  const prepareParts = (
    parts: readonly StoredPart[],
    messageIndex: number,
    blockIndex: number,
    where: FilePlacement,
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
      media.push({
        prepared,
        list: out,
        index: partIndex,
        ref,
        referable: refer && referable(where, prepared.kind),
      });
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
        turns.push({ role: 'user', parts: prepareParts(message.content, i, 0, 'user') });
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
              parts: prepareParts(result.parts, i, j, 'tool'),
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
  const plan = planMedia(media, model, options, textBytes);
  warnings.push(...plan.warnings);
  const prepared: PreparedConversation = {
    system: systems.length > 0 ? systems.join('\n\n') : undefined,
    turns,
    warnings,
  };
  if (plan.wanted !== undefined) prepared.wanted = plan.wanted;
  return prepared;
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

type CheckedPart = { part: StoredPart } | { rejected: string; noun: string };

/**
 * A stored part as it can be sent, or why it cannot: text with lone surrogates replaced; an image or PDF whose `data`
 * is a non-empty string and whose `mediaType` is a string. The bytes are not looked at: a stored part was checked
 * where it entered the conversation (the media pipeline, the session loader, the Agent's handed-in history; see
 * media/stored-media.ts). A part of unknown shape is rejected, so a request never fails on a malformed part.
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
  if (typeof part.data !== 'string') return { noun: part.type, rejected: 'its data is not a string' };
  if (part.data.length === 0) return { noun: part.type, rejected: 'its data is empty' };
  if (typeof part.mediaType !== 'string')
    return { noun: part.type, rejected: 'its mediaType is not a string' };
  return { part: raw as StoredPart };
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
