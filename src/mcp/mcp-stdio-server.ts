/**
 * Serve a `ToolSource` over MCP stdio: JSON-RPC on `stdin`/`stdout` (default the process's own). Nothing else may
 * write to that stdout while serving — send logs to stderr.
 *
 * Hostile or broken clients:
 * - A client that does not read its responses: once `stdout` is backed up (a write returned false), no more requests
 *   are read from `stdin` until it drains, so the server's memory does not grow with the client's requests.
 * - Lines are framed in linear time (`LineBuffer`; the SDK's own buffer re-copies everything pending on every chunk,
 *   so a long line cost time quadratic in its length). A line over `maxMessageBytes` (default 10 MiB, the SDK's own
 *   cap) or `stdout` failing (the client closed its end: EPIPE) ends the session (`closed` resolves) and aborts the
 *   running calls; the host process does not crash.
 * - A line that is not JSON is answered with JSON-RPC error `-32700` (Parse error), a line that is JSON but not a
 *   JSON-RPC message (a batch array, a wrong type in a field, an object as id) with `-32600` (Invalid Request), with
 *   `id: null`, or the line's own id when it is an object with a string `method` and a string/number `id` (its sender
 *   waits for that id: found by test/fuzz/fuzz-mcp.mjs). The session goes on with the next line; the answers go through
 *   the same backpressure as every response.
 */

import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
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

/** Per output stream, the sessions to end when it fails; one `error` listener per stream, however many sessions. */
const errorEnds = new WeakMap<NodeJS.WritableStream, Set<() => void>>();

/** Call `end` when `stream` fails, through the stream's single listener (installed once, never removed). */
function onStreamError(stream: NodeJS.WritableStream, end: () => void): void {
  let ends = errorEnds.get(stream);
  if (ends === undefined) {
    const set = new Set<() => void>();
    ends = set;
    errorEnds.set(stream, set);
    stream.on('error', () => {
      for (const e of [...set]) e();
    });
  }
  ends.add(end);
}

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
  const maxMessage = positiveInteger(
    options.maxMessageBytes,
    DEFAULT_MCP_STDIO_MAX_MESSAGE_BYTES,
    'serveMcpStdio',
    'maxMessageBytes',
  );
  // line-buffer.js imports the SDK: loaded here, not when libpanto is imported.
  const [{ StdioServerTransport }, { installLineBuffer, InvalidLineError }] = await Promise.all([
    serveSdk(),
    import('./line-buffer.js'),
  ]);
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(stdin, stdout);
  installLineBuffer(transport, maxMessage);
  let ended = false;
  /** Ids (JSON keys) of requests read and not yet answered. */
  const running = new Set<string>();
  // The SDK transport reports an invalid line to `onerror` and sends nothing: answer it here, then read on. An invalid
  // line reusing the id of a running request is answered with id null: its id would give that id two responses.
  const buffer = (transport as unknown as { _readBuffer: { readMessage(): unknown } })._readBuffer;
  const readMessage = buffer.readMessage.bind(buffer);
  buffer.readMessage = () => {
    for (;;) {
      try {
        return readMessage();
      } catch (err) {
        if (!(err instanceof InvalidLineError) || ended) throw err;
        const id = err.id !== null && running.has(JSON.stringify(err.id)) ? null : err.id;
        transport
          .send({ jsonrpc: '2.0', id, error: { code: err.rpcCode, message: err.message } } as never)
          .catch(() => {});
      }
    }
  };
  const server = createMcpServer(source, options);
  let done: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    done = resolve;
  });
  const end = () => {
    server.close().catch(() => {});
  };
  server.onclose = () => {
    ended = true;
    stdin.off('end', end);
    stdout.off('drain', resume);
    // The stream's error listener stays: a write still pending when the session ended can fail later (EPIPE).
    errorEnds.get(stdout)?.delete(end);
    done();
  };
  // The SDK transport does not notice the end of stdin; the client closing its end is the end of the session.
  stdin.once('end', end);
  // Nor does it listen for write errors: without a listener an EPIPE would be thrown as an uncaught exception.
  onStreamError(stdout, end);

  // Backpressure: the SDK transport reads stdin as fast as it arrives and queues every response in stdout's buffer.
  let paused = false;
  const resume = () => {
    paused = false;
    if (!ended) stdin.resume();
  };
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    if ('id' in message && !('method' in message)) running.delete(JSON.stringify(message.id));
    const sent = send(message);
    if (stdout.writableNeedDrain && !paused && !ended) {
      paused = true;
      stdin.pause();
      stdout.once('drain', resume);
    }
    return sent;
  };

  await server.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('id' in message && 'method' in message) running.add(JSON.stringify(message.id));
    onmessage?.call(transport, message);
  };
  return {
    closed,
    async close() {
      await server.close();
    },
  };
}
