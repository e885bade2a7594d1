/**
 * Type-level tests, checked by `tsc --noEmit -p tsconfig.json` (part of `npm test`); never executed.
 *
 * 1. Every body a serializer returns `satisfies` the official SDK request type.
 * 2. Every wire interface we declare has no key the SDK type lacks (`NoExtraKeys`), so the `satisfies` checks cannot
 *    pass because of a loose type of ours and no invented field reaches the wire.
 *
 * Gemini: the SDK's `GenerateContentParameters` is `{model, contents, config}` while the REST body is
 * `{contents, systemInstruction, tools, generationConfig}` (model in the URL). Each REST field is checked against the
 * SDK type it carries (`Content`, `Tool`, `GenerationConfig`), and `toSdkParams` below spells out the mapping and
 * checks it against `GenerateContentParameters`.
 */

import type {
  Tool as AnthropicSdkTool,
  AssistantMessageParam,
  Base64ImageSource,
  Base64PDFSource,
  CacheControlEphemeral,
  DocumentBlockParam,
  ImageBlockParam,
  MessageCreateParamsNonStreaming,
  RedactedThinkingBlockParam,
  TextBlockParam,
  ThinkingBlockParam,
  ToolResultBlockParam,
  ToolUseBlockParam,
  UserMessageParam,
} from '@anthropic-ai/sdk/resources/messages';
import type * as genai from '@google/genai';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionContentPart,
  ChatCompletionContentPartImage,
  ChatCompletionContentPartText,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionSystemMessageParam,
  ChatCompletionToolMessageParam,
  ChatCompletionUserMessageParam,
} from 'openai/resources/chat/completions';
import type {
  EasyInputMessage,
  FunctionTool,
  ResponseCreateParamsNonStreaming,
  ResponseFunctionToolCall,
  ResponseInputFile,
  ResponseInputFileContent,
  ResponseInputImage,
  ResponseInputImageContent,
  ResponseInputItem,
  ResponseInputText,
  ResponseInputTextContent,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';
import type { Conversation } from '../../src/conversation.js';
import {
  type AnthropicAssistantMessage,
  type AnthropicCacheControl,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicRedactedThinkingBlock,
  type AnthropicRequestBody,
  type AnthropicTextBlock,
  type AnthropicThinkingBlock,
  type AnthropicTool,
  type AnthropicToolResultBlock,
  type AnthropicToolUseBlock,
  type AnthropicUserMessage,
  anthropicTools,
  toAnthropicMessages,
} from '../../src/providers/anthropic-messages/anthropic-messages.js';
import {
  type GeminiBlob,
  type GeminiContent,
  type GeminiFunctionCallPart,
  type GeminiFunctionDeclaration,
  type GeminiFunctionResponsePart,
  type GeminiInlineDataPart,
  type GeminiRequestBody,
  type GeminiTextPart,
  type GeminiTool,
  geminiTools,
  toGemini,
} from '../../src/providers/gemini/gemini.js';
import {
  type OpenAIChatAssistantMessage,
  type OpenAIChatFilePart,
  type OpenAIChatImagePart,
  type OpenAIChatRequestBody,
  type OpenAIChatSystemMessage,
  type OpenAIChatTextPart,
  type OpenAIChatTool,
  type OpenAIChatToolCall,
  type OpenAIChatToolMessage,
  type OpenAIChatUserMessage,
  openAIChatTools,
  toOpenAIChat,
} from '../../src/providers/openai-chat/openai-chat.js';
import {
  type OpenAIResponsesRequestBody,
  openAIResponsesTools,
  type ResponsesAssistantMessage,
  type ResponsesFunctionCall,
  type ResponsesFunctionCallOutput,
  type ResponsesFunctionTool,
  type ResponsesInputFile,
  type ResponsesInputImage,
  type ResponsesInputText,
  type ResponsesOutputImage,
  type ResponsesReasoningItem,
  type ResponsesUserMessage,
  toOpenAIResponses,
} from '../../src/providers/openai-responses/openai-responses.js';

declare const conversation: Conversation;

/** `true` when `Ours` declares no key that `Theirs` lacks; otherwise names the extra keys in the error. */
type NoExtraKeys<Ours, Theirs> = [Exclude<keyof Ours, keyof Theirs>] extends [never]
  ? true
  : { extraKeys: Exclude<keyof Ours, keyof Theirs> };
function check<T extends true>(): T | undefined {
  return undefined;
}

// 1. Whole bodies satisfy the SDK request types.
toAnthropicMessages(conversation, 'claude-sonnet-4-5').body satisfies MessageCreateParamsNonStreaming;
toOpenAIChat(conversation, 'gpt-4.1').body satisfies ChatCompletionCreateParamsNonStreaming;
toOpenAIResponses(conversation, 'gpt-5').body satisfies ResponseCreateParamsNonStreaming;
const gemini = toGemini(conversation, 'gemini-3-pro-preview').body;
gemini.contents satisfies genai.Content[];
gemini.systemInstruction satisfies genai.Content | undefined;
gemini.tools satisfies genai.Tool[] | undefined;
// The SDK types thinkingLevel as a TS enum (string literals do not assign to it); the REST field takes its values.
type RestThinkingConfig = Omit<genai.ThinkingConfig, 'thinkingLevel'> & {
  thinkingLevel?: `${genai.ThinkingLevel}`;
};
type RestGenerationConfig = Omit<genai.GenerationConfig, 'thinkingConfig'> & {
  thinkingConfig?: RestThinkingConfig;
};
gemini.generationConfig satisfies RestGenerationConfig | undefined;

/** REST body → SDK parameters (what `ai.models.generateContent(params)` would take for the same request). */
function toSdkParams(model: string, body: GeminiRequestBody): genai.GenerateContentParameters {
  const { thinkingConfig, ...rest } = body.generationConfig ?? {};
  const config: genai.GenerateContentConfig = { ...rest };
  if (thinkingConfig)
    config.thinkingConfig = {
      ...thinkingConfig,
      thinkingLevel: thinkingConfig.thinkingLevel as genai.ThinkingLevel,
    };
  if (body.systemInstruction) config.systemInstruction = body.systemInstruction;
  if (body.tools) config.tools = body.tools;
  return { model, contents: body.contents, config };
}
toSdkParams('gemini-3-pro-preview', gemini) satisfies genai.GenerateContentParameters;

// Tool declarations on their own.
anthropicTools([]) satisfies AnthropicSdkTool[];
openAIChatTools([]) satisfies ChatCompletionFunctionTool[];
openAIResponsesTools([]) satisfies FunctionTool[];
geminiTools([]) satisfies genai.Tool[];

// 2. No invented keys, member by member.
export const anthropicKeys = [
  check<NoExtraKeys<AnthropicRequestBody, MessageCreateParamsNonStreaming>>(),
  check<NoExtraKeys<AnthropicUserMessage, UserMessageParam>>(),
  check<NoExtraKeys<AnthropicAssistantMessage, AssistantMessageParam>>(),
  check<NoExtraKeys<AnthropicTextBlock, TextBlockParam>>(),
  check<NoExtraKeys<AnthropicImageBlock, ImageBlockParam>>(),
  check<NoExtraKeys<AnthropicImageBlock['source'], Base64ImageSource>>(),
  check<NoExtraKeys<AnthropicDocumentBlock, DocumentBlockParam>>(),
  check<NoExtraKeys<AnthropicDocumentBlock['source'], Base64PDFSource>>(),
  check<NoExtraKeys<AnthropicToolResultBlock, ToolResultBlockParam>>(),
  check<NoExtraKeys<AnthropicThinkingBlock, ThinkingBlockParam>>(),
  check<NoExtraKeys<AnthropicRedactedThinkingBlock, RedactedThinkingBlockParam>>(),
  check<NoExtraKeys<AnthropicToolUseBlock, ToolUseBlockParam>>(),
  check<NoExtraKeys<AnthropicTool, AnthropicSdkTool>>(),
  check<NoExtraKeys<AnthropicCacheControl, CacheControlEphemeral>>(),
];
({}) as AnthropicToolResultBlock satisfies ToolResultBlockParam;
({}) as AnthropicThinkingBlock satisfies ThinkingBlockParam;
({}) as AnthropicRedactedThinkingBlock satisfies RedactedThinkingBlockParam;

export const openAIChatKeys = [
  check<NoExtraKeys<OpenAIChatRequestBody, ChatCompletionCreateParamsNonStreaming>>(),
  check<NoExtraKeys<OpenAIChatSystemMessage, ChatCompletionSystemMessageParam>>(),
  check<NoExtraKeys<OpenAIChatUserMessage, ChatCompletionUserMessageParam>>(),
  check<NoExtraKeys<OpenAIChatAssistantMessage, ChatCompletionAssistantMessageParam>>(),
  check<NoExtraKeys<OpenAIChatToolMessage, ChatCompletionToolMessageParam>>(),
  check<NoExtraKeys<OpenAIChatToolCall, ChatCompletionMessageFunctionToolCall>>(),
  check<NoExtraKeys<OpenAIChatTextPart, ChatCompletionContentPartText>>(),
  check<NoExtraKeys<OpenAIChatImagePart, ChatCompletionContentPartImage>>(),
  check<NoExtraKeys<OpenAIChatImagePart['image_url'], ChatCompletionContentPartImage.ImageURL>>(),
  check<NoExtraKeys<OpenAIChatFilePart, ChatCompletionContentPart.File>>(),
  check<NoExtraKeys<OpenAIChatFilePart['file'], ChatCompletionContentPart.File.File>>(),
  check<NoExtraKeys<OpenAIChatTool, ChatCompletionFunctionTool>>(),
];
// A tool message carries text only: its content must not accept image parts.
({}) as OpenAIChatToolMessage satisfies ChatCompletionToolMessageParam;

export const responsesKeys = [
  check<NoExtraKeys<OpenAIResponsesRequestBody, ResponseCreateParamsNonStreaming>>(),
  check<NoExtraKeys<ResponsesUserMessage, EasyInputMessage>>(),
  check<NoExtraKeys<ResponsesAssistantMessage, EasyInputMessage>>(),
  check<NoExtraKeys<ResponsesReasoningItem, ResponseReasoningItem>>(),
  check<NoExtraKeys<ResponsesFunctionCall, ResponseFunctionToolCall>>(),
  check<NoExtraKeys<ResponsesFunctionCallOutput, ResponseInputItem.FunctionCallOutput>>(),
  check<NoExtraKeys<ResponsesInputText, ResponseInputText>>(),
  check<NoExtraKeys<ResponsesInputText, ResponseInputTextContent>>(),
  check<NoExtraKeys<ResponsesInputImage, ResponseInputImage>>(),
  check<NoExtraKeys<ResponsesOutputImage, ResponseInputImageContent>>(),
  check<NoExtraKeys<ResponsesInputFile, ResponseInputFile>>(),
  check<NoExtraKeys<ResponsesInputFile, ResponseInputFileContent>>(),
  check<NoExtraKeys<ResponsesFunctionTool, FunctionTool>>(),
];
({}) as ResponsesUserMessage satisfies EasyInputMessage;
({}) as ResponsesFunctionCallOutput satisfies ResponseInputItem.FunctionCallOutput;
({}) as ResponsesReasoningItem satisfies ResponseReasoningItem;

export const geminiKeys = [
  check<NoExtraKeys<GeminiRequestBody, GeminiRestBodyKeys>>(),
  check<NoExtraKeys<GeminiContent, genai.Content>>(),
  check<NoExtraKeys<GeminiTextPart, genai.Part>>(),
  check<NoExtraKeys<GeminiInlineDataPart, genai.Part>>(),
  check<NoExtraKeys<GeminiBlob, genai.Blob>>(),
  check<NoExtraKeys<GeminiFunctionCallPart, genai.Part>>(),
  check<NoExtraKeys<GeminiFunctionCallPart['functionCall'], genai.FunctionCall>>(),
  check<NoExtraKeys<GeminiFunctionResponsePart, genai.Part>>(),
  check<NoExtraKeys<GeminiFunctionResponsePart['functionResponse'], genai.FunctionResponse>>(),
  check<NoExtraKeys<GeminiTool, genai.Tool>>(),
  check<NoExtraKeys<GeminiFunctionDeclaration, genai.FunctionDeclaration>>(),
  check<NoExtraKeys<NonNullable<GeminiRequestBody['generationConfig']>, genai.GenerationConfig>>(),
];
({}) as GeminiFunctionResponsePart['functionResponse'] satisfies genai.FunctionResponse;
({}) as GeminiFunctionCallPart satisfies genai.Part;

/** Top-level fields of the REST `GenerateContentRequest` (https://ai.google.dev/api/generate-content). */
interface GeminiRestBodyKeys {
  contents: unknown;
  systemInstruction: unknown;
  tools: unknown;
  toolConfig: unknown;
  generationConfig: unknown;
  safetySettings: unknown;
  cachedContent: unknown;
}
