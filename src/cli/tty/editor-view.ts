/**
 * Lay out the input editor's text as terminal rows: a prompt before the first line, an indent before the others,
 * wrapped at the terminal width, with the cursor's row and column. Control characters in the text (a pasted ESC) are
 * shown visibly (`^[`), tabs as spaces to the next multiple of 4, paste placeholders as `[paste #1: 42 lines]`. When
 * the text needs more rows than `maxRows`, the rows around the cursor are shown.
 *
 * Rows never hold more than `width` columns and carry only our own SGR styling, so the owner knows exactly how many
 * terminal rows it drew.
 */
import { showControl } from '../safe-text.js';
import { editorSegments, type Paste } from './line-editor.js';
import { charWidth } from './text-width.js';

export interface EditorViewInput {
  text: string;
  cursor: number;
  width: number;
  prompt: string;
  /** Before the second and later lines (default: spaces as wide as the prompt). */
  continuation?: string;
  maxRows: number;
  paste: (id: number) => Paste | undefined;
  /** Style a placeholder (dim on a colour terminal). */
  dim?: (text: string) => string;
}

export interface EditorView {
  rows: string[];
  cursorRow: number;
  cursorCol: number;
}

/** One drawn cell run: what the terminal shows for one unit of the text. */
interface Cell {
  /** The text index this run starts at. */
  at: number;
  shown: string;
  width: number;
  /** A newline in the text. */
  newline?: boolean;
}

function cellsOf(input: EditorViewInput): Cell[] {
  const cells: Cell[] = [];
  for (const seg of editorSegments(input.text)) {
    if ('paste' in seg) {
      const p = input.paste(seg.paste);
      const label = `[paste #${seg.paste}: ${p ? `${p.lines} line${p.lines === 1 ? '' : 's'}, ${p.text.length} chars` : 'empty'}]`;
      cells.push({ at: seg.start, shown: input.dim ? input.dim(label) : label, width: label.length });
      continue;
    }
    let at = seg.start;
    for (const ch of seg.text) {
      if (ch === '\n') cells.push({ at, shown: '', width: 0, newline: true });
      else if (ch === '\t') cells.push({ at, shown: '\t', width: 0 });
      else {
        const c = ch.codePointAt(0) as number;
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
          const s = showControl(ch);
          cells.push({ at, shown: s, width: s.length });
        } else cells.push({ at, shown: ch, width: charWidth(ch) });
      }
      at += ch.length;
    }
  }
  return cells;
}

export function renderEditor(input: EditorViewInput): EditorView {
  const width = Math.max(8, input.width);
  const prompt = input.prompt;
  const cont = input.continuation ?? ' '.repeat(prompt.length);
  const rows: string[] = [];
  let row = prompt;
  let col = prompt.length;
  let cursorRow = -1;
  let cursorCol = 0;
  const newRow = (lead: string) => {
    rows.push(row);
    row = lead;
    col = lead.length;
  };
  const cells = cellsOf(input);
  for (const cell of cells) {
    if (cursorRow < 0 && cell.at >= input.cursor) {
      if (col >= width) newRow('');
      cursorRow = rows.length;
      cursorCol = col;
    }
    if (cell.newline) {
      newRow(cont);
      continue;
    }
    let shown = cell.shown;
    let w = cell.width;
    if (shown === '\t') {
      w = 4 - (col % 4);
      shown = ' '.repeat(w);
    }
    if (col + w > width) {
      newRow('');
      if (w > width) {
        // A placeholder label wider than the screen: cut.
        shown = shown.slice(0, width);
        w = width;
      }
    }
    row += shown;
    col += w;
  }
  if (cursorRow < 0) {
    if (col >= width) newRow('');
    cursorRow = rows.length;
    cursorCol = col;
  }
  rows.push(row);
  const max = Math.max(1, input.maxRows);
  if (rows.length <= max) return { rows, cursorRow, cursorCol };
  // Show a window of rows holding the cursor.
  const first = Math.min(Math.max(0, cursorRow - max + 1), rows.length - max);
  return { rows: rows.slice(first, first + max), cursorRow: cursorRow - first, cursorCol };
}
