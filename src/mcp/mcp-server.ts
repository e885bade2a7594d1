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
 * - An unknown tool name → JSON-RPC error `-32602` (the MCP convention).
 * - `ToolContext.update` (Lua `panto.progress`) → `notifications/progress` when the client sent a `progressToken`.
 * - `notifications/cancelled` aborts the call's signal: the Lua call is stopped by the host's abort handling, and no
 *   further progress is sent for it. Progress already written before the cancellation arrived can still reach the client
 *   after it aborted (the race the MCP spec asks both sides to tolerate).
 */

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { dispatchToolCalls } from '../agent/dispatch.js';
import type { StoredPart, ToolCallBlock } from '../conversation.js';
import type { ProcessOptions } from '../media/types.js';
import { packageVersion } from '../package-root.js';
import type { ToolUpdate } from '../tool.js';
import type { ToolSource } from '../tool-source.js';
import { serverSdkSync } from './mcp-sdk.js';

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
}

let callCounter = 0;

/**
 * An MCP `Server` (official SDK) offering `source`'s tools. Connect it to a transport (`server.connect(transport)`),
 * or use `serveMcpStdio` / `serveMcpHttp`. `source.list()` is read on every `tools/list`. The first call loads the
 * SDK's server half synchronously if nothing loaded it yet (see `mcp-sdk.ts`).
 */
export function createMcpServer(source: ToolSource, options: McpServerOptions = {}): Server {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode, McpError } = serverSdkSync();
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

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const input = request.params.arguments ?? {};
    if (!source.list().some((d) => d.name === name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const progressToken = request.params._meta?.progressToken;
    let last = -1;
    const inFlight: Array<Promise<void>> = [];
    const sendProgress = (u: ToolUpdate) => {
      // Once the client has cancelled, its progress handler for the token is gone: say nothing more for this call.
      if (progressToken === undefined || extra.signal.aborted) return;
      // MCP requires the progress value to increase with every notification.
      const fraction = typeof u.progress === 'number' ? u.progress * 100 : undefined;
      const value = fraction !== undefined && fraction > last ? fraction : Math.max(0, last + 0.001);
      last = value;
      const sent = extra
        .sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken,
            progress: value,
            ...(fraction !== undefined ? { total: 100 } : {}),
            ...(typeof u.message === 'string' ? { message: u.message } : {}),
          },
        })
        .catch(() => {});
      inFlight.push(sent);
    };
    const call: ToolCallBlock = { type: 'tool_call', id: `mcp_${++callCounter}`, name, input };
    const [block] = await dispatchToolCalls([call], {
      tools: source,
      signal: extra.signal,
      ...(options.workspaceRoot !== undefined ? { workspaceRoot: options.workspaceRoot } : {}),
      ...(options.media !== undefined ? { media: options.media } : {}),
      onEvent: (e) => {
        if (e.type === 'tool_call_update') sendProgress(e.update);
      },
    });
    if (!block) throw new McpError(ErrorCode.InternalError, 'the tool produced no result');
    // Progress sent before the result must reach the client before it: the client drops progress for a finished call.
    // The official SDK client handles a notification a microtask later than a response read in the same chunk, so a
    // progress written just before the result can be dropped by it when both arrive in one read. The wire order is
    // right either way; a short pause makes separate reads (and so a complete progress sequence) far more likely.
    if (inFlight.length > 0) {
      await Promise.all(inFlight);
      await new Promise<void>((resolve) => setTimeout(resolve, 1));
    }
    // An empty text part (a Lua tool that returned only attachments) says nothing; an empty result keeps one part.
    const parts = block.parts.filter((p, _i, all) => !(p.type === 'text' && p.text === '' && all.length > 1));
    return { content: parts.map(toMcpContent), ...(block.isError ? { isError: true } : {}) };
  });

  return server;
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
