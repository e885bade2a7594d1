/** The slash commands of `panto chat`. */
import { estimateTokens } from '../../compaction/index.js';
import type { ThinkingLevel } from '../../providers/index.js';
import { formatDollars, formatUsage } from '../usage-format.js';
import type { ChatLoop } from './chat-loop.js';
import { THINKING_MODES, type ThinkingMode } from './chat-renderer.js';
import { chooseModel, type ModelChoice, THINKING_LEVELS } from './model-choice.js';
import { type SlashCommand, SlashCommands } from './slash-commands.js';

export interface ChatCommandInfo {
  /** Context files in the system prompt (shown by /session). */
  contextFiles: readonly string[];
  /** How the chat's model was chosen (endpoint, declared inputs, window): /model keeps all but the id. */
  choice: Omit<ModelChoice, 'id'>;
}

export function chatCommands(info: ChatCommandInfo): SlashCommands<ChatLoop> {
  const list: SlashCommand<ChatLoop>[] = [
    {
      name: 'help',
      summary: 'this list, and how to attach files and stop a turn',
      whileRunning: true,
      run: (_args, loop) => {
        loop.say(
          `${loop.commands.help()}\n\n` +
            "Text is sent to the model; '@path' attaches a file (Tab completes). Typing while an answer streams\n" +
            'queues a message for the next request. Ctrl-C stops a turn; Ctrl-C at an empty prompt or Ctrl-D exits.\n' +
            'Start a line with // to send text that begins with /.',
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
      name: 'model',
      args: '[MODEL]',
      summary: 'show the model, or switch to MODEL from the next request (recorded in the session)',
      run: (args, loop) => {
        const chat = loop.chat;
        const current = chat.model;
        if (args === '') {
          loop.say(
            `model: ${current.id} via ${current.api}; /model ID switches (same endpoint; another vendor needs a restart with --provider)`,
          );
          return undefined;
        }
        const next = chooseModel({ ...info.choice, id: args });
        chat.setModel(next);
        loop.say(`model: ${next.id} via ${next.api} (was ${current.id}); recorded in the session`);
        if (!next.input.image)
          loop.say(`note: model '${next.id}' does not accept image input; pictures will be described`);
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
      summary: 'summarize the older part of the conversation now',
      run: async (_args, loop) => {
        loop.say('[compacting…]');
        const out = await loop.chat.compactNow(loop.commandSignal());
        if (out === null) loop.say('nothing to compact: the conversation is all recent messages');
        else loop.say(`[compacted the conversation: ~${out.tokensBefore} -> ~${out.tokensAfter} tokens]`);
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
        const lines = [
          `session:  ${chat.path}${chat.log ? '' : ' (not written yet: nothing was sent)'}`,
          `model:    ${model.id} via ${model.api}${model.known ? '' : ' (not in the catalog)'}`,
          `context:  ${messages.length} messages, ~${estimateTokens(messages, { imageTokenRule: model.imageTokenRule })} tokens of a ${model.limits.contextWindow}-token window (estimate)`,
          `used:     ${formatUsage(chat.usage)}${usage.unpricedRequests > 0 && usage.cost === 0 ? '' : ` · ${formatDollars(usage.cost)}`} (whole session, ${usage.requests} request${usage.requests === 1 ? '' : 's'})`,
          `thinking: ${chat.thinking ?? 'model default'}; shown: ${loop.renderer.thinkingMode}`,
        ];
        if (usage.unpricedRequests > 0)
          lines.push(
            `no price for ${usage.unpricedRequests} request(s): the model is not in the price table; their cost is not counted`,
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
