import type { CliIo } from './cli-io.js';
import { runChat, runRun } from './commands/chat.js';
import { runImage } from './commands/image.js';
import { runMcp } from './commands/mcp-serve.js';
import { runSession } from './commands/session.js';
import { runTool } from './commands/tool.js';

export interface Command {
  summary: string;
  run: (argv: string[], io: CliIo) => Promise<number>;
}

/** Every `panto` subcommand. */
export const commands: Record<string, Command> = {
  tool: {
    summary: 'run a tool offline and show its result and the request a provider would get',
    run: runTool,
  },
  image: { summary: 'show what the media pipeline does to one image or PDF', run: runImage },
  chat: {
    summary: 'a coding agent in the terminal: the Lua tools, your files, pictures it can see',
    run: runChat,
  },
  run: { summary: "one prompt to the agent; only the final answer on stdout (= 'chat -p')", run: runRun },
  session: { summary: 'print the transcript of a saved session log', run: runSession },
  mcp: { summary: "serve the Lua tools to any MCP client ('mcp serve')", run: runMcp },
};
