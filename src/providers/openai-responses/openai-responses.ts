/**
 * OpenAI Responses API (`POST /v1/responses`): the request body from a conversation (the response side is
 * openai-responses-response.ts and openai-responses-stream.ts). Follows https://platform.openai.com/docs/api-reference/responses/create
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

import type { Conversation, Message } from '../../conversation.js';
import type { ToolDecl } from '../../tool.js';
import { prepareConversation } from '../common/prepare-conversation.js';
import type { PreparedPart, PreparedResult } from '../common/prepared.js';
import { asObject } from '../common/response-common.js';
import type { MediaRef, SerializeOptions, SerializeResult } from '../common/serialize-options.js';
import {
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
