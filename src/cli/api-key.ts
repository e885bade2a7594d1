/**
 * Which API key `panto` sends, and where. A provider's own environment variable (`ANTHROPIC_API_KEY`,
 * `OPENAI_API_KEY`, `GEMINI_API_KEY` / `GOOGLE_API_KEY`) goes only to that provider's own host; to any other host — a
 * `--base-url` naming a local model server or a third-party gateway — only when the user names the variable with
 * `--api-key-env VAR`. When a key is held back, or sent to another host, one line says so. (The library keeps the
 * official SDKs' rule instead — the environment key goes with any `baseUrl` — see docs/agent.md.)
 */

import type { ModelApi } from '../providers/index.js';
import { ENDPOINTS } from '../providers/index.js';
import { CliError } from './cli-error.js';

export interface CliApiKey {
  /** The key to send, if any. */
  apiKey?: string;
  /** What to tell the user, once (a key held back, or sent to another host). */
  notice?: string;
}

export function cliApiKey(
  api: ModelApi,
  baseUrl: string | undefined,
  keyVar: string | undefined,
  env: Record<string, string | undefined>,
): CliApiKey {
  const endpoint = ENDPOINTS[api];
  const ownHost = new URL(endpoint.defaultBaseUrl).host;
  const target = baseUrl === undefined ? undefined : new URL(baseUrl);
  const foreign = target !== undefined && (target.host !== ownHost || target.protocol !== 'https:');
  if (keyVar !== undefined) {
    const apiKey = env[keyVar];
    if (!apiKey) throw new CliError(`--api-key-env ${keyVar}: that variable is not set`);
    return foreign
      ? { apiKey, notice: `note: sending the API key in ${keyVar} to ${target?.host} (--api-key-env)` }
      : { apiKey };
  }
  const own = endpoint.keyEnv.find((v) => env[v] !== undefined && env[v] !== '');
  if (own === undefined) return {};
  if (!foreign) return { apiKey: env[own] as string };
  return {
    notice: `note: not sending ${own} to ${target?.host}: it is not ${ownHost}; pass --api-key-env ${own} to send it there`,
  };
}
