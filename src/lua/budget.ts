/**
 * Per-call budgets of the Lua tool host. Every limit applies to ONE call (and, separately, to running one tool file
 * at load time). Exceeding the instruction, time or memory budget ends the call with a tool error; `pcall` cannot
 * catch it for good (after an overrun the hook fires on every instruction until the call has unwound).
 */

import { PantoError } from '../errors.js';

export interface LuaBudgets {
  /** Lua VM instructions per call. Default 200,000,000 (several seconds of fengari time). */
  instructions?: number;
  /**
   * Milliseconds of the call's OWN time: the time its Lua code runs plus the time it waits for its own host calls
   * (`panto.read_file`, ...). Time spent queued behind other calls (`maxConcurrentCalls`) or while other calls run
   * their time slices is not counted, so a busy host cannot make an honest call time out. Also checked inside long
   * library functions (pattern matching, `string.rep`, `table.move`, `load`, ...). Default 30,000.
   */
  wallClockMs?: number;
  /**
   * Bytes a call may allocate in Lua strings, string buffers and tables, counted when allocated (fengari cannot tell
   * when memory is freed, so this is the call's total allocation, not its peak). Checked BEFORE a big allocation, so
   * `s = s .. s` or `string.pack("c2000000000", "")` stops without allocating. Default 256 MiB.
   */
  memoryBytes?: number;
  /**
   * The longest a call may hold the event loop in one go: one library function (a pattern match, `string.format`,
   * `table.concat`, `load`, ...) or a stretch of Lua that cannot yield (a `table.sort` comparator, a `gsub`
   * callback). Longer is a tool error. Lua code that CAN yield is sliced every `sliceMs` instead. Default 2,000.
   */
  maxBlockingMs?: number;
  /**
   * UTF-8 bytes of any text leaving Lua: returned text, error messages, `print`/`panto.log` lines, progress messages,
   * strings in `meta` (a longer key in `meta` is an error). Longer text is cut with a note. Default 1 MiB.
   */
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
  /** Largest data one `panto.write_file` writes. Default 64 MiB. */
  maxWriteBytes?: number;
  /**
   * Largest value a host function may return to Lua (strings as UTF-8, bytes, and 16 bytes per table entry); a larger
   * one is `nil, err`, never cut. Default 64 MiB.
   */
  maxHostValueBytes?: number;
  /**
   * A busy call yields to the event loop after this many ms of Lua time, and the host runs one slice per event-loop
   * turn, so the loop never waits longer than about one slice however many calls are busy. Default 10.
   */
  sliceMs?: number;
}

export type ResolvedBudgets = Required<LuaBudgets>;

export const DEFAULT_BUDGETS: Readonly<ResolvedBudgets> = Object.freeze({
  instructions: 200_000_000,
  wallClockMs: 30_000,
  memoryBytes: 256 * 1024 * 1024,
  maxBlockingMs: 2000,
  maxTextBytes: 1024 * 1024,
  maxAttachmentBytes: 64 * 1024 * 1024,
  maxStringBytes: 64 * 1024 * 1024,
  maxPatternSubjectBytes: 4 * 1024 * 1024,
  maxReadBytes: 64 * 1024 * 1024,
  maxWriteBytes: 64 * 1024 * 1024,
  maxHostValueBytes: 64 * 1024 * 1024,
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
