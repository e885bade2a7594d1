/**
 * Anthropic Messages API (`POST /v1/messages`): the request body from a conversation (the response side is
 * anthropic-response.ts and anthropic-stream.ts). Follows https://docs.anthropic.com/en/api/messages and the
 * `MessageCreateParamsNonStreaming` / `Message` types of @anthropic-ai/sdk 1.14.
 *
 * Placement: a tool result is a `tool_result` block whose `content` holds `text`, `image` (base64 source) and
 * `document` (base64 PDF) blocks in part order, with `is_error`; all results of one assistant turn go into ONE user
 * message (a user message that follows them is merged into it, after the results). User images/PDFs are `image` /
 * `document` blocks. Thinking blocks are echoed with their signature when they came from this API; others are
 * dropped (Anthropic rejects a thinking block without a valid signature).
 */

import type { Conversation, ImageMediaType, Message } from '../../conversation.js';
import type { ToolDecl } from '../../tool.js';
import { prepareConversation } from '../common/prepare-conversation.js';
import type { PreparedPart } from '../common/prepared.js';
import type { MediaRef, SerializeOptions, SerializeResult } from '../common/serialize-options.js';
import {
  documentName,
  EMPTY_RESULT_TEXT,
  modelOf,
  objectSchema,
  surfaceCallId,
  surfaceToolName,
} from '../common/serializer-common.js';
import { anthropicThinking, thinkingFor } from '../common/thinking.js';
import type { ModelInfo } from '../model/model-info.js';

export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: ImageMediaType; data: string };
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: 'application/pdf'; data: string };
  title?: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicUserBlock =
  | AnthropicToolResultBlock
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock;

export type AnthropicAssistantBlock =
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicTextBlock
  | AnthropicToolUseBlock;

export interface AnthropicUserMessage {
  role: 'user';
  content: AnthropicUserBlock[];
}

export interface AnthropicAssistantMessage {
  role: 'assistant';
  content: AnthropicAssistantBlock[];
}

export type AnthropicMessage = AnthropicUserMessage | AnthropicAssistantMessage;

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  cache_control?: AnthropicCacheControl;
}

/** The JSON body of `POST /v1/messages` (without `stream`; a streaming transport adds `stream: true`). */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  /** A string, or one text block when `promptCache` puts a breakpoint on it. */
  system?: string | AnthropicTextBlock[];
  tools?: AnthropicTool[];
  thinking?: { type: 'enabled'; budget_tokens: number };
}

export interface AnthropicOptions extends SerializeOptions {
  /**
   * Put a prompt-cache breakpoint (`cache_control: {type: 'ephemeral'}`) on the last block of the last message, so
   * the whole prefix is cached. `{ttl: '1h'}` for the longer cache.
   */
  cacheControl?: boolean | { ttl: '5m' | '1h' };
}

/** A history `tool_use` name is 1–200 characters (`RequestToolUseBlock.name`); see `surfaceToolName`. */
const ANTHROPIC_NAME_MAX = 200;

/** Document titles must be 1–500 characters: an empty name is left out, a longer one shortened. */
const ANTHROPIC_TITLE_MAX = 500;

/** Tool declarations in the Messages API `tools` format. */
export function anthropicTools(tools: readonly ToolDecl[]): AnthropicTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: objectSchema(t) }));
}

/**
 * Build the Messages API request body for `conversation`. Pure; the conversation is not changed and its base64
 * strings are shared, not copied. See `SerializeOptions` for the common options and the warnings.
 */
export function toAnthropicMessages(
  conversation: Conversation | readonly Message[],
  model: ModelInfo | string,
  options: AnthropicOptions = {},
): SerializeResult<AnthropicRequestBody> {
  const info = modelOf(model);
  const prepared = prepareConversation(conversation, info, options);
  const warnings = prepared.warnings;
  const media: MediaRef[] = [];
  const messages: AnthropicMessage[] = [];

  /** The user message to append to: the last one if it is a user message, else a new one. */
  const userMessage = (): AnthropicUserMessage => {
    const last = messages[messages.length - 1];
    if (last?.role === 'user') return last;
    const created: AnthropicUserMessage = { role: 'user', content: [] };
    messages.push(created);
    return created;
  };

  /** Blocks of `parts`; media paths are `${path}[offset + i]`. */
  const blocksOf = (
    parts: readonly PreparedPart[],
    path: string,
    offset = 0,
  ): Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> => {
    const out: Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> = [];
    for (const p of parts) {
      if (p.kind === 'text') {
        if (hasVisibleText(p.text)) out.push({ type: 'text', text: p.text });
        continue;
      }
      media.push({ key: p.key, type: p.kind, path: `${path}[${offset + out.length}]` });
      if (p.kind === 'image') {
        out.push({
          type: 'image',
          source: { type: 'base64', media_type: p.part.mediaType, data: p.part.data },
        });
      } else {
        const doc: AnthropicDocumentBlock = {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: p.part.data },
        };
        const title = documentName(p.part.name, ANTHROPIC_TITLE_MAX);
        if (title !== undefined) doc.title = title;
        out.push(doc);
      }
    }
    return out;
  };

  for (const turn of prepared.turns) {
    if (turn.role === 'user') {
      const last = messages[messages.length - 1];
      const merge = last?.role === 'user';
      const index = merge ? messages.length - 1 : messages.length;
      const blocks = blocksOf(turn.parts, `messages[${index}].content`, merge ? last.content.length : 0);
      if (blocks.length > 0) userMessage().content.push(...blocks);
    } else if (turn.role === 'tool') {
      const target = userMessage();
      for (const result of turn.results) {
        const path = `messages[${messages.length - 1}].content[${target.content.length}].content`;
        const content = blocksOf(result.parts, path);
        if (content.length === 0) content.push({ type: 'text', text: EMPTY_RESULT_TEXT });
        const block: AnthropicToolResultBlock = {
          type: 'tool_result',
          tool_use_id: anthropicId(result.toolUseId),
          content,
        };
        if (result.isError) block.is_error = true;
        target.content.push(block);
      }
    } else {
      const content: AnthropicAssistantBlock[] = [];
      for (const block of turn.message.content) {
        if (block.type === 'text') {
          if (hasVisibleText(block.text)) content.push({ type: 'text', text: block.text });
        } else if (block.type === 'thinking') {
          if (!turn.sameApi || block.signature === undefined) continue;
          content.push(
            block.redacted
              ? { type: 'redacted_thinking', data: block.signature }
              : { type: 'thinking', thinking: block.text, signature: block.signature },
          );
        } else {
          content.push({
            type: 'tool_use',
            id: anthropicId(block.id),
            name: surfaceToolName(block.name, ANTHROPIC_NAME_MAX),
            input: block.input,
          });
        }
      }
      if (content.length > 0) messages.push({ role: 'assistant', content });
    }
  }

  if (options.cacheControl) addCacheBreakpoint(messages, options.cacheControl);
  if (options.temperature !== undefined) {
    warnings.push({
      code: 'option-ignored',
      message: 'temperature is not part of the Anthropic Messages API request (SDK 1.14); it was not sent',
    });
  }

  const body: AnthropicRequestBody = {
    model: info.id,
    max_tokens: options.maxTokens ?? info.limits.maxOutputTokens,
    messages,
  };
  if (prepared.system !== undefined) body.system = prepared.system;
  if (options.tools && options.tools.length > 0) body.tools = anthropicTools(options.tools);
  const level = thinkingFor(info, options.thinking, warnings);
  if (level !== undefined) {
    const t = anthropicThinking(info, level, body.max_tokens, warnings);
    body.max_tokens = t.maxTokens;
    if (t.thinking) body.thinking = t.thinking;
  }
  if (options.promptCache) addPromptCache(body, options.promptCache);
  return { body, warnings, media };
}

/**
 * The API rejects text blocks that hold only whitespace ("text content blocks must contain non-whitespace text"), and
 * real streams produce them (`"\n\n"` before a `tool_use`): such blocks are left out (an emptied tool result says
 * `(no output)`).
 */
function hasVisibleText(text: string): boolean {
  return /\S/.test(text);
}

/** Anthropic tool ids must match `^[a-zA-Z0-9_-]+$` (other providers' ids may not, e.g. `functions.read:0`). */
function anthropicId(id: string): string {
  return surfaceCallId(id, /[^a-zA-Z0-9_-]/g, 128);
}

function addCacheBreakpoint(messages: AnthropicMessage[], option: true | { ttl: '5m' | '1h' }): void {
  const last = messages[messages.length - 1];
  if (!last) return;
  const cache: AnthropicCacheControl =
    option === true ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: option.ttl };
  for (let i = last.content.length - 1; i >= 0; i--) {
    const block = last.content[i] as AnthropicUserBlock | AnthropicAssistantBlock;
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    block.cache_control = cache;
    return;
  }
}

/**
 * `promptCache`: breakpoints on the system prompt, the last tool and the last message's last block (3 of the 4 the
 * API allows; the last-message one is shared with `cacheControl`).
 */
function addPromptCache(body: AnthropicRequestBody, option: true | { ttl: '5m' | '1h' }): void {
  const cache: AnthropicCacheControl =
    option === true ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: option.ttl };
  if (typeof body.system === 'string' && body.system.length > 0) {
    body.system = [{ type: 'text', text: body.system, cache_control: cache }];
  }
  const lastTool = body.tools?.[body.tools.length - 1];
  if (lastTool) lastTool.cache_control = cache;
  addCacheBreakpoint(body.messages, option);
}
