/**
 * `panto chat`: an interactive agent over a provider with the Lua tools — an input editor, Markdown answers, inline
 * pictures, `@path` mentions, slash commands, steering, a saved session; `-p PROMPT` (and `panto run PROMPT`) for one
 * prompt with only the result on stdout. Exit 0, or 1 when a turn failed (when the input ended; Ctrl-C exits 0).
 */
import type { Stats } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AssistantMessage } from '../../conversation.js';
import { isPantoError } from '../../errors.js';
import { CAPABILITIES, LuaToolSource } from '../../lua/index.js';
import { McpToolSource } from '../../mcp/index.js';
import type { ModelApi, ModelInfo, ThinkingLevel } from '../../providers/index.js';
import { createProvider, ENDPOINTS, type Provider } from '../../providers/index.js';
import { notRegular } from '../../regular-file.js';
import { SessionLog, type SessionWriter } from '../../session/index.js';
import { ToolRegistry } from '../../tool-source.js';
import { cliApiKey } from '../api-key.js';
import { ChatApprover } from '../chat/approval-prompt.js';
import { chatCommands } from '../chat/chat-commands.js';
import { ChatLoop } from '../chat/chat-loop.js';
import { ChatRenderer } from '../chat/chat-renderer.js';
import { ChatSession, endpointOf, type SessionEndpoint } from '../chat/chat-session.js';
import { loadContextFiles } from '../chat/context-files.js';
import { chooseModel, pickApi, THINKING_LEVELS } from '../chat/model-choice.js';
import { OUTPUT_FORMATS, type OutputFormat, runOneShot } from '../chat/one-shot.js';
import { listSessions, newSessionPath } from '../chat/session-files.js';
import { buildSystemPrompt } from '../chat/system-prompt.js';
import { Terminal } from '../chat/terminal.js';
import { cliAdvice } from '../cli-advice.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { CliIo } from '../cli-io.js';
import { loadConfig, type PantoConfig } from '../config.js';
import { formatLoadError, isLoadErrorLog } from '../load-errors.js';
import { parseIntOption } from '../parse-options.js';
import { openStore, shownStore } from '../session-store-option.js';
import { describeSystemError, isSystemError, systemErrorReason } from '../system-error.js';
import { recentTranscript } from '../transcript.js';
import { detectImageProtocol } from '../tty/image-protocol.js';
import { historyPath, InputHistory } from '../tty/input-history.js';
import { LineEditor } from '../tty/line-editor.js';
import { TerminalInput } from '../tty/terminal-input.js';
import { formatDollars, formatUsage, messageCost } from '../usage-format.js';

const OPTIONS_HELP = `Options:
  --provider P          anthropic | openai (Responses) | openai-chat | openai-responses | gemini
                        (default: the config file's, else the first of ANTHROPIC_API_KEY,
                        OPENAI_API_KEY, GEMINI_API_KEY that is set; openai-chat when only --base-url is given)
  --model M             model id (default: the config file's, else a current model of the provider); a
                        catalog model of another vendor is refused unless --base-url names a gateway
  --base-url URL        another server speaking the provider's protocol (llama.cpp, vLLM, Ollama,
                        OpenRouter...; with or without its /v1). The provider's key variable is not
                        sent to another host than the provider's own unless --api-key-env names it
  --api-key-env VAR     send the API key in VAR (to --base-url's host too)
  --context-window N    the model's context window in tokens (for models the catalog does not know, e.g. an
                        8192-token llama.cpp server; default 128000 for those); compaction keeps within it
  --tools DIR           also load Lua tools from DIR (repeatable)
  --mcp FILE            also use the tools of the MCP servers in FILE ({"mcpServers": {...}}; repeatable)
  --workspace DIR       workspace root the tools may read (default: current directory)
  -c, --continue        continue the latest session of this workspace
  --resume [FILE]       continue a saved session (without FILE: choose one of this workspace's; with
                        --store: the session's id)
  --session FILE        where to save a new session, a path that does not exist yet (default:
                        .panto/sessions/<time>.jsonl in the workspace)
  --store STORE         keep the session in a session store: a PostgreSQL URL (postgres://user@host/db)
                        or a folder of JSONL files; a new session gets an id, --resume ID continues one
  --thinking LEVEL      reasoning effort: off | low | medium | high (Anthropic extended thinking, OpenAI
                        reasoning effort, Gemini thinking budget); thinking text is shown dimmed and folded
  --no-prompt-cache     no Anthropic cache breakpoints (prompt caching is on by default)
  --uploads             upload each image and PDF once to the provider's Files API (Anthropic, OpenAI,
                        Gemini; OpenAI Chat: PDFs only) and send a reference instead of its bytes; the files
                        stay in your provider account until deleted (panto session FILE --delete-uploads);
                        "uploads": true in the config file does the same, --no-uploads turns it off
  --system TEXT         instructions instead of the built-in ones (environment, tools and context files follow)
  --no-context-files    do not add AGENTS.md / CLAUDE.md to the system prompt
  --max-turns N         model requests per prompt (default 50)
  --max-retry-wait S    longest wait a provider may ask for before a retry, in seconds (default 60)
  --allow LIST          run calls that need approval without asking when the tool, or every capability it
                        declares, is in LIST (comma-separated; e.g. exec,write_file or a tool name; repeatable)
  --yes                 run every call that needs approval without asking
  --image-input         declare that the model accepts images (for models the catalog does not know)
  --pdf-input           declare that the model accepts PDFs
  -h, --help            show this help

One prompt (panto chat -p PROMPT, or panto run PROMPT):
  -p, --print PROMPT    send PROMPT, print only the final answer on stdout, exit (1 when the run failed);
                        '-' reads the prompt from stdin
  --output FORMAT       text (default) | json (one result object) | stream-json (one event per line)
  -v, --verbose         also show tool calls, retries and usage on stderr

Config file: $PANTO_CONFIG, else ~/.config/panto/config.json (provider, baseUrl, model, apiKeyEnv,
thinking, uploads, and "models" with contextWindow, maxOutputTokens, input, price, reasoning); see docs/cli.md.
`;

export const chatHelp = `Usage: panto chat [options]
       panto chat -p PROMPT [options]

An interactive coding agent with the standard tools (read, ls, find, grep, edit,
write, bash; written in Lua) plus --tools DIR and --mcp FILE. Enter sends; Alt+Enter, Shift+Enter or \\ before Enter start a new line;
a paste is one message. '@path' attaches a file (images and PDFs as
attachments, other files as text; Tab completes paths and /commands). Text sent
while an answer streams is queued and delivered before the next model request.
Esc or Ctrl-C stops the running turn (a second Ctrl-C, or Ctrl-C at an empty
prompt, exits); Ctrl-D exits; Up/Down recall earlier messages. The session is
saved as you go (the file is created when the first message is sent).
AGENTS.md / CLAUDE.md files from the repository root down to the workspace are
added to the system prompt.

Approval: tools that write files, run commands or fetch URLs (edit, write, bash,
and MCP servers configured with "needsApproval": true) ask before each call,
showing it (the command line, or the path and the change): y runs it, n
declines (a reason may follow; the model reads it), a runs it and every later
call of that tool in this chat. Without a terminal (and with -p) such calls are
declined unless --allow or --yes allows them.

Commands: /help, /exit, /new, /model, /retry, /compact, /session, /thinking (see /help).

${OPTIONS_HELP}`;

export const runHelp = `Usage: panto run [options] PROMPT...

Send one prompt to the agent (the words of PROMPT joined by spaces; '-' or none
reads it from stdin), print only the final answer on stdout and exit: 0 when the
run ended normally, 1 when it failed. The same as 'panto chat -p PROMPT'.

${OPTIONS_HELP}`;

const OPTIONS = {
  provider: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'api-key-env': { type: 'string' },
  'context-window': { type: 'string' },
  tools: { type: 'string', multiple: true },
  workspace: { type: 'string' },
  mcp: { type: 'string', multiple: true },
  continue: { type: 'boolean', short: 'c' },
  resume: { type: 'string' },
  session: { type: 'string' },
  store: { type: 'string' },
  system: { type: 'string' },
  thinking: { type: 'string' },
  'prompt-cache': { type: 'boolean', default: true },
  uploads: { type: 'boolean' },
  'context-files': { type: 'boolean', default: true },
  'max-turns': { type: 'string' },
  'max-retry-wait': { type: 'string' },
  'image-input': { type: 'boolean' },
  'pdf-input': { type: 'boolean' },
  allow: { type: 'string', multiple: true },
  yes: { type: 'boolean' },
  print: { type: 'string', short: 'p' },
  output: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function runChat(argv: string[], io: CliIo): Promise<number> {
  return chatCommand(argv, io, 'chat');
}

export function runRun(argv: string[], io: CliIo): Promise<number> {
  return chatCommand(argv, io, 'run');
}

/** `--resume` may come without a file: it then takes the empty string (a picker). */
function withOptionalResume(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (a === '--resume' && (next === undefined || next.startsWith('-'))) out.push('--resume=');
    else out.push(a);
  }
  return out;
}

async function chatCommand(argv: string[], io: CliIo, mode: 'chat' | 'run'): Promise<number> {
  const { values, positionals } = parseArgs({
    args: withOptionalResume(argv),
    allowPositionals: mode === 'run',
    allowNegative: true,
    options: OPTIONS,
  });
  if (values.help) {
    io.out(mode === 'run' ? runHelp : chatHelp);
    return 0;
  }
  const env = process.env;
  const config = await loadConfig(env);

  // One prompt: `-p TEXT` or `panto run TEXT`.
  let prompt: string | undefined = mode === 'run' ? positionals.join(' ') : values.print;
  if (mode === 'run' && prompt === '') prompt = '-';
  if (prompt === '-') prompt = await readStdinPrompt();
  const oneShot = prompt !== undefined;
  if (oneShot && prompt?.trim() === '')
    throw new CliError('the prompt is empty (pass it as -p PROMPT, or on stdin with -p -)', EXIT_USAGE);
  const output = parseOutput(values.output, oneShot);

  if (values['base-url'] !== undefined) checkBaseUrl(values['base-url'], '--base-url');
  const thinkingFlag = parseThinking(values.thinking);
  const maxTurns = parseIntOption(values['max-turns'], '--max-turns');
  const contextWindow = parseIntOption(values['context-window'], '--context-window');
  const maxRetryWait = parseIntOption(values['max-retry-wait'], '--max-retry-wait');
  // Every input is checked before anything starts (a session opened, an MCP server spawned): a usage error then
  // leaves nothing running that would keep the process alive.
  const workspaceRoot = path.resolve(values.workspace ?? process.cwd());
  if (values.workspace !== undefined) await checkWorkspace(values.workspace);
  const resuming = values.resume !== undefined || values.continue === true;
  if (values.resume !== undefined && values.continue)
    throw new CliError('--continue and --resume both name a session to continue; pass one', EXIT_USAGE);
  if (values.session !== undefined && resuming)
    throw new CliError(
      '--session names a new session; --resume / --continue continue a saved one',
      EXIT_USAGE,
    );
  if (values.store !== undefined && values.session !== undefined)
    throw new CliError(
      '--store and --session: a session is either in a store or in a file of its own',
      EXIT_USAGE,
    );
  if (values.store !== undefined && (values.continue || values.resume === ''))
    throw new CliError(
      'with --store, name the session to continue: --resume ID (panto session list --store STORE lists them)',
      EXIT_USAGE,
    );
  if (values.session !== undefined) await checkNewSession(values.session);
  const mcpFiles = values.mcp ?? [];
  const mcpConfigs: McpToolSource[] = [];
  for (const [i, file] of mcpFiles.entries())
    mcpConfigs.push(await loadMcpSource(file, i, mcpFiles.length, io));

  const interactive =
    !oneShot && Boolean(process.stdin.isTTY && process.stdout.isTTY && process.stderr.isTTY);
  const terminal = new Terminal(
    // One prompt with --verbose: the chat's own view goes to stderr, stdout is the result alone.
    oneShot
      ? { stdout: process.stderr, stderr: process.stderr }
      : { stdout: process.stdout, stderr: process.stderr },
  );
  const history = interactive ? InputHistory.load(historyPath(env)) : undefined;
  let input: TerminalInput | undefined;

  // From here on, what was opened or started is closed again when a later step throws.
  const mcp: McpToolSource[] = [];
  let resumed: SessionWriter | undefined;
  let chat: ChatSession | undefined;
  let setupDone = false;
  const store = values.store === undefined ? undefined : await openStore(values.store);
  try {
    const resumeFile =
      store === undefined
        ? await resolveResume(values.resume, values.continue === true, workspaceRoot, interactive, () => {
            input = new TerminalInput({
              input: process.stdin,
              output: process.stdout,
              terminal,
              editor: new LineEditor(history),
            });
            return input;
          })
        : undefined;
    if (store !== undefined && values.resume) {
      resumed = await store.open(values.resume, { eager: true });
    } else if (resumeFile !== undefined) {
      try {
        resumed = await SessionLog.open(path.resolve(resumeFile), { eager: true });
      } catch (err) {
        if (isSystemError(err)) throw new CliError(describeSystemError(err, resumeFile));
        throw err;
      }
    }
    const recorded = resumed ? endpointOf(resumed) : undefined;
    const where = chooseEndpoint(values, recorded, resumed !== undefined, config, env);
    const thinking = thinkingFlag ?? recorded?.thinking ?? (resumed ? undefined : config.thinking);
    const choice = {
      api: where.api,
      baseUrl: where.baseUrl,
      imageInput: values['image-input'],
      pdfInput: values['pdf-input'],
      contextWindow,
      reasoning: thinking !== undefined && thinking !== 'off',
      models: config.models,
    };
    // A resumed chat goes on with the session's current model (the last /model), unless --model says otherwise.
    const modelId =
      values.model ??
      (resumed ? (resumed.model ?? recorded?.model) : undefined) ??
      (where.fromConfig ? config.model : undefined);
    const model: ModelInfo = chooseModel({ ...choice, id: modelId });

    let provider: Provider;
    try {
      const keyVar = values['api-key-env'] ?? config.apiKeyEnv;
      if (values['api-key-env'] === undefined && keyVar && !env[keyVar])
        throw new CliError(`config ${config.file}: apiKeyEnv ${keyVar}: that variable is not set`);
      const key = cliApiKey(where.api, where.baseUrl, keyVar, env);
      if (key.notice !== undefined) io.err(key.notice);
      provider = createProvider({
        api: where.api,
        ...(where.baseUrl ? { baseUrl: where.baseUrl } : {}),
        ...(key.apiKey ? { apiKey: key.apiKey } : {}),
        ...(maxRetryWait !== undefined ? { retry: { maxRetryAfterMs: maxRetryWait * 1000 } } : {}),
        // The key is chosen above (api-key.ts), never taken from the environment by the library.
        env: {},
      });
    } catch (err) {
      if (isPantoError(err, 'ERR_PROVIDER_AUTH')) {
        throw new CliError(
          `no API key for ${where.api}: set ${ENDPOINTS[where.api].keyEnv.join(' or ')} (or pass --api-key-env VAR, or --base-url for a local server)`,
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
        if ((e.level === 'error' || e.level === 'warn') && !isLoadErrorLog(e))
          io.err(`[lua ${e.level}] ${e.message}`);
      },
    });
    for (const e of luaTools.loadErrors) io.err(`warning: ${formatLoadError(e)}`);
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
    const system = buildSystemPrompt({
      custom: values.system,
      workspace: workspaceRoot,
      tools: tools.list(),
      contextFiles,
      shell: env.SHELL,
    });

    const images = terminal.tty && interactive ? detectImageProtocol(env) : 'none';
    let loop: ChatLoop | undefined;
    const approver = new ChatApprover({
      allow: allowList(values.allow),
      yes: values.yes === true,
      interactive,
      ask: (question, signal) => loop?.ask(question, signal) ?? Promise.resolve(null),
      say: (text) => terminal.line(text),
      workspaceRoot,
    });
    const renderer = new ChatRenderer(terminal, {
      usageLine: (m) => (m.usage === undefined ? undefined : turnUsageLine(m, session)),
      images,
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
      uploads: values.uploads ?? config.uploads ?? false,
      ...(resumed
        ? { resumed }
        : { newPath: values.session ? path.resolve(values.session) : newSessionPath(workspaceRoot) }),
      ...(store && values.store !== undefined
        ? { createInStore: (header) => store.create(header), storeName: shownStore(values.store) }
        : {}),
      baseUrl: where.baseUrl,
      priceOf: (id) => config.models.get(id)?.price,
      // One prompt shows the chat's own view only with --verbose (warnings always: see notify).
      onEvent: oneShot && !values.verbose ? () => {} : (e) => renderer.handle(e),
      notify: (text) => terminal.line(cliAdvice(text)),
      approveToolCall: approver.approve,
    });
    chat = session;

    for (const note of where.notes) io.err(`note: ${note}`);
    if (resumed) for (const w of resumed.warnings) chat.notifyOnce(`load:${w.message}`, `note: ${w.message}`);
    if (!model.known && !config.models.has(model.id)) {
      const takes = ['text', ...(model.input.image ? ['images'] : []), ...(model.input.pdf ? ['PDFs'] : [])];
      chat.notifyOnce(
        `unknown-model:${model.id}:${takes.join(',')}`,
        `note: model '${model.id}' is not in the catalog: it is sent ${takes.join(', ')} only` +
          (takes.length < 3
            ? ' (declare more with --image-input / --pdf-input, or under "models" in the config file, if it takes them)'
            : ''),
      );
    } else if (!model.input.image) {
      chat.notifyOnce(
        `no-images:${model.id}`,
        `note: model '${model.id}' does not accept image input; pictures will be described, not shown`,
      );
    }

    if (oneShot) {
      setupDone = true;
      try {
        return await runOneShot({
          chat,
          prompt: prompt as string,
          output,
          out: (text) => process.stdout.write(text),
          err: (text) => io.err(cliAdvice(text)),
          ...(values.verbose ? { renderer } : {}),
        });
      } finally {
        terminal.dispose();
        chat.close();
      }
    }

    const files = contextFiles.map((f) => path.relative(process.cwd(), f.path) || f.path);
    io.err(
      `panto chat: ${model.id} via ${where.api}${where.baseUrl ? ` at ${where.baseUrl}` : ''}; session ${chat.path}` +
        (resumed ? ` (resumed, ${chat.agent.messages.length} messages)` : '') +
        (files.length > 0 ? `; context: ${files.join(', ')}` : ''),
    );
    if (resumed && interactive) {
      const lines = recentTranscript(chat.agent.messages);
      if (lines.length > 0) {
        terminal.line('── the conversation so far (last messages) ──', 'dim');
        for (const l of lines) terminal.line(l, 'dim');
        terminal.line('──', 'dim');
      }
    }
    io.err('type /help for help, /exit to leave');

    loop = new ChatLoop({
      chat,
      renderer,
      terminal,
      commands: chatCommands({
        contextFiles: files,
        choice,
        models: config.models,
        configFile: config.file,
        newSessionPath: () => newSessionPath(workspaceRoot),
      }),
      input: process.stdin,
      output: process.stdout,
      cwd: process.cwd(),
      ...(history ? { history } : {}),
      ...(input ? { terminalInput: input } : {}),
    });
    setupDone = true;
    try {
      return await loop.run();
    } finally {
      terminal.dispose();
      await loop.chat.close();
      if (loop.chat.log) io.err(`session saved: ${loop.chat.path}${usageSummary(loop.chat)}`);
    }
  } finally {
    (input as TerminalInput | undefined)?.stop();
    if (!setupDone) {
      terminal.dispose();
      if (chat) await chat.close();
      else await resumed?.close();
    }
    await Promise.all(mcp.map((m) => m.close()));
    await store?.close();
  }
}

interface Endpoint {
  api: ModelApi;
  baseUrl: string | undefined;
  /** The config file's defaults apply (a new session, no endpoint flags given). */
  fromConfig: boolean;
  notes: string[];
}

/**
 * Which API and server to talk to: the flags; else, for a resumed session, the endpoint its log recorded (a resume
 * goes back to the same server unless told otherwise); else the config file; else the environment's API keys.
 */
function chooseEndpoint(
  values: { provider?: string | undefined; 'base-url'?: string | undefined },
  recorded: SessionEndpoint | undefined,
  resuming: boolean,
  config: PantoConfig,
  env: NodeJS.ProcessEnv,
): Endpoint {
  const notes: string[] = [];
  const flagProvider = values.provider;
  const flagBase = values['base-url'];
  if (recorded !== undefined) {
    if (flagProvider === undefined && flagBase === undefined)
      return { api: recorded.api, baseUrl: recorded.baseUrl, fromConfig: false, notes };
    const api = flagProvider !== undefined ? pickApi(flagProvider, flagBase, env) : recorded.api;
    const baseUrl =
      flagBase ?? (api === recorded.api && flagProvider === undefined ? recorded.baseUrl : undefined);
    if (api !== recorded.api || baseUrl !== recorded.baseUrl) {
      notes.push(
        `this session was with ${recorded.api}${recorded.baseUrl ? ` at ${recorded.baseUrl}` : ''}; ` +
          `it goes on with ${api}${baseUrl ? ` at ${baseUrl}` : ''} as asked`,
      );
    }
    return { api, baseUrl, fromConfig: false, notes };
  }
  if (flagProvider !== undefined || flagBase !== undefined) {
    return { api: pickApi(flagProvider, flagBase, env), baseUrl: flagBase, fromConfig: false, notes };
  }
  if (!resuming && (config.provider !== undefined || config.baseUrl !== undefined)) {
    return {
      api: pickApi(config.provider, config.baseUrl, env),
      baseUrl: config.baseUrl,
      fromConfig: true,
      notes,
    };
  }
  return { api: pickApi(undefined, undefined, env), baseUrl: undefined, fromConfig: !resuming, notes };
}

/**
 * The session file to continue: `--resume FILE`; `--continue` the newest of the workspace; `--resume` alone a picker
 * on a terminal (a usage error naming the recent ones elsewhere).
 */
async function resolveResume(
  resume: string | undefined,
  latest: boolean,
  workspace: string,
  interactive: boolean,
  makeInput: () => TerminalInput,
): Promise<string | undefined> {
  if (resume === undefined && !latest) return undefined;
  if (resume !== undefined && resume !== '') return resume;
  const sessions = await listSessions(workspace);
  if (sessions.length === 0) {
    throw new CliError(
      `no saved session in ${path.join(workspace, '.panto', 'sessions')} to ${latest ? 'continue' : 'resume'}`,
    );
  }
  if (latest) return (sessions[0] as { path: string }).path;
  const label = (s: (typeof sessions)[number]) =>
    `${s.modified.toISOString().slice(0, 16).replace('T', ' ')}  ${s.firstPrompt ?? '(no message yet)'}  [${path.basename(s.path)}]`;
  if (!interactive) {
    throw new CliError(
      `--resume needs a FILE when not on a terminal; the latest sessions here:\n${sessions
        .slice(0, 10)
        .map((s) => `  ${path.relative(process.cwd(), s.path) || s.path}  ${label(s)}`)
        .join('\n')}`,
      EXIT_USAGE,
    );
  }
  const input = makeInput();
  input.start();
  const picked = await input.select('Resume which session? (newest first)', sessions.map(label));
  if (picked === undefined) {
    input.stop();
    throw new CliError('no session chosen');
  }
  return (sessions[picked] as { path: string }).path;
}

/** The prompt from stdin (`-p -`, or `panto run` without words). */
async function readStdinPrompt(): Promise<string> {
  if (process.stdin.isTTY)
    throw new CliError('no prompt: pass it as words, or pipe it into stdin', EXIT_USAGE);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > 16 * 1024 * 1024) throw new CliError('the prompt on stdin is over 16 MiB', EXIT_USAGE);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseOutput(value: string | undefined, oneShot: boolean): OutputFormat {
  if (value === undefined) return 'text';
  if (!oneShot) throw new CliError('--output applies to one prompt (-p PROMPT or panto run)', EXIT_USAGE);
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new CliError(`--output expects one of ${OUTPUT_FORMATS.join(', ')}; got '${value}'`, EXIT_USAGE);
}

function usageSummary(chat: ChatSession): string {
  try {
    const u = chat.usage;
    return u.inputTokens + u.outputTokens > 0 ? ` (${formatUsage(u)}${sessionCost(chat)})` : '';
  } catch {
    return '';
  }
}

/** `[tokens: 1,200 in · 34 out · $0.0040 | session: … · $0.0123]` after an answer. */
function turnUsageLine(m: AssistantMessage, chat: ChatSession): string {
  const usage = m.usage as NonNullable<AssistantMessage['usage']>;
  const cost = messageCost(m, chat.model.id, chat.priceOf(m.model ?? chat.model.id));
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
function checkBaseUrl(value: string, flag: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
    throw new CliError(`${flag} expects an http:// or https:// URL, got '${shown}'`, EXIT_USAGE);
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
