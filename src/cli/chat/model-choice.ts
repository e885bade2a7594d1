/**
 * Which wire API and model `panto chat` talks to, checked before any request: a catalog model spoken to through
 * another vendor's protocol (`--provider anthropic --model gpt-4.1`) is a usage error naming both and what would
 * work; `--context-window N` sets the window of any model (and keeps its output budget inside it).
 */
import {
  getModel,
  type ModelApi,
  type ModelInfo,
  type ModelOverrides,
  resolveModel,
  type ThinkingLevel,
} from '../../providers/index.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { ConfigModel } from '../config.js';
import { DEFAULT_MODEL, parseProvider } from '../surfaces.js';

export const THINKING_LEVELS: readonly ThinkingLevel[] = ['off', 'low', 'medium', 'high'];

/** The vendor behind each wire API's default endpoint (the catalog's `provider` field). */
const VENDOR: Record<ModelApi, string> = {
  'anthropic-messages': 'anthropic',
  'openai-chat': 'openai',
  'openai-responses': 'openai',
  gemini: 'google',
};

const PROVIDER_FLAG: Record<string, string> = {
  anthropic: '--provider anthropic',
  openai: '--provider openai (or openai-chat)',
  google: '--provider gemini',
};

/** `--provider`, else `--base-url` (OpenAI Chat), else the first API key set in the environment. */
export function pickApi(
  provider: string | undefined,
  baseUrl: string | undefined,
  env: NodeJS.ProcessEnv,
): ModelApi {
  if (provider !== undefined) return parseProvider(provider);
  if (baseUrl !== undefined) return 'openai-chat';
  if (env.ANTHROPIC_API_KEY) return 'anthropic-messages';
  if (env.OPENAI_API_KEY) return 'openai-responses';
  if (env.GEMINI_API_KEY || env.GOOGLE_API_KEY) return 'gemini';
  throw new CliError(
    'no provider configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or pass --provider/--base-url',
  );
}

export interface ModelChoice {
  api: ModelApi;
  /** `--model`; the API's default model when absent. */
  id?: string | undefined;
  /** A custom endpoint: gateways and proxies may serve any vendor's model over any protocol, so no vendor check. */
  baseUrl?: string | undefined;
  imageInput?: boolean | undefined;
  pdfInput?: boolean | undefined;
  contextWindow?: number | undefined;
  /** A thinking level was asked for: a model the catalog does not know is taken to reason. */
  reasoning?: boolean | undefined;
  /** Models declared in the config file (their facts win over the catalog's; flags win over both). */
  models?: ReadonlyMap<string, ConfigModel> | undefined;
}

/** Current models of each vendor, offered by `/model` (the catalog knows more by pattern). */
export const SUGGESTED_MODELS: Record<string, readonly string[]> = {
  anthropic: ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5'],
  openai: ['gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'o3', 'o4-mini'],
  google: ['gemini-3-pro-preview', 'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'],
};

/** The vendor whose models a wire API's own endpoint serves. */
export function vendorOf(api: ModelApi): string {
  return VENDOR[api];
}

/**
 * Resolve the model for `choice`; a `CliError` (usage) for a vendor mismatch on a default endpoint or a gateway id
 * (`vendor/model`) without `--base-url`.
 */
export function chooseModel(choice: ModelChoice): ModelInfo {
  const { api } = choice;
  const id = choice.id ?? DEFAULT_MODEL[api];
  const known = getModel(id);
  if (known !== undefined && choice.baseUrl === undefined) {
    if (known.provider === 'openai-compatible') {
      throw new CliError(
        `model '${id}' is a gateway id (vendor/model); pass the gateway's --base-url (e.g. OpenRouter's) with --provider openai-chat`,
        EXIT_USAGE,
      );
    }
    if (known.provider !== VENDOR[api]) {
      const flag = PROVIDER_FLAG[known.provider] ?? `a ${known.provider} provider`;
      throw new CliError(
        `model '${id}' is a ${known.provider} model but the ${api} endpoint serves ${VENDOR[api]} models; ` +
          `use ${flag}, pick a ${VENDOR[api]} model (e.g. ${DEFAULT_MODEL[api]}), or pass --base-url for a gateway that serves it`,
        EXIT_USAGE,
      );
    }
  }
  const overrides: ModelOverrides = { api };
  const declared = choice.models?.get(id);
  const input: NonNullable<ModelOverrides['input']> = {};
  if (declared?.input) {
    input.image = declared.input.image;
    input.pdf = declared.input.pdf;
  }
  if (choice.imageInput) input.image = true;
  if (choice.pdfInput) input.pdf = true;
  if (Object.keys(input).length > 0) overrides.input = input;
  if (declared?.reasoning !== undefined) overrides.reasoning = declared.reasoning;
  else if (choice.reasoning && known === undefined) overrides.reasoning = true;
  if (declared?.maxOutputTokens !== undefined)
    overrides.limits = { maxOutputTokens: declared.maxOutputTokens };
  const window = choice.contextWindow ?? declared?.contextWindow;
  if (window !== undefined) {
    const base = resolveModel(id, overrides);
    overrides.contextWindow = window;
    overrides.limits = {
      // The answer must fit beside the prompt: at most the margin compaction keeps free (a quarter of the window).
      maxOutputTokens: Math.max(1, Math.min(base.limits.maxOutputTokens, Math.floor(window / 4), 16_384)),
    };
  }
  return resolveModel(id, overrides);
}
