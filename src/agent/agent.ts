/**
 * `Agent`: the turn loop over a provider — send the conversation, stream the answer, run the tools it asks for,
 * repeat until the model stops calling tools.
 *
 * Contract:
 * - `prompt(content)` appends a user message (images/PDFs in it go through the media pipeline first) and runs turns
 *   until an assistant message calls no tools, `maxTurns` model requests were made (`stopReason: 'max_turns'`), the
 *   run is aborted, or the provider fails after the transport's retries. It resolves to an `AgentRunResult`; it
 *   rejects only for misuse (a second `prompt` while running, bad content).
 * - Every message is appended to the conversation — and to the `SessionLog`, when given — as soon as it is complete:
 *   the user message, each assistant message (also an aborted or failed one, which serializers leave out of later
 *   requests), each tool-results message. A session is resumed by passing the opened log.
 * - Tool calls run through `dispatchToolCalls` with the model's media policy; a call whose arguments were not a JSON
 *   object gets an error result naming the problem, without running.
 * - Steering (`steer`): queued user content is delivered before the next request; tool calls of the current turn that
 *   have not finished are ended with a `skipped`/`cancelled` result (see steering.ts).
 * - Abort (`abort()` or the `signal` option): the stream stops, running tools get an aborted signal, every call
 *   without a result gets an aborted error result, and the run resolves with `stopReason: 'aborted'`. History stays
 *   consistent: every recorded tool call has a result.
 * - A request the provider rejects because of one image/PDF (its error names it, see media-rejection.ts) is retried
 *   once with that part replaced by a placeholder — in the request only, never in history — and a `media-rejected`
 *   warning. The same part is left out of every later request of this agent, so a rejection never repeats.
 * - Compaction runs before a request whose estimate nears the context window (see agent-compaction.ts). A request
 *   the provider refuses as longer than the context window (context-overflow.ts) triggers a compaction and ONE retry
 *   of that request; a second refusal ends the run with the provider's error (never a loop).
 * - A stream cut after part of the answer (a retryable error once text arrived, which the transport does not retry)
 *   is requested again up to `maxStreamRetries` times when no tool call of it was complete: a `message_reset` event
 *   tells the host to drop the partial output. Otherwise the run ends with the error and a `stream-interrupted`
 *   warning saying why it was not retried.
 * - Usage: each `turn_end` carries the answer's usage and cost; `usage` holds the session totals (answers of this
 *   agent and of the resumed session log, plus compaction summaries).
 */

import { compact, type Summarizer } from '../compaction/compact.js';
import { estimateTokens } from '../compaction/estimate-tokens.js';
import { findCutPoint } from '../compaction/find-cut-point.js';
import type {
  AssistantMessage,
  Message,
  ToolCallBlock,
  ToolResultBlock,
  Usage,
  UserMessage,
} from '../conversation.js';
import { toolCallsOf, toolErrorResult } from '../conversation.js';
import { isPantoError, PantoError } from '../errors.js';
import { checkProcessOptions } from '../media/policy.js';
import type { ProcessOptions } from '../media/types.js';
import { getModel, mediaPolicyFor, resolveModel } from '../providers/model-catalog.js';
import type { ModelInfo } from '../providers/model-info.js';
import { checkPrice, type ModelPrice, priceOf, type UsageCost } from '../providers/model-prices.js';
import type { PartFilter, SerializeWarning, ThinkingLevel } from '../providers/serialize-options.js';
import type { Provider } from '../providers/transport/http-provider.js';
import { ProviderError } from '../providers/transport/provider-error.js';
import { sleep } from '../providers/transport/retry-policy.js';
import type { SessionLog } from '../session/session-log.js';
import type { ToolSource } from '../tool-source.js';
import { errorMessage, StaticToolSource } from '../tool-source.js';
import {
  type AgentCompactionOptions,
  contextTokens,
  providerSummarizer,
  type ResolvedCompaction,
  resolveCompaction,
} from './agent-compaction.js';
import type {
  AgentEvent,
  AgentEventListener,
  AgentRunResult,
  AgentStopReason,
  AgentWarning,
} from './agent-events.js';
import { isContextOverflow, statedContextWindow } from './context-overflow.js';
import { ABORTED_RESULT_TEXT, DEFAULT_TOOL_CONCURRENCY, dispatchToolCalls } from './dispatch.js';
import { findRejectedMedia, mediaDataAt } from './media-rejection.js';
import { type RequestOptions, serializeRequest } from './serialize-request.js';
import { steeringResult } from './steering.js';
import { notifyListener, type ToolEvent } from './tool-events.js';
import { addUsage, emptyTotals, saneUsage, type UsageTotals } from './usage-totals.js';
import { buildUserMessage, type UserContent } from './user-content.js';
import { unparsedArguments } from './validate-args.js';

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
   * Session log to resume from and append to. Its conversation is the agent's starting history. The usage of the
   * log's earlier answers (all branches, also those a compaction replaced) is counted when `usage` is first read,
   * so constructing the agent parses nothing the conversation did not need (see `Agent.usage` for the errors).
   */
  session?: SessionLog;
  /** Starting history when there is no session. Copied. */
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
  /** Re-requests of a stream cut after part of its answer, per turn (see the module contract). Default 2. */
  maxStreamRetries?: number;
  /** Wait before such a re-request, times the attempt number, in ms (a provider's retry-after wins). Default 1000. */
  streamRetryDelayMs?: number;
  /** Compaction settings, or `false` to never compact. */
  compaction?: AgentCompactionOptions | false;
  /** Media policy for tool output and user attachments. Default `mediaPolicyFor(model)`. */
  mediaPolicy?: ProcessOptions;
  /** Workspace root handed to tools. Default `process.cwd()`. */
  workspaceRoot?: string;
  /** Most tools running at once. Default 8. */
  toolConcurrency?: number;
  onEvent?: AgentEventListener;
}

export interface RunOptions {
  /** Aborts this run (same as `agent.abort()`). */
  signal?: AbortSignal;
}

/** What `setModel` takes besides the model. */
export interface SetModelOptions {
  /** The provider for the new model, required when its API differs from the current provider's. */
  provider?: Provider;
  /** Price for the new model (see `AgentOptions.price`). Default: the table's. */
  price?: ModelPrice | null;
}

/** What `agent.compact()` takes. */
export interface AgentCompactOptions extends RunOptions {
  /**
   * Estimated tokens kept verbatim. Default: the compaction setting (20,000 at most) but at most a quarter of the
   * conversation, so a compaction asked for summarizes something at any size; the last turn (from the last user
   * message on) is always kept whole.
   */
  keepRecentTokens?: number;
  /** What the summary should keep in particular (passed to the summarizer as `SummaryRequest.focus`). */
  focus?: string;
}

/** What `agent.compact()` did. */
export interface CompactOutcome {
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
}

const DEFAULT_MAX_TURNS = 50;

const REJECTED_REASON = 'the provider rejected this attachment';

export class Agent {
  readonly tools: ToolSource;
  readonly session: SessionLog | undefined;
  #provider: Provider;
  #model: ModelInfo;
  readonly #system: string | undefined;
  readonly #maxTurns: number;
  readonly #request: AgentRequestOptions;
  readonly #compactionOptions: AgentCompactionOptions | false | undefined;
  readonly #mediaOption: ProcessOptions | undefined;
  #media: ProcessOptions;
  #thinking: ThinkingLevel | undefined;
  readonly #promptCache: boolean | { ttl: '5m' | '1h' } | undefined;
  #price: ModelPrice | null | undefined;
  readonly #maxStreamRetries: number;
  readonly #streamRetryDelayMs: number;
  /** A context window smaller than the model's, stated by the provider in a context-overflow error. */
  #statedWindow: number | undefined;
  readonly #totals: UsageTotals = emptyTotals();
  /** Counts the resumed log's answers (first read of `usage`); until then `#laterUsage` keeps what was added since. */
  #resumedUsage: (() => UsageTotals) | undefined;
  #laterUsage: Array<[Usage, ModelPrice | undefined]> = [];
  /** Cost of the assistant message appended last (for its `turn_end`). */
  #lastCost: UsageCost | undefined;
  readonly #workspaceRoot: string | undefined;
  readonly #concurrency: number;
  readonly #listeners = new Set<AgentEventListener>();
  #messages: Message[];
  /** Assistant messages at this index or later carry usage that measured the current context. */
  #usageFloor: number;
  #running = false;
  #runCtl: AbortController | undefined;
  #toolsCtl: AbortController | undefined;
  readonly #steering: UserContent[] = [];
  /** Base64 of parts a provider rejected: left out of every later request. */
  readonly #rejected = new Set<string>();
  readonly #warned = new Set<string>();

  constructor(options: AgentOptions) {
    if (options === null || typeof options !== 'object') {
      throw new PantoError('ERR_INVALID_ARGUMENT', 'new Agent(options): options must be an object');
    }
    const provider = options.provider as Partial<Provider> | undefined;
    if (typeof provider?.stream !== 'function') {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'new Agent: options.provider must be a Provider (see createProvider)',
      );
    }
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
    this.#provider = options.provider;
    this.#model = modelFor(options.model, this.#provider, 'new Agent');
    this.tools = options.tools ?? new StaticToolSource([], 'none');
    this.session = options.session;
    this.#messages = options.session
      ? [...options.session.conversation.messages]
      : [...(options.messages ?? [])];
    // A resumed or handed-in history may be compacted already; its recorded usage is not trusted.
    this.#usageFloor = this.#messages.length;
    this.#system = options.system;
    this.#maxTurns = maxTurns;
    this.#request = { ...options.request };
    this.#compactionOptions = options.compaction;
    if (options.mediaPolicy !== undefined) checkProcessOptions(options.mediaPolicy);
    this.#mediaOption = options.mediaPolicy;
    this.#media = options.mediaPolicy ?? mediaPolicyFor(this.#model);
    this.#thinking = options.thinking ?? options.request?.thinking;
    checkThinking(this.#thinking, 'new Agent: thinking');
    this.#promptCache = options.promptCache ?? options.request?.promptCache;
    if (options.price !== undefined && options.price !== null) checkPrice(options.price);
    this.#price = options.price;
    this.#maxStreamRetries = count(options.maxStreamRetries, 2, 'maxStreamRetries');
    this.#streamRetryDelayMs = count(options.streamRetryDelayMs, 1000, 'streamRetryDelayMs');
    if (options.session) {
      // The entries the log holds now (the agent's own appends come after them and are counted as they happen),
      // priced as they would have been now: with this price option and model, whatever setModel does later.
      const session = options.session;
      const held = session.size;
      const price = this.#price;
      const model = this.#model;
      if (held > 0)
        this.#resumedUsage = () => {
          const totals = emptyTotals();
          const entries = session.entries;
          for (let i = 0; i < held; i++) {
            const e = entries[i] as (typeof entries)[number];
            if (e.type !== 'message' || e.message.role !== 'assistant' || e.message.usage === undefined)
              continue;
            const id = e.message.model;
            const p = price === null ? undefined : (price ?? priceOf(id ?? model.id) ?? priceOf(model.id));
            addUsage(totals, e.message.usage, p);
          }
          return totals;
        };
    } else for (const m of this.#messages) this.#countUsage(m);
    this.#workspaceRoot = options.workspaceRoot;
    this.#concurrency = options.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY;
    if (options.onEvent) this.#listeners.add(options.onEvent);
  }

  /** The provider requests go to (changed by `setModel` with a provider). */
  get provider(): Provider {
    return this.#provider;
  }

  /** The model requests are made for (changed by `setModel`). */
  get model(): ModelInfo {
    return this.#model;
  }

  /** The reasoning effort sent with each request, if any. */
  get thinking(): ThinkingLevel | undefined {
    return this.#thinking;
  }

  /**
   * Token and cost totals of the session: every answer of the resumed session log (all branches) or of the handed-in
   * messages, every answer of this agent, and the summary requests of its compactions. A copy.
   *
   * With a resumed `session`, the first read parses the log's entries (`SessionLog.entries`, synchronous reads) and
   * throws what that throws — `ERR_SESSION_CORRUPT` / `ERR_SESSION_FORMAT` for a damaged line the lazy open did not
   * parse, `ERR_SESSION_CHANGED` for a file changed behind the log — and a later read tries again. The totals are
   * the same, to the last bit, as counting the log first and this agent's usage after it.
   */
  get usage(): UsageTotals {
    const resumed = this.#resumedUsage;
    if (resumed !== undefined) {
      const totals = resumed();
      for (const [usage, price] of this.#laterUsage) addUsage(totals, usage, price);
      Object.assign(this.#totals, totals);
      this.#resumedUsage = undefined;
      this.#laterUsage = [];
    }
    return { ...this.#totals };
  }

  /** The context window compaction works with: the model's, or a smaller one the provider stated in an error. */
  get contextWindow(): number {
    const w = this.#model.limits.contextWindow;
    return this.#statedWindow !== undefined && this.#statedWindow < w ? this.#statedWindow : w;
  }

  /**
   * Switch models between runs: a `ModelInfo` or an id (resolved with the provider's API). Pass `provider` when the
   * new model speaks another API. The switch is recorded in the session log (`model_change` entry, see
   * `SessionLog.model`) and reported as a `model_change` event. The media policy (unless given), compaction limits
   * and default price follow the new model; usage reported by the old model no longer sizes the context.
   *
   * @throws PantoError `ERR_INVALID_ARGUMENT` while a run is in progress, or when the model's API is not the
   *   provider's.
   */
  setModel(model: ModelInfo | string, options: SetModelOptions = {}): void {
    if (this.#running) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'setModel: the agent is running; switch models between runs',
      );
    }
    const provider = options.provider ?? this.#provider;
    if (typeof (provider as Partial<Provider>)?.stream !== 'function') {
      throw new PantoError('ERR_INVALID_ARGUMENT', 'setModel: options.provider must be a Provider');
    }
    const next = modelFor(model, provider, 'setModel');
    if (options.price !== undefined && options.price !== null) checkPrice(options.price);
    const previous = this.#model;
    this.session?.appendModelChange({ model: next.id, api: next.api, provider: next.provider });
    this.#provider = provider;
    this.#model = next;
    this.#price = options.price;
    this.#statedWindow = undefined;
    this.#media = this.#mediaOption ?? mediaPolicyFor(next);
    this.#usageFloor = this.#messages.length;
    this.#emit({ type: 'model_change', model: next, previous });
  }

  /** Set the reasoning effort of later requests (`undefined`: none). */
  setThinking(level: ThinkingLevel | undefined): void {
    checkThinking(level, 'setThinking');
    this.#thinking = level;
  }

  /**
   * Compact now, whatever the context size (e.g. a `/compact` command): summarize all but the recent messages with
   * the agent's summarizer, record it in the session log, and report `compaction_start` (reason `manual`) /
   * `compaction_end`. Resolves to `null` when there is nothing older than the recent messages to summarize (e.g. a
   * single exchange). Works with `compaction: false` too (that only turns off the automatic trigger).
   *
   * @throws PantoError `ERR_INVALID_ARGUMENT` while a run is in progress; the summarizer's error when it fails;
   *   `ERR_ABORTED` when `signal` fires.
   */
  async compact(options: AgentCompactOptions = {}): Promise<CompactOutcome | null> {
    this.#claim();
    const ctl = this.#runCtl ?? new AbortController();
    const external = options.signal;
    const onExternal = () => ctl.abort(external?.reason);
    if (external?.aborted) onExternal();
    else external?.addEventListener('abort', onExternal, { once: true });
    try {
      const settings = this.#settings();
      const tokens = contextTokens(
        this.#messages,
        this.#usageFloor,
        this.#model,
        this.#system,
        this.tools.list(),
      );
      // A quarter of the conversation at most, but the last turn (from the last user message on) stays whole.
      const estimate = estimateTokens(this.#messages, { imageTokenRule: this.#model.imageTokenRule });
      const keep =
        options.keepRecentTokens ??
        Math.max(this.#lastTurnTokens(), Math.min(settings.keepRecentTokens, Math.floor(estimate / 4)));
      return await this.#compactNow(
        ctl.signal,
        'manual',
        { ...settings, keepRecentTokens: keep },
        tokens,
        options.focus,
      );
    } finally {
      external?.removeEventListener('abort', onExternal);
      this.#runCtl = undefined;
      this.#running = false;
    }
  }

  /** The conversation so far (a copy of the list; messages are shared — do not mutate them). */
  get messages(): Message[] {
    return [...this.#messages];
  }

  /** True while a `prompt`/`continue` run is in progress. */
  get running(): boolean {
    return this.#running;
  }

  /** Listen to events; returns the unsubscribe function. */
  subscribe(listener: AgentEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Send user content and run turns until the model is done. See the module contract. */
  async prompt(content: UserContent, options: RunOptions = {}): Promise<AgentRunResult> {
    this.#claim();
    let message: UserMessage;
    try {
      message = await this.#userMessage(content);
    } catch (err) {
      this.#running = false;
      this.#runCtl = undefined;
      throw err;
    }
    return this.#run(message, options.signal);
  }

  /**
   * Run turns on the conversation as it stands: after resuming a session whose last message is a user or tool
   * message, or to try again after a run that ended in a provider error or an abort. Resolves at once when the last
   * message is a finished assistant answer and nothing is queued.
   */
  async continue(options: RunOptions = {}): Promise<AgentRunResult> {
    this.#claim();
    return this.#run(undefined, options.signal);
  }

  /**
   * Queue a user message. While a run is in progress it is delivered before the next model request, and tool calls
   * still running or queued are ended (see steering.ts); otherwise it is delivered at the start of the next run.
   */
  steer(content: UserContent): void {
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw new PantoError('ERR_INVALID_ARGUMENT', 'steer: content must be a string or an array of parts');
    }
    this.#steering.push(content);
    this.#toolsCtl?.abort(new PantoError('ERR_ABORTED', 'the user sent a new message'));
  }

  /**
   * Take back the queued user messages not delivered yet (oldest first), e.g. after an abort, so that a host can
   * offer them for editing instead of sending them at the start of the next run.
   */
  takeSteering(): UserContent[] {
    return this.#steering.splice(0);
  }

  /** Abort the current run, if any. */
  abort(reason?: unknown): void {
    this.#runCtl?.abort(reason);
  }

  #claim(): void {
    if (this.#running) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'the agent is already running; use steer() to add a message or abort() to stop it',
      );
    }
    this.#running = true;
    // Created now so that abort() works while the prompt's attachments are still being processed.
    this.#runCtl = new AbortController();
  }

  async #run(first: UserMessage | undefined, external: AbortSignal | undefined): Promise<AgentRunResult> {
    const ctl = this.#runCtl ?? new AbortController();
    this.#runCtl = ctl;
    const onExternal = () => ctl.abort(external?.reason);
    if (external?.aborted) onExternal();
    else external?.addEventListener('abort', onExternal, { once: true });
    const signal = ctl.signal;
    const appended: Message[] = [];
    let turns = 0;
    let result: AgentRunResult;
    this.#emit({ type: 'agent_start' });
    try {
      if (first !== undefined) this.#append(first, appended);
      result = await this.#loop(signal, appended, () => ++turns);
    } catch (err) {
      const error = isPantoError(err)
        ? err
        : new PantoError('ERR_INTERNAL', errorMessage(err), { cause: err });
      result = { stopReason: signal.aborted ? 'aborted' : 'error', turns: 0, messages: appended, error };
    } finally {
      external?.removeEventListener('abort', onExternal);
      this.#runCtl = undefined;
      this.#toolsCtl = undefined;
      this.#running = false;
    }
    result.turns = turns;
    this.#emit({ type: 'agent_end', result });
    return result;
  }

  async #loop(signal: AbortSignal, appended: Message[], nextTurn: () => number): Promise<AgentRunResult> {
    const done = (stopReason: AgentStopReason, error?: PantoError): AgentRunResult =>
      error === undefined
        ? { stopReason, turns: 0, messages: appended }
        : { stopReason, turns: 0, messages: appended, error };
    let turns = 0;
    for (;;) {
      if (signal.aborted) return done('aborted', abortError(signal));
      await this.#deliverSteering(appended);
      const last = this.#messages[this.#messages.length - 1];
      if (last === undefined || last.role === 'system') return done('end');
      // A finished answer needs no request; a failed or aborted one (left out of requests) is asked again.
      const failed =
        last.role === 'assistant' && (last.stopReason === 'error' || last.stopReason === 'aborted');
      if (last.role === 'assistant' && !failed && toolCallsOf(last).length === 0) return done(stopOf(last));
      if (turns >= this.#maxTurns) return done('max_turns');
      await this.#maybeCompact(signal);
      turns = nextTurn();
      this.#emit({ type: 'turn_start', turn: turns });
      const turn = await this.#requestTurn(signal);
      const { error } = turn;
      // Token counts as stored and counted: never negative, fractional, NaN or past 2^53 (see `saneUsage`).
      // A custom Provider may send `usage: null` (or another non-object): treated as no usage.
      const reported = turn.message.usage;
      const usage = typeof reported === 'object' && reported !== null ? saneUsage(reported) : undefined;
      let message: AssistantMessage = turn.message;
      if (usage !== undefined && usage !== reported) message = { ...turn.message, usage };
      else if (usage === undefined && reported !== undefined) {
        const { usage: _dropped, ...rest } = turn.message;
        message = rest;
      }
      this.#append(message, appended);
      const calls = toolCallsOf(message);
      if (message.stopReason === 'aborted' || message.stopReason === 'error') {
        let toolResults: Message | undefined;
        if (calls.length > 0) {
          // Keep history consistent: every recorded call gets a result.
          toolResults = { role: 'tool', results: calls.map((c) => toolErrorResult(c, ABORTED_RESULT_TEXT)) };
          this.#append(toolResults, appended);
        }
        this.#emit({
          type: 'turn_end',
          turn: turns,
          message,
          ...(toolResults?.role === 'tool' ? { toolResults } : {}),
          ...this.#turnUsage(message),
        });
        return done(message.stopReason, error);
      }
      if (calls.length === 0) {
        this.#emit({ type: 'turn_end', turn: turns, message, ...this.#turnUsage(message) });
        if (this.#steering.length > 0) continue;
        return done(stopOf(message));
      }
      const results = await this.#runTools(calls, signal);
      const toolResults: Message = { role: 'tool', results };
      this.#append(toolResults, appended);
      this.#emit({ type: 'turn_end', turn: turns, message, toolResults, ...this.#turnUsage(message) });
      if (signal.aborted) return done('aborted', abortError(signal));
    }
  }

  /**
   * One model request, plus at most: one retry without a rejected image/PDF, one retry after a compaction when the
   * provider refused the request as too long, and `maxStreamRetries` re-requests of a stream cut mid-answer.
   */
  async #requestTurn(signal: AbortSignal): Promise<{ message: AssistantMessage; error?: PantoError }> {
    const tools = this.tools.list();
    let mediaRetried = false;
    let overflowRetried = false;
    let streamRetries = 0;
    for (;;) {
      const omit: PartFilter = (_ref, part) => this.#rejected.has(part.data);
      const request: RequestOptions = {
        ...this.#requestOptions(),
        omitParts: omit,
        omitReason: REJECTED_REASON,
      };
      if (tools.length > 0) request.tools = tools;
      if (this.#system !== undefined) request.system = this.#system;
      const model = this.#model;
      const serialized = serializeRequest(this.#messages, model, request);
      this.#warnSerializer(serialized.warnings);
      let terminal: { message: AssistantMessage; error?: PantoError } | undefined;
      let sawContent = false;
      let completeCall = false;
      for await (const event of this.#provider.stream(
        { model: model.id, body: serialized.body },
        { signal },
      )) {
        switch (event.type) {
          case 'start':
            this.#emit({ type: 'message_start', role: 'assistant' });
            break;
          case 'text_delta':
          case 'thinking_delta':
          case 'toolcall_start':
          case 'toolcall_delta':
          case 'toolcall_end':
            sawContent = true;
            if (event.type === 'toolcall_end') completeCall = true;
            this.#emit({ type: 'message_delta', delta: event });
            break;
          case 'retry':
            this.#emit({ type: 'retry', attempt: event.attempt, delayMs: event.delayMs, error: event.error });
            break;
          case 'done':
            terminal = { message: event.message };
            break;
          case 'error':
            terminal = { message: event.message, error: event.error };
            break;
          default:
            break;
        }
      }
      if (terminal === undefined) {
        const error = new PantoError(
          'ERR_PROVIDER',
          `${this.#provider.name}: the stream ended without a final message`,
        );
        return { message: failedMessage(error), error };
      }
      const { error } = terminal;
      if (!(error instanceof ProviderError) || signal.aborted) return terminal;
      if (!mediaRetried) {
        const ref = findRejectedMedia(error, serialized.media);
        const data = ref === undefined ? undefined : mediaDataAt(this.#messages, ref);
        if (ref !== undefined && data !== undefined) {
          mediaRetried = true;
          this.#rejected.add(data);
          this.#warn({
            code: 'media-rejected',
            message: `the provider rejected the request because of the ${ref.type} at ${ref.path} (${error.providerMessage}); it was replaced by a placeholder in the request (history unchanged) and the request retried`,
            parts: [ref.key],
          });
          continue;
        }
      }
      if (isContextOverflow(error)) {
        if (overflowRetried || !(await this.#recoverFromOverflow(error, signal))) return terminal;
        overflowRetried = true;
        continue;
      }
      if (sawContent && error.retryable) {
        const why = completeCall
          ? 'a tool call of it was already complete'
          : `it was cut ${streamRetries} time${streamRetries === 1 ? '' : 's'} already (maxStreamRetries ${this.#maxStreamRetries})`;
        if (completeCall || streamRetries >= this.#maxStreamRetries) {
          this.#emit({
            type: 'warning',
            warning: {
              code: 'stream-interrupted',
              message: `the answer stream broke off after part of the answer (${error.message}); not requested again because ${why}. The partial answer is kept, marked as failed`,
            },
          });
          return terminal;
        }
        streamRetries++;
        const delayMs = error.retryAfterMs ?? this.#streamRetryDelayMs * streamRetries;
        this.#emit({ type: 'message_reset', attempt: streamRetries, delayMs, error });
        try {
          await sleep(delayMs, signal);
        } catch {
          return {
            message: { ...terminal.message, stopReason: 'aborted' },
            error: abortError(signal),
          };
        }
        continue;
      }
      return terminal;
    }
  }

  /** After a context-overflow refusal: learn a stated window, compact (forced). True when a retry may help. */
  async #recoverFromOverflow(error: ProviderError, signal: AbortSignal): Promise<boolean> {
    const before = this.contextWindow;
    const stated = statedContextWindow(error);
    if (stated !== undefined && stated < before) this.#statedWindow = stated;
    const learned =
      stated !== undefined && stated < before
        ? ` The provider states a context window of ${stated} tokens (the model was set to ${before}); compaction now uses ${stated}.`
        : '';
    const refused = `the provider refused the request as longer than the context window (${error.providerMessage})`;
    if (this.#compactionOptions === false) {
      this.#warn({
        code: 'context-overflow',
        message: `${refused}; compaction is off, so it was not retried.${learned}`,
      });
      return false;
    }
    try {
      // Keep at most a quarter of the window verbatim; when even that leaves nothing older to summarize (the estimate
      // was far below what the provider counts), keep only the last turn (from the last user message on).
      const settings = this.#settings();
      const keep = Math.min(settings.keepRecentTokens, Math.floor(this.contextWindow / 4));
      const out =
        (await this.#compactNow(signal, 'overflow', { ...settings, keepRecentTokens: keep })) ??
        (await this.#compactNow(signal, 'overflow', {
          ...settings,
          keepRecentTokens: this.#lastTurnTokens(),
        }));
      if (out === null) {
        this.#warn({
          code: 'context-overflow',
          message: `${refused}; there is nothing older than the last message to compact, so it was not retried (the last message alone is too long for the model).${learned}`,
        });
        return false;
      }
      this.#warn({
        code: 'context-overflow',
        message: `${refused}; compacted the conversation and retried once.${learned}`,
      });
      return true;
    } catch (err) {
      if (!signal.aborted) {
        this.#warn({
          code: 'context-overflow',
          message: `${refused}; compaction failed, so it was not retried.${learned}`,
        });
        this.#warn({ code: 'compaction-failed', message: `compaction failed: ${errorMessage(err)}` });
      }
      return false;
    }
  }

  /** Run one turn's calls; steering and abort end the unfinished ones (see the module contract). */
  async #runTools(calls: ToolCallBlock[], signal: AbortSignal): Promise<ToolResultBlock[]> {
    for (const call of calls) {
      const unparsed = unparsedArguments(call);
      if (unparsed !== undefined) {
        this.#warn({
          code: 'invalid-arguments',
          message: `tool call ${call.id} (${call.name}): ${unparsed.reason}`,
        });
      }
    }
    const toolsCtl = new AbortController();
    this.#toolsCtl = toolsCtl;
    if (this.#steering.length > 0) toolsCtl.abort();
    const steered = (): boolean => toolsCtl.signal.aborted && !signal.aborted;
    const steeredResults = new Map<number, ToolResultBlock>();
    const results = await dispatchToolCalls(calls, {
      tools: this.tools,
      signal: AbortSignal.any([signal, toolsCtl.signal]),
      media: this.#media,
      concurrency: this.#concurrency,
      ...(this.#workspaceRoot === undefined ? {} : { workspaceRoot: this.#workspaceRoot }),
      onEvent: (event: ToolEvent) => {
        if (event.type === 'tool_call_end' && event.aborted && steered()) {
          const result = steeringResult(event.toolCallId, event.toolName, event.started);
          steeredResults.set(event.index, result);
          this.#emit({ ...event, result });
          return;
        }
        this.#emit(event);
      },
    });
    this.#toolsCtl = undefined;
    return results.map((r, i) => steeredResults.get(i) ?? r);
  }

  async #deliverSteering(appended: Message[]): Promise<void> {
    while (this.#steering.length > 0) {
      const content = this.#steering.shift() as UserContent;
      this.#append(await this.#userMessage(content), appended);
    }
  }

  /** Compaction settings for the current window (the host's options, else defaults). */
  #settings(): ResolvedCompaction {
    const options = this.#compactionOptions === false ? undefined : this.#compactionOptions;
    const window = this.contextWindow;
    return resolveCompaction(options, window, this.#model.limits.maxOutputTokens, () =>
      this.#defaultSummarizer(window),
    );
  }

  #defaultSummarizer(window: number): Summarizer {
    const model =
      window === this.#model.limits.contextWindow
        ? this.#model
        : { ...this.#model, limits: { ...this.#model.limits, contextWindow: window } };
    return providerSummarizer(this.#provider, model, {
      onUsage: (usage, id) => {
        this.#addUsage(usage, this.#priceOf(id));
      },
    });
  }

  async #maybeCompact(signal: AbortSignal): Promise<void> {
    if (this.#compactionOptions === false) return;
    const settings = this.#settings();
    const tokens = contextTokens(
      this.#messages,
      this.#usageFloor,
      this.#model,
      this.#system,
      this.tools.list(),
    );
    const window = this.contextWindow;
    if (tokens <= window - settings.reserveTokens) return;
    try {
      const out = await this.#compactNow(signal, 'threshold', settings, tokens);
      if (out === null) {
        this.#warn({
          code: 'compaction-failed',
          message: `the conversation (~${tokens} tokens) nears the context window (${window}) but there is nothing older than the recent messages to compact`,
        });
      }
    } catch (err) {
      if (signal.aborted) return;
      this.#warn({ code: 'compaction-failed', message: `compaction failed: ${errorMessage(err)}` });
    }
  }

  /** Estimated tokens from the last user message to the end: keeping that much keeps the last turn whole. */
  #lastTurnTokens(): number {
    const messages = this.#messages;
    let i = messages.length - 1;
    while (i > 0 && messages[i]?.role !== 'user') i--;
    return Math.max(1, estimateTokens(messages.slice(i), { imageTokenRule: this.#model.imageTokenRule }));
  }

  /**
   * Compact the conversation now, keeping `settings.keepRecentTokens` verbatim. Resolves to `null` (and reports
   * nothing) when there is nothing to compact; rejects with the summarizer's error.
   */
  async #compactNow(
    signal: AbortSignal,
    reason: 'threshold' | 'overflow' | 'manual',
    settings: ResolvedCompaction = this.#settings(),
    tokens?: number,
    focus?: string,
  ): Promise<CompactOutcome | null> {
    const window = this.contextWindow;
    const keepRecentTokens = settings.keepRecentTokens;
    const estimate = { imageTokenRule: this.#model.imageTokenRule };
    if (findCutPoint(this.#messages, keepRecentTokens, estimate) === 0) return null;
    const size =
      tokens ?? contextTokens(this.#messages, this.#usageFloor, this.#model, this.#system, this.tools.list());
    this.#emit({ type: 'compaction_start', tokens: size, contextWindow: window, reason });
    const out = await compact({ messages: this.#messages }, settings.summarizer, {
      keepRecentTokens,
      maxSummaryInputTokens: settings.maxSummaryInputTokens,
      imageTokenRule: this.#model.imageTokenRule,
      isOverflow: isContextOverflow,
      signal,
      ...(focus === undefined ? {} : { focus }),
    });
    if (out === null) return null;
    this.session?.appendCompaction(out.compaction);
    this.#messages = [...out.conversation.messages];
    // Usage reported before the compaction measured the old, longer context: only later answers count.
    this.#usageFloor = this.#messages.length;
    const { tokensBefore, tokensAfter, summary } = out.compaction;
    this.#emit({ type: 'compaction_end', tokensBefore, tokensAfter, summary });
    return { tokensBefore, tokensAfter, summary };
  }

  /** Request options for the current model: the host's, with thinking and the prompt-cache default applied. */
  #requestOptions(): RequestOptions {
    const options: RequestOptions = { ...this.#request };
    if (this.#thinking === undefined) delete options.thinking;
    else options.thinking = this.#thinking;
    const cache = this.#promptCache ?? this.#model.api === 'anthropic-messages';
    if (cache === false) delete options.promptCache;
    else options.promptCache = cache;
    return options;
  }

  #priceOf(modelId: string | undefined): ModelPrice | undefined {
    if (this.#price === null) return undefined;
    return this.#price ?? priceOf(modelId ?? this.#model.id) ?? priceOf(this.#model.id);
  }

  #countUsage(message: Message): ReturnType<typeof addUsage> {
    if (message.role !== 'assistant' || message.usage === undefined) return undefined;
    return this.#addUsage(message.usage, this.#priceOf(message.model));
  }

  #addUsage(usage: Usage, price: ModelPrice | undefined): UsageCost | undefined {
    if (this.#resumedUsage !== undefined) this.#laterUsage.push([usage, price]);
    return addUsage(this.#totals, usage, price);
  }

  #turnUsage(message: AssistantMessage): { usage?: Usage; cost?: UsageCost } {
    if (message.usage === undefined) return {};
    const cost = this.#lastCost;
    return cost === undefined ? { usage: message.usage } : { usage: message.usage, cost };
  }

  async #userMessage(content: UserContent): Promise<UserMessage> {
    return buildUserMessage(content, {
      media: this.#media,
      onMedia: (outcome) => {
        if (outcome.type === 'dropped') {
          this.#warn({ code: 'media-dropped', message: outcome.dropped.note });
        }
      },
    });
  }

  /** Append to the conversation and the session log, count its usage, then report it. */
  #append(message: Message, appended: Message[]): void {
    this.session?.appendMessage(message);
    this.#messages.push(message);
    if (message.role === 'assistant') this.#lastCost = this.#countUsage(message);
    appended.push(message);
    this.#emit({ type: 'message_end', message });
  }

  #warnSerializer(warnings: readonly SerializeWarning[]): void {
    for (const w of warnings) {
      this.#warn(
        w.parts === undefined
          ? { code: w.code, message: w.message }
          : { code: w.code, message: w.message, parts: w.parts },
      );
    }
  }

  /** Report a warning once per agent (the same serializer warning would otherwise repeat every turn). */
  #warn(warning: AgentWarning): void {
    const key = `${warning.code}\u0000${warning.message}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#emit({ type: 'warning', warning });
  }

  #emit(event: AgentEvent): void {
    for (const listener of this.#listeners) notifyListener(listener, event);
  }
}

function stopOf(message: AssistantMessage): AgentStopReason {
  switch (message.stopReason) {
    case undefined:
    case 'end':
    case 'tool_use':
      return 'end';
    case 'max_tokens':
    case 'refusal':
    case 'aborted':
    case 'error':
    case 'other':
      return message.stopReason;
    default:
      return 'other';
  }
}

function abortError(signal: AbortSignal): PantoError {
  const reason: unknown = signal.reason;
  if (isPantoError(reason, 'ERR_ABORTED')) return reason;
  return new PantoError(
    'ERR_ABORTED',
    'the run was aborted',
    reason === undefined ? undefined : { cause: reason },
  );
}

/** A `ModelInfo` for `model` checked against the provider's API. */
function modelFor(model: ModelInfo | string, provider: Provider, where: string): ModelInfo {
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

function checkThinking(level: ThinkingLevel | undefined, where: string): void {
  if (level !== undefined && !['off', 'low', 'medium', 'high'].includes(level)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `${where}: expected off, low, medium or high, got ${JSON.stringify(level)}`,
    );
  }
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

function failedMessage(error: PantoError): AssistantMessage {
  return { role: 'assistant', content: [], stopReason: 'error', errorMessage: error.message };
}
