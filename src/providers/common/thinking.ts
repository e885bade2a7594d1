/**
 * `SerializeOptions.thinking` per surface. Pure helpers the four serializers call on the body they built.
 *
 * | level | Anthropic `thinking.budget_tokens` | OpenAI Chat `reasoning_effort` | Responses `reasoning.effort` | Gemini 2.5 `thinkingBudget` | Gemini 3+ `thinkingLevel` |
 * |---|---|---|---|---|---|
 * | low | 2,048 | low | low | 2,048 | LOW |
 * | medium | 8,192 | medium | medium | 8,192 | MEDIUM (Flash), HIGH (Pro) |
 * | high | 24,576 | high | high | 24,576 | HIGH |
 *
 * `'off'` sends nothing. Anthropic needs `max_tokens` above the budget: when it is not, `max_tokens` grows by the
 * budget (up to the model's `maxOutputTokens`), and if that still leaves no room the budget shrinks to three
 * quarters of `max_tokens` (at least the API's 1,024; below that thinking is not sent and a warning says so).
 */

import { PantoError } from '../../errors.js';
import type { ModelInfo } from '../model/model-info.js';
import type { SerializeWarning, ThinkingLevel } from './serialize-options.js';

const LEVELS: readonly ThinkingLevel[] = ['off', 'low', 'medium', 'high'];

/** Token budgets of the budget-based surfaces (Anthropic, Gemini 2.5). */
export const THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  low: 2048,
  medium: 8192,
  high: 24_576,
};

/** Anthropic's smallest thinking budget. */
const ANTHROPIC_MIN_BUDGET = 1024;

/**
 * The level to send for `model`, or `undefined` (nothing to send: absent, `'off'`, or a model that cannot reason —
 * then a warning is pushed).
 *
 * @throws PantoError `ERR_INVALID_ARGUMENT` for a value that is not one of the levels.
 */
export function thinkingFor(
  model: ModelInfo,
  level: ThinkingLevel | undefined,
  warnings: SerializeWarning[],
): Exclude<ThinkingLevel, 'off'> | undefined {
  if (level === undefined) return undefined;
  if (!LEVELS.includes(level)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `thinking must be one of ${LEVELS.join(', ')}; got ${JSON.stringify(level)}`,
    );
  }
  if (level === 'off') return undefined;
  if (model.reasoning !== true) {
    warnings.push({
      code: 'option-ignored',
      message: `thinking '${level}' was not sent: model '${model.id}' is not known to reason (declare it with resolveModel(id, { reasoning: true }))`,
    });
    return undefined;
  }
  return level;
}

/** Anthropic: the `thinking` field and the `max_tokens` to send with it. */
export function anthropicThinking(
  model: ModelInfo,
  level: Exclude<ThinkingLevel, 'off'>,
  maxTokens: number,
  warnings: SerializeWarning[],
): { thinking?: { type: 'enabled'; budget_tokens: number }; maxTokens: number } {
  let budget = THINKING_BUDGETS[level];
  let max = maxTokens;
  if (max <= budget) max = Math.min(model.limits.maxOutputTokens, max + budget);
  if (max <= budget) budget = Math.floor((max * 3) / 4);
  if (budget < ANTHROPIC_MIN_BUDGET) {
    warnings.push({
      code: 'option-ignored',
      message: `thinking '${level}' was not sent: max_tokens ${max} leaves no room for Anthropic's smallest thinking budget (${ANTHROPIC_MIN_BUDGET})`,
    });
    return { maxTokens };
  }
  return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: max };
}

/** Gemini: the `generationConfig.thinkingConfig` value. */
export function geminiThinkingConfig(
  model: ModelInfo,
  level: Exclude<ThinkingLevel, 'off'>,
): { includeThoughts: true; thinkingBudget?: number; thinkingLevel?: 'LOW' | 'MEDIUM' | 'HIGH' } {
  const id = model.id.slice(model.id.lastIndexOf('/') + 1);
  if (/^gemini-[3-9]/.test(id)) {
    // Gemini 3 Pro offers LOW and HIGH only; Flash adds MEDIUM.
    const medium = /flash/.test(id) ? 'MEDIUM' : 'HIGH';
    return {
      includeThoughts: true,
      thinkingLevel: level === 'low' ? 'LOW' : level === 'medium' ? medium : 'HIGH',
    };
  }
  return { includeThoughts: true, thinkingBudget: THINKING_BUDGETS[level] };
}
