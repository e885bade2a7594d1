export type {
  AnthropicAssistantMessage,
  AnthropicMessage,
  AnthropicOptions,
  AnthropicRequestBody,
  AnthropicTool,
  AnthropicUserMessage,
} from './anthropic-messages/anthropic-messages.js';
export { anthropicTools, toAnthropicMessages } from './anthropic-messages/anthropic-messages.js';
export { parseAnthropicResponse } from './anthropic-messages/anthropic-response.js';
export { AnthropicStreamParser, anthropicStreamError } from './anthropic-messages/anthropic-stream.js';
export { collectStream } from './common/collect-stream.js';
export { MessageBuilder } from './common/message-builder.js';
export type { InvalidToolArguments } from './common/response-common.js';
export type {
  MediaRef,
  PartFilter,
  PartRef,
  SerializeOptions,
  SerializeResult,
  SerializeWarning,
  SerializeWarningCode,
  ThinkingLevel,
} from './common/serialize-options.js';
export { partKey } from './common/serialize-options.js';
export type { StreamEvent, TerminalStreamEvent } from './common/stream-event.js';
export { parseJsonData, type SurfaceStreamParser } from './common/surface-parser.js';
export { THINKING_BUDGETS } from './common/thinking.js';
export { createStreamParser } from './create-stream-parser.js';
export type {
  GeminiContent,
  GeminiOptions,
  GeminiPart,
  GeminiRequestBody,
  GeminiTool,
} from './gemini/gemini.js';
export { geminiTools, SKIP_THOUGHT_SIGNATURE, toGemini } from './gemini/gemini.js';
export { parseGeminiResponse } from './gemini/gemini-response.js';
export { GeminiStreamParser } from './gemini/gemini-stream.js';
export {
  createProvider,
  type Provider,
  type ProviderOptions,
  type ProviderRequest,
  type StreamOptions,
} from './http-provider.js';
export { defineModel, getModel, mediaPolicyFor, resolveModel } from './model/model-catalog.js';
export type {
  ManyImageRule,
  ModelApi,
  ModelInfo,
  ModelInput,
  ModelLimits,
  ModelOverrides,
  ModelSpec,
} from './model/model-info.js';
export type { ModelPrice, UsageCost } from './model/model-prices.js';
export { checkPrice, priceOf, usageCost } from './model/model-prices.js';
export type {
  OpenAIChatImageDetail,
  OpenAIChatMessage,
  OpenAIChatOptions,
  OpenAIChatRequestBody,
  OpenAIChatTool,
} from './openai-chat/openai-chat.js';
export { openAIChatTools, toOpenAIChat } from './openai-chat/openai-chat.js';
export { parseOpenAIChatResponse } from './openai-chat/openai-chat-response.js';
export { OpenAIChatStreamParser } from './openai-chat/openai-chat-stream.js';
export type {
  OpenAIResponsesImageDetail,
  OpenAIResponsesOptions,
  OpenAIResponsesRequestBody,
  ResponsesFunctionTool,
  ResponsesInputItem,
} from './openai-responses/openai-responses.js';
export { openAIResponsesTools, toOpenAIResponses } from './openai-responses/openai-responses.js';
export {
  parseOpenAIResponsesResponse,
  reasoningSignature,
} from './openai-responses/openai-responses-response.js';
export { OpenAIResponsesStreamParser } from './openai-responses/openai-responses-stream.js';
export { ENDPOINTS, type Endpoint } from './transport/endpoints.js';
export {
  extractProviderMessage,
  isRetryableStatus,
  ProviderError,
  type ProviderErrorDetails,
  type ProviderStall,
} from './transport/provider-error.js';
export {
  backoffDelay,
  parseRetryAfter,
  type ResolvedRetryOptions,
  type RetryOptions,
  resolveRetryOptions,
  sleep,
} from './transport/retry-policy.js';
export { readSseEvents, type SseEvent, SseParser } from './transport/sse-parser.js';
