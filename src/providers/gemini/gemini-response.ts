/**
 * Gemini `generateContent`: a complete (non-streaming) response back into an `AssistantMessage`, and the
 * finish-reason and usage mappings the streaming parser shares.
 */

import type { AssistantMessage, StopReason, ToolCallBlock, Usage } from '../../conversation.js';
import { addTokens, asObject, responseError, tokenCount } from '../common/response-common.js';
import { safeString } from '../common/safe-string.js';

/**
 * An `AssistantMessage` from a complete `generateContent` response (first candidate): text, thoughts (thinking blocks,
 * `signature` = their `thoughtSignature`), function calls (`providerData.thoughtSignature` when present; a call
 * without an id gets `gemini_<responseId>_<n>` and `providerData.syntheticId: true`), usage (input excludes cached
 * tokens; output includes thinking tokens) and stop reason (safety-type finishes map to `refusal`, a prompt blocked
 * before any candidate too).
 *
 * @throws PantoError `ERR_PROVIDER` for an error object or a body that is not a response.
 */
export function parseGeminiResponse(json: unknown): AssistantMessage {
  const root = asObject(Array.isArray(json) ? json[0] : json);
  const error = asObject(root?.error);
  if (!root || error) {
    throw responseError(
      'gemini',
      error ? `error response: ${safeString(error.message ?? 'no message')}` : 'not a response',
    );
  }
  const candidate = Array.isArray(root.candidates) ? asObject(root.candidates[0]) : undefined;
  const content: AssistantMessage['content'] = [];
  const idBase = `gemini_${typeof root.responseId === 'string' ? root.responseId.replace(/[^a-zA-Z0-9_-]/g, '') : 'call'}`;
  const parts = asObject(candidate?.content)?.parts;
  for (const raw of Array.isArray(parts) ? parts : []) {
    const part = asObject(raw);
    if (!part) continue;
    const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
    const call = asObject(part.functionCall);
    if (call) {
      const block: ToolCallBlock = {
        type: 'tool_call',
        id: typeof call.id === 'string' && call.id.length > 0 ? call.id : `${idBase}_${content.length}`,
        name: safeString(call.name ?? ''),
        input: asObject(call.args) ?? {},
      };
      const providerData: Record<string, unknown> = {};
      if (signature !== undefined) providerData.thoughtSignature = signature;
      if (!(typeof call.id === 'string' && call.id.length > 0)) providerData.syntheticId = true;
      if (Object.keys(providerData).length > 0) block.providerData = providerData;
      content.push(block);
    } else if (typeof part.text === 'string') {
      if (part.thought === true) {
        content.push({
          type: 'thinking',
          text: part.text,
          ...(signature !== undefined ? { signature } : {}),
        });
      } else if (part.text.length > 0) {
        content.push({ type: 'text', text: part.text });
      }
    }
  }

  const message: AssistantMessage = { role: 'assistant', content, stopReason: 'end' };
  const blocked = asObject(root.promptFeedback)?.blockReason;
  if (!candidate && typeof blocked === 'string') {
    message.stopReason = 'refusal';
    message.errorMessage = `prompt blocked: ${blocked}`;
  } else {
    message.stopReason = mapGeminiFinishReason(candidate?.finishReason);
    if (message.stopReason === 'error' && typeof candidate?.finishMessage === 'string') {
      message.errorMessage = candidate.finishMessage;
    }
    if (content.some((b) => b.type === 'tool_call') && message.stopReason === 'end')
      message.stopReason = 'tool_use';
  }
  if (typeof root.modelVersion === 'string' && root.modelVersion !== '') message.model = root.modelVersion;
  const usage = asObject(root.usageMetadata);
  if (usage) message.usage = geminiUsage(usage);
  return message;
}

/** Gemini `finishReason` -> our stop reason (shared with the streaming parser). */
export function mapGeminiFinishReason(reason: unknown): StopReason {
  switch (reason) {
    case undefined:
    case 'STOP':
      return 'end';
    case 'MAX_TOKENS':
      return 'max_tokens';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
    case 'MODEL_ARMOR':
      return 'refusal';
    case 'MALFORMED_FUNCTION_CALL':
    case 'UNEXPECTED_TOOL_CALL':
    case 'MISSING_THOUGHT_SIGNATURE':
    case 'MALFORMED_RESPONSE':
      return 'error';
    default:
      return 'other';
  }
}

/**
 * Gemini `usageMetadata` -> our usage (shared with the streaming parser): input includes tool-use prompt tokens and
 * excludes cached ones (reported as cache reads); output includes thinking tokens.
 */
export function geminiUsage(u: Record<string, unknown>): Usage {
  const cached = tokenCount(u.cachedContentTokenCount);
  const usage: Usage = {
    inputTokens: Math.max(
      0,
      addTokens(tokenCount(u.promptTokenCount), tokenCount(u.toolUsePromptTokenCount)) - cached,
    ),
    outputTokens: addTokens(tokenCount(u.candidatesTokenCount), tokenCount(u.thoughtsTokenCount)),
  };
  if (cached > 0) usage.cacheReadTokens = cached;
  return usage;
}
