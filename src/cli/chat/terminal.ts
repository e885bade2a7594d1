/**
 * The chat's view of the terminal: stdout for the answer, stderr for everything else, a shared notion of "mid-line",
 * dim styling (TTY only, honouring NO_COLOR), and the rows written since a mark so that streamed text can be folded
 * away afterwards (collapsed thinking, a partial answer a retry replaces) when it still fits on the screen.
 */

/** A CSI escape sequence (colours, cursor moves): no width on screen. */
const CSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');

export interface TerminalStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface RowMark {
  rows: number;
}

export class Terminal {
  readonly tty: boolean;
  readonly color: boolean;
  readonly #s: TerminalStreams;
  #col = 0;
  #rows = 0;

  constructor(streams: TerminalStreams, env: NodeJS.ProcessEnv = process.env) {
    this.#s = streams;
    this.tty = Boolean(streams.stdout.isTTY && streams.stderr.isTTY);
    this.color = this.tty && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  }

  get midLine(): boolean {
    return this.#col > 0;
  }

  get columns(): number {
    return this.#s.stdout.columns ?? 80;
  }

  /** Answer text (stdout). */
  out(text: string): void {
    this.#track(text);
    this.#s.stdout.write(text);
  }

  /** A whole line of status on stderr, starting on a fresh line. */
  line(text: string): void {
    if (this.midLine) this.out('\n');
    this.#track(`${text}\n`);
    this.#s.stderr.write(`${text}\n`);
  }

  /** End the current line, if any. */
  newline(): void {
    if (this.midLine) this.out('\n');
  }

  dim(text: string): string {
    return this.color ? `\x1b[2m${text}\x1b[22m` : text;
  }

  bold(text: string): string {
    return this.color ? `\x1b[1m${text}\x1b[22m` : text;
  }

  mark(): RowMark {
    return { rows: this.#rows };
  }

  /**
   * Erase what was written since `mark` (TTY only, and only when it still fits on the screen). Returns whether it did.
   */
  eraseSince(mark: RowMark): boolean {
    if (!this.tty) return false;
    const up = this.#rows - mark.rows;
    const screen = this.#s.stdout.rows ?? 24;
    if (up >= screen - 1) return false;
    this.#s.stdout.write(`\r${up > 0 ? `\x1b[${up}A` : ''}\x1b[J`);
    this.#rows = mark.rows;
    this.#col = 0;
    return true;
  }

  /** Count rows and the column, wrapping at the terminal width; escape sequences take no room. */
  #track(text: string): void {
    const width = Math.max(1, this.columns);
    const plain = text.replace(CSI, '');
    for (const ch of plain) {
      if (ch === '\n') {
        this.#rows++;
        this.#col = 0;
      } else if (ch === '\r') {
        this.#col = 0;
      } else {
        if (this.#col >= width) {
          this.#rows++;
          this.#col = 0;
        }
        this.#col++;
      }
    }
  }
}
