/** The four serializers behind one signature, with the model each golden uses. */

import type { Conversation } from '../../src/conversation.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import type { SerializeOptions, SerializeResult } from '../../src/providers/common/serialize-options.js';
import { toGemini } from '../../src/providers/gemini/gemini.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import type { ModelApi, ModelInfo } from '../../src/providers/model/model-info.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';

export interface Surface {
  api: ModelApi;
  /** The model the goldens use. */
  model: ModelInfo;
  serialize: (
    conversation: Conversation,
    model: ModelInfo,
    options?: SerializeOptions,
  ) => SerializeResult<unknown>;
}

export const surfaces: Surface[] = [
  { api: 'anthropic-messages', model: resolveModel('claude-sonnet-4-5'), serialize: toAnthropicMessages },
  { api: 'openai-chat', model: resolveModel('gpt-4.1', { api: 'openai-chat' }), serialize: toOpenAIChat },
  { api: 'openai-responses', model: resolveModel('gpt-5'), serialize: toOpenAIResponses },
  { api: 'gemini', model: resolveModel('gemini-3-pro-preview'), serialize: toGemini },
];
