/**
 * OpenAI Chat Completions: a complete (non-streaming) response (`ChatCompletion`) back into an `AssistantMessage`, and
 * the finish-reason and usage mappings the streaming parser shares.
 */

import type { AssistantMessage, StopReason, Usage } from '../../conversation.js';
import { argumentsJson } from '../common/argument-depth.js';
import { asObject, responseError, tokenCount, toolCallBlock } from '../common/response-common.js';
import { safeString } from '../common/safe-string.js';

/**
 * An `AssistantMessage` from a complete Chat Completions response (`ChatCompletion`, first choice): text (a refusal
 * becomes text with stop reason `refusal`), tool calls (arguments parsed; text that is not a JSON object gives
 * `input: {}` and `providerData.invalidArguments`; an argument object is taken as is; a call without an id gets
 * `call_<n>`, as in the stream), usage (input tokens exclude cached ones, reported as cache reads)
 * and stop reason (`tool_use` whenever the message calls tools — some compatible servers say `stop`).
 *
 * @throws PantoError `ERR_PROVIDER` for an error object or a body without choices.
 */
export function parseOpenAIChatResponse(json: unknown): AssistantMessage {
  const root = asObject(json);
  const error = asObject(root?.error);
  if (error)
    throw responseError('openai-chat', `error response: ${safeString(error.message ?? 'no message')}`);
  const choice = Array.isArray(root?.choices) ? asObject(root.choices[0]) : undefined;
  const msg = asObject(choice?.message);
  if (!root || !msg) throw responseError('openai-chat', 'response has no choices[0].message');

  const content: AssistantMessage['content'] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning.length > 0)
    content.push({ type: 'thinking', text: reasoning });
  if (typeof msg.content === 'string' && msg.content.length > 0)
    content.push({ type: 'text', text: msg.content });
  const refusal = typeof msg.refusal === 'string' && msg.refusal.length > 0 ? msg.refusal : undefined;
  if (refusal !== undefined) content.push({ type: 'text', text: refusal });
  let missingIds = 0;
  for (const raw of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    const call = asObject(raw);
    const fn = asObject(call?.function);
    if (!call || !fn) continue;
    // As the streaming parser: a server that omits ids gets `call_<n>`; Ollama sends `arguments` as an object.
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${++missingIds}`;
    const args = asObject(fn.arguments);
    const rawArguments = args
      ? argumentsJson('openai-chat', args)
      : typeof fn.arguments === 'string'
        ? fn.arguments
        : '';
    content.push(toolCallBlock(id, safeString(fn.name ?? ''), rawArguments));
  }

  let stopReason = refusal !== undefined ? 'refusal' : mapOpenAIChatFinishReason(choice?.finish_reason);
  if (content.some((b) => b.type === 'tool_call') && (stopReason === 'end' || stopReason === 'other')) {
    stopReason = 'tool_use';
  }
  const message: AssistantMessage = { role: 'assistant', content, stopReason };
  if (typeof root.model === 'string' && root.model !== '') message.model = root.model;
  const usage = asObject(root.usage);
  if (usage) message.usage = openAIChatUsage(usage);
  return message;
}

/** Chat Completions `finish_reason` -> our stop reason (shared with the streaming parser). */
export function mapOpenAIChatFinishReason(reason: unknown): StopReason {
  switch (reason) {
    case 'stop':
      return 'end';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'other';
  }
}

/**
 * Chat Completions `usage` -> our usage (shared with the streaming parser): input tokens exclude the cached ones,
 * which are reported as cache reads.
 */
export function openAIChatUsage(u: Record<string, unknown>): Usage {
  const prompt = tokenCount(u.prompt_tokens);
  const cached = tokenCount(asObject(u.prompt_tokens_details)?.cached_tokens);
  const usage: Usage = {
    inputTokens: Math.max(0, prompt - cached),
    outputTokens: tokenCount(u.completion_tokens),
  };
  if (cached > 0) usage.cacheReadTokens = cached;
  return usage;
}
