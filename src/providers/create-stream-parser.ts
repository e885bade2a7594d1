/** The stream parser for a wire API. */

import { AnthropicStreamParser } from './anthropic-messages/anthropic-stream.js';
import type { StreamEvent } from './common/stream-event.js';
import type { SurfaceStreamParser } from './common/surface-parser.js';
import { GeminiStreamParser } from './gemini/gemini-stream.js';
import type { ModelApi } from './model/model-info.js';
import { OpenAIChatStreamParser } from './openai-chat/openai-chat-stream.js';
import { OpenAIResponsesStreamParser } from './openai-responses/openai-responses-stream.js';

/** A fresh parser for one response of `api`; events go to `emit` synchronously. */
export function createStreamParser(api: ModelApi, emit: (event: StreamEvent) => void): SurfaceStreamParser {
  switch (api) {
    case 'anthropic-messages':
      return new AnthropicStreamParser(emit);
    case 'openai-chat':
      return new OpenAIChatStreamParser(emit);
    case 'openai-responses':
      return new OpenAIResponsesStreamParser(emit);
    case 'gemini':
      return new GeminiStreamParser(emit);
  }
}
