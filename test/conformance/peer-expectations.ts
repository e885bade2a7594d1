/**
 * Expectations for what the official SDK cannot tell us, taken from the recording's own peer test.
 *
 * 1. Streams the SDK itself refuses (its accumulator throws). The expectation is what the test that ships the
 *    recording asserts, cited by repository, commit, file and test name.
 * 2. OpenAI Chat reasoning text (`delta.reasoning_content` — DeepSeek, xAI, Moonshot…; `delta.reasoning` —
 *    OpenRouter, Ollama): not part of the Chat Completions spec. openai-node's ChatCompletionStream copies unknown
 *    delta fields onto the message with `Object.assign` (the last chunk's fragment wins), so its "reasoning" is only
 *    the final fragment. vercel/ai's compatible providers (the source of these recordings) concatenate the fragments
 *    in order (`@ai-sdk/openai-compatible` `doStream`: `reasoning-delta` per chunk); the expectation is that
 *    concatenation, read from the recording.
 */

import type { Outcome } from './stream-outcome.js';

export interface PeerExpectation {
  /** Where the expectation comes from. */
  source: string;
  /** Why the SDK's own accumulator gives none. */
  reason: string;
  expected: Outcome;
}

export const PEER_EXPECTATIONS: Readonly<Record<string, PeerExpectation>> = {
  'openai-chat/vercel-anthropic-fallback-tool-call.sse': {
    source:
      'vercel/ai @ 4bfb386e2dd0f8775b140a651a549ddc0b6e7352 packages/openai-compatible/src/chat/' +
      "openai-compatible-chat-language-model.test.ts, 'should stream a tool call whose index starts at one': text " +
      "'Reading it.', one tool call {toolCallId 'toolu_sanitized', toolName 'read_file', input '{\"path\": \"a.txt\"}'}, " +
      'then finish (finish_reason tool_calls; the stream carries no usage).',
    reason:
      'openai-node\'s ChatCompletionStream indexes tool calls by `index` from 0 and throws ("Cannot read properties ' +
      "of undefined (reading 'id')\") on a first call with index 1, as Anthropic's OpenAI-compatible endpoint sends.",
    expected: {
      kind: 'message',
      text: 'Reading it.',
      thinking: '',
      toolCalls: [{ id: 'toolu_sanitized', name: 'read_file', input: { path: 'a.txt' } }],
      usage: undefined,
      stopReason: 'tool_use',
    },
  },
};

/** OpenAI Chat reasoning as vercel/ai's compatible providers assemble it: every chunk's fragment, in order. */
export function chatReasoningFromRecording(body: string): string {
  let out = '';
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]' || data === '') continue;
    const chunk = JSON.parse(data) as { choices?: Array<{ delta?: Record<string, unknown> }> };
    const delta = chunk.choices?.[0]?.delta;
    const fragment = delta?.reasoning_content ?? delta?.reasoning;
    if (typeof fragment === 'string') out += fragment;
  }
  return out;
}
