/**
 * The chat's view of the terminal: stdout for the answer, stderr for everything else, a shared notion of "mid-line",
 * dim styling (TTY only, honouring NO_COLOR), and the rows written since a mark so that streamed text can be
 * folded away afterwards (collapsed thinking, a partial answer a retry replaces) when it still fits on the screen.
 *
 * Everything `out` and `line` are given is untrusted (the model's text, tool names, error messages, file names): its
 * terminal controls are shown visibly (`visibleControls`) before our own styling is added, on stderr always and on
 * stdout when it is a terminal. Piped stdout gets the answer byte for byte: there it is the product (see the README).
 *
 * Row tracking never counts more rows than the terminal used, so `eraseSince` can leave a remnant of the folded text
 * but never erases what was on the screen before the mark: characters the terminal may draw zero-wide (combining
 * marks, format characters) count 0, East Asian wide characters 2, anything else 1, and a tab at most what it
 * advances. After a resize the terminal may have re-flowed the rows, so nothing is erased.
 */
import { visibleControls } from '../safe-text.js';

/** A CSI escape sequence of ours (styling): no width on screen. */
const CSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
/** Drawn zero-wide by some terminal: combining and enclosing marks, format characters, Hangul medial/final jamo. */
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}\u1160-\u11ff]/u;

export type Style = 'dim';

export interface TerminalStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface RowMark {
  rows: number;
  /** The terminal size generation the mark was taken in. */
  size: number;
}

export class Terminal {
  readonly tty: boolean;
  readonly color: boolean;
  readonly #s: TerminalStreams;
  /** Neutralise controls in what goes to stdout (a terminal) — stderr always is. */
  readonly #safeOut: boolean;
  #col = 0;
  #rows = 0;
  #size = 0;
  /** A `\r` that ended the last answer chunk: a newline next makes it CRLF, anything else a lone CR. */
  #pendingCr = false;
  readonly #onResize = (): void => {
    this.#size++;
  };

  constructor(streams: TerminalStreams, env: NodeJS.ProcessEnv = process.env) {
    this.#s = streams;
    this.tty = Boolean(streams.stdout.isTTY && streams.stderr.isTTY);
    this.color = this.tty && env.NO_COLOR === undefined && env.TERM !== 'dumb';
    this.#safeOut = Boolean(streams.stdout.isTTY);
    (streams.stdout as Partial<NodeJS.EventEmitter>).on?.('resize', this.#onResize);
  }

  /** Stop listening to stdout's `resize` (call when the chat ends; the streams outlive the terminal view). */
  dispose(): void {
    (this.#s.stdout as Partial<NodeJS.EventEmitter>).off?.('resize', this.#onResize);
  }

  get midLine(): boolean {
    return this.#col > 0 || this.#pendingCr;
  }

  get columns(): number {
    return this.#s.stdout.columns ?? 80;
  }

  /** Answer text (stdout), untrusted; styled with `style` on a colour terminal. */
  out(text: string, style?: Style): void {
    if (this.#safeOut) {
      let t = this.#pendingCr ? `\r${text}` : text;
      this.#pendingCr = t.endsWith('\r');
      if (this.#pendingCr) t = t.slice(0, -1);
      text = visibleControls(t);
    }
    if (text === '') return;
    this.#track(text);
    this.#s.stdout.write(this.#style(text, style));
  }

  /** A whole line of status on stderr, starting on a fresh line; untrusted, styled with `style`. */
  line(text: string, style?: Style): void {
    this.newline();
    const safe = visibleControls(text);
    this.#track(`${safe}\n`);
    this.#s.stderr.write(`${this.#style(safe, style)}\n`);
  }

  /** End the current line, if any. */
  newline(): void {
    this.#flushCr();
    if (this.#col > 0) {
      this.#track('\n');
      this.#s.stdout.write('\n');
    }
  }

  mark(): RowMark {
    this.#flushCr();
    return { rows: this.#rows, size: this.#size };
  }

  /**
   * Erase what was written since `mark` (TTY only, only when it still fits on the screen and the terminal was not
   * resized since). Returns whether it did.
   */
  eraseSince(mark: RowMark): boolean {
    if (!this.tty || mark.size !== this.#size) return false;
    const up = this.#rows - mark.rows;
    const screen = this.#s.stdout.rows ?? 24;
    if (up < 0 || up >= screen - 1) return false;
    // Only now is the held-back CR part of what is erased; when nothing is erased it is still shown later.
    this.#pendingCr = false;
    this.#s.stdout.write(`\r${up > 0 ? `\x1b[${up}A` : ''}\x1b[J`);
    this.#rows = mark.rows;
    this.#col = 0;
    return true;
  }

  #style(text: string, style: Style | undefined): string {
    if (!this.color || style === undefined || text === '') return text;
    return `\x1b[2m${text}\x1b[22m`;
  }

  /** A lone `\r` held back at the end of an answer chunk is shown as `^M`. */
  #flushCr(): void {
    if (!this.#pendingCr) return;
    this.#pendingCr = false;
    this.#track('^M');
    this.#s.stdout.write('^M');
  }

  /** Count rows and the column, wrapping at the terminal width (a lower bound: see the module contract). */
  #track(text: string): void {
    const width = Math.max(1, this.columns);
    const plain = text.replace(CSI, '');
    for (const ch of plain) {
      if (ch === '\n') {
        this.#rows++;
        this.#col = 0;
        continue;
      }
      if (ch === '\r') {
        this.#col = 0;
        continue;
      }
      if (ch === '\t') {
        // To the next tab stop, never past the last column (a tab does not wrap).
        if (this.#col < width)
          this.#col = Math.max(this.#col, Math.min(width - 1, (Math.floor(this.#col / 8) + 1) * 8));
        continue;
      }
      const w = charWidth(ch);
      if (w === 0) continue;
      if (this.#col + w > width) {
        this.#rows++;
        this.#col = 0;
      }
      this.#col += w;
    }
  }
}

/** Columns `ch` takes at least: 0, 1 or 2 (see the module contract). */
export function charWidth(ch: string): number {
  if (ZERO_WIDTH.test(ch)) return 0;
  const c = ch.codePointAt(0) ?? 0;
  return isWide(c) ? 2 : 1;
}

/** East Asian Wide and Fullwidth blocks every terminal draws two columns wide. */
function isWide(c: number): boolean {
  return (
    (c >= 0x1100 && c <= 0x115f) ||
    (c >= 0x2e80 && c <= 0x303e) ||
    (c >= 0x3041 && c <= 0x33ff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xa000 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ||
    (c >= 0x20000 && c <= 0x2fffd) ||
    (c >= 0x30000 && c <= 0x3fffd)
  );
}
