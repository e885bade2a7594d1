/**
 * Per-call budgets of the Lua tool host. Every limit applies to ONE call (and, separately, to running one tool file
 * at load time). Exceeding the instruction or wall-clock budget ends the call with a tool error; `pcall` cannot catch
 * it for good (after an overrun the hook fires on every instruction until the call has unwound).
 */

import { PantoError } from '../errors.js';

export interface LuaBudgets {
  /** Lua VM instructions per call. Default 200,000,000 (several seconds of fengari time). */
  instructions?: number;
  /** Wall-clock milliseconds per call, including time spent awaiting host functions. Default 30,000. */
  wallClockMs?: number;
  /** UTF-8 bytes of returned text; longer text is cut with a note. Default 1 MiB. */
  maxTextBytes?: number;
  /** Total bytes of a result's attachments; more is a tool error. Default 64 MiB. */
  maxAttachmentBytes?: number;
  /** Largest string `string.rep` may build. Default 64 MiB. */
  maxStringBytes?: number;
  /**
   * Largest subject a pattern function (`string.find/match/gmatch/gsub` with a non-plain pattern) accepts. One
   * pattern match cannot be interrupted by the instruction hook; this bounds it. Default 4 MiB.
   */
  maxPatternSubjectBytes?: number;
  /** Largest file `panto.read_file` reads. Default 64 MiB. */
  maxReadBytes?: number;
  /** A busy call yields to the event loop after this many ms of Lua time. Default 10. */
  sliceMs?: number;
}

export type ResolvedBudgets = Required<LuaBudgets>;

export const DEFAULT_BUDGETS: Readonly<ResolvedBudgets> = Object.freeze({
  instructions: 200_000_000,
  wallClockMs: 30_000,
  maxTextBytes: 1024 * 1024,
  maxAttachmentBytes: 64 * 1024 * 1024,
  maxStringBytes: 64 * 1024 * 1024,
  maxPatternSubjectBytes: 4 * 1024 * 1024,
  maxReadBytes: 64 * 1024 * 1024,
  sliceMs: 10,
});

/** How many instructions run between two hook calls (the granularity of the budget checks). */
export const HOOK_INTERVAL = 1000;

/** Fill defaults and check values. Throws `ERR_INVALID_ARGUMENT` for a non-positive or non-finite budget. */
export function resolveBudgets(budgets: LuaBudgets | undefined): ResolvedBudgets {
  const out: ResolvedBudgets = { ...DEFAULT_BUDGETS };
  for (const [key, value] of Object.entries(budgets ?? {})) {
    if (!(key in DEFAULT_BUDGETS)) {
      throw new PantoError('ERR_INVALID_ARGUMENT', `unknown Lua budget '${key}'`);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `Lua budget '${key}' must be a positive number, got ${String(value)}`,
      );
    }
    out[key as keyof ResolvedBudgets] = value;
  }
  return out;
}
