import type { CliIo } from './cli-io.js';
import { runImage } from './commands/image.js';

export interface Command {
  summary: string;
  run: (argv: string[], io: CliIo) => Promise<number>;
}

/** Every `panto` subcommand. */
export const commands: Record<string, Command> = {
  image: { summary: 'show what the media pipeline does to one image or PDF', run: runImage },
};
