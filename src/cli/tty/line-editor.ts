/**
 * The state of the chat's input editor: a multi-line text, a cursor, pastes kept whole, and history; `handle(key)`
 * applies one key and says what the owner should do (submit, interrupt, exit, complete...). No I/O: rendering is
 * editor-view.ts, keys come from key-reader.ts.
 *
 * - Enter submits; Alt+Enter, Shift+Enter, Ctrl+J and `\` right before the cursor + Enter insert a newline.
 * - A paste is inserted as typed text when short; a long one (more than `PASTE_COLLAPSE_LINES` lines or
 *   `PASTE_COLLAPSE_CHARS` characters) as one placeholder shown as `[paste #1: 42 lines]`, moved over and deleted as a
 *   unit, and expanded to the pasted text on submit. Pasted line endings (CRLF, CR) become `\n`.
 * - Up/Down move between lines of a multi-line text, and past its first/last line walk the history (the draft being
 *   typed is kept and comes back after the newest entry).
 * - Emacs keys: Ctrl+A/E (line start/end), Ctrl+B/F, Alt+B/F and Ctrl+Left/Right (words), Ctrl+K/U (kill to line
 *   end/start), Ctrl+W and Alt+Backspace (kill word), Ctrl+D (delete forward; on an empty text: end of input).
 */
import type { Key } from './key-reader.js';

export const PASTE_COLLAPSE_LINES = 10;
export const PASTE_COLLAPSE_CHARS = 1000;

/** Placeholder token in the text: U+E000, the paste id, U+E001 (private-use characters nobody types). */
const TOKEN = /\uE000(\d+)\uE001/g;
const TOKEN_OPEN = '\uE000';
const TOKEN_CLOSE = '\uE001';

export type EditorAction =
  | { type: 'none' }
  /** The text changed or the cursor moved: redraw. */
  | { type: 'changed' }
  /** Enter: the text, pastes expanded. The editor is cleared and the text added to history. */
  | { type: 'submit'; text: string }
  | { type: 'interrupt' }
  /** Ctrl+D on an empty text. */
  | { type: 'eof' }
  | { type: 'escape' }
  /** Tab: the owner completes (see `insertCompletion`). */
  | { type: 'complete' }
  /** Ctrl+Z. */
  | { type: 'suspend' }
  /** Ctrl+L. */
  | { type: 'redraw' };

export interface History {
  readonly entries: readonly string[];
  add(text: string): void;
}

export interface Paste {
  text: string;
  lines: number;
}

export class LineEditor {
  #text = '';
  #cursor = 0;
  readonly #pastes = new Map<number, Paste>();
  #nextPaste = 1;
  readonly #history: History | undefined;
  /** Index into history while browsing it; `entries.length` = the draft. */
  #historyIndex: number | undefined;
  #draft = '';

  constructor(history?: History) {
    this.#history = history;
  }

  get text(): string {
    return this.#text;
  }

  get cursor(): number {
    return this.#cursor;
  }

  /** The paste behind placeholder `id`. */
  paste(id: number): Paste | undefined {
    return this.#pastes.get(id);
  }

  /** Replace the whole text (cursor at its end). */
  setText(text: string): void {
    this.#text = text;
    this.#cursor = text.length;
    this.#historyIndex = undefined;
  }

  /** The text with every paste placeholder replaced by what was pasted. */
  expanded(): string {
    return this.#text.replace(TOKEN, (_m, id: string) => this.#pastes.get(Number(id))?.text ?? '');
  }

  /** Replace `text.slice(start, cursor)` with `replacement` (a Tab completion). */
  insertCompletion(start: number, replacement: string): void {
    const s = Math.max(0, Math.min(start, this.#cursor));
    this.#text = this.#text.slice(0, s) + replacement + this.#text.slice(this.#cursor);
    this.#cursor = s + replacement.length;
  }

  handle(k: Key): EditorAction {
    if (k.type === 'text') {
      this.#insert(clean(k.text));
      return { type: 'changed' };
    }
    if (k.type === 'paste') {
      this.#pasted(k.text);
      return { type: 'changed' };
    }
    const { name, ctrl, alt, shift } = k;
    if (ctrl) {
      switch (name) {
        case 'c':
          return { type: 'interrupt' };
        case 'd':
          if (this.#text === '') return { type: 'eof' };
          return this.#deleteForward();
        case 'a':
          return this.#move(lineStart(this.#text, this.#cursor));
        case 'e':
          return this.#move(lineEnd(this.#text, this.#cursor));
        case 'b':
          return this.#move(this.#prev(this.#cursor));
        case 'f':
          return this.#move(this.#next(this.#cursor));
        case 'k':
          return this.#cut(this.#cursor, lineEnd(this.#text, this.#cursor));
        case 'u':
          return this.#cut(lineStart(this.#text, this.#cursor), this.#cursor);
        case 'w':
          return this.#cut(wordStart(this.#text, this.#cursor), this.#cursor);
        case 'j':
          this.#insert('\n');
          return { type: 'changed' };
        case 'z':
          return { type: 'suspend' };
        case 'l':
          return { type: 'redraw' };
        case 'left':
          return this.#move(wordStart(this.#text, this.#cursor));
        case 'right':
          return this.#move(wordEnd(this.#text, this.#cursor));
        case 'home':
          return this.#move(0);
        case 'end':
          return this.#move(this.#text.length);
        case 'backspace':
          return this.#cut(wordStart(this.#text, this.#cursor), this.#cursor);
        case 'enter':
          this.#insert('\n');
          return { type: 'changed' };
        default:
          return { type: 'none' };
      }
    }
    if (alt) {
      switch (name) {
        case 'enter':
          this.#insert('\n');
          return { type: 'changed' };
        case 'b':
        case 'left':
          return this.#move(wordStart(this.#text, this.#cursor));
        case 'f':
        case 'right':
          return this.#move(wordEnd(this.#text, this.#cursor));
        case 'backspace':
          return this.#cut(wordStart(this.#text, this.#cursor), this.#cursor);
        case 'd':
          return this.#cut(this.#cursor, wordEnd(this.#text, this.#cursor));
        case 'escape':
          return { type: 'escape' };
        default:
          return { type: 'none' };
      }
    }
    switch (name) {
      case 'enter':
        if (shift) {
          this.#insert('\n');
          return { type: 'changed' };
        }
        if (this.#cursor > 0 && this.#text[this.#cursor - 1] === '\\') {
          // `\` + Enter: a newline instead of the backslash.
          this.#text = `${this.#text.slice(0, this.#cursor - 1)}\n${this.#text.slice(this.#cursor)}`;
          return { type: 'changed' };
        }
        return this.#submit();
      case 'backspace':
        if (this.#cursor === 0) return { type: 'none' };
        return this.#cut(this.#prev(this.#cursor), this.#cursor);
      case 'delete':
        return this.#deleteForward();
      case 'left':
        return this.#move(this.#prev(this.#cursor));
      case 'right':
        return this.#move(this.#next(this.#cursor));
      case 'home':
        return this.#move(lineStart(this.#text, this.#cursor));
      case 'end':
        return this.#move(lineEnd(this.#text, this.#cursor));
      case 'up':
        return this.#vertical(-1);
      case 'down':
        return this.#vertical(1);
      case 'tab':
        return shift ? { type: 'none' } : { type: 'complete' };
      case 'escape':
        return { type: 'escape' };
      default:
        return { type: 'none' };
    }
  }

  #submit(): EditorAction {
    const text = this.expanded();
    const raw = this.#text;
    this.#text = '';
    this.#cursor = 0;
    this.#pastes.clear();
    this.#historyIndex = undefined;
    this.#draft = '';
    if (raw.trim() !== '') this.#history?.add(text);
    return { type: 'submit', text };
  }

  #insert(s: string): void {
    if (s === '') return;
    this.#text = this.#text.slice(0, this.#cursor) + s + this.#text.slice(this.#cursor);
    this.#cursor += s.length;
  }

  #pasted(raw: string): void {
    const text = raw.replace(/\r\n?/g, '\n');
    const lines = text.split('\n').length;
    if (lines > PASTE_COLLAPSE_LINES || text.length > PASTE_COLLAPSE_CHARS) {
      const id = this.#nextPaste++;
      this.#pastes.set(id, { text, lines });
      this.#insert(`${TOKEN_OPEN}${id}${TOKEN_CLOSE}`);
      return;
    }
    this.#insert(text);
  }

  #move(to: number): EditorAction {
    if (to === this.#cursor) return { type: 'none' };
    this.#cursor = to;
    return { type: 'changed' };
  }

  #cut(from: number, to: number): EditorAction {
    if (from >= to) return { type: 'none' };
    this.#text = this.#text.slice(0, from) + this.#text.slice(to);
    this.#cursor = from;
    return { type: 'changed' };
  }

  #deleteForward(): EditorAction {
    if (this.#cursor >= this.#text.length) return { type: 'none' };
    return this.#cut(this.#cursor, this.#next(this.#cursor));
  }

  /** Up/Down: another line of the text, else the history. */
  #vertical(dir: -1 | 1): EditorAction {
    const t = this.#text;
    const start = lineStart(t, this.#cursor);
    const column = this.#cursor - start;
    if (dir < 0 && start > 0) {
      const prevStart = lineStart(t, start - 1);
      return this.#move(this.#clamp(prevStart + Math.min(column, start - 1 - prevStart)));
    }
    const end = lineEnd(t, this.#cursor);
    if (dir > 0 && end < t.length) {
      const nextEnd = lineEnd(t, end + 1);
      return this.#move(this.#clamp(end + 1 + Math.min(column, nextEnd - end - 1)));
    }
    return this.#historyStep(dir);
  }

  #historyStep(dir: -1 | 1): EditorAction {
    const entries = this.#history?.entries ?? [];
    const at = this.#historyIndex ?? entries.length;
    const to = at + dir;
    if (to < 0 || to > entries.length) return { type: 'none' };
    if (this.#historyIndex === undefined) this.#draft = this.#text;
    this.#historyIndex = to;
    this.#text = to === entries.length ? this.#draft : (entries[to] as string);
    this.#cursor = this.#text.length;
    if (to === entries.length) this.#historyIndex = undefined;
    return { type: 'changed' };
  }

  /** A cursor position never inside a placeholder token. */
  #clamp(i: number): number {
    const open = this.#text.lastIndexOf(TOKEN_OPEN, i - 1);
    if (open < 0) return i;
    const close = this.#text.indexOf(TOKEN_CLOSE, open);
    return close >= i ? close + 1 : i;
  }

  /** The position one unit (a code point, or a whole placeholder) before `i`. */
  #prev(i: number): number {
    if (i <= 0) return 0;
    const t = this.#text;
    if (t[i - 1] === TOKEN_CLOSE) {
      const open = t.lastIndexOf(TOKEN_OPEN, i - 1);
      if (open >= 0) return open;
    }
    const c = t.charCodeAt(i - 1);
    return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? i - 2 : i - 1;
  }

  /** The position one unit after `i`. */
  #next(i: number): number {
    const t = this.#text;
    if (i >= t.length) return t.length;
    if (t[i] === TOKEN_OPEN) {
      const close = t.indexOf(TOKEN_CLOSE, i);
      if (close >= 0) return close + 1;
    }
    const c = t.charCodeAt(i);
    return c >= 0xd800 && c <= 0xdbff && i + 1 < t.length ? i + 2 : i + 1;
  }
}

/** Typed text without the private-use characters that delimit placeholders (and with CR as newline). */
function clean(text: string): string {
  return text.replace(/[\uE000\uE001]/g, '').replace(/\r\n?/g, '\n');
}

function lineStart(t: string, i: number): number {
  return t.lastIndexOf('\n', i - 1) + 1;
}

function lineEnd(t: string, i: number): number {
  const n = t.indexOf('\n', i);
  return n < 0 ? t.length : n;
}

function wordStart(t: string, i: number): number {
  let j = i;
  while (j > 0 && /\s/.test(t[j - 1] as string)) j--;
  while (j > 0 && !/\s/.test(t[j - 1] as string)) j--;
  return j;
}

function wordEnd(t: string, i: number): number {
  let j = i;
  while (j < t.length && /\s/.test(t[j] as string)) j++;
  while (j < t.length && !/\s/.test(t[j] as string)) j++;
  return j;
}

export type EditorSegment = { text: string; start: number } | { paste: number; start: number; end: number };

/** Split `text` into plain runs and placeholder references (with their indices), for rendering. */
export function editorSegments(text: string): EditorSegment[] {
  const out: EditorSegment[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) out.push({ text: text.slice(last, m.index), start: last });
    out.push({ paste: Number(m[1]), start: m.index, end: m.index + m[0].length });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), start: last });
  return out;
}
