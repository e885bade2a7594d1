/**
 * The state behind one `panto chat`: the agent, its session log and what the user was already told.
 *
 * - A new session's file is created when the first message is sent — quitting before that leaves no empty file.
 * - Notes and warnings are shown once per session, not on every resume: each one shown is recorded in the log as a
 *   `panto.cli/shown` custom entry (its key), and a resumed chat skips the keys it finds.
 * - Token usage and cost are summed over the whole session file, including the messages a compaction replaced; each
 *   answer is priced as the model that wrote it.
 * - `/model` and a thinking level change take effect from the next request; a model switch is recorded in the log
 *   (`model_change`), and a resumed chat continues with the session's current model.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Agent, type AgentEvent, type AgentOptions, providerSummarizer } from '../../agent/index.js';
import { compact } from '../../compaction/index.js';
import type { AssistantMessage, Usage } from '../../conversation.js';
import type { ModelInfo, ThinkingLevel } from '../../providers/index.js';
import type { Provider } from '../../providers/transport/index.js';
import { SessionLog } from '../../session/index.js';
import type { ToolSource } from '../../tool-source.js';
import { addUsage, messageCost, ZERO_USAGE } from '../usage-format.js';

export const SHOWN_ENTRY = 'panto.cli/shown';

export interface ChatSessionOptions {
  provider: Provider;
  model: ModelInfo;
  tools: ToolSource;
  workspaceRoot: string;
  system?: string | undefined;
  maxTurns?: number | undefined;
  /** Reasoning effort sent with every request (absent: the model's default). */
  thinking?: ThinkingLevel | undefined;
  /** Prompt caching (Anthropic cache breakpoints). */
  promptCache?: boolean | undefined;
  /** An opened log to continue (`--resume`). */
  resumed?: SessionLog;
  /** Where a new session is written (created on the first message). */
  newPath?: string;
  /** Every agent event, after the chat's own bookkeeping. */
  onEvent: (e: AgentEvent) => void;
  /** Show a note or warning (already filtered: never one the session has shown before). */
  notify: (text: string) => void;
}

export class ChatSession {
  model: ModelInfo;
  readonly provider: Provider;
  #agent: Agent;
  #session: SessionLog | undefined;
  readonly #o: ChatSessionOptions;
  readonly #shown = new Set<string>();
  /** Notes raised before the file existed, recorded once it does. */
  readonly #pendingShown: string[] = [];
  #usage: Usage = ZERO_USAGE;
  #cost = 0;
  /** Models whose answers had no price (their cost is not in `cost`). */
  readonly unpriced = new Set<string>();
  thinking: ThinkingLevel | undefined;

  constructor(options: ChatSessionOptions) {
    this.#o = options;
    this.model = options.model;
    this.provider = options.provider;
    this.thinking = options.thinking;
    this.#session = options.resumed;
    if (options.resumed) {
      for (const e of options.resumed.entries) {
        if (e.type === 'custom' && e.customType === SHOWN_ENTRY && typeof e.data === 'string')
          this.#shown.add(e.data);
        if (e.type === 'message' && e.message.role === 'assistant') this.#count(e.message);
      }
    }
    this.#agent = this.#makeAgent();
  }

  get agent(): Agent {
    return this.#agent;
  }

  /** The session log, once it exists. */
  get log(): SessionLog | undefined {
    return this.#session;
  }

  /** The session file (existing or to be created). */
  get path(): string {
    return this.#session?.path ?? this.#o.newPath ?? '(none)';
  }

  /** Usage summed over every answer of the session (also those a compaction replaced). */
  get usage(): Usage {
    return this.#usage;
  }

  /** Cost in US dollars of the priced answers of the session. */
  get cost(): number {
    return this.#cost;
  }

  /** Switch models from the next request on; recorded in the log. */
  setModel(model: ModelInfo): void {
    if (this.#agent.running) throw new Error('a turn is running; switch models after it (or Ctrl-C it)');
    this.model = model;
    this.#session?.appendModelChange({ model: model.id, api: model.api, provider: model.provider });
    this.#agent = this.#makeAgent();
  }

  /** Change the reasoning effort from the next request on. */
  setThinking(level: ThinkingLevel): void {
    if (this.#agent.running) throw new Error('a turn is running; change it after the turn');
    this.thinking = level;
    this.#agent = this.#makeAgent();
  }

  /** Show `text` unless this session showed the same `key` before. */
  notifyOnce(key: string, text: string): void {
    if (this.#shown.has(key)) return;
    this.#shown.add(key);
    this.#o.notify(text);
    if (this.#session) this.#session.appendCustom(SHOWN_ENTRY, key);
    else this.#pendingShown.push(key);
  }

  /** Create the session file if this is a new chat (call before sending anything). */
  async ensureSession(): Promise<SessionLog> {
    if (this.#session) return this.#session;
    const file = this.#o.newPath as string;
    await mkdir(path.dirname(file), { recursive: true });
    const log = await SessionLog.create(file, { model: this.model.id, workspace: this.#o.workspaceRoot });
    this.#session = log;
    for (const key of this.#pendingShown.splice(0)) log.appendCustom(SHOWN_ENTRY, key);
    // Nothing was sent yet, so the new agent starts from the same (empty) history.
    this.#agent = this.#makeAgent();
    return log;
  }

  /**
   * Summarize the older part of the conversation now (`/compact`). Returns the token estimates, or null when there is
   * nothing old enough to summarize.
   */
  async compactNow(signal?: AbortSignal): Promise<{ tokensBefore: number; tokensAfter: number } | null> {
    const log = this.#session;
    if (log === undefined) return null;
    const keepRecentTokens = Math.min(20_000, Math.floor(this.model.limits.contextWindow / 3));
    const out = await compact(log.conversation, providerSummarizer(this.provider, this.model), {
      keepRecentTokens,
      imageTokenRule: this.model.imageTokenRule,
      ...(signal ? { signal } : {}),
    });
    if (out === null) return null;
    log.appendCompaction(out.compaction);
    this.#agent = this.#makeAgent();
    return { tokensBefore: out.compaction.tokensBefore, tokensAfter: out.compaction.tokensAfter };
  }

  close(): void {
    this.#session?.close();
  }

  #makeAgent(): Agent {
    const o = this.#o;
    const options: AgentOptions = {
      provider: o.provider,
      model: this.model,
      tools: o.tools,
      workspaceRoot: o.workspaceRoot,
      onEvent: (e) => {
        if (e.type === 'message_end' && e.message.role === 'assistant') this.#count(e.message);
        if (e.type === 'warning') {
          // The chat already said the turn failed or was stopped and is not sent again.
          if (e.warning.code === 'turn-skipped') return;
          this.notifyOnce(`warning:${e.warning.code}:${e.warning.message}`, `warning: ${e.warning.message}`);
          return;
        }
        o.onEvent(e);
      },
    };
    if (this.#session) options.session = this.#session;
    if (o.system !== undefined) options.system = o.system;
    if (o.maxTurns !== undefined) options.maxTurns = o.maxTurns;
    const request: NonNullable<AgentOptions['request']> = {};
    if (this.thinking !== undefined) request.thinking = this.thinking;
    if (o.promptCache !== undefined) request.promptCache = o.promptCache;
    options.request = request;
    return new Agent(options);
  }

  #count(message: AssistantMessage): void {
    if (message.usage === undefined) return;
    this.#usage = addUsage(this.#usage, message.usage);
    const cost = messageCost(message, this.model.id);
    if (cost === undefined) this.unpriced.add(message.model ?? this.model.id);
    else this.#cost += cost;
  }
}
