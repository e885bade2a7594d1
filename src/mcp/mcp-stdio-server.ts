/**
 * Serve a `ToolSource` over MCP stdio: JSON-RPC on `stdin`/`stdout` (default the process's own). Nothing else may
 * write to that stdout while serving — send logs to stderr.
 *
 * Hostile or broken clients:
 * - A client that does not read its responses: once `stdout` is backed up (a write returned false), no more requests
 *   are read from `stdin` until it drains, so the server's memory does not grow with the client's requests.
 * - Lines are framed in linear time by our own transport (`stdio-server-transport.ts`; the SDK's buffer re-copies
 *   everything pending on every chunk). A line over `maxMessageBytes` (default 10 MiB, the SDK's own cap) or `stdout`
 *   failing (the client closed its end: EPIPE) ends the session (`closed` resolves) and aborts the running calls; the
 *   host process does not crash.
 * - A line that is not JSON is answered with JSON-RPC error `-32700` (Parse error), a line that is JSON but not a
 *   JSON-RPC message (a batch array, a wrong type in a field, an object as id) with `-32600` (Invalid Request), with
 *   `id: null`, or the line's own id when it is an object with a string `method` and a string/number `id` (its sender
 *   waits for that id: found by test/fuzz/fuzz-mcp.mjs). The session goes on with the next line; the answers go through
 *   the same backpressure as every response.
 */

import type { Readable, Writable } from 'node:stream';
import type { ToolSource } from '../tool-source.js';
import { serveSdk } from './mcp-sdk.js';
import { createMcpServer, type McpServerOptions } from './mcp-server.js';
import { positiveInteger } from './positive-integer.js';

export interface McpStdioServerOptions extends McpServerOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** Longest request line, bytes; a longer one ends the session. Default 10 MiB (`DEFAULT_MCP_STDIO_MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
}

/** Default `McpStdioServerOptions.maxMessageBytes` (the SDK's own read cap). */
export const DEFAULT_MCP_STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export interface McpStdioServer {
  /** Resolves when the client closes the connection (stdin ends), `stdout` fails, or `close()` is called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** Start serving at once. */
export async function serveMcpStdio(
  source: ToolSource,
  options: McpStdioServerOptions = {},
): Promise<McpStdioServer> {
  const maxMessageBytes = positiveInteger(
    options.maxMessageBytes,
    DEFAULT_MCP_STDIO_MAX_MESSAGE_BYTES,
    'serveMcpStdio',
    'maxMessageBytes',
  );
  // The transport imports the SDK's message schema: loaded here, not when libpanto is imported.
  const { StdioServerTransport } = await serveSdk();
  const transport = new StdioServerTransport(
    options.stdin ?? process.stdin,
    options.stdout ?? process.stdout,
    {
      maxMessageBytes,
    },
  );
  const server = createMcpServer(source, options);
  let done: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    done = resolve;
  });
  server.onclose = () => done();
  await server.connect(transport);
  return {
    closed,
    async close() {
      await server.close();
    },
  };
}
