/**
 * A model's answer, streamed, as Markdown on a terminal: headings, emphasis, inline code, links, lists, block quotes,
 * rules, tables (as typed) and code fences with highlighting, word-wrapped at the terminal width.
 *
 * Streaming contract: `push(delta)` returns the rows that are final (`commit`, each ending in `\n`) and the rows of the
 * line still being written (`pending`, to be shown in the live area below the output and redrawn). A line is final
 * when its newline arrives. A line still open after `maxPendingRows` rows has its earlier rows made final (they then
 * cannot change; an emphasis that closes later shows its opening marker as typed). `end()` makes everything final.
 *
 * Everything the model wrote is untrusted: its terminal controls are shown visibly (`visibleControls`) before any
 * styling of ours is added; tabs become spaces (to multiples of 4) so the width of every row is known.
 */
import { visibleControls } from '../safe-text.js';
import { type HighlightState, highlightLine } from './highlight.js';
import { parseInline } from './inline-markdown.js';
import { hardWrapRuns, paint, type Run, type Style, type WrappedRows, wrapRuns } from './styled-text.js';

export interface MarkdownOptions {
  /** Columns to wrap at (read on every line: a resized terminal takes effect at the next line). */
  width: () => number;
  /** Style with SGR escapes (a colour terminal). */
  color: boolean;
  /** Rows of an unfinished line kept pending before the earlier ones are made final. Default 12. */
  maxPendingRows?: number;
}

export interface MarkdownChunk {
  commit: string;
  pending: string[];
}

interface Fence {
  marker: string;
  language: string;
}

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>[ ]?(.*)$/;
const LIST = /^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+)(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

const DIM: Style = { dim: true };
const HEADINGS: Style[] = [{ bold: true, underline: true, fg: 36 }, { bold: true, fg: 36 }, { bold: true }];

/** A block's content and how its rows start. */
interface Block {
  runs: Run[];
  lead: Run[];
  indent: Run[];
  /** Break anywhere (code) instead of at spaces. */
  hard?: boolean;
}

export class MarkdownStream {
  readonly #o: MarkdownOptions;
  /** The line being written (controls already made visible). */
  #partial = '';
  /** A CR that ended the last delta (CRLF or a lone CR: decided by what follows). */
  #cr = false;
  #fence: Fence | undefined;
  #highlight: HighlightState = {};
  /** The unfinished line's earlier rows were made final: the rest continues with this indent. */
  #continued: { indent: Run[]; hard: boolean; fenced: boolean } | undefined;

  constructor(options: MarkdownOptions) {
    this.#o = options;
  }

  push(delta: string): MarkdownChunk {
    let s = (this.#cr ? '\r' : '') + delta;
    this.#cr = s.endsWith('\r');
    if (this.#cr) s = s.slice(0, -1);
    const pieces = s.split('\n');
    let commit = '';
    for (let k = 0; k < pieces.length - 1; k++) {
      const line = this.#partial + clean((pieces[k] as string).replace(/\r$/, ''), this.#partial.length);
      this.#partial = '';
      commit += this.#finish(line);
    }
    this.#partial += clean(pieces[pieces.length - 1] as string, this.#partial.length);
    // Too long to keep redrawing: make all but its last row final.
    const pending = this.#render(this.#partial, false);
    const max = this.#o.maxPendingRows ?? 12;
    if (pending.rows.length > max) {
      const cut = pending.starts[pending.rows.length - 1] ?? -1;
      if (cut > 0) {
        commit += this.#rows(pending.rows.slice(0, -1));
        const block = this.#block(this.#partial, false);
        this.#continued = {
          indent: block.indent,
          hard: block.hard === true,
          fenced: this.#fence !== undefined,
        };
        this.#partial = this.#partial.slice(cut);
        return { commit, pending: this.#paintRows(this.#render(this.#partial, false).rows) };
      }
    }
    return { commit, pending: this.#paintRows(pending.rows) };
  }

  /** Everything left, final. */
  end(): string {
    let out = '';
    if (this.#cr) {
      this.#partial += '^M';
      this.#cr = false;
    }
    if (this.#partial !== '' || this.#continued) out = this.#finish(this.#partial);
    this.#partial = '';
    this.#fence = undefined;
    this.#highlight = {};
    return out;
  }

  /** A complete line: its rows, and the block state it leaves. */
  #finish(line: string): string {
    const wrapped = this.#render(line, true);
    this.#continued = undefined;
    return this.#rows(wrapped.rows);
  }

  #rows(rows: Run[][]): string {
    return rows.map((r) => `${paint(r, this.#o.color)}\n`).join('');
  }

  #paintRows(rows: Run[][]): string[] {
    if (rows.length === 1 && rows[0]?.length === 0) return [];
    return rows.map((r) => paint(r, this.#o.color));
  }

  /** Rows of `line`; `final` updates the fence and highlight state. */
  #render(line: string, final: boolean): WrappedRows {
    const width = Math.max(10, this.#o.width());
    const block = this.#block(line, final);
    return block.hard
      ? hardWrapRuns(block.runs, width, block.lead)
      : wrapRuns(block.runs, width, block.lead, block.indent);
  }

  #block(line: string, final: boolean): Block {
    const cont = this.#continued;
    if (cont !== undefined) {
      if (cont.fenced) {
        const state = final ? this.#highlight : { ...this.#highlight };
        return {
          runs: highlightLine(line, this.#fence?.language ?? '', state),
          lead: [],
          indent: [],
          hard: true,
        };
      }
      return { runs: parseInline(line), lead: cont.indent, indent: cont.indent, hard: cont.hard };
    }
    const fence = this.#fence;
    if (fence !== undefined) {
      const close = new RegExp(
        `^ {0,3}${fence.marker[0] === '`' ? '`' : '~'}{${fence.marker.length},}[ \\t]*$`,
      );
      if (close.test(line)) {
        if (final) {
          this.#fence = undefined;
          this.#highlight = {};
        }
        return { runs: [{ text: line, style: DIM, src: 0 }], lead: [], indent: [], hard: true };
      }
      const state = final ? this.#highlight : { ...this.#highlight };
      return { runs: highlightLine(line, fence.language, state), lead: [], indent: [], hard: true };
    }
    const f = FENCE.exec(line);
    if (f) {
      if (final) {
        this.#fence = { marker: f[2] as string, language: f[3] ?? '' };
        this.#highlight = {};
      }
      return { runs: [{ text: line, style: DIM, src: 0 }], lead: [], indent: [], hard: true };
    }
    if (line.trim() === '') return { runs: [], lead: [], indent: [] };
    const h = HEADING.exec(line);
    if (h) {
      const level = (h[1] as string).length;
      const style = HEADINGS[Math.min(level, HEADINGS.length) - 1] as Style;
      const text = h[2] as string;
      return { runs: parseInline(text, style, line.indexOf(text)), lead: [], indent: [] };
    }
    if (RULE.test(line)) {
      return {
        runs: [{ text: '─'.repeat(Math.min(40, this.#o.width())), style: DIM, src: -1 }],
        lead: [],
        indent: [],
      };
    }
    if (/^\s*\|/.test(line)) {
      if (TABLE_RULE.test(line))
        return { runs: [{ text: line, style: DIM, src: 0 }], lead: [], indent: [], hard: true };
      return { runs: parseInline(line), lead: [], indent: [], hard: true };
    }
    const q = QUOTE.exec(line);
    if (q) {
      const text = q[1] as string;
      const bar: Run[] = [{ text: '│ ', style: DIM, src: -1 }];
      return { runs: parseInline(text, { italic: true }, line.length - text.length), lead: bar, indent: bar };
    }
    const l = LIST.exec(line);
    if (l) {
      const pad = (l[1] as string).replace(/\t/g, '    ');
      const marker = l[2] as string;
      const bullet = /^\d/.test(marker) ? marker : '•';
      const text = l[4] as string;
      const lead: Run[] = [
        { text: `${pad}${bullet} `, style: /^\d/.test(marker) ? {} : { fg: 36 }, src: -1 },
      ];
      const indent: Run[] = [{ text: ' '.repeat(pad.length + bullet.length + 1), style: {}, src: -1 }];
      return { runs: parseInline(text, {}, line.length - text.length), lead, indent };
    }
    const m = /^([ \t]*)(.*)$/.exec(line) as RegExpExecArray;
    const pad = m[1] as string;
    const lead: Run[] = pad === '' ? [] : [{ text: pad, style: {}, src: -1 }];
    return { runs: parseInline(m[2] as string, {}, pad.length), lead, indent: lead };
  }
}

/** Controls made visible; tabs to spaces up to the next multiple of 4 (the text starts at column `col`). */
function clean(text: string, col: number): string {
  const safe = visibleControls(text);
  if (!safe.includes('\t')) return safe;
  let out = '';
  for (const ch of safe) {
    if (ch === '\t') out += ' '.repeat(4 - ((col + out.length) % 4));
    else out += ch;
  }
  return out;
}
