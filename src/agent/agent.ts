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
 * - Uploads (`uploads: 'auto'`, request-media.ts): before a request, each image/PDF not yet a file of the provider
 *   account is uploaded once (cached by the sha256 of its bytes, recorded in the session log) and referenced by id;
 *   a failed upload goes inline, a refused reference is uploaded again and the request retried once. `deleteUploads`
 *   deletes them. Old images the request guard must shed are re-encoded smaller before any is left out.
 * - Usage: each `turn_end` carries the answer's usage and cost; `usage` holds the session totals (answers of this
 *   agent and of the resumed session log, plus compaction summaries).
 *
 * The class holds the state; the work is done by functions over it: the request-and-retry turn (request-turn.ts), a
 * turn's tool calls (tool-turn.ts), the compaction trigger (agent-compaction.ts), the usage meter (usage-meter.ts),
 * the provider files (agent-uploads.ts), the option checks (agent-options.ts).
 */

import type { Message, UserMessage } from '../conversation.js';
import { toolCallsOf, toolErrorResult } from '../conversation.js';
import { isPantoError, PantoError } from '../errors.js';
import type { ProcessOptions } from '../media/types.js';
import type { ThinkingLevel } from '../providers/common/serialize-options.js';
import type { Provider } from '../providers/http-provider.js';
import { mediaPolicyFor } from '../providers/model/model-catalog.js';
import type { ModelInfo } from '../providers/model/model-info.js';
import { checkPrice, type ModelPrice } from '../providers/model/model-prices.js';
import type { SessionWriter } from '../session/session-writer.js';
import type { ToolSource } from '../tool-source.js';
import { errorMessage, StaticToolSource } from '../tool-source.js';
import type { ApproveToolCall } from '../tools/approval.js';
import { ABORTED_RESULT_TEXT } from '../tools/dispatch.js';
import { notifyListener } from '../tools/tool-events.js';
import {
  type AgentCompactionOptions,
  type CompactionContext,
  type CompactOutcome,
  compactOnRequest,
  ensureFits,
  type ManualCompaction,
  maybeCompact,
  recoverFromOverflow,
} from './agent-compaction.js';
import {
  type AgentEvent,
  type AgentEventListener,
  type AgentRunResult,
  type AgentStopReason,
  type AgentWarning,
  stopReasonOf,
} from './agent-events.js';
import {
  type AgentOptions,
  type AgentRequestOptions,
  checkAgentOptions,
  checkProvider,
  checkThinking,
  modelFor,
  requestOptionsFor,
} from './agent-options.js';
import { AgentUploads } from './agent-uploads.js';
import type { DeleteUploadsResult } from './delete-uploads.js';
import { takeHandedInHistory } from './handed-in-history.js';
import { abortError, requestTurn, type TurnContext } from './request-turn.js';
import { runToolCalls, type ToolTurnContext } from './tool-turn.js';
import { UsageMeter, withSaneUsage } from './usage-meter.js';
import type { UsageTotals } from './usage-totals.js';
import { buildUserMessage, type UserContent } from './user-content.js';

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

export class Agent {
  readonly tools: ToolSource;
  readonly session: SessionWriter | undefined;
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
  readonly #maxStreamRetries: number;
  readonly #streamRetryDelayMs: number;
  /** A context window smaller than the model's, stated by the provider in a context-overflow error. */
  #statedWindow: number | undefined;
  readonly #usage: UsageMeter;
  readonly #workspaceRoot: string | undefined;
  readonly #concurrency: number;
  readonly #toolResultShare: number;
  readonly #approve: ApproveToolCall | undefined;
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
  readonly #uploads: AgentUploads;

  constructor(options: AgentOptions) {
    const checked = checkAgentOptions(options);
    this.#provider = checked.provider;
    this.#model = checked.model;
    this.tools = options.tools ?? new StaticToolSource([], 'none');
    this.session = options.session;
    if (options.onEvent) this.#listeners.add(options.onEvent);
    // A session's parts passed its entry checks; a handed-in history's are checked here, once.
    const handedIn = options.session ? undefined : takeHandedInHistory(options.messages ?? []);
    this.#messages = handedIn?.messages ?? [...(options.session?.conversation.messages ?? [])];
    // A resumed or handed-in history may be compacted already; its recorded usage is not trusted.
    this.#usageFloor = this.#messages.length;
    this.#system = options.system;
    this.#maxTurns = checked.maxTurns;
    this.#request = { ...options.request };
    this.#compactionOptions = options.compaction;
    this.#mediaOption = options.mediaPolicy;
    this.#media = options.mediaPolicy ?? mediaPolicyFor(this.#model);
    this.#thinking = checked.thinking;
    this.#promptCache = checked.promptCache;
    this.#maxStreamRetries = checked.maxStreamRetries;
    this.#streamRetryDelayMs = checked.streamRetryDelayMs;
    this.#usage = new UsageMeter(options.price, this.#model.id);
    if (options.session) this.#usage.resume(options.session);
    else for (const m of this.#messages) this.#usage.count(m);
    this.#workspaceRoot = options.workspaceRoot;
    this.#concurrency = checked.concurrency;
    this.#toolResultShare = checked.maxToolResultShare;
    this.#approve = checked.approveToolCall;
    this.#uploads = new AgentUploads(
      checked.uploads,
      options.session,
      (event) => this.#emit(event),
      (warning) => this.#warn(warning),
    );
    for (const warning of handedIn?.warnings ?? []) this.#warn(warning);
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
   * A resumed log's answers are counted at construction from its `usage` (per-model sums the log read at open, each
   * model's tokens priced at once), so reading this does no I/O and never throws.
   */
  get usage(): UsageTotals {
    return this.#usage.totals;
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
    this.#idle('setModel: the agent is running; switch models between runs');
    const provider = options.provider ?? this.#provider;
    checkProvider(provider, 'setModel: options.provider must be a Provider');
    const next = modelFor(model, provider, 'setModel');
    if (options.price !== undefined && options.price !== null) checkPrice(options.price);
    const previous = this.#model;
    this.session?.appendModelChange({ model: next.id, api: next.api, provider: next.provider });
    this.#provider = provider;
    this.#model = next;
    this.#usage.pricing(options.price, next.id);
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
   * the agent's summarizer (with `focus`, if given), record it in the session log, and report `compaction_start`
   * (reason `manual`) / `compaction_end`. Resolves to `null` when there is nothing older than the recent messages to
   * summarize (a single exchange). Works with `compaction: false` too (that only turns off the automatic trigger).
   *
   * @throws PantoError `ERR_INVALID_ARGUMENT` while a run is in progress; the summarizer's error when it fails;
   *   `ERR_ABORTED` when `signal` fires.
   */
  async compact(options: RunOptions & ManualCompaction = {}): Promise<CompactOutcome | null> {
    this.#claim();
    const ctl = this.#runCtl ?? new AbortController();
    const unlink = follow(ctl, options.signal);
    try {
      return await compactOnRequest(this.#compaction(), ctl.signal, options);
    } finally {
      unlink();
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

  /** @throws PantoError `ERR_INVALID_ARGUMENT` with `message` while a run is in progress. */
  #idle(message: string): void {
    if (this.#running) throw new PantoError('ERR_INVALID_ARGUMENT', message);
  }

  #claim(): void {
    this.#idle('the agent is already running; use steer() to add a message or abort() to stop it');
    this.#running = true;
    // Created now so that abort() works while the prompt's attachments are still being processed.
    this.#runCtl = new AbortController();
  }

  async #run(first: UserMessage | undefined, external: AbortSignal | undefined): Promise<AgentRunResult> {
    const ctl = this.#runCtl ?? new AbortController();
    this.#runCtl = ctl;
    const unlink = follow(ctl, external);
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
      unlink();
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
      if (last.role === 'assistant' && !failed && toolCallsOf(last).length === 0)
        return done(stopReasonOf(last));
      if (turns >= this.#maxTurns) return done('max_turns');
      await maybeCompact(this.#compaction(), signal);
      const unfit = await ensureFits(this.#compaction(), signal);
      if (signal.aborted) return done('aborted', abortError(signal));
      if (unfit !== undefined) return done('error', unfit);
      turns = nextTurn();
      this.#emit({ type: 'turn_start', turn: turns });
      const turn = await requestTurn(this.#turn(), signal);
      const { error } = turn;
      const message = withSaneUsage(turn.message);
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
          ...this.#usage.turnUsage(message),
        });
        return done(message.stopReason, error);
      }
      if (calls.length === 0) {
        this.#emit({ type: 'turn_end', turn: turns, message, ...this.#usage.turnUsage(message) });
        if (this.#steering.length > 0) continue;
        return done(stopReasonOf(message));
      }
      const results = await runToolCalls(calls, this.#toolTurn(), signal);
      const toolResults: Message = { role: 'tool', results };
      this.#append(toolResults, appended);
      this.#emit({ type: 'turn_end', turn: turns, message, toolResults, ...this.#usage.turnUsage(message) });
      if (signal.aborted) return done('aborted', abortError(signal));
    }
  }

  /** The agent's state as the request-and-retry functions see it (request-turn.ts). */
  #turn(): TurnContext {
    const tools = this.tools.list();
    return {
      provider: this.#provider,
      model: this.#model,
      media: this.#uploads.forRequest(this.#provider.files),
      messages: () => this.#messages,
      requestOptions: () => {
        const request = requestOptionsFor(this.#request, this.#thinking, this.#promptCache, this.#model);
        if (tools.length > 0) request.tools = tools;
        if (this.#system !== undefined) request.system = this.#system;
        return request;
      },
      rejected: this.#rejected,
      maxStreamRetries: this.#maxStreamRetries,
      streamRetryDelayMs: this.#streamRetryDelayMs,
      emit: (event) => this.#emit(event),
      warn: (warning) => this.#warn(warning),
      recoverFromOverflow: (error, signal) => recoverFromOverflow(this.#compaction(), error, signal),
    };
  }

  /**
   * Delete the provider files this agent (and, with a session, the session: every branch) uploaded, through the
   * Files API of each provider account this agent used; files of other accounts are `kept`. Each deletion is recorded
   * in the session log. Resolves to what was deleted, what failed and what was kept; never throws for a provider
   * failure.
   * @throws PantoError `ERR_INVALID_ARGUMENT` while a run is in progress; `ERR_ABORTED` when `signal` fires.
   */
  async deleteUploads(options: RunOptions = {}): Promise<DeleteUploadsResult> {
    this.#idle('deleteUploads: the agent is running; delete between runs');
    return this.#uploads.delete(this.#provider.files, options.signal);
  }

  /** The agent's state as the compaction functions see it (agent-compaction.ts). */
  #compaction(): CompactionContext {
    return {
      options: this.#compactionOptions,
      provider: this.#provider,
      model: this.#model,
      system: this.#system,
      tools: this.tools.list(),
      contextWindow: () => this.contextWindow,
      learnWindow: (tokens) => {
        this.#statedWindow = tokens;
      },
      messages: () => this.#messages,
      usageFloor: () => this.#usageFloor,
      commit: (out) => {
        this.session?.appendCompaction(out.compaction);
        this.#messages = [...out.conversation.messages];
        // Usage reported before the compaction measured the old, longer context: only later answers count.
        this.#usageFloor = this.#messages.length;
      },
      onSummaryUsage: (usage, id) => {
        this.#usage.add(usage, this.#usage.priceOf(id));
      },
      emit: (event) => this.#emit(event),
      warn: (warning) => this.#warn(warning),
    };
  }

  /** The agent's state as one turn's tool calls see it (tool-turn.ts). */
  #toolTurn(): ToolTurnContext {
    return {
      tools: this.tools,
      media: this.#media,
      concurrency: this.#concurrency,
      workspaceRoot: this.#workspaceRoot,
      // ~4 characters per token, as the estimates count.
      resultChars: Math.floor(this.contextWindow * this.#toolResultShare * 4),
      approve: this.#approve,
      steered: this.#steering.length > 0,
      setToolsController: (ctl) => {
        this.#toolsCtl = ctl;
      },
      emit: (event) => this.#emit(event),
      warn: (warning) => this.#warn(warning),
    };
  }

  async #deliverSteering(appended: Message[]): Promise<void> {
    while (this.#steering.length > 0) {
      const content = this.#steering.shift() as UserContent;
      this.#append(await this.#userMessage(content), appended);
    }
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
    this.#usage.count(message);
    appended.push(message);
    this.#emit({ type: 'message_end', message });
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

/** Abort `ctl` when `external` aborts (at once if it has); returns the function that stops listening. */
function follow(ctl: AbortController, external: AbortSignal | undefined): () => void {
  const onAbort = () => ctl.abort(external?.reason);
  if (external?.aborted) onAbort();
  else external?.addEventListener('abort', onAbort, { once: true });
  return () => external?.removeEventListener('abort', onAbort);
}
