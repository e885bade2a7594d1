/**
 * Approval before a call runs: a tool that declares `needsApproval` (a Lua tool with `needs_approval = true` or a
 * world-changing capability, a `defineTool` with `needsApproval`, the tools of an MCP server configured so) is run
 * only after the host's approver said yes (`approve` of `dispatchToolCalls`, `approveToolCall` of the Agent).
 *
 * Contract: the approver is asked about one call at a time, in call order (parallel calls wait their turn); a call
 * it declines never runs and becomes the error result `declined by the user: <reason>` the model reads; the decision
 * is kept on the result (`ToolResultBlock.approval`, persisted in the session log, never sent to a model). An abort
 * while the approver is deciding ends the wait (the approver's `info.signal` aborts; the call ends as aborted). An
 * approver that throws or rejects declines, with its message as the reason.
 */

import type { ToolApproval, ToolCallBlock } from '../conversation.js';
import { PantoError } from '../errors.js';
import type { ToolDecl } from '../tool.js';
import { errorMessage } from '../tool-source.js';

/** What an approver is told about the call besides the call itself. */
export interface ApprovalInfo {
  /** The tool's declaration (`capabilities` says what it may change or reach). */
  tool: ToolDecl;
  /** Position of the call in the turn, and how many calls the turn has. */
  index: number;
  count: number;
  /** Aborted when the turn is aborted: stop asking (the answer no longer matters). */
  signal: AbortSignal;
}

/** Yes, no, or no with a reason the model will read. */
export type ApprovalDecision = boolean | { approved: boolean; reason?: string };

/** Decides whether a call that needs approval may run. */
export type ApproveToolCall = (
  call: ToolCallBlock,
  info: ApprovalInfo,
) => ApprovalDecision | Promise<ApprovalDecision>;

/** Text of the result of a declined call: `declined by the user: <reason>`. */
export function declinedText(reason: string | undefined): string {
  return `declined by the user: ${reason === undefined || reason.trim() === '' ? 'no reason given' : reason}`;
}

/** Longest reason kept (a reason is text for the model; an approver's essay is cut). */
const MAX_REASON = 2000;

/** An approver's answer as a `ToolApproval`; anything that is not a clear yes declines. */
export function toApproval(decision: unknown): ToolApproval {
  if (decision === true) return { approved: true };
  if (decision === false || decision === undefined || decision === null) return { approved: false };
  if (typeof decision === 'object' && (decision as { approved?: unknown }).approved === true)
    return { approved: true };
  const reason = (decision as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' && reason.length > 0
    ? { approved: false, reason: reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}…` : reason }
    : { approved: false };
}

/**
 * Ask `approve` about `call` (already the call's turn in the queue): resolves to the decision, or null when `signal`
 * aborted first. Never rejects: an approver that throws declines with its message.
 */
export function askApproval(
  approve: ApproveToolCall,
  call: ToolCallBlock,
  info: ApprovalInfo,
): Promise<ToolApproval | null> {
  const { signal } = info;
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    let answer: Promise<ApprovalDecision>;
    try {
      answer = Promise.resolve(approve(call, info));
    } catch (err) {
      answer = Promise.reject(err);
    }
    answer.then(
      (decision) => {
        signal.removeEventListener('abort', onAbort);
        resolve(toApproval(decision));
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ approved: false, reason: `the approver failed: ${errorMessage(err)}` });
      },
    );
  });
}

/** Check an `approve` option. Throws `ERR_INVALID_ARGUMENT`. */
export function checkApprover(approve: unknown, where: string): void {
  if (approve !== undefined && typeof approve !== 'function') {
    throw new PantoError('ERR_INVALID_ARGUMENT', `${where} must be a function (call, info) => decision`);
  }
}
