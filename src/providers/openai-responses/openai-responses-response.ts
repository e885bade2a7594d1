/**
 * OpenAI Responses API: a complete (non-streaming) response (`Response`) back into an `AssistantMessage`, and the
 * reasoning-signature, incomplete-reason and usage mappings the streaming parser shares.
 */

import type { AssistantMessage, StopReason, Usage } from '../../conversation.js';
import { asObject, idOf, responseError, tokenCount, toolCallBlock } from '../common/response-common.js';
import { safeString } from '../common/safe-string.js';

/** The thinking-block signature for a Responses `reasoning` item (see the module doc). */
export function reasoningSignature(id: string, encryptedContent?: string | null): string {
  return JSON.stringify(
    typeof encryptedContent === 'string' ? { id, encrypted_content: encryptedContent } : { id },
  );
}

/**
 * An `AssistantMessage` from a complete Responses API response (`Response`): `message` items give text (a refusal
 * gives text and stop reason `refusal`), `function_call` items give tool calls (`id` = `call_id`), `reasoning` items
 * give thinking blocks (summary text; `signature` as in the module doc). Status `incomplete` maps to `max_tokens` or
 * `refusal` by its reason, `failed` to `error` with the provider's message. Input tokens exclude cached ones.
 *
 * @throws PantoError `ERR_PROVIDER` for a body that is not a response object.
 */
export function parseOpenAIResponsesResponse(json: unknown): AssistantMessage {
  const root = asObject(json);
  if (!root || !Array.isArray(root.output)) {
    const error = asObject(root?.error);
    throw responseError(
      'openai-responses',
      error ? `error response: ${safeString(error.message ?? 'no message')}` : 'response has no output array',
    );
  }
  const content: AssistantMessage['content'] = [];
  let refused = false;
  let missingIds = 0;
  for (const raw of root.output) {
    const item = asObject(raw);
    if (item?.type === 'message') {
      for (const c of Array.isArray(item.content) ? item.content : []) {
        const part = asObject(c);
        if (part?.type === 'output_text' && typeof part.text === 'string') {
          content.push({ type: 'text', text: part.text });
        } else if (part?.type === 'refusal' && typeof part.refusal === 'string') {
          refused = true;
          content.push({ type: 'text', text: part.refusal });
        }
      }
    } else if (item?.type === 'function_call') {
      content.push(
        toolCallBlock(
          idOf(item.call_id) ?? idOf(item.id) ?? `call_${++missingIds}`,
          safeString(item.name ?? ''),
          typeof item.arguments === 'string' ? item.arguments : '',
        ),
      );
    } else if (item?.type === 'reasoning' && typeof item.id === 'string') {
      const summary = Array.isArray(item.summary) ? item.summary : [];
      const text = summary
        .map((s) => asObject(s)?.text)
        .filter((t): t is string => typeof t === 'string')
        .join('\n\n');
      const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined;
      content.push({ type: 'thinking', text, signature: reasoningSignature(item.id, encrypted) });
    }
  }

  const message: AssistantMessage = { role: 'assistant', content, stopReason: 'end' };
  const incomplete = asObject(root.incomplete_details)?.reason;
  if (root.status === 'failed') {
    message.stopReason = 'error';
    message.errorMessage = safeString(asObject(root.error)?.message ?? 'response failed');
  } else if (root.status === 'incomplete') {
    message.stopReason = mapResponsesIncompleteReason(incomplete);
  } else if (refused) {
    message.stopReason = 'refusal';
  } else if (content.some((b) => b.type === 'tool_call')) {
    message.stopReason = 'tool_use';
  }
  if (typeof root.model === 'string' && root.model !== '') message.model = root.model;
  const usage = asObject(root.usage);
  if (usage) message.usage = openAIResponsesUsage(usage);
  return message;
}

/** An `incomplete_details.reason` -> our stop reason (shared with the streaming parser). */
export function mapResponsesIncompleteReason(reason: unknown): StopReason {
  if (reason === 'content_filter') return 'refusal';
  if (reason === 'max_output_tokens') return 'max_tokens';
  return 'other';
}

/**
 * Responses `usage` -> our usage (shared with the streaming parser): input tokens exclude the cached ones, which are
 * reported as cache reads.
 */
export function openAIResponsesUsage(u: Record<string, unknown>): Usage {
  const cached = tokenCount(asObject(u.input_tokens_details)?.cached_tokens);
  const usage: Usage = {
    inputTokens: Math.max(0, tokenCount(u.input_tokens) - cached),
    outputTokens: tokenCount(u.output_tokens),
  };
  if (cached > 0) usage.cacheReadTokens = cached;
  return usage;
}
