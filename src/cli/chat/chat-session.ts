/**
 * The state behind one `panto chat`: the agent, its session log and what the user was already told.
 *
 * - A new session's file is created when the first message is sent — quitting before that leaves no empty file.
 * - Notes and warnings are shown once per session, not on every resume: each one shown is recorded in the log as a
 *   `panto.cli/shown` custom entry (its key), and a resumed chat skips the keys it finds.
 * - Token usage and cost are the agent's session totals (`Agent.usage`: every answer of the log, also those a
 *   compaction replaced, and the summary requests), each answer priced as the model that wrote it.
 * - `/model` (`Agent.setModel`, recorded in the log as `model_change`) and a thinking level (`Agent.setThinking`) take
 *   effect from the next request; a resumed chat continues with the session's current model.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Agent, type AgentEvent, type AgentOptions, type UsageTotals } from '../../agent/index.js';
import type { ModelInfo, Provider, ThinkingLevel } from '../../providers/index.js';
import { SessionLog, type SessionWriter } from '../../session/index.js';
import type { ToolSource } from '../../tool-source.js';
import type { ApproveToolCall } from '../../tools/approval.js';

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
  resumed?: SessionWriter;
  /** Where a new session is written (created on the first message). */
  newPath?: string;
  /** With `--store`: creates the new session in the store (instead of a file at `newPath`). */
  createInStore?: (header: { model: string; workspace: string }) => Promise<SessionWriter>;
  /** With `--store`: how the session is named to the user (`<store> session <id>`). */
  storeName?: string;
  /** Every agent event, after the chat's own bookkeeping. */
  onEvent: (e: AgentEvent) => void;
  /** Show a note or warning (already filtered: never one the session has shown before). */
  notify: (text: string) => void;
  /** Decides on calls of tools that need approval (approval-prompt.ts). */
  approveToolCall?: ApproveToolCall | undefined;
}

export class ChatSession {
  model: ModelInfo;
  readonly provider: Provider;
  #agent: Agent;
  #session: SessionWriter | undefined;
  readonly #o: ChatSessionOptions;
  readonly #shown = new Set<string>();
  /** Notes raised before the file existed, recorded once it does. */
  readonly #pendingShown: string[] = [];
  thinking: ThinkingLevel | undefined;

  constructor(options: ChatSessionOptions) {
    this.#o = options;
    this.model = options.model;
    this.provider = options.provider;
    this.thinking = options.thinking;
    this.#session = options.resumed;
    if (options.resumed) {
      // Every entry of the log, now: the chat prints whole-session usage after each answer, which needs every earlier
      // answer anyway (the agent then counts from these same parsed entries). After a lazy `SessionLog.open` this
      // parses what the open did not, and a damaged line in an old branch fails `--resume` here, before anything is
      // sent; a log opened with `eager: true` (one pass, the cheaper open when everything is read) has them ready.
      for (const e of options.resumed.entries) {
        if (e.type === 'custom' && e.customType === SHOWN_ENTRY && typeof e.data === 'string')
          this.#shown.add(e.data);
      }
    }
    this.#agent = this.#makeAgent();
  }

  get agent(): Agent {
    return this.#agent;
  }

  /** The session log, once it exists. */
  get log(): SessionWriter | undefined {
    return this.#session;
  }

  /** The session file (existing or to be created), or the store session's name. */
  get path(): string {
    if (this.#o.storeName !== undefined)
      return `${this.#o.storeName} session ${this.#session?.header.id ?? '(created on the first message)'}`;
    return (this.#session as SessionLog | undefined)?.path ?? this.#o.newPath ?? '(none)';
  }

  /** Token and cost totals of the whole session (see the module contract). */
  get usage(): UsageTotals {
    return this.#agent.usage;
  }

  /** Switch models from the next request on; recorded in the log (once it exists; else in its header). */
  setModel(model: ModelInfo): void {
    this.#agent.setModel(model);
    this.model = model;
  }

  /** Change the reasoning effort from the next request on. */
  setThinking(level: ThinkingLevel): void {
    this.#agent.setThinking(level);
    this.thinking = level;
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
  async ensureSession(): Promise<SessionWriter> {
    if (this.#session) return this.#session;
    let log: SessionWriter;
    if (this.#o.createInStore) {
      log = await this.#o.createInStore({ model: this.model.id, workspace: this.#o.workspaceRoot });
    } else {
      const file = this.#o.newPath as string;
      await mkdir(path.dirname(file), { recursive: true });
      log = await SessionLog.create(file, { model: this.model.id, workspace: this.#o.workspaceRoot });
    }
    this.#session = log;
    for (const key of this.#pendingShown.splice(0)) log.appendCustom(SHOWN_ENTRY, key);
    // Nothing was sent yet, so the new agent starts from the same (empty) history.
    this.#agent = this.#makeAgent();
    return log;
  }

  /**
   * Summarize the older part of the conversation now (`/compact`). Returns the token estimates, or null when there is
   * nothing old enough to summarize (or nothing was sent yet).
   */
  async compactNow(signal?: AbortSignal): Promise<{ tokensBefore: number; tokensAfter: number } | null> {
    if (this.#session === undefined) return null;
    return this.#agent.compact(signal ? { signal } : {});
  }

  /** Close the log (a store's log first stores what is still on its way). */
  async close(): Promise<void> {
    await this.#session?.close();
  }

  #makeAgent(): Agent {
    const o = this.#o;
    const options: AgentOptions = {
      provider: o.provider,
      model: this.model,
      tools: o.tools,
      workspaceRoot: o.workspaceRoot,
      onEvent: (e) => {
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
    if (this.thinking !== undefined) options.thinking = this.thinking;
    if (o.promptCache !== undefined) options.promptCache = o.promptCache;
    if (o.approveToolCall !== undefined) options.approveToolCall = o.approveToolCall;
    return new Agent(options);
  }
}
