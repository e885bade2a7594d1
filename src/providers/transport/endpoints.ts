/**
 * Per-surface HTTP details: default base URL, streaming endpoint, auth headers, API-key environment variables and the
 * streaming flags added to a serializer's body.
 *
 * - Anthropic Messages: `POST {base}/v1/messages`, `x-api-key`, `anthropic-version: 2023-06-01`, `stream: true`
 *   (https://docs.anthropic.com/en/api/messages).
 * - OpenAI Chat Completions: `POST {base}/chat/completions`, `Authorization: Bearer`, `stream: true`,
 *   `stream_options.include_usage` (https://platform.openai.com/docs/api-reference/chat/create).
 * - OpenAI Responses: `POST {base}/responses`, `stream: true` (https://platform.openai.com/docs/api-reference/responses).
 * - Gemini: `POST {base}/models/{model}:streamGenerateContent?alt=sse`, `x-goog-api-key`
 *   (https://ai.google.dev/api/generate-content). The model travels in the path, never in the body.
 *
 * Base URLs are taken in both spellings: with the API version (`https://api.anthropic.com/v1`,
 * `http://127.0.0.1:8080/v1`, `…/v1beta`) or without it (a bare origin: `http://127.0.0.1:8080`). Anthropic's paths
 * carry `/v1` themselves, so a base ending in `/v1` loses it; the OpenAI surfaces get `/v1` and Gemini `/v1beta` when
 * the base has no path at all (a base with another path — OpenRouter's `/api/v1`, a proxy's prefix — is used as is).
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

/** `base` without a final `/v1` (Anthropic's paths add it). */
const withoutV1 = (base: string) => trimSlash(base).replace(/\/v1$/, '');

/** `base`, plus `/${version}` when it is a bare origin (no path). */
function versioned(base: string, version: string): string {
  const trimmed = trimSlash(base);
  try {
    const url = new URL(trimmed);
    if ((url.pathname === '/' || url.pathname === '') && url.search === '') return `${trimmed}/${version}`;
  } catch {
    // Not a URL: fetch reports it, naming it.
  }
  return trimmed;
}

export const ENDPOINTS: Record<ModelApi, Endpoint> = {
  'anthropic-messages': {
    defaultBaseUrl: 'https://api.anthropic.com',
    keyEnv: ['ANTHROPIC_API_KEY'],
    url: (base) => `${withoutV1(base)}/v1/messages`,
    authHeaders: (key) => ({ 'x-api-key': key }),
    headers: { 'anthropic-version': '2023-06-01' },
    streamingBody: (body, model) => ({ ...body, model: body.model ?? model, stream: true }),
  },
  'openai-chat': {
    defaultBaseUrl: 'https://api.openai.com/v1',
    keyEnv: ['OPENAI_API_KEY'],
    url: (base) => `${versioned(base, 'v1')}/chat/completions`,
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
    url: (base) => `${versioned(base, 'v1')}/responses`,
    authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
    headers: {},
    streamingBody: (body, model) => ({ ...body, model: body.model ?? model, stream: true }),
  },
  gemini: {
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    keyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    url: (base, model) =>
      `${versioned(base, 'v1beta')}/models/${encodeURIComponent(model.replace(/^models\//, ''))}:streamGenerateContent?alt=sse`,
    authHeaders: (key) => ({ 'x-goog-api-key': key }),
    headers: {},
    streamingBody: (body) => {
      if (!('model' in body)) return body;
      const { model: _drop, ...rest } = body;
      return rest;
    },
  },
};
