/**
 * `panto`: run Lua tools offline, inspect the media pipeline, chat with a model, read session logs.
 * Exit codes: 0 ok, 1 failure, 2 usage error.
 */
import { isPantoError } from '../errors.js';
import { packageVersion } from '../package-root.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './cli-error.js';
import { type CliIo, processIo } from './cli-io.js';
import { commands } from './commands.js';
import { describeSystemError, isSystemError } from './system-error.js';

const mainHelp = `Usage: panto <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`)
  .join('\n')}

Run 'panto <command> --help' for a command's options.
`;

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(mainHelp);
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version' || name === '-v') {
    io.out(packageVersion());
    return 0;
  }
  const command = commands[name];
  if (!command) {
    io.err(`panto: unknown command '${name}'\n\n${mainHelp}`);
    return EXIT_USAGE;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    return reportError(err, io);
  }
}

function reportError(err: unknown, io: CliIo): number {
  if (err instanceof CliError) {
    io.err(`panto: ${err.message}`);
    return err.exitCode;
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
    io.err(`panto: ${(err as Error).message}`);
    return EXIT_USAGE;
  }
  if (isPantoError(err)) {
    io.err(`panto: ${err.message} [${err.code}]`);
    return EXIT_FAILURE;
  }
  if (isSystemError(err)) {
    io.err(`panto: ${describeSystemError(err)}`);
    return EXIT_FAILURE;
  }
  // Not a user error but a bug of ours: the stack helps a bug report.
  io.err(`panto: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return EXIT_FAILURE;
}
