/**
 * The chat's view of the terminal: stdout for the answer, stderr for everything else, a shared notion of "mid-line",
 * dim styling (TTY only, honouring NO_COLOR), the rows written since a mark so that streamed text can be folded away
 * afterwards (collapsed thinking, a partial answer a retry replaces) when it still fits on the screen, and — on a
 * terminal — a live area below the output: the line of the answer still being written, a spinner, the input editor,
 * a footer. Output is written above the live area; the live area is redrawn after every write.
 *
 * Everything `out` and `line` are given is untrusted (the model's text, tool names, error messages, file names): its
 * terminal controls are shown visibly (`visibleControls`) before our own styling is added, on stderr always and on
 * stdout when it is a terminal. Piped stdout gets the answer byte for byte: there it is the product (see the README).
 * `outStyled` takes text the caller already made safe and styled (the Markdown renderer's rows); `image` takes an
 * escape sequence we built from our own bytes.
 *
 * Row tracking never counts more rows than the terminal used (text-width.ts), so `eraseSince` can leave a remnant of
 * the folded text but never erases what was on the screen before the mark. After a resize (the terminal may have
 * re-flowed the rows) or an inline image, nothing before it is erased.
 */
import { visibleControls } from '../safe-text.js';
import { CSI_SEQUENCE, charWidth, truncateToWidth } from '../tty/text-width.js';

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

/** The sections of the live area, drawn in this order. */
export type LiveSection = 'pending' | 'status' | 'question' | 'editor' | 'menu' | 'footer';
const SECTIONS: readonly LiveSection[] = ['pending', 'status', 'question', 'editor', 'menu', 'footer'];

interface LiveContent {
  rows: string[];
  /** Where the terminal cursor goes (the editor's). */
  cursor?: { row: number; col: number };
}

/** Begin/end synchronized update (terminals that know it draw the frame at once; others ignore it). */
const SYNC_ON = '\x1b[?2026h';
const SYNC_OFF = '\x1b[?2026l';

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
  readonly #live = new Map<LiveSection, LiveContent>();
  /** What the live area holds on screen now: its row count and the row the cursor was left on. */
  #shown: { rows: number; cursorRow: number } | undefined;
  /** Nesting of writes: the live area is hidden once and redrawn once around a group of writes. */
  #depth = 0;
  #cursorHidden = false;
  readonly #onResize = (): void => {
    this.#size++;
    // The rows may have re-flowed: clear from where the live area should start and draw it again.
    this.#group(() => {});
  };

  constructor(streams: TerminalStreams, env: NodeJS.ProcessEnv = process.env) {
    this.#s = streams;
    this.tty = Boolean(streams.stdout.isTTY && streams.stderr.isTTY);
    this.color = this.tty && env.NO_COLOR === undefined && env.TERM !== 'dumb';
    this.#safeOut = Boolean(streams.stdout.isTTY);
    (streams.stdout as Partial<NodeJS.EventEmitter>).on?.('resize', this.#onResize);
  }

  /** Clear the live area and stop listening to stdout's `resize` (the streams outlive the terminal view). */
  dispose(): void {
    this.#live.clear();
    this.#group(() => {});
    if (this.#cursorHidden) this.#s.stdout.write('\x1b[?25h');
    this.#cursorHidden = false;
    (this.#s.stdout as Partial<NodeJS.EventEmitter>).off?.('resize', this.#onResize);
  }

  get midLine(): boolean {
    return this.#col > 0 || this.#pendingCr;
  }

  get columns(): number {
    return this.#s.stdout.columns ?? 80;
  }

  get screenRows(): number {
    return this.#s.stdout.rows ?? 24;
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
    this.#group(() => {
      this.#track(text);
      this.#s.stdout.write(this.#style(text, style));
    });
  }

  /** Text already made safe and styled by the caller (rendered Markdown rows), to stdout. */
  outStyled(text: string): void {
    if (text === '') return;
    this.#group(() => {
      this.#flushCr();
      this.#track(text);
      this.#s.stdout.write(text);
    });
  }

  /** A whole line of status on stderr, starting on a fresh line; untrusted, styled with `style`. */
  line(text: string, style?: Style): void {
    this.#group(() => {
      this.newline();
      const safe = visibleControls(text);
      this.#track(`${safe}\n`);
      this.#s.stderr.write(`${this.#style(safe, style)}\n`);
    });
  }

  /** Draw a picture (an escape sequence of ours) on its own rows; rows above it are never erased afterwards. */
  image(sequence: string): void {
    if (!this.tty) return;
    this.#group(() => {
      this.newline();
      this.#s.stdout.write(`${sequence}\r\n`);
      // Its height is the terminal's to decide: earlier marks can no longer be trusted.
      this.#size++;
      this.#col = 0;
    });
  }

  /** End the current line, if any. */
  newline(): void {
    this.#group(() => {
      this.#flushCr();
      if (this.#col > 0) {
        this.#track('\n');
        this.#s.stdout.write('\n');
      }
    });
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
    // The live area below the output takes rows of the screen too.
    const live = this.#shown?.rows ?? 0;
    if (up < 0 || up + live >= this.screenRows - 1) return false;
    this.#group(() => {
      // Only now is the held-back CR part of what is erased; when nothing is erased it is still shown later.
      this.#pendingCr = false;
      this.#s.stdout.write(`\r${up > 0 ? `\x1b[${up}A` : ''}\x1b[J`);
      this.#rows = mark.rows;
      this.#col = 0;
    });
    return true;
  }

  /**
   * Set one section of the live area (TTY only): `rows` (already safe and styled, each at most the terminal width),
   * and for the editor where the cursor goes. Empty rows remove the section.
   */
  setLive(section: LiveSection, rows: readonly string[], cursor?: { row: number; col: number }): void {
    if (!this.tty) return;
    if (rows.length === 0) this.#live.delete(section);
    else this.#live.set(section, cursor === undefined ? { rows: [...rows] } : { rows: [...rows], cursor });
    this.#group(() => {});
  }

  /** Whether a live section is set. */
  hasLive(section: LiveSection): boolean {
    return this.#live.has(section);
  }

  /** Run `write` with the live area hidden, then draw it again (once for nested groups). */
  #group(write: () => void): void {
    if (this.#depth > 0) {
      write();
      return;
    }
    const live = this.tty && (this.#shown !== undefined || this.#live.size > 0);
    this.#depth++;
    try {
      if (live) {
        this.#s.stdout.write(SYNC_ON);
        this.#hideLive();
      }
      write();
    } finally {
      this.#depth--;
      if (live) {
        this.#showLive();
        this.#s.stdout.write(SYNC_OFF);
      }
    }
  }

  #hideLive(): void {
    const shown = this.#shown;
    if (shown === undefined) return;
    this.#shown = undefined;
    let seq = shown.cursorRow > 0 ? `\x1b[${shown.cursorRow}A` : '';
    seq += '\r';
    if (this.#col > 0) {
      if (this.#col >= this.columns) {
        // The output filled its row: it goes on at the start of the next one (where the live area began).
        this.#rows++;
        this.#col = 0;
      } else seq += `\x1b[1A\x1b[${this.#col + 1}G`;
    }
    this.#s.stdout.write(`${seq}\x1b[J`);
  }

  #showLive(): void {
    const rows: string[] = [];
    let cursor: { row: number; col: number } | undefined;
    for (const name of SECTIONS) {
      const section = this.#live.get(name);
      if (section === undefined) continue;
      if (section.cursor !== undefined)
        cursor = { row: rows.length + section.cursor.row, col: section.cursor.col };
      rows.push(...section.rows);
    }
    if (rows.length === 0) return;
    const width = this.columns;
    // Never taller than the screen (the first rows give way: a long pending line, then the rest).
    const max = Math.max(1, this.screenRows - 1);
    let first = 0;
    if (rows.length > max) {
      first = rows.length - max;
      if (cursor !== undefined && cursor.row < first) first = cursor.row;
    }
    const drawn = rows.slice(first, first + max).map((r) => truncateToWidth(r, width));
    let seq = this.#col > 0 ? '\r\n' : '\r';
    seq += drawn.join('\r\n');
    let cursorRow = drawn.length - 1;
    if (cursor !== undefined && cursor.row - first >= 0 && cursor.row - first < drawn.length) {
      const up = drawn.length - 1 - (cursor.row - first);
      if (up > 0) seq += `\x1b[${up}A`;
      seq += `\r${cursor.col > 0 ? `\x1b[${cursor.col}C` : ''}`;
      cursorRow = cursor.row - first;
      if (this.#cursorHidden) seq += '\x1b[?25h';
      this.#cursorHidden = false;
    } else if (!this.#cursorHidden) {
      seq += '\x1b[?25l';
      this.#cursorHidden = true;
    }
    this.#s.stdout.write(seq);
    this.#shown = { rows: drawn.length, cursorRow };
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
    const plain = text.replace(CSI_SEQUENCE, '');
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
