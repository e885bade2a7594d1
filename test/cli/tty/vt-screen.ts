/**
 * A small terminal emulator for tests: what a screen of `columns` x `rows` shows after some output. It knows what the
 * chat writes — printable text with auto-wrap (and the pending-wrap state at the last column), CR, LF (scrolling at
 * the bottom), CSI A/B/C/D/G (cursor moves), J and K (erase below / in line); SGR and private modes are ignored.
 */
import { Writable } from 'node:stream';
import { charWidth } from '../../../src/cli/tty/text-width.js';

export class VtScreen extends Writable {
  readonly isTTY = true;
  columns: number;
  rows: number;
  /** Rows that scrolled off the top. */
  readonly scrolled: string[] = [];
  #cells: string[][];
  #x = 0;
  #y = 0;
  #pendingWrap = false;
  raw = '';

  constructor(columns = 40, rows = 12) {
    super();
    this.columns = columns;
    this.rows = rows;
    this.#cells = Array.from({ length: rows }, () => []);
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.feed(chunk.toString());
    done();
  }

  /** The visible rows, trailing spaces trimmed. */
  lines(): string[] {
    return this.#cells.map((r) => r.join('').replace(/\s+$/, ''));
  }

  /** Everything: scrolled-off rows then the screen, without trailing empty rows. */
  text(): string {
    const all = [...this.scrolled, ...this.lines()];
    while (all.length > 0 && all[all.length - 1] === '') all.pop();
    return all.join('\n');
  }

  get cursor(): { x: number; y: number } {
    return { x: this.#x, y: this.#y };
  }

  feed(s: string): void {
    this.raw += s;
    let i = 0;
    while (i < s.length) {
      const ch = s[i] as string;
      if (ch === '\x1b') {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: parsing terminal escapes is the point
        const m = /^\x1b\[([?>]?)([0-9;]*)([A-Za-z~])/.exec(s.slice(i, i + 32));
        if (!m) {
          i++;
          continue;
        }
        this.#csi(m[1] ?? '', m[2] ?? '', m[3] ?? '');
        i += m[0].length;
        continue;
      }
      if (ch === '\r') {
        this.#x = 0;
        this.#pendingWrap = false;
      } else if (ch === '\n') {
        // A tty's output processing (ONLCR, which stays on in raw mode) makes it CR LF.
        this.#x = 0;
        this.#lineFeed();
        this.#pendingWrap = false;
      } else {
        const cp = String.fromCodePoint(s.codePointAt(i) as number);
        this.#put(cp);
        i += cp.length;
        continue;
      }
      i++;
    }
  }

  #put(ch: string): void {
    const w = charWidth(ch);
    if (w === 0) return;
    if (this.#pendingWrap || this.#x + w > this.columns) {
      this.#x = 0;
      this.#lineFeed();
      this.#pendingWrap = false;
    }
    const row = this.#cells[this.#y] as string[];
    while (row.length < this.#x) row.push(' ');
    row[this.#x] = ch;
    if (w === 2) row[this.#x + 1] = '';
    this.#x += w;
    if (this.#x >= this.columns) {
      this.#x = this.columns - 1;
      this.#pendingWrap = true;
    }
  }

  #lineFeed(): void {
    if (this.#y < this.rows - 1) {
      this.#y++;
      return;
    }
    this.scrolled.push((this.#cells.shift() as string[]).join('').replace(/\s+$/, ''));
    this.#cells.push([]);
  }

  #csi(priv: string, params: string, final: string): void {
    if (priv !== '') return;
    const n = params === '' ? 1 : Number(params.split(';')[0]);
    this.#pendingWrap = false;
    switch (final) {
      case 'A':
        this.#y = Math.max(0, this.#y - n);
        break;
      case 'B':
        this.#y = Math.min(this.rows - 1, this.#y + n);
        break;
      case 'C':
        this.#x = Math.min(this.columns - 1, this.#x + n);
        break;
      case 'D':
        this.#x = Math.max(0, this.#x - n);
        break;
      case 'G':
        this.#x = Math.min(this.columns - 1, n - 1);
        break;
      case 'J': {
        const row = this.#cells[this.#y] as string[];
        row.length = Math.min(row.length, this.#x);
        for (let y = this.#y + 1; y < this.rows; y++) this.#cells[y] = [];
        break;
      }
      case 'K': {
        const row = this.#cells[this.#y] as string[];
        row.length = Math.min(row.length, this.#x);
        break;
      }
      default:
        break;
    }
  }
}
