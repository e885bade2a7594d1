import { describe, expect, it } from 'vitest';
import { renderEditor } from '../../../src/cli/tty/editor-view.js';
import { KeyReader } from '../../../src/cli/tty/key-reader.js';
import { LineEditor } from '../../../src/cli/tty/line-editor.js';
import { textWidth } from '../../../src/cli/tty/text-width.js';

function view(text: string, cursor: number, width = 20, maxRows = 10) {
  return renderEditor({ text, cursor, width, prompt: '> ', maxRows, paste: () => undefined });
}

describe('editor view: the text as rows, and where the cursor is', () => {
  it('a prompt, then an indent on later lines; the cursor row and column', () => {
    expect(view('ab\ncd', 5)).toEqual({ rows: ['> ab', '  cd'], cursorRow: 1, cursorCol: 4 });
    expect(view('', 0)).toEqual({ rows: ['> '], cursorRow: 0, cursorCol: 2 });
  });

  it('wraps at the width; a cursor at the end of a full row goes to the next one', () => {
    const v = view('x'.repeat(18), 18);
    expect(v.rows).toEqual([`> ${'x'.repeat(18)}`, '']);
    expect(v).toMatchObject({ cursorRow: 1, cursorCol: 0 });
    for (const r of view('y'.repeat(100), 50).rows) expect(textWidth(r)).toBeLessThanOrEqual(20);
  });

  it('wide characters take two columns and never straddle the edge', () => {
    const v = view('漢'.repeat(10), 10);
    for (const r of v.rows) expect(textWidth(r)).toBeLessThanOrEqual(20);
    expect(v.rows[0]).toBe(`> ${'漢'.repeat(9)}`);
  });

  it('controls in the text are shown visibly; a tab is spaces', () => {
    const v = view('a\x1b[2Jb\tc', 8);
    expect(v.rows[0]).toBe('> a^[[2Jb   c');
  });

  it('a paste placeholder shows its size; a long text shows the rows around the cursor', () => {
    const e = new LineEditor();
    for (const k of new KeyReader().feed(`\x1b[200~${'line\n'.repeat(30)}\x1b[201~`)) e.handle(k);
    const v = renderEditor({
      text: e.text,
      cursor: e.cursor,
      width: 60,
      prompt: '> ',
      maxRows: 3,
      paste: (id) => e.paste(id),
    });
    expect(v.rows[0]).toBe('> [paste #1: 31 lines, 150 chars]');
    const long = view(Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n'), 0, 20, 3);
    expect(long).toEqual({ rows: ['> l0', '  l1', '  l2'], cursorRow: 0, cursorCol: 2 });
  });
});
