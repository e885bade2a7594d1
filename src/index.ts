/**
 * libpanto: the core of an LLM agent whose tools return text, images and PDFs, placed in the exact shape each
 * provider accepts. Explicit named exports only; see docs/architecture.md for the module map.
 */

// Agent loop, tool dispatch, user content
export { Agent, type RunOptions, type SetModelOptions } from './agent/agent.js';
export {
  type AgentCompactionOptions,
  type CompactionReason,
  type CompactOutcome,
  type ManualCompaction,
  type ProviderSummarizerOptions,
  providerSummarizer,
  SUMMARY_SYSTEM,
  summaryMaxTokens,
} from './agent/agent-compaction.js';
export type {
  AgentEvent,
  AgentEventListener,
  AgentRunResult,
  AgentStopReason,
  AgentWarning,
  AgentWarningCode,
} from './agent/agent-events.js';
export type { AgentOptions, AgentRequestOptions } from './agent/agent-options.js';
export { isContextOverflow, statedContextWindow } from './agent/context-overflow.js';
export { type DeleteUploadsResult, deleteSessionUploads } from './agent/delete-uploads.js';
export { STEERING_CANCELLED_TEXT, STEERING_SKIPPED_TEXT } from './agent/steering.js';
export type { UsageTotals } from './agent/usage-totals.js';
export {
  type BuildUserMessageOptions,
  buildUserMessage,
  type UserContent,
  type UserContentPart,
} from './agent/user-content.js';
// Compaction
export {
  type CompactionRecord,
  type CompactionResult,
  type CompactOptions,
  compact,
  type Summarizer,
  type SummaryRequest,
} from './compaction/compact.js';
export { type EstimateOptions, estimateTokens } from './compaction/estimate-tokens.js';
export { findCutPoint } from './compaction/find-cut-point.js';
export { estimateDocumentTokens, estimateImageTokens } from './compaction/image-tokens.js';
export {
  type RenderOptions,
  renderSections,
  renderTranscript,
  shortenText,
} from './compaction/render-transcript.js';
// Conversation model
export {
  type AssistantMessage,
  assistantText,
  type Conversation,
  type DocumentPart,
  describePart,
  type ImageMediaType,
  type ImagePart,
  type ImageTokenRule,
  type Message,
  partsToText,
  type StopReason,
  type StoredPart,
  type SystemMessage,
  type TextBlock,
  type TextPart,
  type ThinkingBlock,
  type ToolApproval,
  type ToolCallBlock,
  type ToolResultBlock,
  type ToolResultsMessage,
  toolCallsOf,
  type Usage,
  type UserMessage,
  userMessage,
} from './conversation.js';
// Errors
export { isPantoError, PantoError, type PantoErrorCode } from './errors.js';
// Lua tool host
export { DEFAULT_BUDGETS, type LuaBudgets } from './lua/budget.js';
export { CAPABILITIES, type Capability } from './lua/capabilities.js';
export type { ExecOptions as LuaExecOptions } from './lua/exec-command.js';
export type { FetchOptions as LuaFetchOptions } from './lua/fetch-url.js';
export type { HostFunction, HostFunctionContext, HostValue } from './lua/host-functions.js';
export type { LuaLogEntry, LuaLogger, LuaLogLevel } from './lua/lua-log.js';
export type { LuaLoadError } from './lua/lua-runtime.js';
export { type LuaRunOptions, LuaToolSource, type LuaToolSourceOptions } from './lua/lua-tool-source.js';
export type { ApprovalPolicy as LuaApprovalPolicy } from './lua/resolved-source-options.js';
export type { WorkerOptions as LuaWorkerOptions } from './lua/worker-backend.js';
export { DEFAULT_DENYLIST } from './lua/workspace-paths.js';
// MCP: servers as a tool source, tool sources as a server
export {
  createMcpServer,
  DEFAULT_MCP_MAX_PENDING_CALLS,
  DEFAULT_MCP_MAX_RESULT_BYTES,
  DEFAULT_MCP_STDIO_MAX_MESSAGE_BYTES,
  loadMcpConfig,
  MCP_DEFAULTS,
  MCP_HTTP_DEFAULTS,
  type McpApproval,
  type McpHttpServer,
  type McpHttpServerConfig,
  type McpHttpServerOptions,
  type McpLeftOutTool,
  type McpLogEntry,
  type McpLogger,
  type McpServerConfig,
  type McpServerOptions,
  type McpStartReport,
  type McpStdioServer,
  type McpStdioServerConfig,
  type McpStdioServerOptions,
  McpToolSource,
  type McpToolSourceOptions,
  mcpResultToCallResult,
  parseMcpConfig,
  serveMcpHttp,
  serveMcpStdio,
} from './mcp/index.js';
// Media pipeline
export type { MediaBackend } from './media/addon-types.js';
export { MediaError } from './media/media-error.js';
export { mediaMemoryInFlight, setMediaMemoryLimit } from './media/memory-limit.js';
export { mediaBackend } from './media/native-addon.js';
export {
  checkProcessOptions,
  DEFAULT_MEDIA_MEMORY_LIMIT,
  DEFAULT_PROCESS_OPTIONS,
  PROCESS_OPTION_RANGES,
  type ResolvedProcessOptions,
  resolveProcessOptions,
} from './media/policy.js';
export { probeMedia } from './media/probe-media.js';
export { processMedia } from './media/process-media.js';
export { sniffMedia } from './media/sniff-media.js';
export type {
  MediaChange,
  MediaInfo,
  OutputFormat,
  OutputMediaType,
  ProcessedMedia,
  ProcessMediaOptions,
  ProcessOptions,
  RecognizedMediaType,
  SniffedMediaType,
  SupportedMediaType,
} from './media/types.js';
// Providers: serializers, response parsers, model catalog
export {
  type AnthropicOptions,
  type AnthropicRequestBody,
  anthropicTools,
  toAnthropicMessages,
} from './providers/anthropic-messages/anthropic-messages.js';
export { parseAnthropicResponse } from './providers/anthropic-messages/anthropic-response.js';
export { collectStream } from './providers/common/collect-stream.js';
export {
  type DegradeTarget,
  type DegradeWish,
  degradeKey,
  type FileRef,
  mediaSha256,
  type RequestWishes,
  type UploadWish,
} from './providers/common/media-files.js';
export {
  type MediaRef,
  type PartFilter,
  type PartRef,
  partKey,
  type SerializeOptions,
  type SerializeResult,
  type SerializeWarning,
  type SerializeWarningCode,
  type ThinkingLevel,
} from './providers/common/serialize-options.js';
export type { StreamEvent } from './providers/common/stream-event.js';
export { THINKING_BUDGETS } from './providers/common/thinking.js';
export { createStreamParser } from './providers/create-stream-parser.js';
export type { FileUpload, ProviderFiles, UploadedFile } from './providers/files/file-types.js';
export { createProviderFiles, type ProviderFilesOptions } from './providers/files/provider-files.js';
export {
  type GeminiOptions,
  type GeminiRequestBody,
  geminiTools,
  toGemini,
} from './providers/gemini/gemini.js';
export { parseGeminiResponse } from './providers/gemini/gemini-response.js';
export {
  createProvider,
  FINISH_GRACE_MS,
  PROGRESS_TIMEOUT_MS,
  type Provider,
  type ProviderOptions,
  type ProviderRequest,
  type StreamOptions,
} from './providers/http-provider.js';
export { defineModel, getModel, mediaPolicyFor, resolveModel } from './providers/model/model-catalog.js';
export type {
  ModelApi,
  ModelInfo,
  ModelInput,
  ModelLimits,
  ModelOverrides,
  ModelSpec,
} from './providers/model/model-info.js';
export {
  checkPrice,
  type ModelPrice,
  priceOf,
  type UsageCost,
  usageCost,
} from './providers/model/model-prices.js';
export {
  type OpenAIChatOptions,
  type OpenAIChatRequestBody,
  openAIChatTools,
  toOpenAIChat,
} from './providers/openai-chat/openai-chat.js';
export { parseOpenAIChatResponse } from './providers/openai-chat/openai-chat-response.js';
export {
  type OpenAIResponsesOptions,
  type OpenAIResponsesRequestBody,
  openAIResponsesTools,
  toOpenAIResponses,
} from './providers/openai-responses/openai-responses.js';
export { parseOpenAIResponsesResponse } from './providers/openai-responses/openai-responses-response.js';
export { ProviderError, type ProviderStall } from './providers/transport/provider-error.js';
export type { RetryOptions } from './providers/transport/retry-policy.js';
export { type SseEvent, SseParser } from './providers/transport/sse-parser.js';
// Session log
export { type LoadedSession, type LoadSessionOptions, loadSession } from './session/load-session.js';
export type { CompactionInput, UploadInput } from './session/new-entries.js';
export {
  type CompactionEntry,
  type CustomEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type ModelUsage,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
  type UploadEntry,
  type UploadedFileRecord,
} from './session/session-entry.js';
export {
  openSessionIndex,
  type SessionIndex,
  type SessionIndexOptions,
  type SessionLineRef,
} from './session/session-index.js';
export { type CreateSessionOptions, SessionLog, type SessionLogOptions } from './session/session-log.js';
export type { SessionWarning } from './session/session-warning.js';
export type { SessionWriter } from './session/session-writer.js';
// Session stores
export { JsonlSessionStore } from './session-store/jsonl-session-store.js';
export { PostgresSessionLog } from './session-store/postgres-session-log.js';
export {
  PostgresSessionStore,
  type PostgresSessionStoreOptions,
} from './session-store/postgres-session-store.js';
export {
  type CreateStoredSessionOptions,
  checkSessionId,
  type OpenStoredSessionOptions,
  type SessionStore,
  type StoredSessionInfo,
  type StoredSessionWriter,
} from './session-store/session-store.js';
// Tools
export {
  defineTool,
  type JsonSchema,
  type MediaResultPart,
  type NormalizedToolOutput,
  normalizeToolOutput,
  type ResultPart,
  type TextResultPart,
  type Tool,
  type ToolAnnotations,
  type ToolContext,
  type ToolDecl,
  type ToolIcon,
  type ToolOutput,
  type ToolUpdate,
} from './tool.js';
export { type CallResult, StaticToolSource, ToolRegistry, type ToolSource } from './tool-source.js';
export type { ApprovalDecision, ApprovalInfo, ApproveToolCall } from './tools/approval.js';
export {
  ABORTED_RESULT_TEXT,
  DEFAULT_TOOL_CONCURRENCY,
  type DispatchOptions,
  dispatchToolCalls,
} from './tools/dispatch.js';
export { type MediaOutcome, type StorePartsOptions, toStoredParts } from './tools/store-parts.js';
export type {
  ToolCallEndEvent,
  ToolCallStartEvent,
  ToolCallUpdateEvent,
  ToolEvent,
  ToolEventListener,
  ToolMediaDroppedEvent,
  ToolMediaProcessedEvent,
} from './tools/tool-events.js';
