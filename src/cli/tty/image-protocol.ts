/**
 * Pictures drawn in the terminal: the kitty graphics protocol (kitty, Ghostty, WezTerm) or iTerm2's inline images
 * (iTerm2, WezTerm), chosen from what the terminal advertises in the environment; anywhere else — tmux and screen
 * included, which do not pass these sequences on by default — nothing is drawn and the caller prints its one-line
 * summary. `PANTO_IMAGES=kitty|iterm|off` overrides the detection.
 *
 * The escape sequences are built here from bytes we produced (the media pipeline's output), never from text a model
 * or a tool wrote. Kitty is asked for no replies (`q=2`), so nothing arrives on stdin in answer.
 */

export type ImageProtocol = 'kitty' | 'iterm' | 'none';

/** The protocol the terminal described by `env` understands. */
export function detectImageProtocol(env: NodeJS.ProcessEnv): ImageProtocol {
  const forced = env.PANTO_IMAGES?.toLowerCase();
  if (forced === 'kitty') return 'kitty';
  if (forced === 'iterm' || forced === 'iterm2') return 'iterm';
  if (forced === 'off' || forced === 'none' || forced === '0') return 'none';
  const term = env.TERM ?? '';
  // A multiplexer swallows (or misplaces) graphics unless specially configured: a summary line is the honest output.
  if (env.TMUX || term.startsWith('screen') || term.startsWith('tmux') || env.STY) return 'none';
  if (
    term === 'xterm-kitty' ||
    env.KITTY_WINDOW_ID ||
    term === 'xterm-ghostty' ||
    env.TERM_PROGRAM === 'ghostty'
  )
    return 'kitty';
  if (env.TERM_PROGRAM === 'WezTerm') return 'kitty';
  if (env.TERM_PROGRAM === 'iTerm.app' || env.LC_TERMINAL === 'iTerm2') return 'iterm';
  return 'none';
}

/** Base64 payload bytes per kitty escape (the protocol's limit). */
const KITTY_CHUNK = 4096;

/**
 * A PNG drawn at the cursor with the kitty protocol, `columns` cells wide (the terminal keeps the aspect ratio and
 * moves the cursor past the picture).
 */
export function kittyImage(png: Uint8Array, columns: number): string {
  const b64 = Buffer.from(png.buffer, png.byteOffset, png.byteLength).toString('base64');
  const parts: string[] = [];
  for (let i = 0; i < b64.length || i === 0; i += KITTY_CHUNK) {
    const chunk = b64.slice(i, i + KITTY_CHUNK);
    const more = i + KITTY_CHUNK < b64.length ? 1 : 0;
    const keys = i === 0 ? `a=T,f=100,q=2,c=${Math.max(1, Math.floor(columns))},m=${more}` : `m=${more}`;
    parts.push(`\x1b_G${keys};${chunk}\x1b\\`);
  }
  return parts.join('');
}

/** An image (PNG, JPEG, GIF) drawn at the cursor with iTerm2's protocol, `columns` cells wide. */
export function itermImage(data: Uint8Array, columns: number, name?: string): string {
  const b64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  const nameKey = name === undefined ? '' : `name=${Buffer.from(name).toString('base64')};`;
  return `\x1b]1337;File=inline=1;${nameKey}size=${data.byteLength};width=${Math.max(1, Math.floor(columns))};preserveAspectRatio=1:${b64}\x07`;
}

/**
 * How many columns to draw a `width`x`height` picture over: about 10 pixels a cell, at most `maxColumns`, and no
 * taller than `maxRows` (cells taken as twice as tall as wide).
 */
export function imageColumns(width: number, height: number, maxColumns: number, maxRows: number): number {
  if (width <= 0 || height <= 0) return Math.max(1, Math.min(maxColumns, 20));
  let columns = Math.min(maxColumns, Math.max(1, Math.ceil(width / 10)));
  const rows = (columns * height) / width / 2;
  if (rows > maxRows) columns = Math.max(1, Math.floor((maxRows * 2 * width) / height));
  return columns;
}
