/** The stream parser for a wire API. */

import type { ModelApi } from '../model-info.js';
import { AnthropicStreamParser } from './anthropic-stream.js';
import { GeminiStreamParser } from './gemini-stream.js';
import { OpenAIChatStreamParser } from './openai-chat-stream.js';
import { OpenAIResponsesStreamParser } from './openai-responses-stream.js';
import type { StreamEvent } from './stream-event.js';
import type { SurfaceStreamParser } from './surface-parser.js';

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
