/**
 * The path from a server's `notifications/progress` to the host's `onProgress`, bounded.
 *
 * Contract:
 * - `message` is cut like every server text handed to the host (`clipServerText`, server-text.ts: 2000 characters and a note of the
 *   full length); a non-string `message` is left out.
 * - At most `PROGRESS_PER_TURN` callbacks per event-loop turn: past that, further notifications of the turn are
 *   coalesced into the newest one, delivered on the next turn (or by `flush()`). A server flooding progress therefore
 *   reaches the host at a bounded rate, and the host always sees the newest value.
 * - `flush()` delivers a held notification at once (the call's result must not overtake its last progress); after
 *   `close()` nothing more is delivered.
 * - A `deliver` that throws is ignored (reported once per process as warning `PANTO_LISTENER_THREW`, like event
 *   listeners); neither `onprogress`, `flush()` nor the next-turn delivery throws.
 */

import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { notifyListener } from '../tools/tool-events.js';
import { clipServerText } from './server-text.js';

/** Most progress callbacks of one call delivered in one event-loop turn. */
export const PROGRESS_PER_TURN = 16;
export interface ProgressGate {
  /** Give to the SDK as `onprogress`. */
  readonly onprogress: (p: Progress) => void;
  flush(): void;
  close(): void;
}

export function progressGate(deliver: (p: Progress) => void): ProgressGate {
  let inTurn = 0;
  let held: Progress | undefined;
  let closed = false;
  let turn: ReturnType<typeof setImmediate> | undefined;
  const send = (p: Progress) => {
    const { message, ...rest } = p;
    // Held progress is delivered from a timer: a throwing host callback must not become an uncaught exception.
    notifyListener(
      deliver,
      typeof message === 'string' ? { ...rest, message: clipServerText(message) } : rest,
    );
  };
  const flush = () => {
    const p = held;
    held = undefined;
    if (p !== undefined && !closed) send(p);
  };
  const nextTurn = () => {
    turn = undefined;
    inTurn = 0;
    flush();
  };
  return {
    onprogress(p) {
      if (closed) return;
      if (turn === undefined) turn = setImmediate(nextTurn);
      if (inTurn < PROGRESS_PER_TURN) {
        inTurn++;
        send(p);
      } else held = p;
    },
    flush,
    close() {
      closed = true;
      held = undefined;
      if (turn !== undefined) clearImmediate(turn);
      turn = undefined;
    },
  };
}
