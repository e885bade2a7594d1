import type { CliIo } from './cli-io.js';
import { runChat } from './commands/chat.js';
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
  chat: { summary: 'chat with a model that can use the Lua tools (and see their pictures)', run: runChat },
  session: { summary: 'print the transcript of a saved session log', run: runSession },
  mcp: { summary: "serve the Lua tools to any MCP client ('mcp serve')", run: runMcp },
};
