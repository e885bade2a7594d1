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
  -h, --help          show this help
`;

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
    const server = await serveMcpHttp(tools, { port, workspaceRoot });
    io.err(`panto mcp: serving ${names.length} tools (${names.join(', ')}) at ${server.url}`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    return 0;
  }
  const server = await serveMcpStdio(tools, { workspaceRoot });
  io.err(`panto mcp: serving ${names.length} tools (${names.join(', ')}) on stdio`);
  const stop = () => {
    server.close().catch(() => {});
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await server.closed;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  return 0;
}
