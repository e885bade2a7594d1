/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`) and the many servers that speak it: the request body from a
 * conversation (the response side is openai-chat-response.ts and openai-chat-stream.ts). Follows
 * https://platform.openai.com/docs/api-reference/chat/create and the `ChatCompletionCreateParamsNonStreaming` /
 * `ChatCompletion` types of the openai SDK 7.x.
 *
 * Placement: a `tool` message may carry text only (an image there is a 400, or silently ignored by newer models), so
 * each tool result becomes a `tool` message with its text (an error result says `Error:`; a result with no text says
 * its attachments follow), and after the whole run of tool messages ONE `user` message carries the pictures
 * (`image_url` data URLs, `detail` option) and PDFs (`file` parts with `file_data` data URL + `filename`), each group
 * introduced by a text part naming the tool call it came from. User images/PDFs are the same parts in the user message.
 * Reasoning is not echoed (the API has no field for it).
 *
 * Uploaded files (`SerializeOptions.files`): a PDF uploaded to the OpenAI Files API is sent as `{type: "file", file:
 * {file_id}}` wherever it sits; an image always goes inline — `image_url` takes a URL or a data URL, never a file id
 * ("Chat Completions accepts only PDF files as file content parts", https://developers.openai.com/api/docs/guides/file-inputs).
 */

import type { Conversation, Message, ToolCallBlock } from '../../conversation.js';
import { PantoError } from '../../errors.js';
import type { ToolDecl } from '../../tool.js';
import { prepareConversation } from '../common/prepare-conversation.js';
import type { PreparedPart } from '../common/prepared.js';
import type { MediaRef, SerializeOptions, SerializeResult } from '../common/serialize-options.js';
import {
  attachmentsLabel,
  countMedia,
  describeAttachments,
  EMPTY_RESULT_TEXT,
  flagError,
  modelOf,
  objectSchema,
  partDataUrl,
  pdfFilename,
  surfaceCallId,
  surfaceToolName,
  textOf,
} from '../common/serializer-common.js';
import { thinkingFor } from '../common/thinking.js';
import type { ModelInfo } from '../model/model-info.js';

/** Chat Completions takes `auto`, `low` or `high` (`original` exists on the Responses API only). */
export type OpenAIChatImageDetail = 'auto' | 'low' | 'high';

export interface OpenAIChatTextPart {
  type: 'text';
  text: string;
}

export interface OpenAIChatImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: OpenAIChatImageDetail };
}

/** A PDF: inline (`file_data` data URL + `filename`) or a file uploaded to the OpenAI Files API (`file_id`). */
export interface OpenAIChatFilePart {
  type: 'file';
  file: { file_data: string; filename: string } | { file_id: string };
}

export type OpenAIChatUserPart = OpenAIChatTextPart | OpenAIChatImagePart | OpenAIChatFilePart;

export interface OpenAIChatSystemMessage {
  role: 'system';
  content: string;
}

export interface OpenAIChatUserMessage {
  role: 'user';
  content: string | OpenAIChatUserPart[];
}

export interface OpenAIChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface OpenAIChatAssistantMessage {
  role: 'assistant';
  content?: string;
  tool_calls?: OpenAIChatToolCall[];
}

export interface OpenAIChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export type OpenAIChatMessage =
  | OpenAIChatSystemMessage
  | OpenAIChatUserMessage
  | OpenAIChatAssistantMessage
  | OpenAIChatToolMessage;

export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: { type: 'object'; [key: string]: unknown } };
}

/** The JSON body of `POST /v1/chat/completions` (without `stream`; a streaming transport adds it). */
export interface OpenAIChatRequestBody {
  model: string;
  messages: OpenAIChatMessage[];
  tools?: OpenAIChatTool[];
  max_completion_tokens?: number;
  max_tokens?: number;
  temperature?: number;
  reasoning_effort?: 'low' | 'medium' | 'high';
}

export interface OpenAIChatOptions extends SerializeOptions {
  /** `image_url.detail` for every image (omitted when unset: the API default `auto`). */
  imageDetail?: OpenAIChatImageDetail;
  /**
   * Field for `maxTokens`: `max_completion_tokens` (default; what OpenAI's reasoning models require) or the older
   * `max_tokens` some compatible servers still expect.
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
}

/** Tool declarations in the Chat Completions `tools` format. */
export function openAIChatTools(tools: readonly ToolDecl[]): OpenAIChatTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: objectSchema(t) },
  }));
}

/**
 * Build the Chat Completions request body for `conversation`. Pure; the conversation is not changed and its base64
 * strings are placed into data URLs by concatenation, never re-encoded.
 */
export function toOpenAIChat(
  conversation: Conversation | readonly Message[],
  model: ModelInfo | string,
  options: OpenAIChatOptions = {},
): SerializeResult<OpenAIChatRequestBody> {
  const detail = options.imageDetail;
  if (detail !== undefined && detail !== 'auto' && detail !== 'low' && detail !== 'high') {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `toOpenAIChat: imageDetail must be 'auto', 'low' or 'high' (Chat Completions has no ${JSON.stringify(detail)})`,
    );
  }
  const info = modelOf(model);
  // Only a PDF can be a file reference here (see above); images stay inline.
  const prepared = prepareConversation(conversation, info, options, (_where, kind) => kind === 'document');
  const media: MediaRef[] = [];
  const messages: OpenAIChatMessage[] = [];
  if (prepared.system !== undefined) messages.push({ role: 'system', content: prepared.system });

  const pushMedia = (out: OpenAIChatUserPart[], p: PreparedPart, messageIndex: number): void => {
    if (p.kind === 'text') {
      if (p.text.length > 0) out.push({ type: 'text', text: p.text });
      return;
    }
    const path = `messages[${messageIndex}].content[${out.length}]`;
    media.push(
      p.file === undefined
        ? { key: p.key, type: p.kind, path }
        : { key: p.key, type: p.kind, path, file: p.file.id },
    );
    if (p.kind === 'image') {
      const image_url: OpenAIChatImagePart['image_url'] = { url: partDataUrl(p.part) };
      if (options.imageDetail !== undefined) image_url.detail = options.imageDetail;
      out.push({ type: 'image_url', image_url });
    } else if (p.file !== undefined) {
      out.push({ type: 'file', file: { file_id: p.file.id } });
    } else {
      out.push({
        type: 'file',
        file: { file_data: partDataUrl(p.part), filename: pdfFilename(p.part.name) },
      });
    }
  };

  for (const turn of prepared.turns) {
    if (turn.role === 'user') {
      const parts: OpenAIChatUserPart[] = [];
      for (const p of turn.parts) pushMedia(parts, p, messages.length);
      if (parts.length === 0) continue;
      const only = parts[0];
      messages.push({
        role: 'user',
        content: parts.length === 1 && only?.type === 'text' ? only.text : parts,
      });
    } else if (turn.role === 'tool') {
      const attachments: OpenAIChatUserPart[] = [];
      const attachmentsIndex = messages.length + turn.results.length;
      for (const result of turn.results) {
        const count = countMedia(result.parts);
        let text = textOf(result.parts);
        if (count.images + count.documents > 0) {
          if (text.length === 0)
            text = `Attachments of this result (${describeAttachments(count)}) follow in the next user message.`;
          attachments.push({ type: 'text', text: attachmentsLabel(result) });
          for (const p of result.parts) if (p.kind !== 'text') pushMedia(attachments, p, attachmentsIndex);
        }
        messages.push({
          role: 'tool',
          tool_call_id: chatId(result.toolUseId),
          content: flagError(result, text.length > 0 ? text : EMPTY_RESULT_TEXT),
        });
      }
      if (attachments.length > 0) messages.push({ role: 'user', content: attachments });
    } else {
      const text = turn.message.content
        .filter((b) => b.type === 'text')
        .map((b) => b.text)
        .join('');
      const calls = turn.message.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
      if (text.length === 0 && calls.length === 0) continue;
      const message: OpenAIChatAssistantMessage = { role: 'assistant' };
      if (text.length > 0) message.content = text;
      if (calls.length > 0) {
        message.tool_calls = calls.map((c) => ({
          id: chatId(c.id),
          type: 'function',
          function: { name: surfaceToolName(c.name, 64), arguments: JSON.stringify(c.input) },
        }));
      }
      messages.push(message);
    }
  }

  const body: OpenAIChatRequestBody = { model: info.id, messages };
  if (options.tools && options.tools.length > 0) body.tools = openAIChatTools(options.tools);
  if (options.maxTokens !== undefined)
    body[options.maxTokensField ?? 'max_completion_tokens'] = options.maxTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  const effort = thinkingFor(info, options.thinking, prepared.warnings);
  if (effort !== undefined) body.reasoning_effort = effort;
  const result: SerializeResult<OpenAIChatRequestBody> = { body, warnings: prepared.warnings, media };
  // Uploads are wanted for PDFs only (images are never referable here).
  if (prepared.wanted !== undefined) result.wanted = prepared.wanted;
  return result;
}

/** OpenAI rejects tool-call ids longer than 40 characters (other providers' ids can be longer). */
function chatId(id: string): string {
  return surfaceCallId(id, undefined, 40);
}
