/** The slash commands of `panto chat`. */
import { estimateTokens } from '../../compaction/index.js';
import { formatUsage } from '../usage-format.js';
import type { ChatLoop } from './chat-loop.js';
import { THINKING_MODES, type ThinkingMode } from './chat-renderer.js';
import { type SlashCommand, SlashCommands } from './slash-commands.js';

export interface ChatCommandInfo {
  /** Context files in the system prompt (shown by /session). */
  contextFiles: readonly string[];
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
        const lines = [
          `session:  ${chat.path}${chat.log ? '' : ' (not written yet: nothing was sent)'}`,
          `model:    ${model.id} via ${model.api}${model.known ? '' : ' (not in the catalog)'}`,
          `context:  ${messages.length} messages, ~${estimateTokens(messages, { imageTokenRule: model.imageTokenRule })} tokens of a ${model.limits.contextWindow}-token window (estimate)`,
          `used:     ${formatUsage(chat.usage)} (whole session)`,
        ];
        if (info.contextFiles.length > 0) lines.push(`context files: ${info.contextFiles.join(', ')}`);
        loop.say(lines.join('\n'));
        return undefined;
      },
    },
    {
      name: 'thinking',
      args: '[collapse|show|hide]',
      summary: "print the last answer's thinking, or set how thinking is shown",
      whileRunning: true,
      run: (args, loop) => {
        const r = loop.renderer;
        if (args === '') {
          loop.say(r.lastThinking === '' ? 'no thinking yet' : loop.terminal.dim(r.lastThinking));
          return undefined;
        }
        if (!(THINKING_MODES as readonly string[]).includes(args)) {
          throw new Error(`expected one of ${THINKING_MODES.join(', ')}, got '${args}'`);
        }
        r.thinkingMode = args as ThinkingMode;
        loop.say(`thinking: ${args}`);
        return undefined;
      },
    },
  ];
  return new SlashCommands(list, { quit: 'exit', q: 'exit', '?': 'help' });
}
