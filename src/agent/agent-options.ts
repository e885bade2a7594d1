/**
 * What `new Agent` takes, and its checks: every option is checked once, here, and a bad one throws
 * `ERR_INVALID_ARGUMENT` naming the option, what was expected and what came.
 */

import type { Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import { checkProcessOptions } from '../media/policy.js';
import type { ProcessOptions } from '../media/types.js';
import type { ThinkingLevel } from '../providers/common/serialize-options.js';
import type { Provider } from '../providers/http-provider.js';
import { getModel, resolveModel } from '../providers/model/model-catalog.js';
import type { ModelInfo } from '../providers/model/model-info.js';
import { checkPrice, type ModelPrice } from '../providers/model/model-prices.js';
import type { RequestOptions } from '../providers/serialize-request.js';
import type { SessionWriter } from '../session/session-writer.js';
import type { ToolSource } from '../tool-source.js';
import { type ApproveToolCall, checkApprover } from '../tools/approval.js';
import { DEFAULT_TOOL_CONCURRENCY } from '../tools/dispatch.js';
import type { AgentCompactionOptions } from './agent-compaction.js';
import type { AgentEventListener } from './agent-events.js';

/** Request options a host may set (the agent fills tools, system prompt and omissions itself). */
export type AgentRequestOptions = Omit<RequestOptions, 'tools' | 'system' | 'omitParts' | 'omitReason'>;

export interface AgentOptions {
  provider: Provider;
  /**
   * A `ModelInfo` (from `resolveModel`/`defineModel`; its `api` must be the provider's) or a model id, resolved with
   * `resolveModel(id, { api: provider.api })`.
   */
  model: ModelInfo | string;
  tools?: ToolSource;
  /**
   * Session log to resume from and append to. Its conversation is the agent's starting history; its `usage` (the
   * earlier answers of all branches, also those a compaction replaced) starts `Agent.usage`. A
   * `SessionLog` (a file) or a session store's log (`PostgresSessionStore.open`; `await session.flush()` after a run
   * to know every entry is stored).
   */
  session?: SessionWriter;
  /**
   * Starting history when there is no session. Copied; its images/PDFs are checked against their bytes once (a wrong
   * `mediaType` or size is corrected, unusable data becomes a placeholder with an `unsupported-input` warning to
   * `onEvent`; see handed-in-history.ts).
   */
  messages?: readonly Message[];
  system?: string;
  /** Most model requests per `prompt`/`continue`. Default 50. */
  maxTurns?: number;
  /** Per-request options: `maxTokens`, `temperature`, `imageDetail`, `cacheControl`, ... */
  request?: AgentRequestOptions;
  /** Reasoning effort (see `SerializeOptions.thinking`); wins over `request.thinking`. Change with `setThinking`. */
  thinking?: ThinkingLevel;
  /**
   * Prompt caching (see `SerializeOptions.promptCache`); wins over `request.promptCache`. Default: on for Anthropic
   * models (breakpoints on the system prompt, tools and the last turn), off elsewhere (those providers cache alone).
   */
  promptCache?: boolean | { ttl: '5m' | '1h' };
  /**
   * Price used for cost accounting, US dollars per million tokens. Default: `priceOf(model id)` of each answer's
   * model (undefined for models the table does not know: tokens are counted, cost is not). `null`: no cost.
   */
  price?: ModelPrice | null;
  /** Re-requests of a stream cut after part of its answer, per turn (see request-turn.ts). Default 2. */
  maxStreamRetries?: number;
  /** Wait before such a re-request, times the attempt number, in ms (a provider's retry-after wins). Default 1000. */
  streamRetryDelayMs?: number;
  /**
   * `'auto'`: upload each image and PDF once to the provider's Files API (Anthropic, OpenAI, Gemini) and send a
   * reference instead of its bytes; ids are cached by the sha256 of the bytes per provider account, in the
   * session log when there is one (a resume reuses them). A failed upload sends that part inline. Uploaded files stay
   * in the provider account until deleted (`deleteUploads`; Gemini deletes them after 48 h): a person opts in.
   * OpenAI Chat Completions references PDFs only: its images always go inline. Default `'off'`.
   */
  uploads?: 'auto' | 'off';
  /** Compaction settings, or `false` to never compact. */
  compaction?: AgentCompactionOptions | false;
  /** Media policy for tool output and user attachments. Default `mediaPolicyFor(model)`. */
  mediaPolicy?: ProcessOptions;
  /** Workspace root handed to tools. Default `process.cwd()`. */
  workspaceRoot?: string;
  /** Most tools running at once. Default 8. */
  toolConcurrency?: number;
  /**
   * The most of the context window one turn's tool results may take, a fraction from 0 (exclusive) to 1. Each call of
   * the turn gets an equal part of it, at ~4 characters per token; a longer result is cut from the middle where it is
   * stored — head and tail kept, with a note saying how much was cut and how to get the rest — whatever tool or source
   * (Lua, TypeScript, MCP) it came from. Default 0.25.
   */
  maxToolResultShare?: number;
  /**
   * Asked before each call of a tool that `needsApproval` (one at a time, in call order): `true` runs it, `false` or
   * `{approved: false, reason}` declines it (the model reads `declined by the user: <reason>`; the decision is kept on
   * the result, in the session log). Without it such calls run as any other. See tools/approval.ts.
   */
  approveToolCall?: ApproveToolCall;
  onEvent?: AgentEventListener;
}

/** The options as the agent runs with them: checked, defaults applied. */
export interface CheckedAgentOptions {
  provider: Provider;
  model: ModelInfo;
  maxTurns: number;
  thinking: ThinkingLevel | undefined;
  promptCache: boolean | { ttl: '5m' | '1h' } | undefined;
  maxStreamRetries: number;
  streamRetryDelayMs: number;
  concurrency: number;
  maxToolResultShare: number;
  approveToolCall: ApproveToolCall | undefined;
  uploads: boolean;
}

const DEFAULT_MAX_TURNS = 50;
const DEFAULT_TOOL_RESULT_SHARE = 0.25;

/**
 * Check `options` (the model against the provider's API included).
 * @throws PantoError `ERR_INVALID_ARGUMENT` naming the first bad option.
 */
export function checkAgentOptions(options: AgentOptions): CheckedAgentOptions {
  if (options === null || typeof options !== 'object') {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'new Agent(options): options must be an object');
  }
  checkProvider(options.provider, 'new Agent: options.provider must be a Provider (see createProvider)');
  if (options.session !== undefined && options.messages !== undefined) {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'new Agent: pass either session or messages, not both');
  }
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `new Agent: maxTurns must be an integer >= 1, got ${maxTurns}`,
    );
  }
  const model = modelFor(options.model, options.provider, 'new Agent');
  if (options.mediaPolicy !== undefined) checkProcessOptions(options.mediaPolicy);
  const thinking = options.thinking ?? options.request?.thinking;
  checkThinking(thinking, 'new Agent: thinking');
  if (options.price !== undefined && options.price !== null) checkPrice(options.price);
  checkApprover(options.approveToolCall, 'new Agent: approveToolCall');
  return {
    provider: options.provider,
    model,
    maxTurns,
    thinking,
    promptCache: options.promptCache ?? options.request?.promptCache,
    maxStreamRetries: count(options.maxStreamRetries, 2, 'maxStreamRetries'),
    streamRetryDelayMs: count(options.streamRetryDelayMs, 1000, 'streamRetryDelayMs'),
    concurrency: options.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY,
    maxToolResultShare: share(options.maxToolResultShare),
    approveToolCall: options.approveToolCall,
    uploads: uploadsOption(options.uploads),
  };
}

function share(value: number | undefined): number {
  if (value === undefined) return DEFAULT_TOOL_RESULT_SHARE;
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `new Agent: maxToolResultShare must be a number above 0 and at most 1, got ${String(value)}`,
    );
  }
  return value;
}

/** @throws PantoError `ERR_INVALID_ARGUMENT` with `message` when `provider` is not a `Provider`. */
export function checkProvider(provider: unknown, message: string): asserts provider is Provider {
  if (typeof (provider as Partial<Provider> | undefined)?.stream !== 'function') {
    throw new PantoError('ERR_INVALID_ARGUMENT', message);
  }
}

/** A `ModelInfo` for `model` checked against the provider's API. */
export function modelFor(model: ModelInfo | string, provider: Provider, where: string): ModelInfo {
  if (typeof model === 'string') {
    // A model of one vendor cannot be spoken to through another vendor's own API (an OpenAI-compatible gateway can
    // serve anything, so the OpenAI surfaces take every id).
    const native = getModel(model);
    const exclusive = provider.api === 'anthropic-messages' || provider.api === 'gemini';
    if (native !== undefined && exclusive && native.api !== provider.api && !model.includes('/')) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `${where}: model '${model}' is served by ${native.provider} (${native.api}); a provider speaking ${provider.api} cannot serve it`,
      );
    }
  }
  // A bare id takes the provider's API (e.g. `gpt-4.1` through an OpenAI Chat provider).
  const info = typeof model === 'string' ? resolveModel(model, { api: provider.api }) : model;
  if (info === null || typeof info !== 'object' || typeof info.id !== 'string') {
    throw new PantoError('ERR_INVALID_ARGUMENT', `${where}: model must be a ModelInfo or a model id`);
  }
  if (info.api !== provider.api) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `${where}: model '${info.id}' speaks ${info.api} but the provider speaks ${provider.api}`,
    );
  }
  return info;
}

export function checkThinking(level: ThinkingLevel | undefined, where: string): void {
  if (level !== undefined && !['off', 'low', 'medium', 'high'].includes(level)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `${where}: expected off, low, medium or high, got ${JSON.stringify(level)}`,
    );
  }
}

function uploadsOption(value: unknown): boolean {
  if (value === undefined || value === 'off') return false;
  if (value === 'auto') return true;
  throw new PantoError(
    'ERR_INVALID_ARGUMENT',
    `new Agent: uploads must be 'auto' or 'off', got ${JSON.stringify(value) ?? String(value)}`,
  );
}

function count(value: number | undefined, fallback: number, name: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `new Agent: ${name} must be an integer >= 0, got ${String(value)}`,
    );
  }
  return v;
}

/** Request options for `model`: the host's `request`, with `thinking` and the prompt-cache default applied. */
export function requestOptionsFor(
  request: AgentRequestOptions,
  thinking: ThinkingLevel | undefined,
  promptCache: boolean | { ttl: '5m' | '1h' } | undefined,
  model: ModelInfo,
): RequestOptions {
  const options: RequestOptions = { ...request };
  if (thinking === undefined) delete options.thinking;
  else options.thinking = thinking;
  const cache = promptCache ?? model.api === 'anthropic-messages';
  if (cache === false) delete options.promptCache;
  else options.promptCache = cache;
  return options;
}
