/**
 * The agent's usage meter: token and cost totals of a session — the answers of a resumed log (counted on the first
 * read of `totals`), the answers of this agent and its compactions' summary requests — each priced by the agent's
 * `price` option or the price table.
 */

import type { AssistantMessage, Message, Usage } from '../conversation.js';
import { type ModelPrice, priceOf, type UsageCost } from '../providers/model/model-prices.js';
import type { SessionWriter } from '../session/session-writer.js';
import { addUsage, emptyTotals, saneUsage, type UsageTotals } from './usage-totals.js';

export class UsageMeter {
  readonly #totals: UsageTotals = emptyTotals();
  /** Counts the resumed log's answers (first read of `totals`); until then `#later` keeps what was added since. */
  #resumed: (() => UsageTotals) | undefined;
  #later: Array<[Usage, ModelPrice | undefined]> = [];
  #price: ModelPrice | null | undefined;
  #modelId: string;
  /** Cost of the assistant message counted last (for its `turn_end`). */
  #lastCost: UsageCost | undefined;

  /** `price`: the agent's option (`null`: no cost; undefined: the table's price of each answer's model). */
  constructor(price: ModelPrice | null | undefined, modelId: string) {
    this.#price = price;
    this.#modelId = modelId;
  }

  /**
   * Count the entries `session` holds now when `totals` is first read (the agent's own appends come after them and
   * are counted as they happen), priced as they would be now: with this price option and model, whatever a later
   * `pricing` call says.
   */
  resume(session: SessionWriter): void {
    const held = session.size;
    if (held === 0) return;
    const price = this.#price;
    const modelId = this.#modelId;
    this.#resumed = () => {
      const totals = emptyTotals();
      const entries = session.entries;
      for (let i = 0; i < held; i++) {
        const e = entries[i] as (typeof entries)[number];
        if (e.type !== 'message' || e.message.role !== 'assistant' || e.message.usage === undefined) continue;
        const id = e.message.model;
        const p = price === null ? undefined : (price ?? priceOf(id ?? modelId) ?? priceOf(modelId));
        addUsage(totals, e.message.usage, p);
      }
      return totals;
    };
  }

  /** The price option and model of later answers (after `setModel`). */
  pricing(price: ModelPrice | null | undefined, modelId: string): void {
    this.#price = price;
    this.#modelId = modelId;
  }

  /** The price of an answer of `modelId` (the current model's when absent), or undefined when not priced. */
  priceOf(modelId: string | undefined): ModelPrice | undefined {
    if (this.#price === null) return undefined;
    return this.#price ?? priceOf(modelId ?? this.#modelId) ?? priceOf(this.#modelId);
  }

  /** Count a message's usage (assistant messages only); the cost is kept for its `turn_end` (`turnUsage`). */
  count(message: Message): void {
    if (message.role !== 'assistant') return;
    this.#lastCost =
      message.usage === undefined ? undefined : this.add(message.usage, this.priceOf(message.model));
  }

  /** Count one request's usage; returns its cost, or undefined without a price. */
  add(usage: Usage, price: ModelPrice | undefined): UsageCost | undefined {
    if (this.#resumed !== undefined) this.#later.push([usage, price]);
    return addUsage(this.#totals, usage, price);
  }

  /** The `usage` and `cost` of a `turn_end` for `message` (the message counted last). */
  turnUsage(message: AssistantMessage): { usage?: Usage; cost?: UsageCost } {
    if (message.usage === undefined) return {};
    const cost = this.#lastCost;
    return cost === undefined ? { usage: message.usage } : { usage: message.usage, cost };
  }

  /**
   * The totals (a copy). The first read after `resume` parses the log's entries and throws what that throws (see
   * `Agent.usage`); a later read tries again. The totals are the same, to the last bit, as counting the log first
   * and the later usage after it.
   */
  get totals(): UsageTotals {
    const resumed = this.#resumed;
    if (resumed !== undefined) {
      const totals = resumed();
      for (const [usage, price] of this.#later) addUsage(totals, usage, price);
      Object.assign(this.#totals, totals);
      this.#resumed = undefined;
      this.#later = [];
    }
    return { ...this.#totals };
  }
}

/**
 * An answer as it is stored and counted: token counts never negative, fractional, NaN or past 2^53 (`saneUsage`); a
 * `usage` that is not an object (a custom Provider may send `null`) is dropped. The same message when already so.
 */
export function withSaneUsage(message: AssistantMessage): AssistantMessage {
  const reported = message.usage;
  const usage = typeof reported === 'object' && reported !== null ? saneUsage(reported) : undefined;
  if (usage !== undefined && usage !== reported) return { ...message, usage };
  if (usage === undefined && reported !== undefined) {
    const { usage: _dropped, ...rest } = message;
    return rest;
  }
  return message;
}
