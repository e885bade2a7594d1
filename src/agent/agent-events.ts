/**
 * Events an `Agent` reports while it runs, for a host to render (streaming text, spinners, warnings).
 *
 * Order per run: `agent_start` → per turn: (`compaction_start` → `compaction_end`)? → `turn_start` →
 * (`upload_start` → `upload_progress`* → `upload_end`)* → `message_start` (assistant) → `message_delta`* → `message_end` → tool events (see tool-events.ts) →
 * `message_end` (the tool results) → `turn_end` → ... → `agent_end`. A user or steering message appended to the
 * conversation gets one `message_end`. `warning` and `retry` may come at any point. `message_reset` comes when a
 * stream was cut after part of the answer arrived and the request is made again: drop what the current assistant
 * message showed so far; a new `message_start` follows. Events are informational: a listener cannot change the run,
 * and a throwing listener is ignored.
 */

import type { AssistantMessage, Message, ToolResultsMessage, Usage } from '../conversation.js';
import type { PantoError } from '../errors.js';
import type { SerializeWarningCode } from '../providers/common/serialize-options.js';
import type { StreamEvent } from '../providers/common/stream-event.js';
import type { ModelInfo } from '../providers/model/model-info.js';
import type { UsageCost } from '../providers/model/model-prices.js';
import type { ToolEvent } from '../tools/tool-events.js';

/** Why a run ended. `max_turns`: the turn limit was reached while the model still wanted tools run. */
export type AgentStopReason = 'end' | 'max_turns' | 'max_tokens' | 'refusal' | 'aborted' | 'error' | 'other';

/**
 * Warnings: the serializer's codes (a part replaced by a placeholder, a skipped turn...), plus `media-rejected` (the
 * provider refused a request because of one image/PDF; it was left out of the retried request), `invalid-arguments`
 * (the model sent tool arguments that were not a JSON object), `compaction-failed`, `media-dropped` (an attachment of
 * a user message the media pipeline refused; the model got a note instead), `context-overflow` (the provider refused
 * the request as longer than the context window; the agent compacted and retried once), `stream-interrupted` (a
 * stream was cut after part of the answer and was not requested again: the reason is in the message),
 * `upload-failed` (an upload to the provider's Files API failed; that part was sent inline), `file-refused` (the
 * provider refused a request because a referenced file was unknown, deleted or expired; it was uploaded again, or the
 * request sent inline, and retried once).
 */
export type AgentWarningCode =
  | SerializeWarningCode
  | 'media-rejected'
  | 'invalid-arguments'
  | 'compaction-failed'
  | 'media-dropped'
  | 'context-overflow'
  | 'stream-interrupted'
  | 'upload-failed'
  | 'file-refused';

export interface AgentWarning {
  code: AgentWarningCode;
  message: string;
  /** `partKey`s of the parts concerned, when about media in a request. */
  parts?: string[];
}

export interface AgentRunResult {
  stopReason: AgentStopReason;
  /** Model requests made in this run. */
  turns: number;
  /** Messages appended to the conversation during this run, in order (after any compaction). */
  messages: Message[];
  /** The provider error or abort that ended the run. */
  error?: PantoError;
}

export type AgentEvent =
  | { type: 'agent_start' }
  | { type: 'agent_end'; result: AgentRunResult }
  | { type: 'turn_start'; turn: number }
  /**
   * A turn ended. `usage` is the answer's (as the provider reported it), `cost` its price in US dollars when the model
   * has one (see model-prices.ts); `agent.usage` has the session totals.
   */
  | {
      type: 'turn_end';
      turn: number;
      message: AssistantMessage;
      toolResults?: ToolResultsMessage;
      usage?: Usage;
      cost?: UsageCost;
    }
  | { type: 'message_start'; role: 'assistant' }
  /** A streaming delta of the assistant message (text, thinking, tool-call arguments). */
  | {
      type: 'message_delta';
      delta: Extract<
        StreamEvent,
        { type: 'text_delta' | 'thinking_delta' | 'toolcall_start' | 'toolcall_delta' | 'toolcall_end' }
      >;
    }
  /** A message was appended to the conversation (and to the session log, when there is one). */
  | { type: 'message_end'; message: Message }
  | { type: 'retry'; attempt: number; delayMs: number; error: PantoError }
  /**
   * The stream was cut after part of the answer (no complete tool call yet); the request is made again after
   * `delayMs`. A host drops the partial output it showed for this message.
   */
  | { type: 'message_reset'; attempt: number; delayMs: number; error: PantoError }
  /** `setModel` switched the model (recorded in the session log as a `model_change` entry). */
  | { type: 'model_change'; model: ModelInfo; previous: ModelInfo }
  | { type: 'warning'; warning: AgentWarning }
  /** `uploads: 'auto'`: an image/PDF (by the sha256 of its bytes) is being uploaded to the provider's Files API. */
  | { type: 'upload_start'; api: string; sha256: string; mediaType: string; bytes: number }
  /**
   * Bytes of that upload's request body written so far (`sent`) of its `total` (the file plus the multipart framing):
   * every 256 KiB as the body goes out, the last with `sent === total`. For a host's progress bar.
   */
  | {
      type: 'upload_progress';
      api: string;
      sha256: string;
      mediaType: string;
      bytes: number;
      sent: number;
      total: number;
    }
  /** The upload ended: `file` is the provider's id, or `error` why it failed (the part then goes inline). */
  | {
      type: 'upload_end';
      api: string;
      sha256: string;
      mediaType: string;
      bytes: number;
      file?: string;
      error?: PantoError;
    }
  /**
   * `reason`: `threshold` (the context neared the window), `overflow` (the provider refused a request as too long),
   * `manual` (`agent.compact()`).
   */
  | {
      type: 'compaction_start';
      tokens: number;
      contextWindow: number;
      reason: 'threshold' | 'overflow' | 'manual';
    }
  | { type: 'compaction_end'; tokensBefore: number; tokensAfter: number; summary: string }
  | ToolEvent;

export type AgentEventListener = (event: AgentEvent) => void;

/** The run's stop reason when `message` is its last answer. */
export function stopReasonOf(message: AssistantMessage): AgentStopReason {
  switch (message.stopReason) {
    case undefined:
    case 'end':
    case 'tool_use':
      return 'end';
    case 'max_tokens':
    case 'refusal':
    case 'aborted':
    case 'error':
    case 'other':
      return message.stopReason;
    default:
      return 'other';
  }
}
