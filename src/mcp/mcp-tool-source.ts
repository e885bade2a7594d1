/**
 * `McpToolSource`: the tools of one or more MCP servers as a `ToolSource` (composes in `ToolRegistry`).
 *
 * - Tool names are namespaced `<server>__<tool>`, one-to-one: a server name never ends in `_` nor holds `__` (the
 *   config refuses those), so the first `__` ends it and no two servers' tools can meet (`evil` + `_deploy` and
 *   `evil_` + `deploy`); a tool name with characters providers refuse, or too long, is escaped (`_` for each such
 *   character, cut to fit, and `_<hash of the original>`), so `a.b` and `a_b` stay apart. Two different tools of one
 *   server that still map to one name are both left out (logged), never the first silently winning; a tool listed
 *   twice is offered once. `ToolRegistry` still checks for clashes with every other source.
 * - Declarations have a budget: each goes into every model request, so the JSON of a server's declarations (name,
 *   description, input schema) is bounded by `maxDeclarationBytesPerServer` and the whole source's by
 *   `maxDeclarationBytes`; tools past it are left out with a warning to `log` and in `leftOut`.
 * - Lazy: constructing (or `fromConfig`) spawns nothing. `start()` starts every server at once and lists their tools;
 *   `list()` before `start()` throws `ERR_MCP_UNAVAILABLE`. A server that fails to start is reported by `start()`
 *   (and the log) and offers no tools; the others work.
 * - Results go through `mcpResultToCallResult` (images/audio decoded to raw bytes for the agent's media pipeline).
 *   A server's failure, timeout, crash or cancellation is an `{ok:false}` result the model can read; `call` rejects
 *   only for a name this source does not have.
 * - Declarations go through `mcp-tool-schema.ts`: regex keywords leave the input schema (ReDoS in the argument
 *   validator), an oversized or too-deep schema leaves the tool out (logged), a huge description is cut.
 * - `notifications/tools/list_changed` re-lists that server's tools; `list()` then returns the new set and
 *   `onToolsChanged` is called. (`ToolRegistry` copies declarations when a source is added: rebuild the registry
 *   from `onToolsChanged` to offer new tools; calls to removed tools end with an error result.)
 * - `close()` ends every server (stdio children are terminated) and is idempotent.
 */

import { createRequire } from 'node:module';
import { PantoError } from '../errors.js';
import { packageVersion } from '../package-root.js';
import type { ToolContext, ToolDecl, ToolUpdate } from '../tool.js';
import type { CallResult, ToolSource } from '../tool-source.js';
import { errorMessage } from '../tool-source.js';
import { loadMcpConfig, type McpServerConfig, parseMcpConfig } from './mcp-config.js';
import { McpConnection, type McpLogger } from './mcp-connection.js';
import { mcpResultToCallResult } from './mcp-result.js';
import { safeDescription, safeInputSchema } from './mcp-tool-schema.js';
import { clipServerText } from './server-text.js';

export interface McpToolSourceOptions {
  /** Source name in error messages. Default `mcp`. */
  name?: string;
  /** Where server stderr, server log notifications and lifecycle events go. Default: discarded. */
  log?: McpLogger;
  /** Spawn/connect + initialize + first tools/list, per server, ms. Default 30 000. */
  initTimeoutMs?: number;
  /** A call with neither a response nor progress for this long fails with a timeout, ms. Default 60 000. */
  callTimeoutMs?: number;
  /** Hard limit per call even while progress arrives, ms. Default 600 000. */
  maxCallTimeMs?: number;
  /**
   * Largest JSON-RPC message accepted from a stdio server, and largest HTTP response body / SSE event (after
   * decompression) from an HTTP server, bytes. Default 48 MiB (base64 of a 36 MB file).
   */
  maxMessageBytes?: number;
  /**
   * An HTTP server's response body (not an SSE stream) that gets no byte for this long after its headers is cut, and
   * its calls fail with an error result whose `meta.code` is `ERR_MCP_LIMIT`, ms. Default: `callTimeoutMs`.
   */
  httpBodyIdleMs?: number;
  /** Called when a server's tool list changed (after `list()` reflects it). */
  onToolsChanged?: (source: McpToolSource) => void;
  /** Client name/version sent in `initialize`. Default `{name: 'libpanto', version: <package version>}`. */
  clientInfo?: { name: string; version: string };
  /**
   * Most bytes of declarations (JSON of name, description and input schema) offered from one server; tools past it
   * are left out, in the server's order, with a warning. Default 512 KiB.
   */
  maxDeclarationBytesPerServer?: number;
  /** The same for all servers of this source together (servers in config order). Default 2 MiB. */
  maxDeclarationBytes?: number;
}

/** A tool a server offers that this source leaves out, and why. */
export interface McpLeftOutTool {
  server: string;
  tool: string;
  reason: string;
}

/** What `start()` did, per server. */
export interface McpStartReport {
  started: string[];
  failed: Array<{ server: string; error: string }>;
}

export const MCP_DEFAULTS = {
  initTimeoutMs: 30_000,
  callTimeoutMs: 60_000,
  maxCallTimeMs: 600_000,
  maxMessageBytes: 48 * 1024 * 1024,
  maxDeclarationBytesPerServer: 512 * 1024,
  maxDeclarationBytes: 2 * 1024 * 1024,
} as const;

interface Entry {
  decl: ToolDecl;
  conn: McpConnection;
  tool: string;
}

export class McpToolSource implements ToolSource {
  readonly name: string;
  readonly #conns: McpConnection[];
  readonly #log: McpLogger;
  readonly #onToolsChanged: ((s: McpToolSource) => void) | undefined;
  readonly #maxDeclPerServer: number;
  readonly #maxDecl: number;
  #entries = new Map<string, Entry>();
  #leftOut: McpLeftOutTool[] = [];
  #started = false;

  /**
   * Servers by name (names: 1-32 of `a-zA-Z0-9_-`, not ending in `_`, no `__`). Throws `ERR_INVALID_ARGUMENT` for bad options and
   * `ERR_MCP_CONFIG` for a bad server entry. Spawns nothing.
   */
  constructor(servers: Record<string, McpServerConfig>, options: McpToolSourceOptions = {}) {
    const checked = parseMcpConfig(
      Object.fromEntries(
        Object.entries(servers ?? {}).map(([k, v]) => [
          k,
          v?.type === 'http' ? { url: v.url, headers: v.headers } : v,
        ]),
      ),
      'McpToolSource',
    );
    this.name = options.name ?? 'mcp';
    this.#log = options.log ?? (() => {});
    this.#onToolsChanged = options.onToolsChanged;
    const num = (key: keyof typeof MCP_DEFAULTS | 'httpBodyIdleMs', fallback?: number): number => {
      const v = options[key] ?? fallback ?? MCP_DEFAULTS[key as keyof typeof MCP_DEFAULTS];
      if (!Number.isInteger(v) || v <= 0) {
        throw new PantoError(
          'ERR_INVALID_ARGUMENT',
          `McpToolSource: ${key} must be a positive integer, got ${v}`,
        );
      }
      return v;
    };
    this.#maxDeclPerServer = num('maxDeclarationBytesPerServer');
    this.#maxDecl = num('maxDeclarationBytes');
    const connOpts = {
      initTimeoutMs: num('initTimeoutMs'),
      callTimeoutMs: num('callTimeoutMs'),
      maxCallTimeMs: num('maxCallTimeMs'),
      maxMessageBytes: num('maxMessageBytes'),
      // Default: the call timeout (a JSON-mode call may take that long before its body's first byte).
      httpBodyIdleMs: num('httpBodyIdleMs', options.callTimeoutMs ?? MCP_DEFAULTS.callTimeoutMs),
      log: this.#log,
      onToolsChanged: () => this.#rebuild(true),
      clientInfo: options.clientInfo ?? { name: 'libpanto', version: packageVersion() },
    };
    this.#conns = Object.entries(checked).map(([n, cfg]) => new McpConnection(n, cfg, connOpts));
  }

  /**
   * A source over the servers of an `mcpServers` config: a file path, or the parsed JSON. Spawns nothing (call
   * `start()`). Throws `ERR_MCP_CONFIG` for an unreadable file or a bad entry.
   */
  static async fromConfig(
    config: string | object,
    options: McpToolSourceOptions = {},
  ): Promise<McpToolSource> {
    const servers = typeof config === 'string' ? await loadMcpConfig(config) : parseMcpConfig(config);
    return new McpToolSource(servers, options);
  }

  /** Server names, in config order. */
  get servers(): string[] {
    return this.#conns.map((c) => c.name);
  }

  /**
   * Start every server at once (spawn or connect, initialize, list tools). Resolves when all have started or failed;
   * never rejects. Calling it again retries servers that failed.
   */
  async start(): Promise<McpStartReport> {
    const outcomes = await Promise.all(
      this.#conns.map((c) =>
        c.start().then(
          () => ({ server: c.name, error: undefined as string | undefined }),
          (err: unknown) => ({ server: c.name, error: errorMessage(err) }),
        ),
      ),
    );
    this.#started = true;
    const report: McpStartReport = { started: [], failed: [] };
    for (const o of outcomes) {
      if (o.error === undefined) report.started.push(o.server);
      else {
        report.failed.push({ server: o.server, error: o.error });
        this.#log({ level: 'error', server: o.server, message: o.error });
      }
    }
    this.#rebuild(false);
    return report;
  }

  list(): ToolDecl[] {
    if (!this.#started) {
      throw new PantoError(
        'ERR_MCP_UNAVAILABLE',
        `MCP tool source '${this.name}' has not been started: await source.start() before listing or registering it`,
      );
    }
    return [...this.#entries.values()].map((e) => e.decl);
  }

  async call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult> {
    const entry = this.#entries.get(name);
    if (!entry) throw new PantoError('ERR_UNKNOWN_TOOL', `source '${this.name}' has no tool '${name}'`);
    const { conn, tool } = entry;
    const meta = { mcpServer: conn.name, mcpTool: tool };
    if (!conn.tools.some((t) => t.name === tool)) {
      return { ok: false, error: `MCP server '${conn.name}' no longer offers the tool '${tool}'`, meta };
    }
    let out: CallResult;
    try {
      const res = await conn.callTool(tool, args, ctx.signal, (p) => ctx.update(progressUpdate(p)));
      out = await mcpResultToCallResult(res, {
        readResource: (uri) => conn.readResource(uri, ctx.signal),
        meta,
      });
    } catch (err) {
      // A typed failure (`ERR_MCP_LIMIT`: the server's response was cut) keeps its code for the host in `meta.code`.
      out = {
        ok: false,
        error: errorMessage(err),
        meta: err instanceof PantoError ? { ...meta, code: err.code } : meta,
      };
    }
    const restarted = conn.takeRestartNote();
    if (restarted !== undefined) {
      if (out.ok) out.parts.unshift({ type: 'text', text: restarted });
      else out.error = `${restarted}\n${out.error}`;
    }
    return out;
  }

  /** End every server. Idempotent; never rejects. After it, calls end with an error result. */
  async close(): Promise<void> {
    await Promise.all(this.#conns.map((c) => c.close()));
  }

  /** The tools servers offer that this source leaves out (as of the last listing), and why. */
  get leftOut(): readonly McpLeftOutTool[] {
    return this.#leftOut;
  }

  #rebuild(changed: boolean): void {
    const entries = new Map<string, Entry>();
    const leftOut: McpLeftOutTool[] = [];
    let total = 0;
    for (const conn of this.#conns) {
      const leave = (tool: string, reason: string) => leftOut.push({ server: conn.name, tool, reason });
      // Names first, over the whole list: two different tools meeting in one name are both left out.
      const byName = new Map<string, string[]>();
      for (const t of conn.tools) {
        const name = namespacedName(conn.name, t.name);
        const originals = byName.get(name) ?? [];
        if (!originals.includes(t.name)) originals.push(t.name);
        byName.set(name, originals);
      }
      const offered = new Set<string>();
      let used = 0;
      const overBudget: string[] = [];
      for (const t of conn.tools) {
        const name = namespacedName(conn.name, t.name);
        if ((byName.get(name) ?? []).length > 1) {
          leave(t.name, `its name '${name}' is also the name of another of the server's tools`);
          continue;
        }
        if (offered.has(name)) continue; // listed twice: offered once
        offered.add(name);
        const schema = safeInputSchema(t.inputSchema);
        if (!schema.ok) {
          leave(t.name, schema.problem);
          continue;
        }
        const description = safeDescription(t.description ?? t.title ?? '');
        const decl: ToolDecl = { name, description, inputSchema: schema.schema };
        if (conn.config.needsApproval) decl.needsApproval = true;
        const size = Buffer.byteLength(JSON.stringify(decl), 'utf8');
        if (used + size > this.#maxDeclPerServer || total + size > this.#maxDecl) {
          overBudget.push(t.name);
          leave(
            t.name,
            used + size > this.#maxDeclPerServer
              ? `the server's declarations pass maxDeclarationBytesPerServer (${this.#maxDeclPerServer} bytes)`
              : `this source's declarations pass maxDeclarationBytes (${this.#maxDecl} bytes)`,
          );
          continue;
        }
        used += size;
        total += size;
        entries.set(name, { decl, conn, tool: t.name });
      }
      for (const l of leftOut) {
        if (l.server !== conn.name || overBudget.includes(l.tool)) continue;
        this.#log({ level: 'warn', server: conn.name, message: `tool '${l.tool}' left out: ${l.reason}` });
      }
      if (overBudget.length > 0) {
        const shown = overBudget.slice(0, 10).map((n) => clipServerText(n).slice(0, 80));
        this.#log({
          level: 'warn',
          server: conn.name,
          message: `${overBudget.length} tools left out: their declarations would pass the budget (${this.#maxDeclPerServer} bytes per server, ${this.#maxDecl} per source) and go into every model request: ${shown.join(', ')}${overBudget.length > shown.length ? ', …' : ''}`,
        });
      }
    }
    this.#entries = entries;
    this.#leftOut = leftOut;
    if (changed) {
      try {
        this.#onToolsChanged?.(this);
      } catch (err) {
        this.#log({ level: 'error', server: '*', message: `onToolsChanged threw: ${errorMessage(err)}` });
      }
    }
  }
}

/** Longest tool name providers take. */
const MAX_NAME = 64;

/**
 * `<server>__<tool>`, provider-safe (`^[a-zA-Z0-9_-]{1,64}$`) and one-to-one (see the module contract): a tool name
 * that is not safe as it is, or makes the whole too long, becomes its safe characters (others as `_`), cut to fit,
 * then `_` and 8 hex digits of a SHA-256 of server and tool.
 */
export function namespacedName(server: string, tool: string): string {
  const full = `${server}__${tool}`;
  if (/^[a-zA-Z0-9_-]*$/.test(tool) && full.length <= MAX_NAME) return full;
  // node:crypto on first use only (an escaped name), not at import.
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);
  const safe = `${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  return `${safe.slice(0, MAX_NAME - 9)}_${hash}`;
}

function progressUpdate(p: {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}): ToolUpdate {
  const u: ToolUpdate = { completed: p.progress };
  if (p.total !== undefined && p.total > 0) {
    u.total = p.total;
    u.progress = Math.min(1, Math.max(0, p.progress / p.total));
  }
  if (p.message !== undefined) u.message = p.message;
  return u;
}
