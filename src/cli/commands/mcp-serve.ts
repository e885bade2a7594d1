/** `panto mcp serve`: the Lua tools (built-ins + --tools DIR) as an MCP server over stdio, or Streamable HTTP on loopback. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { LuaToolSource } from '../../lua/index.js';
import { serveMcpHttp, serveMcpStdio } from '../../mcp/index.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { CliIo } from '../cli-io.js';
import { parseIntOption } from '../parse-options.js';

export const mcpHelp = `Usage: panto mcp serve [options]

Serve the Lua tools (the built-in read, plus --tools DIR) to any MCP client.
Tool results go through the media pipeline: images come out capped (2000 px,
under 3.75 MiB), oriented and stripped of metadata (GPS); PDFs as embedded
resources. panto.progress becomes MCP progress; a cancelled call stops the Lua call.

Default transport: stdio (JSON-RPC on stdin/stdout; logs go to stderr).

Options:
  --tools DIR         also load Lua tools from DIR (repeatable)
  --workspace DIR     workspace root the tools may read (default: current directory)
  --http PORT         serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead (0 = any free port)
  --host ADDR         --http only: the address to bind (default 127.0.0.1; any other needs the token)
  --no-auth           --http only: accept requests without the bearer token (loopback only)
  -h, --help          show this help

With --http every request must carry 'Authorization: Bearer <token>'. The token is
$PANTO_MCP_TOKEN when set (at least 16 characters), else a new random one per start,
printed on stderr.

Limits against a hostile client (each a positive integer; see docs/mcp.md):
  --max-pending-calls N     tool calls in flight per client; more get an error result (default 64)
  --max-result-bytes N      largest tool result sent; a bigger one becomes an error result (default 50331648)
  --max-message-bytes N     largest request: one stdio line (ends the session; default 10485760),
                            or with --http one request body (413; default 4194304)
  --session-idle-ms N       --http only: close a session idle this long (default 600000)
  --request-timeout-ms N    --http only: a request not received in full this fast gets 408 (default 30000)
  --max-connections N       --http only: most open TCP connections (default 64)
  --max-unsent-bytes N      --http only: answers written but not read by all clients, past which new
                            calls wait (default 16777216; per session a quarter of it)
  --drain-timeout-ms N      --http only: a client that leaves its share unread this long loses its
                            session and its calls (default 30000)
`;

/** The limit flags: CLI name → option name of `serveMcpStdio` / `serveMcpHttp`, and whether it needs --http. */
const LIMIT_FLAGS = [
  ['max-pending-calls', 'maxPendingCalls', false],
  ['max-result-bytes', 'maxResultBytes', false],
  ['max-message-bytes', 'maxMessageBytes', false],
  ['session-idle-ms', 'sessionIdleMs', true],
  ['request-timeout-ms', 'requestTimeoutMs', true],
  ['max-connections', 'maxConnections', true],
  ['max-unsent-bytes', 'maxUnsentBytes', true],
  ['drain-timeout-ms', 'drainTimeoutMs', true],
] as const;

export async function runMcp(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.out(mcpHelp);
    return sub === undefined ? EXIT_USAGE : 0;
  }
  if (sub !== 'serve')
    throw new CliError(`unknown mcp subcommand '${sub}' (try: panto mcp serve)`, EXIT_USAGE);
  const { values } = parseArgs({
    args: rest,
    allowPositionals: false,
    options: {
      tools: { type: 'string', multiple: true },
      workspace: { type: 'string' },
      http: { type: 'string' },
      host: { type: 'string' },
      'no-auth': { type: 'boolean' },
      ...Object.fromEntries(LIMIT_FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(mcpHelp);
    return 0;
  }
  let port: number | undefined;
  if (values.http !== undefined) {
    port = values.http === '0' ? 0 : parseIntOption(values.http, '--http');
    if (port !== undefined && port > 65535) throw new CliError('--http expects a port 0..65535', EXIT_USAGE);
  }
  // Every limit checked before anything loads: a usage error names the flag, what it expects and what it got.
  const limits: Record<string, number> = {};
  for (const [flag, option, httpOnly] of LIMIT_FLAGS) {
    const raw = (values as Record<string, string | boolean | string[] | undefined>)[flag];
    if (raw === undefined) continue;
    if (typeof raw !== 'string') throw new CliError(`--${flag} expects a positive integer`, EXIT_USAGE);
    const n = parseIntOption(raw, `--${flag}`) as number;
    if (httpOnly && port === undefined) {
      throw new CliError(`--${flag} applies to --http only (got it without --http)`, EXIT_USAGE);
    }
    limits[option] = n;
  }
  if (port === undefined && (values.host !== undefined || values['no-auth'] === true)) {
    throw new CliError(
      `--${values.host !== undefined ? 'host' : 'no-auth'} applies to --http only`,
      EXIT_USAGE,
    );
  }
  if (limits.maxUnsentBytes !== undefined) {
    limits.maxUnsentBytesPerSession = Math.max(1, Math.floor(limits.maxUnsentBytes / 4));
  }
  const envToken = process.env.PANTO_MCP_TOKEN;
  if (
    port !== undefined &&
    values['no-auth'] !== true &&
    envToken !== undefined &&
    !/^[\x21-\x7e]{16,}$/.test(envToken)
  ) {
    throw new CliError(
      'PANTO_MCP_TOKEN must be at least 16 printable ASCII characters without spaces',
      EXIT_USAGE,
    );
  }
  const workspaceRoot = path.resolve(values.workspace ?? process.cwd());
  // Everything but the protocol goes to stderr: on stdio, stdout belongs to JSON-RPC.
  const tools = await LuaToolSource.fromDir(
    (values.tools ?? []).map((d) => path.resolve(d)),
    {
      includeBuiltins: true,
      workspaceRoot,
      log: (e) => io.err(`[lua ${e.level}] ${e.message}`),
    },
  );
  for (const e of tools.loadErrors)
    io.err(`warning: ${e.file}${e.line === undefined ? '' : `:${e.line}`}: ${e.message}`);
  const names = tools.list().map((d) => d.name);

  if (port !== undefined) {
    const { maxMessageBytes, ...rest } = limits;
    const server = await serveMcpHttp(tools, {
      port,
      workspaceRoot,
      ...rest,
      ...(maxMessageBytes !== undefined ? { maxBodyBytes: maxMessageBytes } : {}),
      ...(values.host !== undefined ? { host: values.host } : {}),
      ...(values['no-auth'] === true
        ? { authToken: false as const }
        : envToken !== undefined
          ? { authToken: envToken }
          : {}),
      log: (message) => io.err(`panto mcp: ${message}`),
    });
    if (server.authToken === undefined) {
      io.err('panto mcp: --no-auth: any local process can call these tools');
    } else if (envToken !== undefined) {
      io.err('panto mcp: token: from PANTO_MCP_TOKEN (send Authorization: Bearer <token>)');
    } else {
      io.err(`panto mcp: token: ${server.authToken} (send Authorization: Bearer <token>)`);
    }
    io.err(`panto mcp: serving ${names.length} tools (${names.join(', ')}) at ${server.url}`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    await tools.close();
    return 0;
  }
  const server = await serveMcpStdio(tools, { workspaceRoot, ...limits });
  io.err(`panto mcp: serving ${names.length} tools (${names.join(', ')}) on stdio`);
  const stop = () => {
    server.close().catch(() => {});
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await server.closed;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  // A session that ended while the client keeps stdin open (a line over --max-message-bytes, EPIPE on stdout) leaves
  // stdin paused, not closed: its pipe and the Lua host's workers would keep the process alive. The session is over,
  // so is the process.
  process.stdin.destroy();
  await tools.close();
  return 0;
}
