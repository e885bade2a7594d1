/** The slash commands of `panto chat`. */
import { estimateTokens } from '../../compaction/index.js';
import { getModel, type ThinkingLevel } from '../../providers/index.js';
import type { ConfigModel } from '../config.js';
import { formatCount, formatDollars, formatUsage } from '../usage-format.js';
import type { ChatLoop } from './chat-loop.js';
import { THINKING_MODES, type ThinkingMode } from './chat-renderer.js';
import {
  chooseModel,
  type ModelChoice,
  SUGGESTED_MODELS,
  THINKING_LEVELS,
  vendorOf,
} from './model-choice.js';
import { editDistance, type SlashCommand, SlashCommands } from './slash-commands.js';

export interface ChatCommandInfo {
  /** Context files in the system prompt (shown by /session). */
  contextFiles: readonly string[];
  /** How the chat's model was chosen (endpoint, declared inputs, window): /model keeps all but the id. */
  choice: Omit<ModelChoice, 'id'>;
  /** Models the config file declares (/model accepts them, and lists them). */
  models?: ReadonlyMap<string, ConfigModel>;
  /** The config file, to name in messages. */
  configFile?: string | undefined;
  /** Where /new writes its session. */
  newSessionPath: () => string;
}

/** The models /model offers: the config file's, then current catalog models of the endpoint's vendor. */
export function modelChoices(info: Pick<ChatCommandInfo, 'choice' | 'models'>): string[] {
  const declared = [...(info.models?.keys() ?? [])];
  // A custom endpoint (a gateway, a local server) serves what it serves: only the declared models are known to work.
  const catalog =
    info.choice.baseUrl === undefined ? (SUGGESTED_MODELS[vendorOf(info.choice.api)] ?? []) : [];
  return [...new Set([...declared, ...catalog])];
}

export function chatCommands(info: ChatCommandInfo): SlashCommands<ChatLoop> {
  const configHint = `add it under "models" in ${info.configFile ?? 'the config file (~/.config/panto/config.json)'}`;

  /** Switch to `id` after checking it is a model the catalog or the config file knows. */
  const switchTo = (id: string, loop: ChatLoop) => {
    const chat = loop.chat;
    const current = chat.model;
    if (getModel(id) === undefined && !info.models?.has(id)) {
      const known = [...(info.models?.keys() ?? []), ...Object.values(SUGGESTED_MODELS).flat()];
      const close = known.filter((c) => editDistance(c, id) <= Math.max(2, Math.floor(id.length / 4)));
      throw new Error(
        `'${id}' is not a model the catalog or the config file knows` +
          (close.length > 0 ? ` (did you mean ${close.slice(0, 3).join(', ')}?)` : '') +
          `; /model lists the choices. To use a model the catalog does not know, ${configHint} (context window, prices, inputs)`,
      );
    }
    const next = chooseModel({ ...info.choice, id });
    chat.setModel(next);
    loop.say(`model: ${next.id} via ${next.api} (was ${current.id}); recorded in the session`);
    if (!next.input.image)
      loop.say(`note: model '${next.id}' does not accept image input; pictures will be described`);
  };

  const list: SlashCommand<ChatLoop>[] = [
    {
      name: 'help',
      summary: 'this list, and the keys',
      whileRunning: true,
      run: (_args, loop) => {
        loop.say(
          `${loop.commands.help()}\n\n` +
            "Enter sends; Alt+Enter, Shift+Enter or \\ then Enter start a new line; a paste is one message. '@path'\n" +
            'attaches a file; Tab completes paths and commands; Up/Down recall earlier messages. Text sent while an\n' +
            'answer streams is queued for the next request. Esc or Ctrl-C stops a turn (queued messages come back to\n' +
            'the editor); Ctrl-C at an empty prompt or Ctrl-D exits. Start a line with // to send text that begins with /.',
        );
        return undefined;
      },
    },
    {
      name: 'exit',
      summary: 'leave (the session is saved as you go)',
      whileRunning: true,
      run: () => 'exit',
    },
    {
      name: 'new',
      summary: 'start a new session (the current one stays saved)',
      run: async (_args, loop) => {
        const before = loop.chat.log ? loop.chat.path : undefined;
        await loop.chat.startNew(info.newSessionPath());
        loop.say(
          `new session: ${loop.chat.path} (written when the first message is sent)` +
            (before ? `; the previous one is saved in ${before}` : ''),
        );
        return undefined;
      },
    },
    {
      name: 'model',
      args: '[MODEL]',
      summary:
        'show the models to choose from, or switch to MODEL from the next request (recorded in the session)',
      run: async (args, loop) => {
        const current = loop.chat.model;
        if (args !== '') {
          switchTo(args, loop);
          return undefined;
        }
        const choices = modelChoices(info);
        const input = loop.input;
        if (input !== undefined && choices.length > 0) {
          const picked = await input.select(
            `model: ${current.id} via ${current.api}; switch to:`,
            choices.map((c) => (c === current.id ? `${c} (current)` : c)),
          );
          if (picked !== undefined && choices[picked] !== current.id)
            switchTo(choices[picked] as string, loop);
          return undefined;
        }
        loop.say(
          `model: ${current.id} via ${current.api}` +
            (choices.length > 0 ? `\nchoices: ${choices.join(', ')}` : '') +
            `\n/model ID switches (same endpoint; another vendor needs a restart with --provider; another model: ${configHint})`,
        );
        return undefined;
      },
    },
    {
      name: 'retry',
      summary: 'ask again after an error or a stopped turn',
      run: async (_args, loop) => {
        const last = loop.chat.agent.messages.at(-1);
        if (last === undefined) {
          loop.say('nothing to retry: nothing was sent yet');
          return undefined;
        }
        const finished =
          last.role === 'assistant' &&
          last.stopReason !== 'error' &&
          last.stopReason !== 'aborted' &&
          !last.content.some((b) => b.type === 'tool_call');
        if (finished) {
          loop.say('nothing to retry: the last answer finished; send a new message');
          return undefined;
        }
        await loop.runTurn();
        return undefined;
      },
    },
    {
      name: 'compact',
      args: '[FOCUS]',
      summary: 'summarize the older part of the conversation now (FOCUS: what the summary must keep)',
      run: async (args, loop) => {
        const out = await loop.chat.compactNow(loop.commandSignal(), args);
        if (out === null)
          loop.say(
            'nothing to compact: the conversation is a single exchange so far (nothing older to summarize)',
          );
        return undefined;
      },
    },
    {
      name: 'session',
      summary: 'the session file, model, context size, tokens used',
      whileRunning: true,
      run: (_args, loop) => {
        const chat = loop.chat;
        const messages = chat.agent.messages;
        const model = chat.model;
        const usage = chat.usage;
        const window = chat.agent.contextWindow;
        const taught =
          window < model.limits.contextWindow
            ? ` (the server stated it; the catalog says ${formatCount(model.limits.contextWindow)})`
            : '';
        const lines = [
          `session:  ${chat.path}${chat.log ? '' : ' (not written yet: nothing was sent)'}`,
          `model:    ${model.id} via ${model.api}${chat.baseUrl ? ` at ${chat.baseUrl}` : ''}${model.known ? '' : info.models?.has(model.id) ? ' (from the config file)' : ' (not in the catalog)'}`,
          `context:  ${messages.length} messages, ~${estimateTokens(messages, { imageTokenRule: model.imageTokenRule })} tokens of a ${window}-token window (estimate)${taught}`,
          `used:     ${formatUsage(chat.usage)}${usage.unpricedRequests > 0 && usage.cost === 0 ? '' : ` · ${formatDollars(usage.cost)}`} (whole session, ${usage.requests} request${usage.requests === 1 ? '' : 's'})`,
          `thinking: ${chat.thinking ?? 'model default'}; shown: ${loop.renderer.thinkingMode}`,
        ];
        if (usage.unpricedRequests > 0)
          lines.push(
            `no price for ${usage.unpricedRequests} request(s): the model is not in the price table; their cost is not counted (${configHint} with a price)`,
          );
        if (info.contextFiles.length > 0) lines.push(`context files: ${info.contextFiles.join(', ')}`);
        loop.say(lines.join('\n'));
        return undefined;
      },
    },
    {
      name: 'thinking',
      args: '[LEVEL|collapse|show|hide]',
      summary: 'print the last thinking; set the effort (off/low/medium/high) or how it is shown',
      whileRunning: true,
      run: (args, loop) => {
        const r = loop.renderer;
        if (args === '') {
          if (r.lastThinking === '') loop.say('no thinking yet');
          else loop.say(r.lastThinking, 'dim');
          return undefined;
        }
        if ((THINKING_LEVELS as readonly string[]).includes(args)) {
          loop.chat.setThinking(args as ThinkingLevel);
          loop.say(`thinking: ${args} from the next request`);
          return undefined;
        }
        if (!(THINKING_MODES as readonly string[]).includes(args)) {
          throw new Error(
            `expected one of ${[...THINKING_LEVELS, ...THINKING_MODES].join(', ')}, got '${args}'`,
          );
        }
        r.thinkingMode = args as ThinkingMode;
        loop.say(`thinking is shown: ${args}`);
        return undefined;
      },
    },
  ];
  return new SlashCommands(list, { quit: 'exit', q: 'exit', '?': 'help' });
}
