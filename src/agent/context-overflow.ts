/**
 * Recognising a provider's "the request is longer than the context window" error, in each surface's words, and the
 * window size the provider states in it.
 *
 * Matched (HTTP 400/413/422 or an in-stream error, case-insensitive):
 * - Anthropic: `prompt is too long: 29066 tokens > 12000 maximum`; `input length and max_tokens exceed context limit`.
 * - OpenAI (Chat and Responses): code/type `context_length_exceeded`; `This model's maximum context length is 8192
 *   tokens`; `Your input exceeds the context window of this model`.
 * - Gemini: `The input token count (1234567) exceeds the maximum number of tokens allowed (1048576)`.
 * - llama.cpp: type `exceed_context_size_error`, `the request exceeds the available context size`; vLLM and most
 *   OpenAI-compatible servers use OpenAI's wording; Mistral `too large for model with 32768 maximum context length`;
 *   LM Studio `context length of only 4096 tokens`; Ollama / others `context window`/`context length` exceeded.
 */

import { ProviderError } from '../providers/transport/provider-error.js';

const TYPES = /^(context_length_exceeded|exceed_context_size_error|request_too_large)$/i;

const PHRASES: readonly RegExp[] = [
  /prompt is too long/i,
  /exceeds? (the )?context (limit|window|length|size)/i,
  /maximum context length/i,
  /context window (of this model )?(is )?exceeded|exceeds the context window/i,
  /input token count .*exceeds the maximum/i,
  /exceeds the available context size/i,
  /context length of only/i,
  /maximum context length|max(imum)? context (length|window)/i,
  /too many tokens|token limit exceeded|tokens? exceeds? (the )?(model'?s? )?(maximum|limit)/i,
  /context[_ ]length[_ ]exceeded/i,
];

/** True when `error` is a provider refusing a request for being longer than the model's context window. */
export function isContextOverflow(error: unknown): boolean {
  if (!(error instanceof ProviderError)) return false;
  if (error.status !== undefined && error.status !== 400 && error.status !== 413 && error.status !== 422) {
    return false;
  }
  if (error.providerType !== undefined && TYPES.test(error.providerType)) {
    // 413 request_too_large is about bytes (a picture-heavy body) only when the message does not talk about tokens.
    return error.providerType !== 'request_too_large' || /token/i.test(error.providerMessage);
  }
  return PHRASES.some((p) => p.test(error.providerMessage));
}

/** The context window the provider states in an overflow error (`> 12000 maximum`, `maximum context length is 8192`). */
export function statedContextWindow(error: unknown): number | undefined {
  if (!(error instanceof ProviderError)) return undefined;
  const m = error.providerMessage;
  const patterns = [
    /tokens? > (\d+) maximum/i,
    /maximum context length is (\d+)/i,
    /maximum number of tokens allowed \((\d+)\)/i,
    /(\d+) maximum context length/i,
    /context length of only (\d+)/i,
    /context (?:size|window|length)(?: is| of)? \(?(\d+)\)?/i,
  ];
  for (const p of patterns) {
    const n = Number(p.exec(m)?.[1]);
    if (Number.isInteger(n) && n > 0) return n;
  }
  return undefined;
}
