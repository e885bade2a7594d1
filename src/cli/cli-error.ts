/** An error that ends a CLI command with a message and an exit code (no stack trace printed). */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Exit codes: 0 ok, 1 the work failed (bad file, tool error), 2 usage error. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
