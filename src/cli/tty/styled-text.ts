/**
 * Styled runs of text and their word wrap, shared by the Markdown renderer and the code highlighter. A style becomes
 * SGR escapes only on a colour terminal; each run is closed with a full reset, so a row's styling never leaks into
 * the next line or into text that follows it.
 */
import { charWidth } from './text-width.js';

export interface Style {
  bold?: boolean;
  italic?: boolean;
  dim?: boolean;
  underline?: boolean;
  strike?: boolean;
  /** A basic ANSI foreground colour (30-37, 90-97). */
  fg?: number;
}

export interface Run {
  text: string;
  style: Style;
  /** Index in the source line of `text[0]` (-1 for text the renderer added). */
  src: number;
}

/** The SGR escape for `style` (empty for no style). */
export function sgr(style: Style): string {
  const codes: number[] = [];
  if (style.bold) codes.push(1);
  if (style.dim) codes.push(2);
  if (style.italic) codes.push(3);
  if (style.underline) codes.push(4);
  if (style.strike) codes.push(9);
  if (style.fg !== undefined) codes.push(style.fg);
  return codes.length === 0 ? '' : `\x1b[${codes.join(';')}m`;
}

/** Runs as one string: styled when `color`, plain otherwise. */
export function paint(runs: readonly Run[], color: boolean): string {
  let out = '';
  for (const r of runs) {
    const open = color ? sgr(r.style) : '';
    out += open === '' ? r.text : `${open}${r.text}\x1b[0m`;
  }
  return out;
}

export function runWidth(text: string): number {
  let w = 0;
  for (const ch of text) w += charWidth(ch);
  return w;
}

export interface WrappedRows {
  /** Each row's runs (the lead included). */
  rows: Run[][];
  /** Source index where each row's own text starts (-1 when unknown). */
  starts: number[];
}

/**
 * Wrap `runs` into rows of at most `width` columns: `lead` before the first row, `indent` before the others; breaks at
 * spaces, a word longer than a row is broken where it must be. Spaces at a break are dropped.
 */
export function wrapRuns(
  runs: readonly Run[],
  width: number,
  lead: Run[] = [],
  indent: Run[] = [],
): WrappedRows {
  const leadWidth = (l: Run[]) => l.reduce((n, r) => n + runWidth(r.text), 0);
  const rows: Run[][] = [];
  const starts: number[] = [];
  let row: Run[] = [...lead];
  let col = leadWidth(lead);
  let rowStart = -1;
  let rowHasText = false;
  const room = () => width - col;
  const push = (text: string, style: Style, src: number) => {
    if (text === '') return;
    if (!rowHasText) rowStart = src;
    rowHasText = true;
    const last = row[row.length - 1];
    if (
      last !== undefined &&
      last.style === style &&
      last.src >= 0 &&
      src >= 0 &&
      last.src + last.text.length === src
    )
      last.text += text;
    else row.push({ text, style, src });
    col += runWidth(text);
  };
  const breakRow = () => {
    rows.push(row);
    starts.push(rowStart);
    row = [...indent];
    col = leadWidth(indent);
    rowHasText = false;
    rowStart = -1;
  };
  /** Spaces seen after the row's last word: written only if a word follows on the same row. */
  let spaces: { text: string; style: Style; src: number } | undefined;
  for (const run of runs) {
    const parts = run.text.split(/( +)/);
    let offset = 0;
    for (const part of parts) {
      const src = run.src < 0 ? -1 : run.src + offset;
      offset += part.length;
      if (part === '') continue;
      if (part.startsWith(' ')) {
        // Kept inside a row, dropped at a break (and at the start of a row).
        if (rowHasText) spaces = { text: part, style: run.style, src };
        continue;
      }
      let word = part;
      let wsrc = src;
      let w = runWidth(word);
      const gap = spaces;
      spaces = undefined;
      if (gap !== undefined && rowHasText) {
        if (runWidth(gap.text) + w <= room()) push(gap.text, gap.style, gap.src);
        else breakRow();
      } else if (w > room() && rowHasText) breakRow();
      while (w > room()) {
        // Longer than a whole row: break it where the row ends.
        const [head, tail] = splitAtWidth(word, Math.max(1, room()));
        push(head, run.style, wsrc);
        breakRow();
        wsrc = wsrc < 0 ? -1 : wsrc + head.length;
        word = tail;
        w = runWidth(word);
        if (word === '') break;
      }
      push(word, run.style, wsrc);
    }
  }
  rows.push(row);
  starts.push(rowStart);
  return { rows, starts };
}

/** `text` split after at most `width` columns (at least one character in the head). */
export function splitAtWidth(text: string, width: number): [string, string] {
  let w = 0;
  let i = 0;
  for (const ch of text) {
    const cw = charWidth(ch);
    if (w + cw > width && i > 0) break;
    w += cw;
    i += ch.length;
  }
  return [text.slice(0, i), text.slice(i)];
}

/** Wrap `runs` at exactly `width` columns, breaking anywhere (code keeps its spaces), `lead` before each row. */
export function hardWrapRuns(runs: readonly Run[], width: number, lead: Run[] = []): WrappedRows {
  const leadWidth = lead.reduce((n, r) => n + runWidth(r.text), 0);
  const room = Math.max(1, width - leadWidth);
  const rows: Run[][] = [];
  const starts: number[] = [];
  let row: Run[] = [...lead];
  let col = 0;
  let rowStart = -1;
  for (const run of runs) {
    let text = run.text;
    let src = run.src;
    while (text !== '') {
      const first = String.fromCodePoint(text.codePointAt(0) as number);
      if (col >= room || (col > 0 && col + charWidth(first) > room)) {
        rows.push(row);
        starts.push(rowStart);
        row = [...lead];
        col = 0;
        rowStart = -1;
      }
      const [head, tail] = splitAtWidth(text, room - col);
      if (rowStart < 0) rowStart = src;
      row.push({ text: head, style: run.style, src });
      col += runWidth(head);
      src = src < 0 ? -1 : src + head.length;
      text = tail;
    }
  }
  rows.push(row);
  starts.push(rowStart);
  return { rows, starts };
}
