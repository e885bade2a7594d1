/**
 * Untrusted text made safe to show on a terminal. The model's answer and thinking (which a prompt injection controls),
 * tool names and outputs, provider error messages, MCP server names and logs, and file names may carry control
 * characters a terminal obeys: ESC sequences (OSC 52 writes the clipboard, OSC 8 plants hyperlinks, OSC 0/2 retitle
 * the window, CSI moves the cursor and erases earlier output), a lone `\r` that overwrites a line, C1 controls (U+009B
 * is a one-character CSI), BEL floods, and bidi overrides (U+202E) that make a file name read backwards.
 *
 * `visibleControls` shows each such character instead of passing it on: C0 controls and DEL in caret notation (`^[`,
 * `^G`, `^?`), a lone CR as `^M` (CRLF becomes a plain newline), C1 controls and bidi controls as `<U+009B>`.
 * Newline and tab pass. Everything else (any printable character, in any script) is left alone. Our own styling is
 * applied after this, so it keeps working.
 */

/** Characters a terminal may act on: C0 but tab/newline, DEL, C1, bidi embeddings/overrides/isolates and marks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's job
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Whether `text` holds anything `visibleControls` would change. */
export function hasControls(text: string): boolean {
  CONTROL.lastIndex = 0;
  return CONTROL.test(text);
}

/** `text` with every terminal control shown visibly (see the module contract); CRLF becomes `\n`. */
export function visibleControls(text: string): string {
  if (!hasControls(text)) return text;
  return text.replace(/\r\n/g, '\n').replace(CONTROL, showControl);
}

/** The visible form of one control character. */
export function showControl(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c < 0x20) return `^${String.fromCharCode(c + 0x40)}`;
  if (c === 0x7f) return '^?';
  return `<U+${c.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * JSON text (from `JSON.stringify`) with the characters `JSON.stringify` leaves raw but a terminal obeys — C1 controls,
 * DEL, bidi controls, U+2028/U+2029 — written as `\uXXXX` escapes: the same JSON value, safe to print. They can only
 * occur inside JSON strings, where the escape is valid.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(
    /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
