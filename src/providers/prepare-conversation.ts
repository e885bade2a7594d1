/**
 * The surface-independent first half of every serializer: pair tool calls with their results, skip failed turns,
 * hoist system messages, and decide which images/PDFs go into this request (capability gating, host omissions and
 * the request guard — see media-plan.ts). Pure: reads the conversation, never changes it.
 */

import type {
  AssistantMessage,
  Conversation,
  DocumentPart,
  ImagePart,
  Message,
  StoredPart,
  ToolCallBlock,
  ToolResultBlock,
} from '../conversation.js';
import { type MediaItem, planMedia } from './media-plan.js';
import { resolveModel } from './model-catalog.js';
import type { ModelInfo } from './model-info.js';
import { partKey, type SerializeOptions, type SerializeWarning } from './serialize-options.js';

export interface PreparedText {
  kind: 'text';
  text: string;
}

export interface PreparedImage {
  kind: 'image';
  part: ImagePart;
  key: string;
}

export interface PreparedDocument {
  kind: 'document';
  part: DocumentPart;
  key: string;
}

/** A stored part as it goes into this request: itself, or a text placeholder that replaced an image/PDF. */
export type PreparedPart = PreparedText | PreparedImage | PreparedDocument;

export interface PreparedResult {
  toolUseId: string;
  toolName: string;
  isError: boolean;
  parts: PreparedPart[];
  /** True for the error result sent in place of a missing one. */
  synthetic: boolean;
}

export type PreparedTurn =
  | { role: 'user'; parts: PreparedPart[] }
  | {
      role: 'assistant';
      message: AssistantMessage;
      /** The message came from the same wire API: its reasoning signatures and provider data may be echoed. */
      sameApi: boolean;
    }
  /** The results of one assistant turn's tool calls, in call order, one per call. */
  | { role: 'tool'; results: PreparedResult[] };

export interface PreparedConversation {
  /** The options' system prompt and every system message, joined by blank lines; undefined when there is none. */
  system: string | undefined;
  turns: PreparedTurn[];
  warnings: SerializeWarning[];
}

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

  let pending: { calls: ToolCallBlock[]; results: Map<string, PreparedResult> } | undefined;
  const skippedCalls = new Set<string>();
  const orphans: string[] = [];
  const missing: string[] = [];

  const flush = (): void => {
    if (!pending) return;
    const results = pending.calls.map((call): PreparedResult => {
      const found = pending?.results.get(call.id);
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

  const prepareParts = (
    parts: readonly StoredPart[],
    messageIndex: number,
    blockIndex: number,
  ): PreparedPart[] => {
    const out: PreparedPart[] = new Array(parts.length);
    for (let partIndex = 0; partIndex < parts.length; partIndex++) {
      const part = parts[partIndex] as StoredPart;
      if (part.type === 'text') {
        out[partIndex] = { kind: 'text', text: part.text };
        textBytes += part.text.length + 32;
        continue;
      }
      const ref = { messageIndex, blockIndex, partIndex };
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
        systems.push(message.content);
        textBytes += message.content.length;
        break;
      case 'user':
        flush();
        turns.push({ role: 'user', parts: prepareParts(message.content, i, 0) });
        break;
      case 'assistant': {
        flush();
        const calls = message.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
        if (message.stopReason === 'error' || message.stopReason === 'aborted') {
          for (const call of calls) skippedCalls.add(call.id);
          warnings.push({
            code: 'turn-skipped',
            message: `assistant message ${i} ${message.stopReason === 'error' ? 'ended in an error' : 'was aborted'}; it and its tool results were left out of the request`,
          });
          break;
        }
        for (const block of message.content) {
          textBytes +=
            block.type === 'tool_call' ? JSON.stringify(block.input).length + 64 : block.text.length + 32;
        }
        turns.push({ role: 'assistant', message, sameApi: sameApi(message, model) });
        if (calls.length > 0) pending = { calls, results: new Map() };
        break;
      }
      case 'tool':
        message.results.forEach((result: ToolResultBlock, j) => {
          if (
            pending?.calls.some((c) => c.id === result.toolUseId) &&
            !pending.results.has(result.toolUseId)
          ) {
            pending.results.set(result.toolUseId, {
              toolUseId: result.toolUseId,
              toolName: result.toolName,
              isError: result.isError,
              parts: prepareParts(result.parts, i, j),
              synthetic: false,
            });
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

  warnings.push(...planMedia(media, model, options, textBytes));
  return { system: systems.length > 0 ? systems.join('\n\n') : undefined, turns, warnings };
}

/** Whether an assistant message came from the wire API `model` is spoken to through. */
function sameApi(message: AssistantMessage, model: ModelInfo): boolean {
  if (!message.model || message.model === model.id) return true;
  return resolveModel(message.model).api === model.api;
}
