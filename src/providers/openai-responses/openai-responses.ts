/**
 * OpenAI Responses API (`POST /v1/responses`): request body from a conversation, and a complete (non-streaming)
 * response back into an `AssistantMessage`. Follows https://platform.openai.com/docs/api-reference/responses/create
 * and the `ResponseCreateParamsNonStreaming` / `Response` types of the openai SDK 7.x.
 *
 * Placement: a tool result is a `function_call_output` item; a text-only result's `output` is its text, a result with
 * images/PDFs has an `output` array of `input_text` / `input_image` (data URL) / `input_file` (`file_data` data URL +
 * `filename`) in part order. User images/PDFs are `input_image` / `input_file` parts of a user message (whose
 * `input_image.detail` the API requires: the `imageDetail` option, default `auto`).
 *
 * Reasoning: a `reasoning` output item is kept as a thinking block whose `signature` is the JSON text
 * `{"id": <item id>, "encrypted_content"?: <opaque>}`; such blocks are echoed as `reasoning` items before the calls
 * they preceded (with `store: false`, the item needs its `encrypted_content`, which `include` asks for).
 */

import type { AssistantMessage, Conversation, Message, StopReason, Usage } from '../../conversation.js';
import type { ToolDecl } from '../../tool.js';
import {
  type PreparedPart,
  type PreparedResult,
  prepareConversation,
} from '../common/prepare-conversation.js';
import { safeString } from '../common/safe-string.js';
import type { MediaRef, SerializeOptions, SerializeResult } from '../common/serialize-options.js';
import {
  asObject,
  EMPTY_RESULT_TEXT,
  flagError,
  idOf,
  modelOf,
  objectSchema,
  partDataUrl,
  pdfFilename,
  responseError,
  surfaceCallId,
  surfaceToolName,
  textOf,
  tokenCount,
  toolCallBlock,
} from '../common/serializer-common.js';
import { thinkingFor } from '../common/thinking.js';
import type { ModelInfo } from '../model/model-info.js';

export type OpenAIResponsesImageDetail = 'auto' | 'low' | 'high' | 'original';

export interface ResponsesInputText {
  type: 'input_text';
  text: string;
}

/** An image in a user message (`detail` is required there). */
export interface ResponsesInputImage {
  type: 'input_image';
  image_url: string;
  detail: OpenAIResponsesImageDetail;
}

/** An image in a `function_call_output` (`detail` optional). */
export interface ResponsesOutputImage {
  type: 'input_image';
  image_url: string;
  detail?: OpenAIResponsesImageDetail;
}

export interface ResponsesInputFile {
  type: 'input_file';
  file_data: string;
  filename: string;
}

export interface ResponsesUserMessage {
  type: 'message';
  role: 'user';
  content: Array<ResponsesInputText | ResponsesInputImage | ResponsesInputFile>;
}

export interface ResponsesAssistantMessage {
  type: 'message';
  role: 'assistant';
  content: string;
}

export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  encrypted_content?: string;
}

export interface ResponsesFunctionCall {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
}

export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string | Array<ResponsesInputText | ResponsesOutputImage | ResponsesInputFile>;
}

export type ResponsesInputItem =
  | ResponsesUserMessage
  | ResponsesAssistantMessage
  | ResponsesReasoningItem
  | ResponsesFunctionCall
  | ResponsesFunctionCallOutput;

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description: string;
  parameters: { type: 'object'; [key: string]: unknown };
  strict: boolean;
}

/** The JSON body of `POST /v1/responses` (without `stream`; a streaming transport adds it). */
export interface OpenAIResponsesRequestBody {
  model: string;
  input: ResponsesInputItem[];
  instructions?: string;
  tools?: ResponsesFunctionTool[];
  max_output_tokens?: number;
  temperature?: number;
  store?: boolean;
  include?: Array<'reasoning.encrypted_content'>;
  reasoning?: { effort: 'low' | 'medium' | 'high' };
}

export interface OpenAIResponsesOptions extends SerializeOptions {
  /** `detail` of every image; user-message images need one, so it defaults to `auto` there. */
  imageDetail?: OpenAIResponsesImageDetail;
  /**
   * `false` for stateless use (nothing stored server-side): sends `store: false` and asks for
   * `reasoning.encrypted_content`, so reasoning can be echoed on the next request.
   */
  store?: boolean;
}

/** Tool declarations in the Responses `tools` format (`strict: false`: schemas are used as written). */
export function openAIResponsesTools(tools: readonly ToolDecl[]): ResponsesFunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: objectSchema(t),
    strict: false,
  }));
}

/**
 * Build the Responses API request body for `conversation`. Pure; the conversation is not changed and its base64
 * strings are placed into data URLs by concatenation, never re-encoded.
 */
export function toOpenAIResponses(
  conversation: Conversation | readonly Message[],
  model: ModelInfo | string,
  options: OpenAIResponsesOptions = {},
): SerializeResult<OpenAIResponsesRequestBody> {
  const info = modelOf(model);
  const prepared = prepareConversation(conversation, info, options);
  const media: MediaRef[] = [];
  const input: ResponsesInputItem[] = [];

  const file = (p: PreparedPart & { kind: 'document' }): ResponsesInputFile => ({
    type: 'input_file',
    file_data: partDataUrl(p.part),
    filename: pdfFilename(p.part.name),
  });

  for (const turn of prepared.turns) {
    if (turn.role === 'user') {
      const content: ResponsesUserMessage['content'] = [];
      for (const p of turn.parts) {
        if (p.kind === 'text') {
          if (p.text.length > 0) content.push({ type: 'input_text', text: p.text });
          continue;
        }
        media.push({ key: p.key, type: p.kind, path: `input[${input.length}].content[${content.length}]` });
        content.push(
          p.kind === 'image'
            ? {
                type: 'input_image',
                image_url: partDataUrl(p.part),
                detail: options.imageDetail ?? 'auto',
              }
            : file(p),
        );
      }
      if (content.length > 0) input.push({ type: 'message', role: 'user', content });
    } else if (turn.role === 'tool') {
      for (const result of turn.results) {
        input.push({
          type: 'function_call_output',
          call_id: responsesCallId(result.toolUseId),
          output: outputOf(result, input.length),
        });
      }
    } else {
      let text = '';
      const flushText = (): void => {
        if (text.length > 0) input.push({ type: 'message', role: 'assistant', content: text });
        text = '';
      };
      for (const block of turn.message.content) {
        if (block.type === 'text') {
          text += block.text;
        } else if (block.type === 'thinking') {
          const item = turn.sameApi ? reasoningItem(block.text, block.signature) : undefined;
          if (!item) continue;
          flushText();
          input.push(item);
        } else {
          flushText();
          input.push({
            type: 'function_call',
            call_id: responsesCallId(block.id),
            name: surfaceToolName(block.name, 64),
            arguments: JSON.stringify(block.input),
          });
        }
      }
      flushText();
    }
  }

  function outputOf(result: PreparedResult, itemIndex: number): ResponsesFunctionCallOutput['output'] {
    if (!result.parts.some((p) => p.kind !== 'text')) {
      const text = textOf(result.parts);
      return flagError(result, text.length > 0 ? text : EMPTY_RESULT_TEXT);
    }
    const out: Array<ResponsesInputText | ResponsesOutputImage | ResponsesInputFile> = [];
    if (result.isError && result.parts[0]?.kind !== 'text') out.push({ type: 'input_text', text: 'Error' });
    for (const p of result.parts) {
      if (p.kind === 'text') {
        if (p.text.length > 0) {
          out.push({ type: 'input_text', text: out.length === 0 ? flagError(result, p.text) : p.text });
        }
        continue;
      }
      media.push({ key: p.key, type: p.kind, path: `input[${itemIndex}].output[${out.length}]` });
      if (p.kind === 'image') {
        const image: ResponsesOutputImage = {
          type: 'input_image',
          image_url: partDataUrl(p.part),
        };
        if (options.imageDetail !== undefined) image.detail = options.imageDetail;
        out.push(image);
      } else {
        out.push(file(p));
      }
    }
    return out;
  }

  const body: OpenAIResponsesRequestBody = { model: info.id, input };
  if (prepared.system !== undefined) body.instructions = prepared.system;
  if (options.tools && options.tools.length > 0) body.tools = openAIResponsesTools(options.tools);
  if (options.maxTokens !== undefined) body.max_output_tokens = options.maxTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.store === false) {
    body.store = false;
    body.include = ['reasoning.encrypted_content'];
  }
  const effort = thinkingFor(info, options.thinking, prepared.warnings);
  if (effort !== undefined) body.reasoning = { effort };
  return { body, warnings: prepared.warnings, media };
}

/**
 * The Responses API caps `call_id` at 64 characters; ids from other providers' history can be longer. The same
 * deterministic mapping on `function_call` and `function_call_output` keeps a call and its result paired.
 */
function responsesCallId(id: string): string {
  return surfaceCallId(id, undefined, 64);
}

/** The `reasoning` item a thinking block stands for, or undefined when it did not come from this API. */
function reasoningItem(text: string, signature: string | undefined): ResponsesReasoningItem | undefined {
  if (signature === undefined || !signature.startsWith('{')) return undefined;
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = asObject(JSON.parse(signature));
  } catch {
    return undefined;
  }
  if (typeof parsed?.id !== 'string') return undefined;
  const item: ResponsesReasoningItem = {
    type: 'reasoning',
    id: parsed.id,
    summary: text.length > 0 ? [{ type: 'summary_text', text }] : [],
  };
  if (typeof parsed.encrypted_content === 'string') item.encrypted_content = parsed.encrypted_content;
  return item;
}

/** The thinking-block signature for a Responses `reasoning` item (see the module doc). */
export function reasoningSignature(id: string, encryptedContent?: string | null): string {
  return JSON.stringify(
    typeof encryptedContent === 'string' ? { id, encrypted_content: encryptedContent } : { id },
  );
}

/**
 * An `AssistantMessage` from a complete Responses API response (`Response`): `message` items give text (a refusal
 * gives text and stop reason `refusal`), `function_call` items give tool calls (`id` = `call_id`), `reasoning` items
 * give thinking blocks (summary text; `signature` as in the module doc). Status `incomplete` maps to `max_tokens` or
 * `refusal` by its reason, `failed` to `error` with the provider's message. Input tokens exclude cached ones.
 *
 * @throws PantoError `ERR_PROVIDER` for a body that is not a response object.
 */
export function parseOpenAIResponsesResponse(json: unknown): AssistantMessage {
  const root = asObject(json);
  if (!root || !Array.isArray(root.output)) {
    const error = asObject(root?.error);
    throw responseError(
      'openai-responses',
      error ? `error response: ${safeString(error.message ?? 'no message')}` : 'response has no output array',
    );
  }
  const content: AssistantMessage['content'] = [];
  let refused = false;
  let missingIds = 0;
  for (const raw of root.output) {
    const item = asObject(raw);
    if (item?.type === 'message') {
      for (const c of Array.isArray(item.content) ? item.content : []) {
        const part = asObject(c);
        if (part?.type === 'output_text' && typeof part.text === 'string') {
          content.push({ type: 'text', text: part.text });
        } else if (part?.type === 'refusal' && typeof part.refusal === 'string') {
          refused = true;
          content.push({ type: 'text', text: part.refusal });
        }
      }
    } else if (item?.type === 'function_call') {
      content.push(
        toolCallBlock(
          idOf(item.call_id) ?? idOf(item.id) ?? `call_${++missingIds}`,
          safeString(item.name ?? ''),
          typeof item.arguments === 'string' ? item.arguments : '',
        ),
      );
    } else if (item?.type === 'reasoning' && typeof item.id === 'string') {
      const summary = Array.isArray(item.summary) ? item.summary : [];
      const text = summary
        .map((s) => asObject(s)?.text)
        .filter((t): t is string => typeof t === 'string')
        .join('\n\n');
      const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined;
      content.push({ type: 'thinking', text, signature: reasoningSignature(item.id, encrypted) });
    }
  }

  const message: AssistantMessage = { role: 'assistant', content, stopReason: 'end' };
  const incomplete = asObject(root.incomplete_details)?.reason;
  if (root.status === 'failed') {
    message.stopReason = 'error';
    message.errorMessage = safeString(asObject(root.error)?.message ?? 'response failed');
  } else if (root.status === 'incomplete') {
    message.stopReason = mapResponsesIncompleteReason(incomplete);
  } else if (refused) {
    message.stopReason = 'refusal';
  } else if (content.some((b) => b.type === 'tool_call')) {
    message.stopReason = 'tool_use';
  }
  if (typeof root.model === 'string' && root.model !== '') message.model = root.model;
  const usage = asObject(root.usage);
  if (usage) message.usage = openAIResponsesUsage(usage);
  return message;
}

/** An `incomplete_details.reason` -> our stop reason (shared with the streaming parser). */
export function mapResponsesIncompleteReason(reason: unknown): StopReason {
  if (reason === 'content_filter') return 'refusal';
  if (reason === 'max_output_tokens') return 'max_tokens';
  return 'other';
}

/**
 * Responses `usage` -> our usage (shared with the streaming parser): input tokens exclude the cached ones, which are
 * reported as cache reads.
 */
export function openAIResponsesUsage(u: Record<string, unknown>): Usage {
  const cached = tokenCount(asObject(u.input_tokens_details)?.cached_tokens);
  const usage: Usage = {
    inputTokens: Math.max(0, tokenCount(u.input_tokens) - cached),
    outputTokens: tokenCount(u.output_tokens),
  };
  if (cached > 0) usage.cacheReadTokens = cached;
  return usage;
}
