export { AnthropicStreamParser, anthropicStreamError } from './anthropic-stream.js';
export { collectStream } from './collect-stream.js';
export { createStreamParser } from './create-stream-parser.js';
export { GeminiStreamParser } from './gemini-stream.js';
export { type InvalidToolArguments, MessageBuilder } from './message-builder.js';
export { OpenAIChatStreamParser } from './openai-chat-stream.js';
export { OpenAIResponsesStreamParser } from './openai-responses-stream.js';
export type { StreamEvent, TerminalStreamEvent } from './stream-event.js';
export { parseJsonData, type SurfaceStreamParser } from './surface-parser.js';
