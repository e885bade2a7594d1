/**
 * `panto chat`: an interactive agent over a provider with the Lua tools; `@path` mentions, Tab completion, slash
 * commands, steering, a saved session. Exit 0, or 1 when a turn failed (when the input ended; Ctrl-C exits 0).
 */
import type { Stats } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AssistantMessage } from '../../conversation.js';
import { isPantoError } from '../../errors.js';
import { CAPABILITIES, LuaToolSource } from '../../lua/index.js';
import { McpToolSource } from '../../mcp/index.js';
import type { ModelInfo, ThinkingLevel } from '../../providers/index.js';
import { createProvider, ENDPOINTS, type Provider } from '../../providers/index.js';
import { notRegular } from '../../regular-file.js';
import { SessionLog, type SessionWriter } from '../../session/index.js';
import { ToolRegistry } from '../../tool-source.js';
import { cliApiKey } from '../api-key.js';
import { ChatApprover } from '../chat/approval-prompt.js';
import { chatCommands } from '../chat/chat-commands.js';
import { ChatLoop } from '../chat/chat-loop.js';
import { ChatRenderer } from '../chat/chat-renderer.js';
import { ChatSession } from '../chat/chat-session.js';
import { loadContextFiles, systemWithContext } from '../chat/context-files.js';
import { chooseModel, pickApi, THINKING_LEVELS } from '../chat/model-choice.js';
import { Terminal } from '../chat/terminal.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { CliIo } from '../cli-io.js';
import { parseIntOption } from '../parse-options.js';
import { openStore, shownStore } from '../session-store-option.js';
import { describeSystemError, isSystemError, systemErrorReason } from '../system-error.js';
import { formatDollars, formatUsage, messageCost } from '../usage-format.js';

export const chatHelp = `Usage: panto chat [options]

An interactive agent with the Lua tools (read, plus --tools DIR). Type a line to
send it; '@path' attaches a file (images and PDFs as attachments, other files as
text; '@"a b.png"' for names with spaces; Tab completes paths). Text typed while
an answer streams is queued and delivered before the next model request.
Ctrl-C stops the running turn (a second Ctrl-C, or Ctrl-C at an empty prompt,
exits); Ctrl-D exits. The session is saved as you go (the file is created when
the first message is sent). AGENTS.md / CLAUDE.md files from the repository root
down to the workspace are added to the system prompt.

Approval: Lua tools that write files, run commands or fetch URLs (and MCP servers
configured with "needsApproval": true) ask before each call, showing the call (the
command line, or the path and what a write changes): y runs it, n declines (a
reason may follow; the model reads it), a runs it and every later call of that
tool in this chat. Without a terminal such calls are declined unless --allow or
--yes allows them.

Commands: /help, /exit, /model, /retry, /compact, /session, /thinking (see /help).
After each answer: its tokens (cache reads/writes apart) and cost at list
prices, and the session's totals.

Options:
  --provider P          anthropic | openai (Responses) | openai-chat | openai-responses | gemini
                        (default: the first of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY that is set;
                        openai-chat when only --base-url is given)
  --model M             model id (default: a current model of the provider); a catalog model of another
                        vendor is refused unless --base-url names a gateway that serves it
  --base-url URL        another server speaking the provider's protocol (llama.cpp, vLLM, Ollama,
                        OpenRouter...; with or without its /v1). The provider's key variable is not
                        sent to another host than the provider's own unless --api-key-env names it
  --api-key-env VAR     send the API key in VAR (to --base-url's host too)
  --context-window N    the model's context window in tokens (for models the catalog does not know, e.g. an
                        8192-token llama.cpp server; default 128000 for those); compaction keeps within it
  --tools DIR           also load Lua tools from DIR (repeatable)
  --mcp FILE            also use the tools of the MCP servers in FILE ({"mcpServers": {...}}; repeatable)
  --workspace DIR       workspace root the tools may read (default: current directory)
  --resume FILE         continue a saved session (with --store: the session's id)
  --session FILE        where to save a new session, a path that does not exist yet (default:
                        .panto/sessions/<time>.jsonl in the workspace)
  --store STORE         keep the session in a session store: a PostgreSQL URL (postgres://user@host/db)
                        or a folder of JSONL files; a new session gets an id, --resume ID continues one
  --thinking LEVEL      reasoning effort: off | low | medium | high (Anthropic extended thinking, OpenAI
                        reasoning effort, Gemini thinking budget); thinking text is shown dimmed and folded
  --no-prompt-cache     no Anthropic cache breakpoints (prompt caching is on by default)
  --system TEXT         system prompt (the context files follow it)
  --no-context-files    do not add AGENTS.md / CLAUDE.md to the system prompt
  --max-turns N         model requests per prompt (default 50)
  --allow LIST          run calls that need approval without asking when the tool, or every capability it
                        declares, is in LIST (comma-separated; e.g. exec,write_file or a tool name; repeatable)
  --yes                 run every call that needs approval without asking
  --image-input         declare that the model accepts images (for models the catalog does not know)
  --pdf-input           declare that the model accepts PDFs
  -h, --help            show this help
`;

export async function runChat(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    allowNegative: true,
    options: {
      provider: { type: 'string' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      'api-key-env': { type: 'string' },
      'context-window': { type: 'string' },
      tools: { type: 'string', multiple: true },
      workspace: { type: 'string' },
      mcp: { type: 'string', multiple: true },
      resume: { type: 'string' },
      session: { type: 'string' },
      store: { type: 'string' },
      system: { type: 'string' },
      thinking: { type: 'string' },
      'prompt-cache': { type: 'boolean', default: true },
      'context-files': { type: 'boolean', default: true },
      'max-turns': { type: 'string' },
      'image-input': { type: 'boolean' },
      'pdf-input': { type: 'boolean' },
      allow: { type: 'string', multiple: true },
      yes: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(chatHelp);
    return 0;
  }
  const env = process.env;
  if (values['base-url'] !== undefined) checkBaseUrl(values['base-url']);
  const api = pickApi(values.provider, values['base-url'], env);
  const thinking = parseThinking(values.thinking);
  const maxTurns = parseIntOption(values['max-turns'], '--max-turns');
  const contextWindow = parseIntOption(values['context-window'], '--context-window');
  // Every input is checked before anything starts (a session opened, an MCP server spawned): a usage error then
  // leaves nothing running that would keep the process alive.
  const workspaceRoot = path.resolve(values.workspace ?? process.cwd());
  if (values.workspace !== undefined) await checkWorkspace(values.workspace);
  if (values.store !== undefined && values.session !== undefined)
    throw new CliError(
      '--store and --session: a session is either in a store or in a file of its own',
      EXIT_USAGE,
    );
  if (values.session !== undefined && values.resume === undefined) await checkNewSession(values.session);
  const mcpFiles = values.mcp ?? [];
  const mcpConfigs: McpToolSource[] = [];
  for (const [i, file] of mcpFiles.entries())
    mcpConfigs.push(await loadMcpSource(file, i, mcpFiles.length, io));

  // From here on, what was opened or started is closed again when a later step throws.
  const mcp: McpToolSource[] = [];
  let resumed: SessionWriter | undefined;
  let chat: ChatSession | undefined;
  let setupDone = false;
  const store = values.store === undefined ? undefined : await openStore(values.store);
  try {
    if (values.resume && store) {
      resumed = await store.open(values.resume, { eager: true });
    } else if (values.resume) {
      try {
        resumed = await SessionLog.open(path.resolve(values.resume), { eager: true });
      } catch (err) {
        if (isSystemError(err)) throw new CliError(describeSystemError(err, values.resume));
        throw err;
      }
    }
    const choice = {
      api,
      baseUrl: values['base-url'],
      imageInput: values['image-input'],
      pdfInput: values['pdf-input'],
      contextWindow,
      reasoning: thinking !== undefined && thinking !== 'off',
    };
    // A resumed chat goes on with the session's current model (the last /model), unless --model says otherwise.
    const model: ModelInfo = chooseModel({ ...choice, id: values.model ?? resumed?.model });

    let provider: Provider;
    try {
      const key = cliApiKey(api, values['base-url'], values['api-key-env'], env);
      if (key.notice !== undefined) io.err(key.notice);
      provider = createProvider({
        api,
        ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
        ...(key.apiKey ? { apiKey: key.apiKey } : {}),
        // The key is chosen above (api-key.ts), never taken from the environment by the library.
        env: {},
      });
    } catch (err) {
      if (isPantoError(err, 'ERR_PROVIDER_AUTH')) {
        throw new CliError(
          `no API key for ${api}: set ${ENDPOINTS[api].keyEnv.join(' or ')} (or pass --api-key-env VAR, or --base-url for a local server)`,
        );
      }
      throw err;
    }

    const toolDirs = (values.tools ?? []).map((d) => path.resolve(d));
    // Every capability is granted: a call of a tool that writes, runs commands or fetches is asked about first.
    const luaTools = await LuaToolSource.fromDir(toolDirs, {
      includeBuiltins: true,
      capabilities: CAPABILITIES,
      workspaceRoot,
      log: (e) => {
        if (e.level === 'error' || e.level === 'warn') io.err(`[lua ${e.level}] ${e.message}`);
      },
    });
    for (const e of luaTools.loadErrors)
      io.err(`warning: ${e.file}${e.line === undefined ? '' : `:${e.line}`}: ${e.message}`);
    for (const source of mcpConfigs) {
      mcp.push(source);
      const report = await source.start();
      if (report.started.length > 0)
        io.err(`mcp: ${report.started.join(', ')} started (${source.list().length} tools)`);
    }
    const tools = new ToolRegistry([luaTools, ...mcp]);

    const contextFiles = values['context-files']
      ? await loadContextFiles(workspaceRoot, (problem) => io.err(`warning: ${problem}`))
      : [];
    const system = systemWithContext(values.system, contextFiles);

    const newPath =
      values.session !== undefined
        ? path.resolve(values.session)
        : path.join(
            workspaceRoot,
            '.panto',
            'sessions',
            `${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`,
          );

    const terminal = new Terminal({ stdout: process.stdout, stderr: process.stderr });
    let loop: ChatLoop | undefined;
    const approver = new ChatApprover({
      allow: allowList(values.allow),
      yes: values.yes === true,
      interactive: Boolean(process.stdin.isTTY),
      ask: (question, signal) => loop?.ask(question, signal) ?? Promise.resolve(null),
      say: (text) => terminal.line(text),
      workspaceRoot,
    });
    const renderer = new ChatRenderer(terminal, {
      usageLine: (m) => (m.usage === undefined ? undefined : turnUsageLine(m, session)),
    });
    const session: ChatSession = new ChatSession({
      provider,
      model,
      tools,
      workspaceRoot,
      system,
      maxTurns,
      thinking,
      promptCache: values['prompt-cache'],
      ...(resumed ? { resumed } : { newPath }),
      ...(store && values.store !== undefined
        ? { createInStore: (header) => store.create(header), storeName: shownStore(values.store) }
        : {}),
      onEvent: (e) => renderer.handle(e),
      notify: (text) => terminal.line(text),
      approveToolCall: approver.approve,
    });
    chat = session;

    if (resumed) for (const w of resumed.warnings) chat.notifyOnce(`load:${w.message}`, `note: ${w.message}`);
    if (!model.known) {
      const takes = ['text', ...(model.input.image ? ['images'] : []), ...(model.input.pdf ? ['PDFs'] : [])];
      chat.notifyOnce(
        `unknown-model:${model.id}:${takes.join(',')}`,
        `note: model '${model.id}' is not in the catalog: it is sent ${takes.join(', ')} only` +
          (takes.length < 3 ? ' (declare more with --image-input / --pdf-input if it takes them)' : ''),
      );
    } else if (!model.input.image) {
      chat.notifyOnce(
        `no-images:${model.id}`,
        `note: model '${model.id}' does not accept image input; pictures will be described, not shown`,
      );
    }
    const files = contextFiles.map((f) => path.relative(process.cwd(), f.path) || f.path);
    io.err(
      `panto chat: ${model.id} via ${api}; session ${chat.path}` +
        (resumed ? ` (resumed, ${chat.agent.messages.length} messages)` : '') +
        (files.length > 0 ? `; context: ${files.join(', ')}` : ''),
    );
    io.err('type /help for help, /exit to leave');

    loop = new ChatLoop({
      chat,
      renderer,
      terminal,
      commands: chatCommands({ contextFiles: files, choice }),
      input: process.stdin,
      output: process.stdout,
      cwd: process.cwd(),
    });
    setupDone = true;
    try {
      return await loop.run();
    } finally {
      terminal.dispose();
      await chat.close();
      if (chat.log) io.err(`session saved: ${chat.path}${usageSummary(chat)}`);
    }
  } finally {
    if (!setupDone) {
      if (chat) await chat.close();
      else await resumed?.close();
    }
    await Promise.all(mcp.map((m) => m.close()));
    await store?.close();
  }
}

function usageSummary(chat: ChatSession): string {
  const u = chat.usage;
  return u.inputTokens + u.outputTokens > 0 ? ` (${formatUsage(u)}${sessionCost(chat)})` : '';
}

/** `[tokens: 1,200 in · 34 out · $0.0040 | session: … · $0.0123]` after an answer. */
function turnUsageLine(m: AssistantMessage, chat: ChatSession): string {
  const usage = m.usage as NonNullable<AssistantMessage['usage']>;
  const cost = messageCost(m, chat.model.id);
  return (
    `[tokens: ${formatUsage(usage)}${cost === undefined ? '' : ` · ${formatDollars(cost)}`}` +
    ` | session: ${formatUsage(chat.usage)}${sessionCost(chat)}]`
  );
}

function sessionCost(chat: ChatSession): string {
  const u = chat.usage;
  if (u.unpricedRequests > 0 && u.cost === 0) return '';
  return ` · ${formatDollars(u.cost)}${u.unpricedRequests > 0 ? ' (priced requests only)' : ''}`;
}

/**
 * `--session FILE` must name a file that does not exist yet (it is created on the first message): an existing one —
 * a session, a directory, a FIFO that would block the open — is refused before the chat starts.
 */
async function checkNewSession(file: string): Promise<void> {
  try {
    await lstat(file);
  } catch (err) {
    if (isSystemError(err) && err.code === 'ENOENT') return;
    // The path is to be created: `cannot create x/s.jsonl: a part of the path is not a directory`.
    if (isSystemError(err)) throw new CliError(`--session: cannot create ${file}: ${systemErrorReason(err)}`);
    throw err;
  }
  throw new CliError(
    `--session ${file}: already exists (a new session is written to a new file; --resume ${file} continues a saved one)`,
    EXIT_USAGE,
  );
}

/** `--base-url` must be an http(s) URL: anything else would only fail on every request, after retries. */
function checkBaseUrl(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
    throw new CliError(`--base-url expects an http:// or https:// URL, got '${shown}'`, EXIT_USAGE);
  }
}

/** `--workspace DIR` must be a directory (a file there would only fail later, at the first message). */
async function checkWorkspace(dir: string): Promise<void> {
  let info: Stats;
  try {
    info = await stat(dir);
  } catch (err) {
    if (isSystemError(err)) throw new CliError(`--workspace: ${describeSystemError(err, dir)}`);
    throw err;
  }
  if (!info.isDirectory()) {
    throw new CliError(`--workspace ${dir}: ${notRegular(info) ?? 'a regular file'}, not a directory`);
  }
}

/** `--allow a,b --allow c` as one set of tool names and capabilities. */
function allowList(values: string[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const v of values ?? []) {
    for (const item of v.split(',')) {
      const t = item.trim();
      if (t !== '') out.add(t);
    }
  }
  return out;
}

/** `--thinking` value; a usage error names the levels. */
function parseThinking(value: string | undefined): ThinkingLevel | undefined {
  if (value === undefined) return undefined;
  if ((THINKING_LEVELS as readonly string[]).includes(value)) return value as ThinkingLevel;
  throw new CliError(`--thinking expects one of ${THINKING_LEVELS.join(', ')}; got '${value}'`, EXIT_USAGE);
}

/**
 * The tool source of the `--mcp` config `file` (the `index`-th of `count`), loaded and checked but not started (nothing
 * is spawned yet). The config reader refuses (`ERR_MCP_CONFIG`, reported as is) a file that is not a regular file or is
 * over its cap, without blocking on a FIFO.
 */
async function loadMcpSource(file: string, index: number, count: number, io: CliIo): Promise<McpToolSource> {
  return McpToolSource.fromConfig(file, {
    name: count > 1 ? `mcp#${index + 1}` : 'mcp',
    log: (e) => {
      if (e.level !== 'debug') io.err(`[mcp ${e.server}] ${e.message}`);
    },
  });
}
