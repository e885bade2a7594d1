/** `panto chat`: an interactive agent over a provider with the Lua tools; `@path` mentions, Tab completion, a saved session. Exit 1 when a turn failed. */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { Agent, type AgentEvent } from '../../agent/index.js';
import { isPantoError } from '../../errors.js';
import { LuaToolSource } from '../../lua/index.js';
import { McpToolSource } from '../../mcp/index.js';
import { type ModelApi, type ModelOverrides, resolveModel } from '../../providers/index.js';
import { createProvider, ENDPOINTS, type Provider } from '../../providers/transport/index.js';
import { SessionLog } from '../../session/index.js';
import { ToolRegistry } from '../../tool-source.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { CliIo } from '../cli-io.js';
import { completeMention, resolveMentions } from '../mentions.js';
import { parseIntOption } from '../parse-options.js';
import { DEFAULT_MODEL, parseProvider } from '../surfaces.js';

export const chatHelp = `Usage: panto chat [options]

An interactive agent with the Lua tools (read, plus --tools DIR). Type a line to
send it; '@path' attaches a file (images and PDFs as attachments, other files as
text; '@"a b.png"' for names with spaces; Tab completes paths). Commands: /exit,
/help. Ctrl-C stops the running turn; Ctrl-D exits. The session is saved.

Options:
  --provider P        anthropic | openai (Responses) | openai-chat | openai-responses | gemini
                      (default: the first of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY that is set;
                      openai-chat when only --base-url is given)
  --model M           model id (default: a current model of the provider)
  --base-url URL      another server speaking the provider's protocol (llama.cpp, vLLM, Ollama,
                      OpenRouter...; include its /v1 for openai-chat)
  --api-key-env VAR   read the API key from VAR instead of the provider's usual variable
  --tools DIR         also load Lua tools from DIR (repeatable)
  --workspace DIR     workspace root the tools may read (default: current directory)
  --mcp FILE          also use the tools of the MCP servers in FILE ({"mcpServers": {...}}; repeatable)
  --resume FILE       continue a saved session
  --session FILE      where to save a new session (default: .panto/sessions/<time>.jsonl in the workspace)
  --system TEXT       system prompt
  --max-turns N       model requests per prompt (default 50)
  --image-input       declare that the model accepts images (for models the catalog does not know)
  --pdf-input         declare that the model accepts PDFs
  -h, --help          show this help
`;

export async function runChat(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      provider: { type: 'string' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      'api-key-env': { type: 'string' },
      tools: { type: 'string', multiple: true },
      workspace: { type: 'string' },
      mcp: { type: 'string', multiple: true },
      resume: { type: 'string' },
      session: { type: 'string' },
      system: { type: 'string' },
      'max-turns': { type: 'string' },
      'image-input': { type: 'boolean' },
      'pdf-input': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(chatHelp);
    return 0;
  }
  const env = process.env;
  const api = pickApi(values.provider, values['base-url'], env);
  const overrides: ModelOverrides = { api };
  const input: NonNullable<ModelOverrides['input']> = {};
  if (values['image-input']) input.image = true;
  if (values['pdf-input']) input.pdf = true;
  if (Object.keys(input).length > 0) overrides.input = input;
  const model = resolveModel(values.model ?? DEFAULT_MODEL[api], overrides);
  if (model.api !== api) {
    throw new CliError(
      `model '${model.id}' speaks ${model.api}, not ${api}; pick a matching --provider`,
      EXIT_USAGE,
    );
  }
  const maxTurns = parseIntOption(values['max-turns'], '--max-turns');
  const workspaceRoot = path.resolve(values.workspace ?? process.cwd());

  let provider: Provider;
  try {
    const keyVar = values['api-key-env'];
    const apiKey = keyVar ? env[keyVar] : undefined;
    if (keyVar && !apiKey) throw new CliError(`--api-key-env ${keyVar}: that variable is not set`);
    provider = createProvider({
      api,
      ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
      ...(apiKey ? { apiKey } : {}),
    });
  } catch (err) {
    if (isPantoError(err, 'ERR_PROVIDER_AUTH')) {
      throw new CliError(
        `no API key for ${api}: set ${ENDPOINTS[api].keyEnv.join(' or ')} (or pass --api-key-env VAR, or --base-url for a local server)`,
      );
    }
    throw err;
  }

  const luaTools = await LuaToolSource.fromDir(
    (values.tools ?? []).map((d) => path.resolve(d)),
    {
      includeBuiltins: true,
      workspaceRoot,
      log: (e) => {
        if (e.level === 'error' || e.level === 'warn') io.err(`[lua ${e.level}] ${e.message}`);
      },
    },
  );
  for (const e of luaTools.loadErrors)
    io.err(`warning: ${e.file}${e.line === undefined ? '' : `:${e.line}`}: ${e.message}`);
  const mcp = await startMcpSources(values.mcp ?? [], io);
  const tools = new ToolRegistry([luaTools, ...mcp]);

  let session: SessionLog;
  if (values.resume) {
    session = await SessionLog.open(path.resolve(values.resume));
  } else {
    const file =
      values.session !== undefined
        ? path.resolve(values.session)
        : path.join(
            workspaceRoot,
            '.panto',
            'sessions',
            `${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`,
          );
    await mkdir(path.dirname(file), { recursive: true });
    session = await SessionLog.create(file, { model: model.id, workspace: workspaceRoot });
  }

  const agent = new Agent({
    provider,
    model,
    tools,
    session,
    workspaceRoot,
    ...(values.system ? { system: values.system } : {}),
    ...(maxTurns === undefined ? {} : { maxTurns }),
    onEvent: renderEvent(io),
  });

  if (!model.known) {
    const takes = ['text', ...(model.input.image ? ['images'] : []), ...(model.input.pdf ? ['PDFs'] : [])];
    io.err(
      `note: model '${model.id}' is not in the catalog: it is sent ${takes.join(', ')} only` +
        (takes.length < 3 ? ' (declare more with --image-input / --pdf-input if it takes them)' : ''),
    );
  } else if (!model.input.image) {
    io.err(`note: model '${model.id}' does not accept image input; pictures will be described, not shown`);
  }
  io.err(
    `panto chat: ${model.id} via ${api}; session ${session.path}${values.resume ? ` (resumed, ${agent.messages.length} messages)` : ''}`,
  );
  io.err('type /help for help, /exit to leave');

  const interactive = Boolean(process.stdin.isTTY);
  const rl = readline.createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: interactive,
    completer: (line: string, cb: (err: Error | null, result: [string[], string]) => void) => {
      completeMention(line, process.cwd()).then(
        (r) => cb(null, r),
        () => cb(null, [[], line]),
      );
    },
  });
  rl.on('SIGINT', () => {
    if (agent.running) {
      agent.abort();
      io.err('\n(stopping the turn)');
    } else {
      rl.close();
    }
  });
  if (interactive) {
    rl.setPrompt('> ');
    rl.prompt();
  }

  let failures = 0;
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === '') {
        if (interactive) rl.prompt();
        continue;
      }
      if (line === '/exit' || line === '/quit') break;
      if (line === '/help') {
        io.out(chatHelp);
        if (interactive) rl.prompt();
        continue;
      }
      const mentions = await resolveMentions(line, {
        cwd: process.cwd(),
        accepts: { image: model.input.image, pdf: model.input.pdf },
        modelId: model.id,
      });
      for (const note of mentions.notes) io.err(`note: ${note}`);
      if (mentions.attached.length > 0) io.err(`attached: ${mentions.attached.join(', ')}`);
      const result = await agent.prompt(mentions.content);
      process.stdout.write('\n');
      if (result.error) {
        failures++;
        io.err(`error: ${result.error.message}${result.error.code ? ` [${result.error.code}]` : ''}`);
      } else if (result.stopReason === 'max_turns') {
        io.err(`stopped: the turn limit was reached while the model still wanted tools run`);
      } else if (result.stopReason !== 'end' && result.stopReason !== 'aborted') {
        io.err(`stopped: ${result.stopReason}`);
      }
      if (interactive) rl.prompt();
    }
  } finally {
    rl.close();
    session.close();
    await Promise.all(mcp.map((m) => m.close()));
    io.err(`session saved: ${session.path}`);
  }
  return failures > 0 ? 1 : 0;
}

function pickApi(
  provider: string | undefined,
  baseUrl: string | undefined,
  env: NodeJS.ProcessEnv,
): ModelApi {
  if (provider !== undefined) return parseProvider(provider);
  if (baseUrl !== undefined) return 'openai-chat';
  if (env.ANTHROPIC_API_KEY) return 'anthropic-messages';
  if (env.OPENAI_API_KEY) return 'openai-responses';
  if (env.GEMINI_API_KEY || env.GOOGLE_API_KEY) return 'gemini';
  throw new CliError(
    'no provider configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or pass --provider/--base-url',
  );
}

function renderEvent(io: CliIo): (e: AgentEvent) => void {
  let midLine = false;
  const write = (s: string) => {
    process.stdout.write(s);
    midLine = !s.endsWith('\n');
  };
  const line = (s: string) => {
    if (midLine) write('\n');
    io.err(s);
  };
  return (e) => {
    switch (e.type) {
      case 'message_delta':
        if (e.delta.type === 'text_delta') write(e.delta.text);
        break;
      case 'tool_call_start':
        line(`[tool] ${e.toolName}(${JSON.stringify(e.input)})`);
        break;
      case 'tool_media_processed':
        line(
          `[tool] ${e.toolName}: ${e.mediaType} ${e.width}x${e.height}${e.changes.length ? ` (${e.changes.join(', ')})` : ''}`,
        );
        break;
      case 'tool_media_dropped':
        line(`[tool] ${e.toolName}: attachment dropped: ${e.note}`);
        break;
      case 'tool_call_end':
        line(`[tool] ${e.toolName} ${e.isError ? 'failed' : 'done'} in ${Math.round(e.durationMs)} ms`);
        break;
      case 'warning':
        line(`warning: ${e.warning.message}`);
        break;
      case 'retry':
        line(`retrying in ${(e.delayMs / 1000).toFixed(1)}s (attempt ${e.attempt}): ${e.error.message}`);
        break;
      case 'compaction_end':
        line(`[compacted the conversation: ~${e.tokensBefore} -> ~${e.tokensAfter} tokens]`);
        break;
      default:
        break;
    }
  };
}

/** Start the MCP servers of each `--mcp` config file; servers that fail are reported and left out. */
async function startMcpSources(files: string[], io: CliIo): Promise<McpToolSource[]> {
  const sources: McpToolSource[] = [];
  for (const [i, file] of files.entries()) {
    const source = await McpToolSource.fromConfig(path.resolve(file), {
      name: files.length > 1 ? `mcp#${i + 1}` : 'mcp',
      log: (e) => {
        if (e.level !== 'debug') io.err(`[mcp ${e.server}] ${e.message}`);
      },
    });
    const report = await source.start();
    if (report.started.length > 0)
      io.err(`mcp: ${report.started.join(', ')} started (${source.list().length} tools)`);
    sources.push(source);
  }
  return sources;
}
