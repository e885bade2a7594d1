/**
 * `ProviderFiles`: upload an image/PDF once to a provider's Files API and delete it again — Anthropic (`POST
 * /v1/files`, beta `files-api-2025-04-14`), OpenAI (`POST /files`: Responses `file_id`s, and Chat Completions
 * `file.file_id` for PDFs — Chat cannot reference an image by id, its images stay inline) and Gemini (the resumable
 * File API; files expire after 48 h).
 *
 * Contract:
 * - An id belongs to the provider and account that minted it. `account` is a fingerprint of the credential (the
 *   first 16 hex digits of a sha256 over the API key and any auth header; never the credential), so a cache keyed by
 *   (`api`, `baseUrl`, `account`) never hands an id to another provider or another key.
 * - `upload` resolves to the file, or rejects with a `ProviderError` (`retryable` as the transport sets it; a refusal,
 *   a garbage or oversized answer is not retryable) or `ERR_ABORTED`. Each HTTP exchange has a deadline
 *   (`timeoutMs`); redirects are never followed; a Gemini upload URL on another origin than the base URL is refused
 *   (the key is never sent there).
 * - `delete` resolves when the file is gone, also when it was gone already (404).
 */

import { createHash } from 'node:crypto';
import { PantoError } from '../../errors.js';
import type { ModelApi } from '../model/model-info.js';
import { apiBase, ENDPOINTS } from '../transport/endpoints.js';
import { anthropicFiles } from './anthropic-files.js';
import type { FilesContext, ProviderFiles } from './file-types.js';
import { geminiFiles } from './gemini-files.js';
import { openAIFiles } from './openai-files.js';

export interface ProviderFilesOptions {
  api: ModelApi;
  baseUrl?: string;
  apiKey?: string;
  /** Extra headers on every Files API request (a gateway's auth; they count towards `account`). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** Where API keys are read from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Deadline of each HTTP exchange (an upload's bytes included), in ms. Default 120,000. */
  timeoutMs?: number;
  /** Gemini: how long to wait between polls of a file still `PROCESSING`, in ms. Default 1,000. */
  pollMs?: number;
}

/** Headers whose values are credentials (they feed `account`). */
const AUTH_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'api-key']);

/**
 * The Files API client for a provider (OpenAI Chat Completions and Responses share OpenAI's; Chat references PDFs
 * only). Reads the key as `createProvider` does.
 */
export function createProviderFiles(options: ProviderFilesOptions): ProviderFiles {
  const endpoint = ENDPOINTS[options.api];
  if (endpoint === undefined) {
    throw new PantoError('ERR_INVALID_ARGUMENT', `createProviderFiles: unknown api '${String(options.api)}'`);
  }
  const env = options.env ?? process.env;
  const apiKey =
    options.apiKey ?? endpoint.keyEnv.map((k) => env[k]).find((v) => v !== undefined && v !== '');
  const baseUrl = apiBase(options.api, options.baseUrl ?? endpoint.defaultBaseUrl);
  const headers: Record<string, string> = {
    ...endpoint.headers,
    ...(apiKey === undefined ? {} : endpoint.authHeaders(apiKey)),
    ...options.headers,
  };
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!(timeoutMs > 0)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `createProviderFiles: timeoutMs must be > 0, got ${timeoutMs}`,
    );
  }
  const ctx: FilesContext = {
    ex: { api: `${options.api} files`, fetch: options.fetch ?? globalThis.fetch, timeoutMs },
    baseUrl,
    headers,
    pollMs: options.pollMs ?? 1000,
  };
  const account = accountOf(headers);
  const ops =
    options.api === 'anthropic-messages'
      ? anthropicFiles(ctx)
      : options.api === 'gemini'
        ? geminiFiles(ctx)
        : openAIFiles(ctx);
  return { api: options.api, baseUrl, account, ...ops };
}

/** The fingerprint of the credentials among `headers` (16 hex digits of a sha256), `none` when there are none. */
export function accountOf(headers: Record<string, string>): string {
  const secrets = Object.entries(headers)
    .filter(([k]) => AUTH_HEADERS.has(k.toLowerCase()))
    .map(([k, v]) => `${k.toLowerCase()}:${v}`)
    .sort();
  if (secrets.length === 0) return 'none';
  return createHash('sha256')
    .update(`libpanto files account\n${secrets.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
}

/** A safe file name for stored bytes: `panto-<first 16 hex of the hash>.<ext>`. */
export function uploadFilename(sha256: string, mediaType: string): string {
  const ext =
    mediaType === 'application/pdf'
      ? 'pdf'
      : mediaType === 'image/jpeg'
        ? 'jpg'
        : (/^image\/([a-z]+)$/.exec(mediaType)?.[1] ?? 'bin');
  return `panto-${sha256.slice(0, 16)}.${ext}`;
}
