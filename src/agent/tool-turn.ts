/**
 * The tool calls of one turn, run through `dispatchToolCalls` with the agent's media policy. Steering (a user message
 * queued while they run) ends the unfinished ones with a `skipped`/`cancelled` result (steering.ts); an abort ends
 * them with an aborted error result. A call whose arguments were not a JSON object gets an `invalid-arguments`
 * warning (and an error result from the dispatcher, without running). The results together keep at most
 * `resultChars` text characters, an equal part per call (see `DispatchOptions.maxResultChars`).
 */

import type { ToolCallBlock, ToolResultBlock } from '../conversation.js';
import type { ProcessOptions } from '../media/types.js';
import type { ToolSource } from '../tool-source.js';
import type { ApproveToolCall } from '../tools/approval.js';
import { dispatchToolCalls } from '../tools/dispatch.js';
import type { ToolEvent } from '../tools/tool-events.js';
import { unparsedArguments } from '../tools/validate-args.js';
import type { AgentEvent, AgentWarning } from './agent-events.js';
import { steeringResult } from './steering.js';

export interface ToolTurnContext {
  readonly tools: ToolSource;
  readonly media: ProcessOptions;
  readonly concurrency: number;
  readonly workspaceRoot: string | undefined;
  /** Text characters the turn's results may keep together (the agent's share of the context window). */
  readonly resultChars: number;
  /** Asked before each call of a tool that needs approval (`AgentOptions.approveToolCall`). */
  readonly approve: ApproveToolCall | undefined;
  /** True when steering is queued already: the calls are ended before they start. */
  readonly steered: boolean;
  /** The controller `steer()` aborts while the calls run (`undefined` once they are done). */
  setToolsController(ctl: AbortController | undefined): void;
  emit(event: AgentEvent): void;
  warn(warning: AgentWarning): void;
}

/** Run one turn's calls; resolves to one result per call, in call order. */
export async function runToolCalls(
  calls: ToolCallBlock[],
  ctx: ToolTurnContext,
  signal: AbortSignal,
): Promise<ToolResultBlock[]> {
  for (const call of calls) {
    const unparsed = unparsedArguments(call);
    if (unparsed !== undefined) {
      ctx.warn({
        code: 'invalid-arguments',
        message: `tool call ${call.id} (${call.name}): ${unparsed.reason}`,
      });
    }
  }
  const toolsCtl = new AbortController();
  ctx.setToolsController(toolsCtl);
  if (ctx.steered) toolsCtl.abort();
  const steered = (): boolean => toolsCtl.signal.aborted && !signal.aborted;
  const steeredResults = new Map<number, ToolResultBlock>();
  const results = await dispatchToolCalls(calls, {
    tools: ctx.tools,
    signal: AbortSignal.any([signal, toolsCtl.signal]),
    media: ctx.media,
    concurrency: ctx.concurrency,
    maxResultChars: Math.floor(ctx.resultChars / Math.max(1, calls.length)),
    ...(ctx.workspaceRoot === undefined ? {} : { workspaceRoot: ctx.workspaceRoot }),
    ...(ctx.approve === undefined ? {} : { approve: ctx.approve }),
    onEvent: (event: ToolEvent) => {
      if (event.type === 'tool_call_end' && event.aborted && steered()) {
        const result = steeringResult(event.toolCallId, event.toolName, event.started);
        steeredResults.set(event.index, result);
        ctx.emit({ ...event, result });
        return;
      }
      ctx.emit(event);
    },
  });
  ctx.setToolsController(undefined);
  return results.map((r, i) => steeredResults.get(i) ?? r);
}
