/**
 * Server side: any `ToolSource` (typically a `LuaToolSource` with the built-ins) as an MCP server.
 *
 * Each `tools/call` runs through `dispatchToolCalls`, exactly like a model's call inside the agent: arguments are
 * validated against the tool's schema, media parts go through the media pipeline (type sniffed, sides and bytes capped,
 * orientation applied, metadata such as GPS stripped, unsupported bytes replaced by a note), and the stored parts come
 * out as MCP content:
 *
 * - text → `text`; image → `image` (base64 + mimeType); PDF → embedded `resource` (`blob`, `application/pdf`, a
 *   `panto://document/<name>` URI).
 * - A failed call (tool error, invalid arguments, budget exceeded) → `isError: true` with the message as text.
 * - An unknown tool name, or `params` that are not a valid `tools/call` (a name that is not a string, `arguments`
 *   that are not an object) → JSON-RPC error `-32602` (the MCP convention) whose message names the bad field. A
 *   `progressToken` that is neither a string nor a number is rejected by the SDK's own transports on stdio and HTTP
 *   (which validate every incoming message) before it reaches this server; `-32602` only on a transport that does not
 *   validate.
 * - A `tools/call` whose request id is already used by a running call (JSON-RPC forbids reusing an id): the running
 *   call is aborted and the new one refused with `-32600`. (The SDK keys cancellation by id: the earlier call could
 *   otherwise no longer be cancelled, nor be aborted when the session closes.)
 * - More than `maxPendingCalls` calls of one server at once (running or queued for a Lua slot) → `isError: true` at
 *   once, so a client that floods calls without waiting cannot queue work (and memory) without bound.
 * - `ToolContext.update` (Lua `panto.progress`) → `notifications/progress` when the client sent a `progressToken`.
 * - `notifications/cancelled` aborts the call's signal: the Lua call is stopped by the host's abort handling, and no
 *   further progress is sent for it. Progress already written before the cancellation arrived can still reach the client
 *   after it aborted (the race the MCP spec asks both sides to tolerate).
 */

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolRequest,
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { StoredPart, ToolCallBlock } from '../conversation.js';
import type { ProcessOptions } from '../media/types.js';
import { packageVersion } from '../package-root.js';
import type { ToolUpdate } from '../tool.js';
import type { ToolSource } from '../tool-source.js';
import { dispatchToolCalls } from '../tools/dispatch.js';
import { serverSdkSync } from './mcp-sdk.js';
import { positiveInteger } from './positive-integer.js';

export interface McpServerOptions {
  /** Server name in `initialize`. Default `libpanto`. */
  name?: string;
  /** Server version in `initialize`. Default the package version. */
  version?: string;
  /** Handed to tools as `ctx.workspaceRoot`. Default `process.cwd()`. */
  workspaceRoot?: string;
  /** Media policy for tool output. Default `DEFAULT_PROCESS_OPTIONS` (≤ 2000 px, ≤ 3.75 MiB, no metadata). */
  media?: ProcessOptions;
  /** `instructions` sent in `initialize`. */
  instructions?: string;
  /**
   * Most `tools/call` requests of this server (one client: one stdio connection or one HTTP session) in flight at
   * once, running or waiting for a free Lua slot; further calls get an `isError` result at once. Default 64
   * (`DEFAULT_MCP_MAX_PENDING_CALLS`).
   */
  maxPendingCalls?: number;
  /**
   * Largest result of one `tools/call`, in bytes of its JSON-RPC message: the result's JSON (UTF-8, escapes and base64
   * data as sent) plus `RESPONSE_ENVELOPE_BYTES` for `{"jsonrpc","id","result"}`. A bigger one is not sent; the client
   * gets an `isError` result naming the size and the cap instead. Default 48 MiB (`DEFAULT_MCP_MAX_RESULT_BYTES`, the
   * most libpanto's own client reads in one message, so a result that passes is never cut by that client).
   */
  maxResultBytes?: number;
  /**
   * Called before each tool call runs (after the `maxPendingCalls` check); the call waits for the promise and calls
   * the function it resolves to when it ends. A rejection (e.g. the call's `signal` aborted) fails the call.
   * `serveMcpHttp` holds calls here while a client does not read its answers (see `unsent-budget.ts`).
   */
  admitCall?: (signal: AbortSignal) => Promise<() => void>;
}

/** Default `McpServerOptions.maxPendingCalls`. */
export const DEFAULT_MCP_MAX_PENDING_CALLS = 64;

/**
 * Bytes counted for a response's envelope around its result (`{"jsonrpc":"2.0","id":…,"result":…}`); an id longer
 * than fits here is the client's own doing.
 */
export const RESPONSE_ENVELOPE_BYTES = 256;

/** Default `McpServerOptions.maxResultBytes` (48 MiB: the default `maxMessageBytes` of libpanto's MCP client). */
export const DEFAULT_MCP_MAX_RESULT_BYTES = 48 * 1024 * 1024;

let callCounter = 0;

/** Progress notifications of one call waiting while an earlier one is written (see `sendProgress`). */
const MAX_QUEUED_PROGRESS = 64;

type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * An MCP `Server` (official SDK) offering `source`'s tools. Connect it to a transport (`server.connect(transport)`),
 * or use `serveMcpStdio` / `serveMcpHttp`. `source.list()` is read on every `tools/list`. The first call loads the
 * SDK's server half synchronously if nothing loaded it yet (see `mcp-sdk.ts`).
 */
export function createMcpServer(source: ToolSource, options: McpServerOptions = {}): Server {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode } = serverSdkSync();
  const maxPending = positiveInteger(
    options.maxPendingCalls,
    DEFAULT_MCP_MAX_PENDING_CALLS,
    'createMcpServer',
    'maxPendingCalls',
  );
  const maxResult = positiveInteger(
    options.maxResultBytes,
    DEFAULT_MCP_MAX_RESULT_BYTES,
    'createMcpServer',
    'maxResultBytes',
  );
  let pending = 0;
  /** The running calls by request id, each with its own abort (see the duplicate-id rule above). */
  const running = new Map<string | number, AbortController>();
  const server = new Server(
    { name: options.name ?? 'libpanto', version: options.version ?? packageVersion() },
    {
      capabilities: { tools: { listChanged: false } },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: source
      .list()
      .map((d) => ({ name: d.name, description: d.description, inputSchema: d.inputSchema })),
  }));

  // Registered with a schema that checks only the method: the SDK's `Server` checks the params of every `tools/call`
  // itself and answers bad ones with -32602 and the failing field. With the full schema here, the generic request
  // parse would run first and answer a client's bad params as -32603, an internal error of the server.
  const toolsCallMethod = CallToolRequestSchema.pick({ method: true }).loose();
  server.setRequestHandler(toolsCallMethod, async (raw, extra): Promise<CallToolResult> => {
    // The SDK's `Server` validated the params against `CallToolRequestSchema` before calling this handler.
    const request = raw as unknown as CallToolRequest;
    const { name } = request.params;
    if (!source.list().some((d) => d.name === name)) {
      throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const earlier = running.get(extra.requestId);
    if (earlier !== undefined) {
      earlier.abort(new Error(`request id ${JSON.stringify(extra.requestId)} was reused while the call ran`));
      throw rpcError(
        ErrorCode.InvalidRequest,
        `request id ${JSON.stringify(extra.requestId)} is already used by a running call: both calls are refused (request ids must be unique)`,
      );
    }
    if (pending >= maxPending) {
      return {
        content: [
          {
            type: 'text',
            text: `too many tool calls in flight (${maxPending}): wait for a result before sending more calls`,
          },
        ],
        isError: true,
      };
    }
    pending++;
    // The call's own abort: the SDK's (cancellation, session close) forwarded, plus the duplicate-id rule's.
    const own = new AbortController();
    const forward = () => own.abort(extra.signal.reason);
    if (extra.signal.aborted) forward();
    else extra.signal.addEventListener('abort', forward, { once: true });
    running.set(extra.requestId, own);
    let release: (() => void) | undefined;
    try {
      if (options.admitCall) release = await options.admitCall(own.signal);
      return await runCall(request, extra, own.signal);
    } finally {
      release?.();
      pending--;
      extra.signal.removeEventListener('abort', forward);
      if (running.get(extra.requestId) === own) running.delete(extra.requestId);
    }
  });

  const runCall = async (
    request: CallToolRequest,
    extra: CallExtra,
    signal: AbortSignal,
  ): Promise<CallToolResult> => {
    const { name } = request.params;
    const input = request.params.arguments ?? {};
    const progressToken = request.params._meta?.progressToken;
    let last = -1;
    // Progress goes out one notification at a time, in order. While one is being written (on stdio: until a backed-up
    // stdout drains), later ones wait in a queue of at most MAX_QUEUED_PROGRESS; past that the newest replaces the
    // last queued one (values still increase). A Lua loop calling panto.progress millions of times against a client
    // that reads slowly therefore costs bounded memory, not one buffered notification per call.
    type ProgressParams = {
      progressToken: string | number;
      progress: number;
      total?: number;
      message?: string;
    };
    const queued: ProgressParams[] = [];
    let sending: Promise<void> | undefined;
    const pump = (): void => {
      const next = queued.shift();
      if (next === undefined || signal.aborted) {
        queued.length = 0;
        sending = undefined;
        return;
      }
      sending = extra
        .sendNotification({ method: 'notifications/progress', params: next })
        .catch(() => {})
        .then(pump);
    };
    const sendProgress = (u: ToolUpdate) => {
      // Once the client has cancelled, its progress handler for the token is gone: say nothing more for this call.
      if (progressToken === undefined || signal.aborted) return;
      // MCP requires the progress value to increase with every notification.
      const fraction = typeof u.progress === 'number' ? u.progress * 100 : undefined;
      const value = fraction !== undefined && fraction > last ? fraction : Math.max(0, last + 0.001);
      last = value;
      const params: ProgressParams = {
        progressToken,
        progress: value,
        ...(fraction !== undefined ? { total: 100 } : {}),
        ...(typeof u.message === 'string' ? { message: u.message } : {}),
      };
      if (queued.length >= MAX_QUEUED_PROGRESS) queued[queued.length - 1] = params;
      else queued.push(params);
      if (sending === undefined) pump();
    };
    const call: ToolCallBlock = { type: 'tool_call', id: `mcp_${++callCounter}`, name, input };
    const [block] = await dispatchToolCalls([call], {
      tools: source,
      signal,
      ...(options.workspaceRoot !== undefined ? { workspaceRoot: options.workspaceRoot } : {}),
      ...(options.media !== undefined ? { media: options.media } : {}),
      onEvent: (e) => {
        if (e.type === 'tool_call_update') sendProgress(e.update);
      },
    });
    if (!block) throw rpcError(ErrorCode.InternalError, 'the tool produced no result');
    // Progress sent before the result must reach the client before it: the client drops progress for a finished call.
    // The official SDK client handles a notification a microtask later than a response read in the same chunk, so a
    // progress written just before the result can be dropped by it when both arrive in one read. The wire order is
    // right either way; a short pause makes separate reads (and so a complete progress sequence) far more likely.
    // A send that never settles (stdout backed up and never drained, e.g. after EPIPE) must not hold the call: the
    // wait also ends when the call is cancelled or its session closes (both abort `signal`).
    if (last >= 0 && !signal.aborted) {
      const aborted = new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      while (sending !== undefined && !signal.aborted) await Promise.race([sending, aborted]);
      if (!signal.aborted) await new Promise<void>((resolve) => setTimeout(resolve, 1));
    }
    // An empty text part (a Lua tool that returned only attachments) says nothing; an empty result keeps one part.
    const parts = block.parts.filter((p, _i, all) => !(p.type === 'text' && p.text === '' && all.length > 1));
    const result = { content: parts.map(toMcpContent), ...(block.isError ? { isError: true } : {}) };
    const size = Buffer.byteLength(JSON.stringify(result), 'utf8') + RESPONSE_ENVELOPE_BYTES;
    if (size > maxResult) {
      return {
        content: [
          {
            type: 'text',
            text: `the result of ${name} was not sent: it is ${size} bytes of JSON-RPC, over maxResultBytes (${maxResult})`,
          },
        ],
        isError: true,
      };
    }
    return result;
  };

  return server;
}

/**
 * A JSON-RPC error for the SDK to send: its `code`, and its message as it is. (The SDK's `McpError` puts
 * `MCP error <code>: ` in front of its message, and a client reading it adds its own: the code twice.)
 */
function rpcError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

/** One stored part as an MCP content block. */
export function toMcpContent(part: StoredPart): CallToolResult['content'][number] {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image', data: part.data, mimeType: part.mediaType };
    case 'document':
      return {
        type: 'resource',
        resource: {
          uri: `panto://document/${encodeURIComponent(part.name ?? 'document.pdf')}`,
          mimeType: part.mediaType,
          blob: part.data,
        },
      };
  }
}
