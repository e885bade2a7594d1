export {
  Agent,
  type AgentCompactOptions,
  type AgentOptions,
  type AgentRequestOptions,
  type CompactOutcome,
  type RunOptions,
  type SetModelOptions,
} from './agent.js';
export {
  type AgentCompactionOptions,
  type ProviderSummarizerOptions,
  providerSummarizer,
  SUMMARY_SYSTEM,
  summaryMaxTokens,
} from './agent-compaction.js';
export type {
  AgentEvent,
  AgentEventListener,
  AgentRunResult,
  AgentStopReason,
  AgentWarning,
  AgentWarningCode,
} from './agent-events.js';
export { isContextOverflow, statedContextWindow } from './context-overflow.js';
export {
  ABORTED_RESULT_TEXT,
  DEFAULT_TOOL_CONCURRENCY,
  type DispatchOptions,
  dispatchToolCalls,
} from './dispatch.js';
export { type DroppedMedia, droppedNote, type MediaPartLabel, processedNote } from './media-notes.js';
export { STEERING_CANCELLED_TEXT, STEERING_SKIPPED_TEXT } from './steering.js';
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
export type { UsageTotals } from './usage-totals.js';
export {
  type BuildUserMessageOptions,
  buildUserMessage,
  type UserContent,
  type UserContentPart,
} from './user-content.js';
export { type ArgsCheck, validateArgs } from './validate-args.js';
