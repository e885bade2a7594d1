/**
 * Events `dispatchToolCalls` reports while it runs tool calls, for a host to show (spinners, progress, timings,
 * warnings about dropped attachments). Events are informational: nothing a listener does changes the results.
 *
 * Order guarantees, per call: `tool_call_start` (when the call gets a concurrency slot) → any `tool_call_update` →
 * `tool_media_processed` / `tool_media_dropped` (one per media part, in completion order) → exactly one
 * `tool_call_end`. A call aborted while still queued gets only `tool_call_end` (`started: false`). Nothing about a
 * call is emitted after its `tool_call_end`.
 */

import type { ToolResultBlock } from '../conversation.js';
import type { MediaChange, OutputMediaType, SupportedMediaType } from '../media/types.js';
import type { ToolUpdate } from '../tool.js';

/** Fields every tool event carries. */
interface ToolEventBase {
  /** The call's id (`ToolCallBlock.id`). */
  toolCallId: string;
  toolName: string;
  /** Position of the call in the dispatched list. */
  index: number;
}

/** A call got its slot and is about to be validated and run. */
export interface ToolCallStartEvent extends ToolEventBase {
  type: 'tool_call_start';
  input: Record<string, unknown>;
}

/** A running tool reported progress through `ctx.update`. */
export interface ToolCallUpdateEvent extends ToolEventBase {
  type: 'tool_call_update';
  update: ToolUpdate;
}

/** A media part was turned into a stored image or document. */
export interface ToolMediaProcessedEvent extends ToolEventBase {
  type: 'tool_media_processed';
  /** Index of the media part in the tool's own output. */
  partIndex: number;
  mediaType: OutputMediaType;
  width: number;
  height: number;
  /** Size of the stored file (before base64). */
  byteLength: number;
  original: { mediaType: SupportedMediaType; width: number; height: number; byteLength: number };
  /** Everything the pipeline did, including changes not worth telling the model (e.g. `metadata-stripped`). */
  changes: MediaChange[];
}

/** A media part could not be stored; the model got a note instead. */
export interface ToolMediaDroppedEvent extends ToolEventBase {
  type: 'tool_media_dropped';
  partIndex: number;
  /** The error code from the media pipeline (e.g. `ERR_UNSUPPORTED_MEDIA`). */
  code: string;
  /** The note the model got. */
  note: string;
  /** The sniffed type of the bytes, when known. */
  mediaType?: string;
}

/** A call finished: its result is final. */
export interface ToolCallEndEvent extends ToolEventBase {
  type: 'tool_call_end';
  /** False when the call was aborted before it got a slot. */
  started: boolean;
  /** Milliseconds from start (or from the abort, for a call never started) to the final result. */
  durationMs: number;
  isError: boolean;
  aborted: boolean;
  result: ToolResultBlock;
}

export type ToolEvent =
  | ToolCallStartEvent
  | ToolCallUpdateEvent
  | ToolMediaProcessedEvent
  | ToolMediaDroppedEvent
  | ToolCallEndEvent;

export type ToolEventListener = (event: ToolEvent) => void;

let warned = false;

/**
 * Call `listener` with `event`. A listener cannot break a run: its exception is reported through `process.emitWarning`
 * (code `PANTO_LISTENER_THREW`, once per process) and otherwise ignored. Used for tool events and agent events alike.
 */
export function notifyListener<E>(listener: (event: E) => void, event: E): void {
  try {
    listener(event);
  } catch (err) {
    if (warned) return;
    warned = true;
    process.emitWarning(`an event listener threw (ignored): ${(err as Error)?.message ?? String(err)}`, {
      code: 'PANTO_LISTENER_THREW',
    });
  }
}

/** `listener` wrapped with `notifyListener`; undefined when there is no listener. */
export function safeListener(listener: ToolEventListener | undefined): ToolEventListener | undefined {
  return listener && ((event) => notifyListener(listener, event));
}
