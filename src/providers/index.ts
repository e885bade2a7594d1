export type {
  AnthropicAssistantMessage,
  AnthropicMessage,
  AnthropicOptions,
  AnthropicRequestBody,
  AnthropicTool,
  AnthropicUserMessage,
} from './anthropic-messages.js';
export { anthropicTools, parseAnthropicResponse, toAnthropicMessages } from './anthropic-messages.js';
export type { GeminiContent, GeminiOptions, GeminiPart, GeminiRequestBody, GeminiTool } from './gemini.js';
export { geminiTools, parseGeminiResponse, SKIP_THOUGHT_SIGNATURE, toGemini } from './gemini.js';
export { defineModel, getModel, mediaPolicyFor, resolveModel } from './model-catalog.js';
export type {
  ManyImageRule,
  ModelApi,
  ModelInfo,
  ModelInput,
  ModelLimits,
  ModelOverrides,
  ModelSpec,
} from './model-info.js';
export type { ModelPrice, UsageCost } from './model-prices.js';
export { checkPrice, priceOf, usageCost } from './model-prices.js';
export type {
  OpenAIChatImageDetail,
  OpenAIChatMessage,
  OpenAIChatOptions,
  OpenAIChatRequestBody,
  OpenAIChatTool,
} from './openai-chat.js';
export { openAIChatTools, parseOpenAIChatResponse, toOpenAIChat } from './openai-chat.js';
export type {
  OpenAIResponsesImageDetail,
  OpenAIResponsesOptions,
  OpenAIResponsesRequestBody,
  ResponsesFunctionTool,
  ResponsesInputItem,
} from './openai-responses.js';
export {
  openAIResponsesTools,
  parseOpenAIResponsesResponse,
  reasoningSignature,
  toOpenAIResponses,
} from './openai-responses.js';
export type {
  MediaRef,
  PartFilter,
  PartRef,
  SerializeOptions,
  SerializeResult,
  SerializeWarning,
  SerializeWarningCode,
  ThinkingLevel,
} from './serialize-options.js';
export { partKey } from './serialize-options.js';
export { THINKING_BUDGETS } from './thinking.js';
