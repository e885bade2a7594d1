export { Agent, type RunOptions, type SetModelOptions } from './agent.js';
export {
  type AgentCompactionOptions,
  type CompactOutcome,
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
export type { AgentOptions, AgentRequestOptions } from './agent-options.js';
export { isContextOverflow, statedContextWindow } from './context-overflow.js';
export { STEERING_CANCELLED_TEXT, STEERING_SKIPPED_TEXT } from './steering.js';
export type { UsageTotals } from './usage-totals.js';
export {
  type BuildUserMessageOptions,
  buildUserMessage,
  type UserContent,
  type UserContentPart,
} from './user-content.js';
