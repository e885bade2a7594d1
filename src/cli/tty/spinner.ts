/**
 * A spinner line in the live area while the chat waits (for the first token of an answer, for tools): a frame, what
 * it waits for, and the seconds so far. Redrawn ten times a second while shown; `stop` removes the line.
 */
import type { Terminal } from '../chat/terminal.js';
import { visibleControls } from '../safe-text.js';
import { truncateToWidth } from './text-width.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export class Spinner {
  readonly #t: Terminal;
  #timer: NodeJS.Timeout | undefined;
  #label = '';
  #started = 0;
  #frame = 0;

  constructor(terminal: Terminal) {
    this.#t = terminal;
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  /** Show `label` (untrusted: a tool's name or progress message) with a spinner; a running one keeps its start time. */
  start(label: string): void {
    if (!this.#t.tty) return;
    this.#label = visibleControls(label).replace(/\n/g, ' ');
    if (this.#timer === undefined) {
      this.#started = Date.now();
      this.#frame = 0;
      this.#timer = setInterval(() => this.#draw(), 100);
      this.#timer.unref();
    }
    this.#draw();
  }

  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#t.setLive('status', []);
  }

  #draw(): void {
    const secs = Math.floor((Date.now() - this.#started) / 1000);
    const frame = FRAMES[this.#frame++ % FRAMES.length] as string;
    const line = `${frame} ${this.#label}${secs > 0 ? ` (${secs}s)` : ''}`;
    const row = truncateToWidth(line, this.#t.columns);
    this.#t.setLive('status', [this.#t.color ? `\x1b[36m${frame}\x1b[0m${row.slice(frame.length)}` : row]);
  }
}
