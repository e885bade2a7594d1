/**
 * Steering: a user message a host queues while the agent works (`Agent.steer`). It is delivered before the next model
 * request; tool calls of the current turn that have not finished when it arrives are not waited for — each gets a
 * result saying why, so the conversation stays consistent and the model knows what did not run.
 */

import { type ToolResultBlock, toolErrorResult } from '../conversation.js';

/** Result text of a call that had not started when the user sent a new message. */
export const STEERING_SKIPPED_TEXT = 'skipped: the user sent a new message';

/** Result text of a call that was running when the user sent a new message (its tool was told to stop). */
export const STEERING_CANCELLED_TEXT =
  'cancelled: the user sent a new message while this tool call was running';

/** The result recorded for a call ended by steering. */
export function steeringResult(toolUseId: string, toolName: string, started: boolean): ToolResultBlock {
  return toolErrorResult(
    { id: toolUseId, name: toolName },
    started ? STEERING_CANCELLED_TEXT : STEERING_SKIPPED_TEXT,
  );
}
