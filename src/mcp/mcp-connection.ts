/**
 * One MCP server as seen by the client side: start (spawn + initialize, or connect over Streamable HTTP), list its
 * tools (all pages), follow `notifications/tools/list_changed`, call tools, restart once after a crash, close.
 *
 * Contract:
 * - Nothing starts before `start()` or the first `callTool()` (lazy), and the MCP SDK itself is loaded by the first
 *   `start()` (see `mcp-sdk.ts`). `start()` is idempotent and shared by
 *   concurrent callers; it rejects with `ERR_MCP_UNAVAILABLE` when the server cannot be spawned/reached or does not
 *   answer `initialize` + `tools/list` within `initTimeoutMs`.
 * - A server that exits or drops the connection while not being closed is "crashed". The next call restarts it once
 *   and reports that in `restartNote`; after a second crash calls fail with a message saying so.
 * - `callTool()` rejects with an `Error` whose message the model can read (timeout, cancelled, crashed, protocol
 *   error); `McpToolSource` turns that into an error result.
 * - stderr of a stdio server goes line by line to `log` (never to our stdout); its last lines are quoted in crash
 *   messages. Server text handed to `log` (stderr lines, `notifications/message`) and progress messages handed to
 *   `onProgress` are cut to 2000 characters; progress reaches `onProgress` at a bounded rate (see `progress-gate.ts`).
 * - Bounds against a hostile server: `tools/list` at most 1000 pages and `MAX_TOOLS` tools; `list_changed` re-lists
 *   coalesced; one stdio message / HTTP body / SSE event at most `maxMessageBytes`; a cut of a GET (standalone or
 *   resumed) SSE stream ends the connection as a crash, since the SDK would reconnect it for ever; a stdio server
 *   closing its stdout counts as stopped; output schemas are not compiled (see `UNCHECKED_OUTPUT`); server→client requests get the
 *   SDK's method-not-found error (no client capabilities are declared).
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  CallToolResult,
  JSONRPCMessage,
  Tool as McpTool,
  Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { PantoError } from '../errors.js';
import { timerMs } from '../timer-ms.js';
import { errorMessage } from '../tool-source.js';
import { boundedFetch } from './bounded-fetch.js';
import type { McpServerConfig } from './mcp-config.js';
import type { McpResourceContents } from './mcp-result.js';
import { type ClientSdk, clientSdk, loadedClientSdk } from './mcp-sdk.js';
import { OrderedTransport } from './ordered-transport.js';
import { progressGate } from './progress-gate.js';
import { onceCoded } from './rpc-error-text.js';
import { clipServerText } from './server-text.js';

/** A line for the host's log: a server's stderr, its `notifications/message`, lifecycle events. */
export interface McpLogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  server: string;
  message: string;
}
export type McpLogger = (entry: McpLogEntry) => void;

export interface McpConnectionOptions {
  /** Time for spawn/connect + `initialize` + the first `tools/list`, in ms. */
  initTimeoutMs: number;
  /** A call with no response and no progress for this long ends with a timeout error (ms). */
  callTimeoutMs: number;
  /** A call ends after this long even while progress keeps arriving (ms). */
  maxCallTimeMs: number;
  /**
   * Largest single JSON-RPC message read from a stdio server, in bytes; a bigger one ends the connection. For an HTTP
   * server: the most one response body (or one SSE event) may hold, after decompression (see `bounded-fetch.ts`).
   */
  maxMessageBytes: number;
  /**
   * An HTTP server's response body that is not an SSE stream and gets no byte for this long is cut and its calls fail
   * with `ERR_MCP_LIMIT` (ms). Default `callTimeoutMs` (a JSON-mode call may legitimately take that long to answer).
   */
  httpBodyIdleMs?: number;
  log: McpLogger;
  /** Called after the tool list changed (a `list_changed` notification was followed by a successful re-list). */
  onToolsChanged: () => void;
  clientInfo: { name: string; version: string };
}

/**
 * The JSON-RPC error code of the error response this client makes up for a request whose HTTP response it cut (over
 * `maxMessageBytes`, or stalled). For an SSE stream the SDK would otherwise leave the request waiting for its timeout;
 * for a JSON or error body the SDK has already rejected the request, and the made-up response removes the response
 * and progress handlers the SDK leaves behind. The response carries `CUT_MARKER` as its `data`, so a real server's
 * error with the same code is not taken for a cut.
 */
const CUT_RESPONSE_CODE = -32099;
const CUT_MARKER: unknown = Object.freeze({ cutBy: 'libpanto' });
/** Most cut request ids remembered per connection (each is one cut response; ids of finished calls are dropped). */
const MAX_CUT_IDS = 256;

/** The JSON-RPC request ids one `callTool` sent, recorded by the transport wrapper's `onSend`. */
const sentBy = new AsyncLocalStorage<Set<string | number>>();

type State = 'idle' | 'starting' | 'ready' | 'crashed' | 'closed';

const STDERR_TAIL_LINES = 8;
/** Most tools taken from one server. */
export const MAX_TOOLS = 1000;

/**
 * Tool output schemas are not checked against `structuredContent`. The SDK would compile every tool's `outputSchema`
 * with Ajv at `tools/list` (one uncompilable or 10k-deep schema then fails the whole listing, so the server offers
 * no tools) and run its `pattern`s on the server's output (a backtracking pattern freezes the event loop). The
 * schema is the server's promise about its own output; `structuredContent` only ever reaches the model as JSON text.
 */
const UNCHECKED_OUTPUT: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

export class McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly #opts: McpConnectionOptions;
  #state: State = 'idle';
  #client: Client | undefined;
  #starting: Promise<void> | undefined;
  #tools: McpTool[] = [];
  #restarts = 0;
  #crashReason = '';
  #lastTransportError: string | undefined;
  /** The last response body the bounded fetch cut short, and how many it cut (to tell one cut during a call). */
  #lastCut: string | undefined;
  #cuts = 0;
  /** Ids of requests whose response was cut, and why (bounded by `MAX_CUT_IDS`). */
  readonly #cutIds = new Map<string | number, string>();
  #stderrTail: string[] = [];
  #pendingNote: string | undefined;
  /** The client whose re-list (after `list_changed`) is running, and whether another was asked for meanwhile. */
  #relisting: Client | undefined;
  #relistAgain = false;

  constructor(name: string, config: McpServerConfig, options: McpConnectionOptions) {
    this.name = name;
    this.config = config;
    this.#opts = options;
  }

  /** The server's tools as of the last successful list (empty before start). */
  get tools(): readonly McpTool[] {
    return this.#tools;
  }

  get state(): State {
    return this.#state;
  }

  /** Start (once) and list the tools. See the module contract. */
  start(): Promise<void> {
    if (this.#state === 'ready') return Promise.resolve();
    if (this.#state === 'closed') {
      return Promise.reject(new PantoError('ERR_MCP_UNAVAILABLE', `MCP server '${this.name}' was closed`));
    }
    this.#starting ??= this.#connect().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #connect(): Promise<void> {
    this.#state = 'starting';
    this.#lastTransportError = undefined;
    const sdk = await clientSdk();
    if ((this.#state as State) === 'closed') {
      throw new PantoError(
        'ERR_MCP_UNAVAILABLE',
        `MCP server '${this.name}' could not be started: closed while starting`,
      );
    }
    const { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } = sdk;
    const client = new sdk.Client(this.#opts.clientInfo, {
      capabilities: {},
      jsonSchemaValidator: UNCHECKED_OUTPUT,
    });
    const transport = this.#makeTransport(sdk, client);
    this.#client = client;
    client.onclose = () => this.#onClosed(client);
    client.onerror = (err) => {
      this.#lastTransportError = errorMessage(err);
      const message = errorMessage(err);
      // A progress notification racing the call's response is routine, not a problem worth a warning.
      const level = /progress notification for an unknown token/.test(message) ? 'debug' : 'warn';
      this.#opts.log({ level, server: this.name, message: `protocol error: ${message}` });
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#refreshTools(client);
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const { level, data, logger } = n.params;
      const text = typeof data === 'string' ? data : safeJson(data);
      this.#opts.log({
        level:
          level === 'debug'
            ? 'debug'
            : level === 'info' || level === 'notice'
              ? 'info'
              : level === 'warning'
                ? 'warn'
                : 'error',
        server: this.name,
        message: clipServerText(logger ? `${logger}: ${text}` : text),
      });
    });

    const deadline = AbortSignal.timeout(timerMs(this.#opts.initTimeoutMs));
    try {
      await client.connect(transport, { timeout: timerMs(this.#opts.initTimeoutMs), signal: deadline });
      this.#tools = await this.#listAll(client, deadline);
      if (this.#client !== client) throw new Error('closed while starting');
      this.#state = 'ready';
    } catch (err) {
      const reason =
        deadline.aborted || isTimeout(err)
          ? `did not answer initialize/tools/list within ${this.#opts.initTimeoutMs} ms`
          : this.#explain(err);
      if (this.#client === client) {
        this.#client = undefined;
        if ((this.#state as State) !== 'closed') this.#state = 'crashed';
      }
      await closeQuietly(client);
      throw new PantoError(
        'ERR_MCP_UNAVAILABLE',
        `MCP server '${this.name}' could not be started: ${reason}`,
        {
          cause: err,
        },
      );
    }
  }

  #makeTransport(sdk: ClientSdk, client: Client): OrderedTransport {
    const cfg = this.config;
    // Every transport is wrapped: wire order kept with progress handled before its call's response (see
    // ordered-transport.ts), and the id of every request a `callTool` sends recorded for that call.
    const record = (message: JSONRPCMessage) => {
      if ('id' in message && 'method' in message) sentBy.getStore()?.add(message.id);
    };
    if (cfg.type === 'http') {
      const inner = new sdk.StreamableHTTPClientTransport(new URL(cfg.url), {
        ...(cfg.headers ? { requestInit: { headers: cfg.headers } } : {}),
        fetch: boundedFetch(
          this.#opts.maxMessageBytes,
          (reason, ids, method) => {
            // A client that is no longer current is closed or closing: its cuts concern nobody.
            if (this.#client !== client) return;
            if (method === 'GET') {
              // The standalone or a resumed SSE stream: the SDK reconnects after every cut (a hostile server with a
              // priming id and `retry: 0` would have us download up to maxMessageBytes again and again). The
              // connection ends instead; that counts as a crash (restarted once, on the next call).
              this.#lastTransportError = reason;
              this.#opts.log({ level: 'warn', server: this.name, message: `SSE stream cut: ${reason}` });
              closeQuietly(client).catch(() => {});
              return;
            }
            this.#lastCut = reason;
            this.#cuts++;
            for (const id of ids) {
              this.#cutIds.set(id, reason);
              if (this.#cutIds.size > MAX_CUT_IDS) {
                const oldest = this.#cutIds.keys().next().value;
                if (oldest !== undefined) this.#cutIds.delete(oldest);
              }
            }
            // The requests that response was answering fail now, naming the cause, not at their timeout.
            for (const id of ids) {
              t.inject({
                jsonrpc: '2.0',
                id,
                error: { code: CUT_RESPONSE_CODE, message: reason, data: CUT_MARKER },
              });
            }
          },
          this.#opts.httpBodyIdleMs ?? this.#opts.callTimeoutMs,
        ),
      });
      const t = new OrderedTransport(inner, record);
      return t;
    }
    return new OrderedTransport(
      new sdk.StdioClientTransport(cfg, {
        maxMessageBytes: this.#opts.maxMessageBytes,
        onStderrLine: (line) => this.#stderrLine(line),
      }),
      record,
    );
  }

  #stderrLine(line: string): void {
    if (line.length === 0) return;
    const shown = clipServerText(line);
    this.#stderrTail.push(shown);
    if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
    this.#opts.log({ level: 'info', server: this.name, message: shown });
  }

  /**
   * Every page of `tools/list`, bounded: at most 1000 pages (a repeated cursor ends it at once) and `MAX_TOOLS` tools;
   * tools past that are left out with a warning (each tool goes into every model request).
   */
  async #listAll(client: Client, signal?: AbortSignal): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const res = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: timerMs(this.#opts.initTimeoutMs),
        // One signal per page: the SDK adds an abort listener to the signal of every request and never removes it.
        ...(signal ? { signal: AbortSignal.any([signal]) } : {}),
      });
      tools.push(...res.tools.slice(0, MAX_TOOLS + 1 - tools.length));
      if (tools.length > MAX_TOOLS) {
        this.#opts.log({
          level: 'warn',
          server: this.name,
          message: `the server offers more than ${MAX_TOOLS} tools; only the first ${MAX_TOOLS} are used`,
        });
        return tools.slice(0, MAX_TOOLS);
      }
      cursor = res.nextCursor;
      if (cursor === undefined) return tools;
      if (seen.has(cursor)) throw new Error(`tools/list repeated the cursor ${JSON.stringify(cursor)}`);
      seen.add(cursor);
    }
    throw new Error('tools/list returned more than 1000 pages');
  }

  /**
   * Re-list after `list_changed`. Coalesced: while a re-list of this client runs, further notifications only ask for
   * one more re-list after it, so a notification storm costs at most two `tools/list` rounds at a time.
   */
  #refreshTools(client: Client): void {
    if (this.#relisting === client) {
      this.#relistAgain = true;
      return;
    }
    this.#relisting = client;
    this.#relistAgain = false;
    this.#listAll(client).then(
      (tools) => {
        this.#relistDone(client);
        if (this.#client !== client) return;
        this.#tools = tools;
        this.#opts.log({
          level: 'info',
          server: this.name,
          message: `tool list changed (${tools.length} tools)`,
        });
        this.#opts.onToolsChanged();
      },
      (err) => {
        this.#relistDone(client);
        this.#opts.log({
          level: 'warn',
          server: this.name,
          message: `re-listing tools after list_changed failed: ${errorMessage(err)}`,
        });
      },
    );
  }

  #relistDone(client: Client): void {
    if (this.#relisting !== client) return;
    this.#relisting = undefined;
    if (this.#relistAgain && this.#client === client) {
      this.#relistAgain = false;
      this.#refreshTools(client);
    }
  }

  #onClosed(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#state === 'closed') return;
    const wasStarting = this.#state === 'starting';
    this.#state = 'crashed';
    this.#crashReason = this.#explain(undefined);
    if (!wasStarting) {
      this.#opts.log({ level: 'error', server: this.name, message: `server stopped: ${this.#crashReason}` });
    }
  }

  /** Why the connection ended, for messages: the transport's last error and the server's last stderr lines. */
  #explain(err: unknown): string {
    const parts: string[] = [];
    if (err !== undefined) parts.push(onceCoded(errorMessage(err)));
    else parts.push('the connection closed (the server exited or dropped it)');
    if (this.#lastTransportError && !parts.includes(this.#lastTransportError))
      parts.push(this.#lastTransportError);
    if (this.#stderrTail.length > 0) parts.push(`last stderr: ${this.#stderrTail.slice(-3).join(' | ')}`);
    return parts.join('; ');
  }

  /** A note about a restart that happened for the call now running, taken once. */
  takeRestartNote(): string | undefined {
    const n = this.#pendingNote;
    this.#pendingNote = undefined;
    return n;
  }

  /** Make sure the server is up: start it lazily, or restart it once after a crash. */
  async #ensure(): Promise<Client> {
    if (this.#state === 'crashed' && !this.#starting) {
      if (this.#restarts >= 1) {
        throw new Error(
          `MCP server '${this.name}' stopped again after being restarted once, so it is not restarted: ${this.#crashReason}`,
        );
      }
      this.#restarts++;
      const why = this.#crashReason;
      this.#stderrTail = [];
      await this.start();
      this.#pendingNote = `[note: MCP server '${this.name}' had stopped (${why}) and was restarted]`;
      this.#opts.log({ level: 'warn', server: this.name, message: 'restarted after a crash' });
    } else {
      await this.start();
    }
    const client = this.#client;
    if (!client) throw new Error(`MCP server '${this.name}' is not connected: ${this.#crashReason}`);
    return client;
  }

  /**
   * Call a tool by its MCP name. Progress goes to `onProgress`; `signal` cancels (the server gets
   * `notifications/cancelled`). Rejects with a model-readable Error; see the module contract.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress: (p: Progress) => void,
  ): Promise<CallToolResult> {
    const client = await this.#ensure();
    const cutsBefore = this.#cuts;
    const progress = progressGate(onProgress);
    const sent = new Set<string | number>();
    let res: CallToolResult;
    try {
      res = (await sentBy.run(sent, () =>
        client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: timerMs(this.#opts.callTimeoutMs),
          resetTimeoutOnProgress: true,
          maxTotalTimeout: this.#opts.maxCallTimeMs,
          onprogress: progress.onprogress,
        }),
      )) as CallToolResult;
    } catch (err) {
      progress.close();
      if (signal.aborted) throw new Error(`cancelled; the MCP server '${this.name}' was told to stop`);
      if (isTimeout(err)) {
        throw new Error(
          `MCP server '${this.name}' did not answer ${tool} in time (${errorMessage(err)}); the call was cancelled`,
        );
      }
      // Our own response body cut (JSON or error body: the SDK rejects at once; SSE: the made-up response).
      const cutReason = [...sent].map((id) => this.#cutIds.get(id)).find((r) => r !== undefined);
      const sdk = loadedClientSdk();
      const madeUp = sdk !== undefined && err instanceof sdk.McpError && err.data === CUT_MARKER;
      if (cutReason !== undefined || madeUp || (err instanceof PantoError && err.code === 'ERR_MCP_LIMIT')) {
        const reason = cutReason ?? errorMessage(err).replace(/^MCP error -?\d+: /, '');
        throw new PantoError(
          'ERR_MCP_LIMIT',
          `MCP server '${this.name}' failed the call: ${clipServerText(reason)}`,
        );
      }
      if (isMcpError(err, 'ConnectionClosed')) {
        throw new Error(`MCP server '${this.name}' stopped during the call: ${this.#explain(undefined)}`);
      }
      let message = onceCoded(errorMessage(err));
      // The SDK's own message can hide the cause ("Error POSTing to endpoint: null" for an error body cut short). A
      // cut during this call is named; with concurrent calls on one connection it may have been another call's.
      const cause = this.#lastCut;
      if (this.#cuts !== cutsBefore && cause !== undefined && !message.includes(cause)) {
        message = `${message} (${cause})`;
      }
      throw new Error(`MCP server '${this.name}' failed the call: ${clipServerText(message)}`);
    } finally {
      for (const id of sent) this.#cutIds.delete(id);
    }
    // The newest progress the gate still held goes before the result (outside the try: a host's failing `update`
    // cannot turn a result into a failed call; the gate catches it anyway).
    progress.flush();
    progress.close();
    return res;
  }

  /** `resources/read`, for resource links in results. */
  async readResource(uri: string, signal: AbortSignal): Promise<McpResourceContents[]> {
    const client = this.#client;
    if (!client) throw new Error('server not connected');
    if (!client.getServerCapabilities()?.resources) throw new Error('the server offers no resources');
    const res = await client.readResource({ uri }, { signal, timeout: timerMs(this.#opts.callTimeoutMs) });
    return res.contents as McpResourceContents[];
  }

  /** Close the connection and end the server process. Idempotent; never rejects. */
  async close(): Promise<void> {
    this.#state = 'closed';
    const client = this.#client;
    this.#client = undefined;
    if (client) await closeQuietly(client);
    if (this.#starting) await this.#starting.catch(() => {});
  }
}

/** `err` is the SDK's `McpError` with that code (false while the SDK is not loaded: no SDK error can exist yet). */
function isMcpError(err: unknown, code: 'ConnectionClosed' | 'RequestTimeout'): boolean {
  const sdk = loadedClientSdk();
  return sdk !== undefined && err instanceof sdk.McpError && err.code === sdk.ErrorCode[code];
}

function isTimeout(err: unknown): boolean {
  return isMcpError(err, 'RequestTimeout');
}

async function closeQuietly(client: Client): Promise<void> {
  try {
    await client.close();
  } catch {
    // already closed
  }
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
