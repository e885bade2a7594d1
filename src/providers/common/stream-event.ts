/**
 * The common event stream every provider surface is turned into.
 *
 * Contract: a stream yields `start` once, then any number of deltas/usage/retry events, then exactly one terminal
 * event — `done` (a complete `AssistantMessage`) or `error` (a `PantoError` plus the partial message built so far,
 * with `stopReason` `'error'` or `'aborted'`). Provider and abort failures are delivered as the `error` event, never
 * thrown, so a consumer always gets a consistent message to record. `blockIndex` is the index of the block in the
 * final message's `content`.
 */

import type { AssistantMessage, ToolCallBlock, Usage } from '../../conversation.js';
import type { PantoError } from '../../errors.js';

export type StreamEvent =
  | { type: 'start'; model?: string; responseId?: string }
  | { type: 'text_delta'; blockIndex: number; text: string }
  | { type: 'thinking_delta'; blockIndex: number; text: string }
  | { type: 'toolcall_start'; blockIndex: number; id: string; name: string }
  | { type: 'toolcall_delta'; blockIndex: number; id: string; argumentsDelta: string }
  | { type: 'toolcall_end'; blockIndex: number; call: ToolCallBlock }
  | { type: 'usage'; usage: Usage }
  /** The transport is about to retry after `error`; nothing of the failed attempt was delivered. */
  | { type: 'retry'; attempt: number; delayMs: number; error: PantoError }
  | { type: 'done'; message: AssistantMessage }
  | { type: 'error'; error: PantoError; message: AssistantMessage };

/** Where a terminal-less stream's message ended up. */
export type TerminalStreamEvent = Extract<StreamEvent, { type: 'done' | 'error' }>;
