/**
 * Serve a `ToolSource` over MCP stdio: JSON-RPC on `stdin`/`stdout` (default the process's own). Nothing else may
 * write to that stdout while serving — send logs to stderr.
 */

import type { Readable, Writable } from 'node:stream';
import type { ToolSource } from '../tool-source.js';
import { serveSdk } from './mcp-sdk.js';
import { createMcpServer, type McpServerOptions } from './mcp-server.js';

export interface McpStdioServerOptions extends McpServerOptions {
  stdin?: Readable;
  stdout?: Writable;
}

export interface McpStdioServer {
  /** Resolves when the client closes the connection (stdin ends) or `close()` is called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** Start serving at once. */
export async function serveMcpStdio(
  source: ToolSource,
  options: McpStdioServerOptions = {},
): Promise<McpStdioServer> {
  const { StdioServerTransport } = await serveSdk();
  const stdin = options.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  const server = createMcpServer(source, options);
  let done: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    done = resolve;
  });
  server.onclose = () => done();
  // The SDK transport does not notice the end of stdin; the client closing its end is the end of the session.
  stdin.once('end', () => {
    server.close().catch(() => {});
  });
  await server.connect(transport);
  return {
    closed,
    async close() {
      await server.close();
    },
  };
}
