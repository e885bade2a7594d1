/**
 * Where to split a conversation for compaction: messages before the cut are summarized, messages from the cut on are
 * kept verbatim.
 */

import type { Message } from '../conversation.js';
import { PantoError } from '../errors.js';
import { type EstimateOptions, messageTokensUnchecked } from './estimate-tokens.js';
import { capTokens, checkEstimateOptions } from './image-tokens.js';

/**
 * Indices `i` (1..messages.length) where a cut never separates a tool call from its result: `messages[i]` is not a
 * tool-results message and every tool call before `i` that has a result anywhere has it before `i`. (A call that
 * never got a result, e.g. after an abort, does not block cutting.)
 */
export function validCutPoints(messages: readonly Message[]): boolean[] {
  const answered = new Set<string>();
  for (const m of messages) if (m.role === 'tool') for (const r of m.results) answered.add(r.toolUseId);
  const valid: boolean[] = new Array(messages.length + 1).fill(false);
  const open = new Set<string>();
  for (let i = 0; i <= messages.length; i++) {
    const m = messages[i];
    valid[i] = i > 0 && open.size === 0 && m?.role !== 'tool';
    if (m?.role === 'assistant') {
      for (const b of m.content) if (b.type === 'tool_call' && answered.has(b.id)) open.add(b.id);
    } else if (m?.role === 'tool') {
      for (const r of m.results) open.delete(r.toolUseId);
    }
  }
  return valid;
}

/**
 * Index of the first message to keep so that the kept tail holds at least `keepRecentTokens` (estimated with
 * `options`) and the cut is valid (see `validCutPoints`). Returns 0 when there is nothing to compact: the whole
 * conversation fits in `keepRecentTokens`, or no valid cut leaves enough behind it. `keepRecentTokens` <= 0 keeps
 * nothing beyond what a valid cut needs.
 * @throws PantoError `ERR_INVALID_ARGUMENT` when `keepRecentTokens` is not a number or is `NaN` (which would cut
 * everything), or for estimate options out of range.
 */
export function findCutPoint(
  messages: readonly Message[],
  keepRecentTokens: number,
  options: EstimateOptions = {},
): number {
  if (typeof keepRecentTokens !== 'number' || Number.isNaN(keepRecentTokens)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `keepRecentTokens must be a number, got ${String(keepRecentTokens)}`,
    );
  }
  checkEstimateOptions(options);
  let target = messages.length;
  if (keepRecentTokens > 0) {
    let kept = 0;
    target = -1;
    for (let i = messages.length - 1; i >= 0; i--) {
      kept = capTokens(kept + messageTokensUnchecked(messages[i] as Message, options));
      if (kept >= keepRecentTokens) {
        target = i;
        break;
      }
    }
    if (target <= 0) return 0;
  }
  const valid = validCutPoints(messages);
  for (let j = target; j >= 1; j--) if (valid[j]) return j;
  return 0;
}
