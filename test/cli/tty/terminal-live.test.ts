import { describe, expect, it } from 'vitest';
import { Terminal } from '../../../src/cli/chat/terminal.js';
import { VtScreen } from './vt-screen.js';

function setup(columns = 40, rows = 12) {
  const screen = new VtScreen(columns, rows);
  // stdout and stderr are the same terminal.
  const t = new Terminal({ stdout: screen, stderr: screen }, { TERM: 'xterm-256color' });
  return { screen, t };
}

describe('the live area below the output', () => {
  it('stays under the output: text written later appears above it, nothing is left behind', () => {
    const { screen, t } = setup();
    t.line('first line');
    t.setLive('editor', ['> hello'], { row: 0, col: 7 });
    t.setLive('footer', ['model · 1%']);
    expect(screen.lines().slice(0, 3)).toEqual(['first line', '> hello', 'model · 1%']);
    expect(screen.cursor).toEqual({ x: 7, y: 1 });
    t.line('second line');
    t.out('an answer ');
    t.out('in two parts');
    t.newline();
    expect(screen.lines().slice(0, 5)).toEqual([
      'first line',
      'second line',
      'an answer in two parts',
      '> hello',
      'model · 1%',
    ]);
  });

  it('an answer still mid-line: the live area goes below it, and the line continues where it was', () => {
    const { screen, t } = setup();
    t.setLive('editor', ['> '], { row: 0, col: 2 });
    t.out('Once upon');
    expect(screen.lines().slice(0, 2)).toEqual(['Once upon', '>']);
    t.out(' a time');
    expect(screen.lines().slice(0, 2)).toEqual(['Once upon a time', '>']);
    // Exactly the width: the next character goes on the next row, as the terminal would wrap it.
    t.out(' '.repeat(40 - 'Once upon a time'.length));
    t.out('x');
    expect(screen.lines().slice(0, 3)).toEqual(['Once upon a time', 'x', '>']);
  });

  it('a taller editor and a removed section: the area shrinks without leftovers', () => {
    const { screen, t } = setup();
    t.setLive('status', ['⠋ waiting']);
    t.setLive('editor', ['> one', '  two', '  three'], { row: 2, col: 7 });
    expect(screen.lines().slice(0, 4)).toEqual(['⠋ waiting', '> one', '  two', '  three']);
    t.setLive('status', []);
    t.setLive('editor', ['> '], { row: 0, col: 2 });
    expect(screen.lines().slice(0, 2)).toEqual(['>', '']);
    t.dispose();
    expect(screen.lines().slice(0, 1)).toEqual(['']);
  });

  it('output that scrolls the screen keeps the live area at the bottom, whole', () => {
    const { screen, t } = setup(30, 6);
    t.setLive('editor', ['> typing'], { row: 0, col: 8 });
    t.setLive('footer', ['footer']);
    for (let i = 0; i < 20; i++) t.line(`line ${i}`);
    const lines = screen.lines();
    expect(lines.slice(-2)).toEqual(['> typing', 'footer']);
    expect(lines.slice(0, 4)).toEqual(['line 16', 'line 17', 'line 18', 'line 19']);
    expect(screen.text()).toContain('line 0\nline 1\n');
  });

  it('folding streamed thinking erases only its own rows, with the live area shown', () => {
    const { screen, t } = setup();
    t.line('kept');
    t.setLive('editor', ['> '], { row: 0, col: 2 });
    const mark = t.mark();
    t.out('thinking a lot\nmore thinking');
    expect(t.eraseSince(mark)).toBe(true);
    t.line('[thought for 27 characters]');
    expect(screen.lines().slice(0, 3)).toEqual(['kept', '[thought for 27 characters]', '>']);
  });

  it('an image is drawn on its own rows and nothing before it can be erased later', () => {
    const { t } = setup();
    const mark = t.mark();
    t.out('before');
    t.image('\x1b_Ga=T,f=100,q=2,c=4,m=0;AAAA\x1b\\');
    expect(t.eraseSince(mark)).toBe(false);
  });
});
