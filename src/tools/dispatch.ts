/**
 * `dispatchToolCalls`: run one assistant turn's tool calls and assemble their results.
 *
 * Contract:
 * - Resolves to exactly one `ToolResultBlock` per call, in call order, whatever the calls do. It never rejects for
 *   anything a tool, its arguments or its bytes do: those become results the model can read (`isError: true` for an
 *   unknown tool, invalid arguments, a tool that throws/rejects/returns an error, an aborted call). It throws a
 *   `PantoError` (`ERR_INVALID_ARGUMENT`) only for bad options or a `calls` value that is not an array.
 * - Arguments are validated against the tool's `inputSchema` (JSON Schema, Ajv; see `validate-args.ts`) before the
 *   tool runs; an invalid call never reaches the tool, nor does a call whose argument text was not a JSON object
 *   (`providerData.invalidArguments`, left by the response parsers).
 * - Up to `concurrency` tools run at once (`sequential` = one at a time, in call order). A call's slot is released
 *   when its tool settles; its media is then processed on the libuv threadpool while the next tools run.
 * - Every media part goes through `processMedia` once with the `media` policy and is stored as base64 once (see
 *   `store-parts.ts`); refused bytes are replaced by a note and do not make the result an error (the tool did run;
 *   the note tells the model what it cannot see and why).
 * - `maxResultChars` (the Agent sets it from its share of the context window): a result whose text is longer is cut
 *   from the middle of its long parts, head and tail kept, with a note saying how much was cut and how to get the rest
 *   (compaction/shorten-result.ts) — before it is reported or stored, whatever tool or source it came from.
 * - Approval (`approve`, see approval.ts): a call whose tool `needsApproval` runs only once the approver said yes; the
 *   approver is asked about one call at a time, in call order (the call holds its slot while it waits); a declined
 *   call never runs and ends with `declined by the user: <reason>`; the decision is on the result (`approval`).
 * - Abort (`signal`): every call without a final result ends at once with an aborted error result, queued calls never
 *   start, an approver still deciding is told to stop (its `info.signal`), and the returned promise resolves. Work already running (a tool, an image on the threadpool) cannot be
 *   cancelled by force; it is left to finish, its outcome is discarded (a late result never replaces the aborted
 *   one) and its rejection is handled (no unhandled rejection).
 */

import { shortenToolResult } from '../compaction/shorten-result.js';
import {
  type StoredPart,
  type ToolApproval,
  type ToolCallBlock,
  type ToolResultBlock,
  toolErrorResult,
} from '../conversation.js';
import { PantoError } from '../errors.js';
import { checkProcessOptions } from '../media/policy.js';
import type { ProcessOptions } from '../media/types.js';
import { normalizeToolOutput, type ToolContext, type ToolDecl, type ToolUpdate } from '../tool.js';
import { type CallResult, errorMessage, ToolRegistry, type ToolSource } from '../tool-source.js';
import { type ApproveToolCall, askApproval, checkApprover, declinedText } from './approval.js';
import { toStoredParts } from './store-parts.js';
import { safeListener, type ToolEventListener } from './tool-events.js';
import { unparsedArguments, validateArgs } from './validate-args.js';

/** Default number of tools run at once. */
export const DEFAULT_TOOL_CONCURRENCY = 8;

export interface DispatchOptions {
  /** Where the tools come from (usually a `ToolRegistry`). */
  tools: ToolSource;
  /** Cancels the turn: pending calls end with an aborted error result. Also handed to every tool as `ctx.signal`. */
  signal?: AbortSignal | undefined;
  /** Handed to tools as `ctx.workspaceRoot`. Default `process.cwd()`. */
  workspaceRoot?: string | undefined;
  /** The current model's media policy, passed to `processMedia` for every media part. Default: its defaults. */
  media?: ProcessOptions | undefined;
  /** Most tools running at once (integer >= 1). Default `DEFAULT_TOOL_CONCURRENCY` (8). */
  concurrency?: number | undefined;
  /** Run tools one after another, in call order (same as `concurrency: 1`). Default false. */
  sequential?: boolean | undefined;
  /** Progress events for a host (see `tool-events.ts`). A throwing listener is reported once and ignored. */
  onEvent?: ToolEventListener | undefined;
  /** Clock for `durationMs`, in milliseconds. Default `performance.now`. */
  now?: (() => number) | undefined;
  /** Most text characters one call's result keeps (see the module contract). Default: no limit. */
  maxResultChars?: number | undefined;
  /**
   * Asked before each call whose tool `needsApproval` (one at a time, in call order); without it those calls run as
   * any other. See approval.ts.
   */
  approve?: ApproveToolCall | undefined;
}

/** Text of the result of a call cancelled before it finished. */
export const ABORTED_RESULT_TEXT = 'Tool call cancelled before it finished; no result is available.';

/**
 * Run `calls` through `options.tools` and resolve to their results, in call order. See the module comment for the
 * full contract.
 */
export function dispatchToolCalls(
  calls: readonly ToolCallBlock[],
  options: DispatchOptions,
): Promise<ToolResultBlock[]> {
  const limit = checkOptions(calls, options);
  const n = calls.length;
  if (n === 0) return Promise.resolve([]);

  const tools = options.tools;
  const emit = safeListener(options.onEvent);
  const now = options.now ?? (() => performance.now());
  const media = options.media;
  const workspaceRoot = options.workspaceRoot ?? process.cwd();
  // A signal of our own when the host gave none, so tools always get one and listeners they add die with the turn.
  const signal = options.signal ?? new AbortController().signal;
  const lookup = declLookup(tools);
  const maxResultChars = options.maxResultChars;

  const results: Array<ToolResultBlock | undefined> = new Array(n);
  const startedAt: Array<number | undefined> = new Array(n);
  const approvals: Array<ToolApproval | undefined> = new Array(n);
  const approve = options.approve;
  /** The approver is asked about one call at a time: each ask waits for the one before. */
  let asking: Promise<unknown> = Promise.resolve();

  return new Promise<ToolResultBlock[]>((resolve) => {
    let remaining = n;
    let next = 0;
    let running = 0;

    const onAbort = () => {
      for (let i = 0; i < n; i++) {
        if (results[i] === undefined)
          settle(i, errorResult(calls[i] as ToolCallBlock, ABORTED_RESULT_TEXT), true);
      }
    };

    /** Record the final result of call `i` unless it already has one. */
    function settle(i: number, result: ToolResultBlock, aborted = false): void {
      if (results[i] !== undefined) return;
      const block = maxResultChars === undefined ? result : shortenToolResult(result, maxResultChars);
      const approval = approvals[i];
      if (approval !== undefined && block.approval === undefined) block.approval = approval;
      results[i] = block;
      remaining--;
      if (emit) {
        const t0 = startedAt[i];
        emit({
          type: 'tool_call_end',
          toolCallId: block.toolUseId,
          toolName: block.toolName,
          index: i,
          started: t0 !== undefined,
          durationMs: t0 === undefined ? 0 : now() - t0,
          isError: block.isError,
          aborted,
          result: block,
        });
      }
      if (remaining === 0) {
        signal.removeEventListener('abort', onAbort);
        resolve(results as ToolResultBlock[]);
      }
    }

    /** Start queued calls while slots are free. */
    function pump(): void {
      while (running < limit && next < n && !signal.aborted) {
        const i = next++;
        running++;
        if (!start(i)) running--;
      }
    }

    /** The tool of call `i` settled (or never ran): free its slot. */
    function release(): void {
      running--;
      pump();
    }

    /** Start call `i`. Returns false when it finished synchronously (no slot held). */
    function start(i: number): boolean {
      const call = calls[i] as ToolCallBlock;
      startedAt[i] = now();
      emit?.({
        type: 'tool_call_start',
        toolCallId: call.id,
        toolName: call.name,
        index: i,
        input: call.input,
      });
      try {
        return invoke(i, call);
      } catch (err) {
        // Only a source whose `list()`/`get()` throws gets here.
        settle(i, errorResult(call, `tool source '${tools.name}' failed: ${errorMessage(err)}`));
        return false;
      }
    }

    /** Look up, validate and invoke call `i`. Returns false when it finished synchronously. */
    function invoke(i: number, call: ToolCallBlock): boolean {
      const unparsed = unparsedArguments(call);
      if (unparsed !== undefined) {
        settle(i, errorResult(call, unparsed.message));
        return false;
      }
      const decl = lookup(call.name);
      if (decl === undefined) {
        settle(i, errorResult(call, unknownToolText(call.name, tools)));
        return false;
      }
      const check = validateArgs(call.name, decl.inputSchema, call.input);
      if (!check.ok) {
        settle(i, errorResult(call, check.message));
        return false;
      }
      if (decl.needsApproval && approve !== undefined) {
        const info = { tool: decl, index: i, count: n, signal };
        const decided = asking.then(() =>
          results[i] === undefined ? askApproval(approve, call, info) : null,
        );
        asking = decided;
        decided.then((decision) => {
          if (decision === null || results[i] !== undefined) {
            release(); // aborted meanwhile: the abort settled it
            return;
          }
          approvals[i] = decision;
          if (!decision.approved) {
            release();
            settle(i, errorResult(call, declinedText(decision.reason)));
            return;
          }
          run(i, call);
        });
        return true;
      }
      run(i, call);
      return true;
    }

    /** Call the tool of call `i` (validated, approved when needed); releases the slot when it settles. */
    function run(i: number, call: ToolCallBlock): void {
      const ctx: ToolContext = {
        signal,
        workspaceRoot,
        toolCallId: call.id,
        update: (update: ToolUpdate) => {
          if (results[i] === undefined) {
            emit?.({ type: 'tool_call_update', toolCallId: call.id, toolName: call.name, index: i, update });
          }
        },
      };
      let pending: Promise<CallResult>;
      try {
        // Promise.resolve: a source breaking the contract with a plain value must not break the turn.
        pending = Promise.resolve(tools.call(call.name, call.input, ctx));
      } catch (err) {
        pending = Promise.reject(err);
      }
      pending.then(
        (out) => {
          release();
          if (results[i] !== undefined) return;
          try {
            finish(i, call, out);
          } catch (err) {
            // Only a source breaking the `CallResult` contract gets here (e.g. `ok: true` without `parts`).
            settle(
              i,
              errorResult(
                call,
                `tool source '${tools.name}' returned a malformed result: ${errorMessage(err)}`,
              ),
            );
          }
        },
        (err: unknown) => {
          release();
          settle(i, errorResult(call, errorMessage(err)));
        },
      );
    }

    /** Turn a tool's outcome into the stored result of call `i`. */
    function finish(i: number, call: ToolCallBlock, out: CallResult): void {
      if (!out.ok) {
        const error: unknown = out.error;
        settle(i, errorResult(call, typeof error === 'string' ? error : errorMessage(error), out.meta));
        return;
      }
      const meta = out.meta;
      // A source other than the built-in ones may break the part contract: a part of unknown type, a text that is
      // not a string, media bytes that are not a Uint8Array. Checked here (TypeError naming the part) so nothing
      // malformed is stored in the conversation.
      const checked = normalizeToolOutput({ parts: out.parts }).parts;
      if (checked.every((p) => p.type === 'text')) {
        const parts: StoredPart[] = checked.map((p) => ({ type: 'text', text: p.text }));
        settle(i, okResult(call, parts, meta));
        return;
      }
      toStoredParts(checked, {
        media,
        signal,
        onMedia: (outcome) => {
          if (results[i] !== undefined || !emit) return;
          const base = { toolCallId: call.id, toolName: call.name, index: i, partIndex: outcome.partIndex };
          if (outcome.type === 'dropped') {
            const { code, note, mediaType } = outcome.dropped;
            emit({
              type: 'tool_media_dropped',
              ...base,
              code,
              note,
              ...(mediaType === undefined ? {} : { mediaType }),
            });
          } else {
            const m = outcome.media;
            emit({
              type: 'tool_media_processed',
              ...base,
              mediaType: m.mediaType,
              width: m.width,
              height: m.height,
              byteLength: m.data.byteLength,
              original: {
                mediaType: m.original.mediaType,
                width: m.original.width,
                height: m.original.height,
                byteLength: m.original.byteLength,
              },
              changes: m.changes,
            });
          }
        },
      }).then(
        (parts) => settle(i, okResult(call, parts, meta)),
        (err: unknown) =>
          settle(i, errorResult(call, `storing the tool's output failed: ${errorMessage(err)}`)),
      );
    }

    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    pump();
  });
}

function checkOptions(calls: readonly ToolCallBlock[], options: DispatchOptions): number {
  if (!Array.isArray(calls)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      'dispatchToolCalls: calls must be an array of tool_call blocks',
    );
  }
  const tools = options?.tools as Partial<ToolSource> | undefined;
  if (typeof tools?.list !== 'function' || typeof tools.call !== 'function') {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      'dispatchToolCalls: options.tools must be a ToolSource (list + call)',
    );
  }
  if (options.media !== undefined) checkProcessOptions(options.media);
  const max = options.maxResultChars;
  if (max !== undefined && !(Number.isInteger(max) && max >= 0)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `dispatchToolCalls: maxResultChars must be an integer >= 0, got ${String(max)}`,
    );
  }
  checkApprover(options.approve, 'dispatchToolCalls: approve');
  if (options.sequential) return 1;
  const c = options.concurrency ?? DEFAULT_TOOL_CONCURRENCY;
  if (!Number.isInteger(c) || c < 1) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `dispatchToolCalls: concurrency must be an integer >= 1, got ${c}`,
    );
  }
  return c;
}

/** Name -> declaration for this turn: the registry's own index, or a map over `list()` (called once per turn). */
function declLookup(tools: ToolSource): (name: string) => ToolDecl | undefined {
  if (tools instanceof ToolRegistry) return (name) => tools.get(name);
  let byName: Map<string, ToolDecl> | undefined;
  return (name) => {
    byName ??= new Map(tools.list().map((d) => [d.name, d]));
    return byName.get(name);
  };
}

function unknownToolText(name: string, tools: ToolSource): string {
  const names = tools.list().map((d) => d.name);
  return names.length === 0
    ? `Unknown tool '${name}': no tools are available.`
    : `Unknown tool '${name}'. Available tools: ${names.join(', ')}.`;
}

function okResult(
  call: ToolCallBlock,
  parts: StoredPart[],
  meta: Record<string, unknown> | undefined,
): ToolResultBlock {
  const block: ToolResultBlock = {
    type: 'tool_result',
    toolUseId: call.id,
    toolName: call.name,
    parts,
    isError: false,
  };
  if (meta !== undefined) block.meta = meta;
  return block;
}

function errorResult(call: ToolCallBlock, text: string, meta?: Record<string, unknown>): ToolResultBlock {
  const block = toolErrorResult(call, text);
  if (meta !== undefined) block.meta = meta;
  return block;
}
