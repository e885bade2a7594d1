/**
 * How many terminal columns text takes, counted low: characters some terminal draws zero-wide (combining marks,
 * format characters, Hangul medial/final jamo) count 0, East Asian wide characters 2, anything else 1. Our own SGR /
 * CSI sequences take no room. Callers that erase rows rely on never counting more than the terminal used.
 */

/** A CSI escape sequence (our styling): no width on screen. */
export const CSI_SEQUENCE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;:?]*[A-Za-z]`, 'g');
/** Drawn zero-wide by some terminal. */
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}\u1160-\u11ff]/u;

/** Columns `ch` (one code point) takes at least: 0, 1 or 2. */
export function charWidth(ch: string): number {
  const c = ch.codePointAt(0) ?? 0;
  if (c >= 0x20 && c < 0x7f) return 1;
  if (ZERO_WIDTH.test(ch)) return 0;
  return isWide(c) ? 2 : 1;
}

/** Columns of `text` without its CSI sequences (no tabs or newlines expected). */
export function textWidth(text: string): number {
  let w = 0;
  for (const ch of text.replace(CSI_SEQUENCE, '')) w += charWidth(ch);
  return w;
}

/** `text` cut to at most `width` columns (CSI sequences kept, counted zero), ending in `…` when something was cut. */
export function truncateToWidth(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let out = '';
  let w = 0;
  let last = 0;
  const addPlain = (plain: string): boolean => {
    for (const ch of plain) {
      const cw = charWidth(ch);
      if (w + cw > width - 1) return false;
      out += ch;
      w += cw;
    }
    return true;
  };
  for (const m of text.matchAll(CSI_SEQUENCE)) {
    if (!addPlain(text.slice(last, m.index))) return `${out}…\x1b[0m`;
    out += m[0];
    last = m.index + m[0].length;
  }
  addPlain(text.slice(last));
  return `${out}…\x1b[0m`;
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
