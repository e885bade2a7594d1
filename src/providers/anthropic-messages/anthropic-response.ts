/**
 * Anthropic Messages API: a complete (non-streaming) response (`Message`) back into an `AssistantMessage`, and the
 * stop-reason mapping the streaming parser shares.
 */

import type { AssistantMessage, StopReason, Usage } from '../../conversation.js';
import { asObject, idOf, responseError, tokenCount } from '../common/response-common.js';
import { safeString } from '../common/safe-string.js';

/**
 * An `AssistantMessage` from a complete Messages API response (`Message`): text, thinking (with signature; redacted
 * thinking keeps its data in `signature` with `redacted: true`), tool calls, usage and stop reason. Input tokens
 * exclude cache reads and writes (reported separately), as the API counts them.
 *
 * @throws PantoError `ERR_PROVIDER` for an error object or a body that is not a message.
 */
export function parseAnthropicResponse(json: unknown): AssistantMessage {
  const root = asObject(json);
  const error = asObject(root?.error);
  if (root?.type === 'error' || error) {
    throw responseError(
      'anthropic-messages',
      `error response: ${safeString(error?.message ?? 'no message')}`,
    );
  }
  if (!root || !Array.isArray(root.content)) {
    throw responseError('anthropic-messages', 'response has no content array');
  }
  const content: AssistantMessage['content'] = [];
  let missingIds = 0;
  for (const raw of root.content) {
    const block = asObject(raw);
    switch (block?.type) {
      case 'text':
        if (typeof block.text === 'string') content.push({ type: 'text', text: block.text });
        break;
      case 'thinking':
        content.push({
          type: 'thinking',
          text: typeof block.thinking === 'string' ? block.thinking : '',
          ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
        });
        break;
      case 'redacted_thinking':
        content.push({ type: 'thinking', text: '', signature: safeString(block.data ?? ''), redacted: true });
        break;
      case 'tool_use':
        content.push({
          type: 'tool_call',
          id: idOf(block.id) ?? `call_${++missingIds}`,
          name: safeString(block.name ?? ''),
          input: asObject(block.input) ?? {},
        });
        break;
      default:
        // Server tool blocks (web search, code execution...) are not part of this library's model.
        break;
    }
  }
  const message: AssistantMessage = {
    role: 'assistant',
    content,
    stopReason: mapAnthropicStopReason(root.stop_reason),
  };
  if (typeof root.model === 'string' && root.model !== '') message.model = root.model;
  const usage = usageOf(asObject(root.usage));
  if (usage) message.usage = usage;
  return message;
}

/** Anthropic `stop_reason` -> our stop reason (shared with the streaming parser). */
export function mapAnthropicStopReason(reason: unknown): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    default:
      return 'other';
  }
}

function usageOf(u: Record<string, unknown> | undefined): Usage | undefined {
  if (!u) return undefined;
  const usage: Usage = { inputTokens: tokenCount(u.input_tokens), outputTokens: tokenCount(u.output_tokens) };
  if (typeof u.cache_read_input_tokens === 'number')
    usage.cacheReadTokens = tokenCount(u.cache_read_input_tokens);
  if (typeof u.cache_creation_input_tokens === 'number')
    usage.cacheWriteTokens = tokenCount(u.cache_creation_input_tokens);
  return usage;
}
