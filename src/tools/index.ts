export type { ApprovalDecision, ApprovalInfo, ApproveToolCall } from './approval.js';
export {
  ABORTED_RESULT_TEXT,
  DEFAULT_TOOL_CONCURRENCY,
  type DispatchOptions,
  dispatchToolCalls,
} from './dispatch.js';
export { type DroppedMedia, droppedNote, type MediaPartLabel, processedNote } from './media-notes.js';
export { type MediaOutcome, type StorePartsOptions, toStoredParts } from './store-parts.js';
export type {
  ToolCallEndEvent,
  ToolCallStartEvent,
  ToolCallUpdateEvent,
  ToolEvent,
  ToolEventListener,
  ToolMediaDroppedEvent,
  ToolMediaProcessedEvent,
} from './tool-events.js';
export { type ArgsCheck, validateArgs } from './validate-args.js';
