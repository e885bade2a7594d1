/**
 * Terminal input bytes (already decoded as UTF-8) to key events, for the chat's input editor in raw mode.
 *
 * Understood: printable text (runs of it become one `text` event), C0 controls (Ctrl+letter, Enter = CR, Ctrl+J = LF,
 * Tab, Backspace as DEL or BS), Alt+key as ESC-prefixed (ESC CR is Alt+Enter), CSI and SS3 cursor/editing keys with
 * xterm modifiers (`ESC [1;5C` is Ctrl+Right), xterm `modifyOtherKeys` (`ESC [27;2;13~` is Shift+Enter), the kitty
 * keyboard protocol (`ESC [13;2u` is Shift+Enter, `ESC [27u` Escape, `ESC [99;5u` Ctrl+C), and bracketed paste
 * (`ESC [200~ … ESC [201~`, one `paste` event whatever it holds).
 *
 * Contract: `feed` never throws and holds back only an incomplete sequence at the end of its input; `flush` (called
 * by the owner when no byte followed for a moment) turns a held lone ESC into an Escape key. A paste longer than
 * `maxPasteChars` is cut (the event says how much was dropped) so a hostile paste cannot exhaust memory. Sequences
 * that are not understood are dropped, never inserted as text; a runaway one is dropped after 64 bytes (what follows
 * is read as input again).
 */

export type KeyName =
  | 'enter'
  | 'tab'
  | 'backspace'
  | 'delete'
  | 'insert'
  | 'escape'
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'home'
  | 'end'
  | 'pageup'
  | 'pagedown'
  /** A letter with Ctrl (`name` is the letter), or an Alt+letter. */
  | string;

export type Key =
  | { type: 'text'; text: string }
  | { type: 'paste'; text: string; droppedChars: number }
  | { type: 'key'; name: KeyName; ctrl: boolean; alt: boolean; shift: boolean };

/** Default cap on one paste: 8 Mi characters (past the chat's 4 Mi-character message cap). */
export const MAX_PASTE_CHARS = 8 * 1024 * 1024;

const ESC = '\x1b';
const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

const CSI_LETTER: Record<string, KeyName> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
};

const CSI_TILDE: Record<string, KeyName> = {
  '1': 'home',
  '2': 'insert',
  '3': 'delete',
  '4': 'end',
  '5': 'pageup',
  '6': 'pagedown',
  '7': 'home',
  '8': 'end',
};

/** Kitty functional key codes (private-use code points) we act on. */
const KITTY_KEYS: Record<number, KeyName> = {
  13: 'enter',
  9: 'tab',
  127: 'backspace',
  8: 'backspace',
  27: 'escape',
  57414: 'enter', // keypad Enter
  57399: '0',
};

function key(name: KeyName, mods: { ctrl?: boolean; alt?: boolean; shift?: boolean } = {}): Key {
  return { type: 'key', name, ctrl: mods.ctrl ?? false, alt: mods.alt ?? false, shift: mods.shift ?? false };
}

/** xterm modifier parameter (1 + bits: shift 1, alt 2, ctrl 4; meta 8 counts as alt). */
function modifiers(param: number | undefined): { ctrl: boolean; alt: boolean; shift: boolean } {
  const bits = param === undefined || !Number.isFinite(param) || param < 1 ? 0 : param - 1;
  return { shift: (bits & 1) !== 0, alt: (bits & 2) !== 0 || (bits & 8) !== 0, ctrl: (bits & 4) !== 0 };
}

/** The key for one C0 control character or DEL (`alt` when it came after ESC). */
function controlKey(ch: string, alt: boolean): Key {
  const c = ch.charCodeAt(0);
  if (ch === '\r') return key('enter', { alt });
  if (ch === '\n') return key('j', { ctrl: true, alt });
  if (ch === '\t') return key('tab', { alt });
  if (c === 0x7f || c === 0x08) return key('backspace', { alt });
  if (c === 0) return key('space', { ctrl: true, alt });
  if (c >= 1 && c <= 26) return key(String.fromCharCode(c + 0x60), { ctrl: true, alt });
  // 0x1c..0x1f: Ctrl+\ ] ^ _
  return key(String.fromCharCode(c + 0x40), { ctrl: true, alt });
}

function isControl(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return c < 0x20 || c === 0x7f;
}

export class KeyReader {
  readonly #maxPaste: number;
  #pending = '';
  /** Inside a bracketed paste: what it holds so far. */
  #paste: string[] | undefined;
  #pasteLength = 0;
  #pasteDropped = 0;

  constructor(options: { maxPasteChars?: number } = {}) {
    this.#maxPaste = options.maxPasteChars ?? MAX_PASTE_CHARS;
  }

  /** True when a lone ESC (or an incomplete sequence) is held back: the owner calls `flush` after a short pause. */
  get waiting(): boolean {
    return this.#pending.length > 0 && this.#paste === undefined;
  }

  /** The keys in `chunk` (plus what an earlier chunk left incomplete). */
  feed(chunk: string): Key[] {
    const out: Key[] = [];
    let s = this.#pending + chunk;
    this.#pending = '';
    let i = 0;
    let text = '';
    const flushText = () => {
      if (text !== '') out.push({ type: 'text', text });
      text = '';
    };
    while (i < s.length) {
      if (this.#paste !== undefined) {
        const end = s.indexOf(PASTE_END, i);
        if (end < 0) {
          // Keep a possible partial end marker for the next chunk.
          const keep = partialSuffix(s, PASTE_END);
          this.#addPaste(s.slice(i, s.length - keep));
          this.#pending = s.slice(s.length - keep);
          return out;
        }
        this.#addPaste(s.slice(i, end));
        out.push({ type: 'paste', text: this.#paste.join(''), droppedChars: this.#pasteDropped });
        this.#paste = undefined;
        i = end + PASTE_END.length;
        continue;
      }
      const ch = s[i] as string;
      if (ch !== ESC) {
        if (isControl(ch)) {
          flushText();
          out.push(controlKey(ch, false));
        } else {
          text += ch;
        }
        i++;
        continue;
      }
      flushText();
      const parsed = this.#escape(s, i);
      if (parsed === 'incomplete') {
        this.#pending = s.slice(i);
        return out;
      }
      if (parsed.paste) {
        this.#paste = [];
        this.#pasteLength = 0;
        this.#pasteDropped = 0;
        // The rest of `s` is handled by the paste branch.
        s = s.slice(parsed.end);
        i = 0;
        continue;
      }
      if (parsed.key) out.push(parsed.key);
      i = parsed.end;
    }
    flushText();
    return out;
  }

  /** After a pause: a held lone ESC is the Escape key; a held incomplete sequence is dropped. */
  flush(): Key[] {
    if (this.#paste !== undefined) return [];
    const held = this.#pending;
    this.#pending = '';
    if (held === ESC) return [key('escape')];
    if (held === `${ESC}${ESC}`) return [key('escape', { alt: true })];
    return [];
  }

  #addPaste(part: string): void {
    const paste = this.#paste as string[];
    const room = this.#maxPaste - this.#pasteLength;
    if (part.length <= room) {
      paste.push(part);
      this.#pasteLength += part.length;
      return;
    }
    if (room > 0) paste.push(part.slice(0, room));
    this.#pasteLength += Math.max(0, room);
    this.#pasteDropped += part.length - Math.max(0, room);
  }

  /** Parse the escape sequence at `s[i]` (an ESC). */
  #escape(s: string, i: number): 'incomplete' | { end: number; key?: Key; paste?: boolean } {
    const next = s[i + 1];
    if (next === undefined) return 'incomplete';
    if (next === '[') return this.#csi(s, i);
    if (next === 'O') {
      const final = s[i + 2];
      if (final === undefined) return 'incomplete';
      const name = CSI_LETTER[final];
      if (name) return { end: i + 3, key: key(name) };
      if (final === 'M') return { end: i + 3, key: key('enter') }; // keypad Enter in application mode
      return { end: i + 3 };
    }
    if (next === ESC) {
      // ESC ESC [..]: Alt + an escape sequence (some terminals send Alt+arrow this way); ESC ESC alone is Alt+Esc.
      const inner = this.#escape(s, i + 1);
      if (inner === 'incomplete') return s.length === i + 2 ? 'incomplete' : { end: i + 2 };
      if (inner.key?.type === 'key') return { end: inner.end, key: { ...inner.key, alt: true } };
      return inner;
    }
    // Alt + a character.
    const cp = s.codePointAt(i + 1) as number;
    const ch = String.fromCodePoint(cp);
    const end = i + 1 + ch.length;
    if (isControl(ch)) return { end, key: controlKey(ch, true) };
    return { end, key: key(ch, { alt: true }) };
  }

  #csi(s: string, i: number): 'incomplete' | { end: number; key?: Key; paste?: boolean } {
    // ESC [ params (0x30-0x3f)* intermediates (0x20-0x2f)* final (0x40-0x7e)
    let j = i + 2;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if (c >= 0x40 && c <= 0x7e) break;
      if (c < 0x20 || c > 0x3f) return { end: j }; // malformed: drop what came so far
      j++;
      // A runaway sequence (hostile or garbage) is dropped rather than buffered forever.
      if (j - i > 64) return { end: j };
    }
    if (j >= s.length) return 'incomplete';
    const final = s[j] as string;
    const body = s.slice(i + 2, j);
    const end = j + 1;
    if (s.startsWith(PASTE_START, i)) return { end, paste: true };
    if (body.startsWith('<') || body.startsWith('?') || body.startsWith('>')) return { end }; // mouse, reports
    const params = body.split(';').map((p) => p.split(':'));
    const num = (k: number, sub = 0) => {
      const v = params[k]?.[sub];
      return v === undefined || v === '' ? undefined : Number(v);
    };
    if (final === 'u') {
      // kitty: code[:shifted[:base]];mods[:event];text
      const code = num(0);
      const mods = modifiers(num(1));
      const event = num(1, 1);
      if (event === 3 || code === undefined) return { end }; // key release
      const name = KITTY_KEYS[code];
      if (name !== undefined && name !== '0') return { end, key: key(name, mods) };
      if (code >= 0xe000 && code <= 0xf8ff) return { end }; // other functional keys (F-keys, media, modifiers)
      if (code < 0 || code > 0x10ffff) return { end };
      const ch = String.fromCodePoint(code);
      if (mods.ctrl || mods.alt) return { end, key: key(ch.toLowerCase(), { ...mods, shift: false }) };
      const shifted = num(0, 1);
      const typed = mods.shift && shifted !== undefined ? String.fromCodePoint(shifted) : ch;
      return { end, key: { type: 'text', text: typed } };
    }
    if (final === '~') {
      const first = params[0]?.[0] ?? '';
      if (first === '27') {
        // xterm modifyOtherKeys: 27;mods;code~
        const mods = modifiers(num(1));
        const code = num(2);
        if (code === undefined) return { end };
        const name = KITTY_KEYS[code];
        if (name !== undefined && name !== '0') return { end, key: key(name, mods) };
        if (code < 0x20 || code > 0x10ffff) return { end };
        const ch = String.fromCodePoint(code);
        if (mods.ctrl || mods.alt) return { end, key: key(ch.toLowerCase(), { ...mods, shift: false }) };
        return { end, key: { type: 'text', text: ch } };
      }
      const name = CSI_TILDE[first];
      return name ? { end, key: key(name, modifiers(num(1))) } : { end };
    }
    if (final === 'Z') return { end, key: key('tab', { shift: true }) };
    const name = CSI_LETTER[final];
    if (name) return { end, key: key(name, modifiers(num(1))) };
    return { end };
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `marker`. */
function partialSuffix(s: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, s.length); n > 0; n--) {
    if (s.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}
