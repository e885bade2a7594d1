/**
 * The chat's input on a terminal: stdin in raw mode through the key reader into the line editor, drawn in the
 * terminal's live area below the output (so it stays visible and editable while an answer streams), Tab completion
 * with a menu of choices, and questions (`ask`, `select`) that take the keys while they are open — an approval prompt
 * or a picker works while the editor owns the terminal, and the half-typed text survives it.
 *
 * Terminal modes: bracketed paste, the kitty keyboard protocol's "disambiguate" level and xterm's modifyOtherKeys
 * (so Shift+Enter and a lone Esc can be told apart where the terminal supports it) are switched on by `start` and off
 * by `stop`, and on process exit if `stop` was never reached. Ctrl+Z suspends with the modes restored.
 */
import type { Terminal } from '../chat/terminal.js';
import { renderEditor } from './editor-view.js';
import { type Key, KeyReader } from './key-reader.js';
import type { LineEditor } from './line-editor.js';
import { truncateToWidth } from './text-width.js';

const MODES_ON = '\x1b[?2004h\x1b[>1u\x1b[>4;1m';
const MODES_OFF = '\x1b[?2004l\x1b[<u\x1b[>4m';
/** How long a lone ESC waits for the rest of a sequence before it counts as the Escape key. */
const ESC_WAIT_MS = 40;

export interface Completion {
  /** Where the completed token starts in the text. */
  start: number;
  /** Replacements for `text.slice(start, cursor)`. */
  items: string[];
}

export interface TerminalInputHandlers {
  submit: (text: string) => void;
  /** Ctrl+C (the owner decides: clear the line, stop a turn, exit). */
  interrupt: () => void;
  /** Ctrl+D on an empty line, or stdin closed. */
  eof: () => void;
  escape: () => void;
}

export type Completer = (textBeforeCursor: string) => Promise<Completion | undefined>;

export interface TerminalInputOptions {
  input: NodeJS.ReadStream;
  /** Where the terminal modes are written (the terminal's stdout). */
  output: NodeJS.WritableStream;
  terminal: Terminal;
  editor: LineEditor;
  handlers?: TerminalInputHandlers;
  complete?: Completer;
  prompt?: () => string;
}

const NO_HANDLERS: TerminalInputHandlers = {
  submit: () => {},
  interrupt: () => {},
  eof: () => {},
  escape: () => {},
};

interface Question {
  rows: () => string[];
  /** Take a key: true when the question used it, false to let the editor have it (`askLine`). */
  key: (k: Key) => boolean;
  /** The answer is typed in the editor: its cursor stays visible. */
  editing?: boolean;
  /** End the question without an answer (`stop`). */
  cancel: () => void;
}

export class TerminalInput {
  readonly editor: LineEditor;
  readonly #o: TerminalInputOptions;
  #handlers: TerminalInputHandlers;
  #complete: Completer | undefined;
  readonly #reader = new KeyReader();
  #escTimer: NodeJS.Timeout | undefined;
  #menu: string[] = [];
  #question: Question | undefined;
  #started = false;
  readonly #onData = (chunk: string) => this.#data(chunk);
  readonly #onEnd = () => this.#handlers.eof();
  readonly #onExit = () => this.#restoreModes();
  readonly #onCont = () => {
    this.#enterModes();
    this.render();
  };

  constructor(options: TerminalInputOptions) {
    this.#o = options;
    this.editor = options.editor;
    this.#handlers = options.handlers ?? NO_HANDLERS;
    this.#complete = options.complete;
  }

  setHandlers(handlers: TerminalInputHandlers): void {
    this.#handlers = handlers;
  }

  setCompleter(complete: Completer): void {
    this.#complete = complete;
  }

  get started(): boolean {
    return this.#started;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#enterModes();
    const input = this.#o.input;
    input.setEncoding('utf8');
    input.on('data', this.#onData);
    input.on('end', this.#onEnd);
    input.resume();
    process.on('exit', this.#onExit);
    process.on('SIGCONT', this.#onCont);
    this.render();
  }

  stop(): void {
    if (!this.#started) return;
    this.#started = false;
    clearTimeout(this.#escTimer);
    const input = this.#o.input;
    input.off('data', this.#onData);
    input.off('end', this.#onEnd);
    input.pause();
    this.#restoreModes();
    process.off('exit', this.#onExit);
    process.off('SIGCONT', this.#onCont);
    this.#question?.cancel();
    this.#o.terminal.setLive('question', []);
    this.#o.terminal.setLive('editor', []);
    this.#o.terminal.setLive('menu', []);
  }

  /** Put `text` in the editor (e.g. queued messages taken back) and redraw. */
  setText(text: string): void {
    this.editor.setText(text);
    this.render();
  }

  /** Draw the editor (and an open menu or question) in the live area. */
  render(): void {
    if (!this.#started) return;
    const t = this.#o.terminal;
    const dim = (s: string) => (t.color ? `\x1b[2m${s}\x1b[0m` : s);
    const view = renderEditor({
      text: this.editor.text,
      cursor: this.editor.cursor,
      width: t.columns,
      prompt: this.#o.prompt?.() ?? '> ',
      maxRows: Math.max(3, Math.floor(t.screenRows / 3)),
      paste: (id) => this.editor.paste(id),
      dim,
    });
    const q = this.#question;
    // A question answered in the editor sits above it; one answered by keys takes the menu's place below it.
    const menu = this.#menu.map((r) => dim(truncateToWidth(r, t.columns)));
    t.setLive('question', q?.editing ? q.rows() : []);
    t.setLive('menu', q && !q.editing ? q.rows() : menu);
    t.setLive(
      'editor',
      view.rows,
      q && !q.editing ? undefined : { row: view.cursorRow, col: view.cursorCol },
    );
  }

  /**
   * Ask a question answered with one key (`choices` are lower-case letters): resolves to the key pressed, or
   * undefined for Esc / Ctrl+C. The editor keeps its text meanwhile.
   */
  ask(rows: string[], choices: readonly string[]): Promise<string | undefined> {
    return new Promise((resolve) => {
      const done = (answer: string | undefined) => {
        this.#question = undefined;
        this.render();
        resolve(answer);
      };
      this.#question = {
        rows: () => rows,
        cancel: () => done(undefined),
        key: (k) => {
          if (k.type === 'key' && (k.name === 'escape' || (k.ctrl && k.name === 'c'))) done(undefined);
          else if (k.type === 'text' && choices.includes(k.text.toLowerCase())) done(k.text.toLowerCase());
          else if (k.type === 'key' && !k.ctrl && !k.alt && choices.includes(k.name)) done(k.name);
          return true;
        },
      };
      this.render();
    });
  }

  /**
   * Ask a question answered with a line typed in the editor and sent with Enter (an approval with a reason): the
   * rows are shown above the editor, the half-typed text is put aside and comes back afterwards, and the answer is
   * not added to the history. Esc and Ctrl+C go to the handlers as usual (stopping the turn aborts `signal`).
   * Resolves to the line, or undefined when `signal` aborts or the input stops.
   */
  askLine(rows: string[], signal?: AbortSignal): Promise<string | undefined> {
    this.#question?.cancel();
    return new Promise((resolve) => {
      const saved = this.editor.text;
      this.editor.setText('');
      const done = (answer: string | undefined) => {
        if (this.#question !== question) return;
        this.#question = undefined;
        signal?.removeEventListener('abort', onAbort);
        this.editor.setText(saved);
        this.render();
        resolve(answer);
      };
      const onAbort = () => done(undefined);
      const question: Question = {
        rows: () => rows,
        editing: true,
        cancel: () => done(undefined),
        key: (k) => {
          if (k.type !== 'key' || k.name !== 'enter' || k.shift || k.alt || k.ctrl) return false;
          done(this.editor.expanded());
          return true;
        },
      };
      this.#question = question;
      if (signal?.aborted) return done(undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.render();
    });
  }

  /** A list to pick from with Up/Down and Enter (or its number): resolves to the index, or undefined for Esc. */
  select(title: string, items: readonly string[], visible = 10): Promise<number | undefined> {
    return new Promise((resolve) => {
      let at = 0;
      const t = this.#o.terminal;
      const done = (answer: number | undefined) => {
        this.#question = undefined;
        this.render();
        resolve(answer);
      };
      this.#question = {
        cancel: () => done(undefined),
        rows: () => {
          const first = Math.max(0, Math.min(at - Math.floor(visible / 2), items.length - visible));
          const shown = items.slice(first, first + visible).map((item, i) => {
            const n = first + i;
            const row = truncateToWidth(
              `${n === at ? '>' : ' '} ${String(n + 1).padStart(2)}. ${item}`,
              t.columns,
            );
            return n === at && t.color ? `\x1b[7m${row}\x1b[0m` : row;
          });
          return [title, ...shown, '(Up/Down and Enter to choose, Esc to cancel)'];
        },
        key: (k) => {
          if (k.type === 'text' && /^[1-9]$/.test(k.text) && Number(k.text) <= items.length) {
            done(Number(k.text) - 1);
            return true;
          }
          if (k.type !== 'key') return true;
          if (k.name === 'escape' || (k.ctrl && k.name === 'c')) done(undefined);
          else if (k.name === 'enter') done(at);
          else if (k.name === 'up' || (k.ctrl && k.name === 'p')) at = Math.max(0, at - 1);
          else if (k.name === 'down' || (k.ctrl && k.name === 'n')) at = Math.min(items.length - 1, at + 1);
          else if (k.name === 'pageup') at = Math.max(0, at - visible);
          else if (k.name === 'pagedown') at = Math.min(items.length - 1, at + visible);
          this.render();
          return true;
        },
      };
      this.render();
    });
  }

  #enterModes(): void {
    this.#o.input.setRawMode?.(true);
    this.#o.output.write(MODES_ON);
  }

  #restoreModes(): void {
    try {
      this.#o.output.write(MODES_OFF);
      this.#o.input.setRawMode?.(false);
    } catch {
      // the terminal is gone
    }
  }

  #data(chunk: string): void {
    clearTimeout(this.#escTimer);
    for (const k of this.#reader.feed(chunk)) this.#key(k);
    if (this.#reader.waiting) {
      this.#escTimer = setTimeout(() => {
        for (const k of this.#reader.flush()) this.#key(k);
      }, ESC_WAIT_MS);
    }
  }

  #key(k: Key): void {
    if (!this.#started) return;
    if (this.#question?.key(k)) return;
    if (this.#menu.length > 0) this.#menu = [];
    const action = this.editor.handle(k);
    const h = this.#handlers;
    switch (action.type) {
      case 'submit':
        this.render();
        h.submit(action.text);
        return;
      case 'interrupt':
        h.interrupt();
        this.render();
        return;
      case 'eof':
        h.eof();
        return;
      case 'escape':
        h.escape();
        this.render();
        return;
      case 'complete':
        void this.#completeNow();
        return;
      case 'suspend':
        this.#suspend();
        return;
      case 'redraw':
      case 'changed':
        this.render();
        return;
      case 'none':
        if (this.#menu.length === 0) this.render();
        return;
    }
  }

  async #completeNow(): Promise<void> {
    const complete = this.#complete;
    if (!complete) return;
    const text = this.editor.text;
    const cursor = this.editor.cursor;
    let found: Completion | undefined;
    try {
      found = await complete(text.slice(0, cursor));
    } catch {
      found = undefined;
    }
    // The user typed on meanwhile: this completion is stale.
    if (found === undefined || this.editor.text !== text || this.editor.cursor !== cursor) return;
    const { start, items } = found;
    if (items.length === 0) return;
    if (items.length === 1) {
      this.editor.insertCompletion(start, items[0] as string);
    } else {
      const common = commonPrefix(items);
      if (common.length > cursor - start) this.editor.insertCompletion(start, common);
      this.#menu = [
        items.slice(0, 40).join('  ') + (items.length > 40 ? `  … ${items.length - 40} more` : ''),
      ];
    }
    this.render();
  }

  #suspend(): void {
    this.#restoreModes();
    process.kill(process.pid, 'SIGTSTP');
  }
}

function commonPrefix(items: readonly string[]): string {
  let p = items[0] ?? '';
  for (const s of items) while (!s.startsWith(p)) p = p.slice(0, -1);
  return p;
}
