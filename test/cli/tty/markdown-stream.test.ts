import { describe, expect, it } from 'vitest';
import { MarkdownStream } from '../../../src/cli/tty/markdown-stream.js';
import { textWidth } from '../../../src/cli/tty/text-width.js';

const ESC = '\x1b';
const plain = (s: string) => s.replace(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), '');

/** Render `text` fed in chunks of `step` characters: all committed rows, then the end. */
function render(text: string, options: { width?: number; color?: boolean; step?: number } = {}): string {
  const md = new MarkdownStream({ width: () => options.width ?? 40, color: options.color ?? false });
  let out = '';
  const step = options.step ?? text.length;
  for (let i = 0; i < text.length; i += step) out += md.push(text.slice(i, i + step)).commit;
  return out + md.end();
}

describe('Markdown on a terminal', () => {
  it('headings, emphasis, inline code, links, lists, quotes, rules', () => {
    const text = [
      '# Title',
      'Some **bold**, *italic*, `code` and a [link](https://x.example).',
      '- first',
      '* second',
      '  3. nested',
      '> quoted',
      '---',
    ].join('\n');
    expect(render(text).split('\n')).toEqual([
      'Title',
      'Some bold, italic, code and a link',
      '(https://x.example).',
      '• first',
      '• second',
      '  3. nested',
      '│ quoted',
      '─'.repeat(40),
      '',
    ]);
    const styled = render(text, { color: true });
    expect(styled).toContain(`${ESC}[1mbold${ESC}[0m`);
    expect(styled).toContain(`${ESC}[3mitalic${ESC}[0m`);
    expect(styled).toContain(`${ESC}[33mcode${ESC}[0m`);
    expect(styled).toContain(`${ESC}[4mlink${ESC}[0m`);
    expect(styled).toContain(`${ESC}[1;4;36mTitle${ESC}[0m`);
  });

  it('the same output whatever the chunking (one character at a time included)', () => {
    const text =
      '## A heading\nA paragraph long enough to wrap at forty columns, with **bold text** in it.\n```ts\nconst x = 1; // one\n```\ndone';
    const whole = render(text, { color: true });
    expect(render(text, { color: true, step: 1 })).toBe(whole);
    expect(render(text, { color: true, step: 7 })).toBe(whole);
  });

  it('word wrap at the width; a list item continues under its text; no row is wider than the width', () => {
    const out = render(`- ${'word '.repeat(20)}`, { width: 30 });
    const rows = out.split('\n').filter(Boolean);
    expect(rows[0]?.startsWith('• word')).toBe(true);
    expect(rows[1]?.startsWith('  word')).toBe(true);
    for (const r of rows) expect(textWidth(r)).toBeLessThanOrEqual(30);
    for (const r of render('x'.repeat(100), { width: 30 }).split('\n'))
      expect(textWidth(r)).toBeLessThanOrEqual(30);
  });

  it('code fences: highlighted, kept as written (spaces, no wrap at words), fence lines dimmed', () => {
    const out = render('```python\ndef f(x):  # square\n    return "s" * 2\n```', { color: true });
    expect(plain(out)).toBe('```python\ndef f(x):  # square\n    return "s" * 2\n```\n');
    expect(out).toContain(`${ESC}[35mdef${ESC}[0m`);
    expect(out).toContain(`${ESC}[90m# square${ESC}[0m`);
    expect(out).toContain(`${ESC}[32m"s"${ESC}[0m`);
    // Inside a fence, Markdown is not interpreted.
    expect(plain(render('```\n**not bold** # not a heading\n```'))).toBe(
      '```\n**not bold** # not a heading\n```\n',
    );
  });

  it('a line in progress is pending (redrawn), and final once its newline comes', () => {
    const md = new MarkdownStream({ width: () => 40, color: false });
    expect(md.push('Hello **wor')).toEqual({ commit: '', pending: ['Hello **wor'] });
    expect(md.push('ld**')).toEqual({ commit: '', pending: ['Hello world'] });
    expect(md.push('\nnext')).toEqual({ commit: 'Hello world\n', pending: ['next'] });
    expect(md.end()).toBe('next\n');
  });

  it('a very long line in progress makes its earlier rows final (no more than maxPendingRows pending)', () => {
    const md = new MarkdownStream({ width: () => 20, color: false, maxPendingRows: 3 });
    let committed = '';
    let pending: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = md.push(`w${i} `);
      committed += r.commit;
      pending = r.pending;
      expect(r.pending.length).toBeLessThanOrEqual(3);
    }
    const all = `${committed}${md.end()}`;
    expect(pending.length).toBeGreaterThan(0);
    // Every word arrives exactly once, in order.
    expect(all.split(/\s+/).filter(Boolean)).toEqual(Array.from({ length: 40 }, (_, i) => `w${i}`));
  });

  it('untrusted text: controls are shown, never passed through; CRLF split across chunks is one newline', () => {
    const out = render(`a${ESC}]52;c;eA==\x07b\r\nc\rd\x9bX`, { step: 3 });
    expect(out).toBe('a^[]52;c;eA==^Gb\nc^Md<U+009B>X\n');
    const md = new MarkdownStream({ width: () => 40, color: false });
    expect(md.push('line\r').commit).toBe('');
    expect(md.push('\nnext').commit).toBe('line\n');
  });

  it('hostile Markdown: a huge line of delimiters is shown as typed (inline parsing is skipped past a cap)', () => {
    const stars = '*a'.repeat(50_000);
    const out = plain(render(stars, { width: 200 }));
    // Nothing is lost: every letter is there (a later part of the line may read its stars as emphasis markers).
    expect(out.split('a').length - 1).toBe(50_000);
    expect(out.startsWith('*a*a*a')).toBe(true);
    const ticks = '`'.repeat(3000);
    expect(plain(render(`x ${ticks} y`, { width: 5000 }))).toBe(`x ${ticks} y\n`);
  });

  it('tables are kept as typed, the rule row dimmed', () => {
    const out = render('| a | b |\n|---|---|\n| 1 | 2 |', { color: true });
    expect(plain(out)).toBe('| a | b |\n|---|---|\n| 1 | 2 |\n');
    expect(out).toContain(`${ESC}[2m|---|---|${ESC}[0m`);
  });
});
