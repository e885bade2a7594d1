/**
 * Per-surface HTTP details: default base URL, streaming endpoint, auth headers, API-key environment variables and the
 * streaming flags added to a serializer's body.
 *
 * - Anthropic Messages: `POST {base}/v1/messages`, `x-api-key`, `anthropic-version: 2023-06-01`, `stream: true`
 *   (https://docs.anthropic.com/en/api/messages).
 * - OpenAI Chat Completions: `POST {base}/chat/completions`, `Authorization: Bearer`, `stream: true`,
 *   `stream_options.include_usage` (https://platform.openai.com/docs/api-reference/chat/create). The base URL of an
 *   OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenRouter, DeepSeek) includes its `/v1`.
 * - OpenAI Responses: `POST {base}/responses`, `stream: true` (https://platform.openai.com/docs/api-reference/responses).
 * - Gemini: `POST {base}/models/{model}:streamGenerateContent?alt=sse`, `x-goog-api-key`
 *   (https://ai.google.dev/api/generate-content). The model travels in the path, never in the body.
 */

import type { ModelApi } from '../model/model-info.js';

export interface Endpoint {
  defaultBaseUrl: string;
  /** Environment variables read for the API key, in order. */
  keyEnv: readonly string[];
  url(baseUrl: string, model: string): string;
  authHeaders(apiKey: string): Record<string, string>;
  /** Fixed headers besides auth. */
  headers: Record<string, string>;
  /** The body to send: the serializer's body plus model and streaming flags. Never mutates `body`. */
  streamingBody(
    body: Record<string, unknown>,
    model: string,
    options: { includeUsage: boolean },
  ): Record<string, unknown>;
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

export const ENDPOINTS: Record<ModelApi, Endpoint> = {
  'anthropic-messages': {
    defaultBaseUrl: 'https://api.anthropic.com',
    keyEnv: ['ANTHROPIC_API_KEY'],
    url: (base) => `${trimSlash(base)}/v1/messages`,
    authHeaders: (key) => ({ 'x-api-key': key }),
    headers: { 'anthropic-version': '2023-06-01' },
    streamingBody: (body, model) => ({ ...body, model: body.model ?? model, stream: true }),
  },
  'openai-chat': {
    defaultBaseUrl: 'https://api.openai.com/v1',
    keyEnv: ['OPENAI_API_KEY'],
    url: (base) => `${trimSlash(base)}/chat/completions`,
    authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
    headers: {},
    streamingBody: (body, model, { includeUsage }) => {
      const out: Record<string, unknown> = { ...body, model: body.model ?? model, stream: true };
      if (includeUsage) {
        const prev = body.stream_options;
        out.stream_options = {
          ...(typeof prev === 'object' && prev !== null ? prev : {}),
          include_usage: true,
        };
      }
      return out;
    },
  },
  'openai-responses': {
    defaultBaseUrl: 'https://api.openai.com/v1',
    keyEnv: ['OPENAI_API_KEY'],
    url: (base) => `${trimSlash(base)}/responses`,
    authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
    headers: {},
    streamingBody: (body, model) => ({ ...body, model: body.model ?? model, stream: true }),
  },
  gemini: {
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    keyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    url: (base, model) =>
      `${trimSlash(base)}/models/${encodeURIComponent(model.replace(/^models\//, ''))}:streamGenerateContent?alt=sse`,
    authHeaders: (key) => ({ 'x-goog-api-key': key }),
    headers: {},
    streamingBody: (body) => {
      if (!('model' in body)) return body;
      const { model: _drop, ...rest } = body;
      return rest;
    },
  },
};
