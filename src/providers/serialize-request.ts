/** The request body for a model's wire API: one entry point over the four serializers. */

import type { Message } from '../conversation.js';
import { type AnthropicOptions, toAnthropicMessages } from './anthropic-messages/anthropic-messages.js';
import type { SerializeResult } from './common/serialize-options.js';
import { type GeminiOptions, toGemini } from './gemini/gemini.js';
import type { ModelInfo } from './model/model-info.js';
import { type OpenAIChatOptions, toOpenAIChat } from './openai-chat/openai-chat.js';
import { type OpenAIResponsesOptions, toOpenAIResponses } from './openai-responses/openai-responses.js';

/** Options of every surface's serializer; each serializer reads the ones it knows. */
export type RequestOptions = AnthropicOptions & OpenAIChatOptions & OpenAIResponsesOptions & GeminiOptions;

/** Serialize `messages` for `model.api`. Pure. */
export function serializeRequest(
  messages: readonly Message[],
  model: ModelInfo,
  options: RequestOptions,
): SerializeResult<Record<string, unknown>> {
  switch (model.api) {
    case 'anthropic-messages':
      return widen(toAnthropicMessages(messages, model, options));
    case 'openai-chat':
      return widen(toOpenAIChat(messages, model, options));
    case 'openai-responses':
      return widen(toOpenAIResponses(messages, model, options));
    case 'gemini':
      return widen(toGemini(messages, model, options));
  }
}

function widen<B extends object>(result: SerializeResult<B>): SerializeResult<Record<string, unknown>> {
  return result as unknown as SerializeResult<Record<string, unknown>>;
}
