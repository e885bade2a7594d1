import { describe, expect, it } from 'vitest';
import { type Key, KeyReader } from '../../../src/cli/tty/key-reader.js';
import { type EditorAction, LineEditor } from '../../../src/cli/tty/line-editor.js';

/** Feed raw terminal input through the key reader into `editor`; the actions it returned. */
function type(editor: LineEditor, ...chunks: string[]): EditorAction[] {
  const reader = new KeyReader();
  const keys: Key[] = chunks.flatMap((c) => reader.feed(c));
  return keys.map((k) => editor.handle(k));
}

const submits = (actions: EditorAction[]) =>
  actions
    .filter((a): a is Extract<EditorAction, { type: 'submit' }> => a.type === 'submit')
    .map((a) => a.text);

class MemoryHistory {
  entries: string[] = [];
  add(text: string): void {
    this.entries.push(text);
  }
}

describe('line editor', () => {
  it('Enter submits and clears; Alt+Enter, Shift+Enter, Ctrl+J and \\ + Enter insert newlines', () => {
    const e = new LineEditor();
    const actions = type(
      e,
      'one',
      '\x1b\r',
      'two',
      '\x1b[13;2u',
      'three\\',
      '\r',
      'four',
      '\n',
      'five',
      '\r',
    );
    expect(submits(actions)).toEqual(['one\ntwo\nthree\nfour\nfive']);
    expect(e.text).toBe('');
  });

  it('a short paste is typed text (CRLF becomes LF) and does not submit', () => {
    const e = new LineEditor();
    const actions = type(e, 'say: ', '\x1b[200~a\r\nb\rc\x1b[201~');
    expect(submits(actions)).toEqual([]);
    expect(e.text).toBe('say: a\nb\nc');
  });

  it('a long paste is one placeholder: deleted as a unit, expanded on submit', () => {
    const e = new LineEditor();
    const pasted = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    type(e, 'look: ', `\x1b[200~${pasted}\x1b[201~`, ' end');
    expect(e.text).not.toContain('line 3');
    expect(e.expanded()).toBe(`look: ${pasted} end`);
    // Backspace over " end", then once more removes the whole paste.
    type(e, '\x7f\x7f\x7f\x7f');
    expect(e.expanded()).toBe(`look: ${pasted}`);
    type(e, '\x7f');
    expect(e.expanded()).toBe('look: ');
    // Pasted again and submitted: the full text goes out.
    const actions = type(e, `\x1b[200~${pasted}\x1b[201~`, '\r');
    expect(submits(actions)).toEqual([`look: ${pasted}`]);
  });

  it('the cursor moves over a placeholder as one unit; typing never lands inside it', () => {
    const e = new LineEditor();
    type(e, `\x1b[200~${'x'.repeat(2000)}\x1b[201~`, '\x1b[D', 'A', '\x1b[C', 'B');
    expect(e.expanded()).toBe(`A${'x'.repeat(2000)}B`);
  });

  it('emacs keys: Ctrl+A/E, Ctrl+K/U, Ctrl+W, Alt+B/F, Ctrl+D deletes forward', () => {
    const e = new LineEditor();
    type(e, 'hello big world', '\x01', '\x1bf', '\x0b');
    expect(e.text).toBe('hello');
    type(e, ' there friend', '\x17');
    expect(e.text).toBe('hello there ');
    type(e, '\x01', '\x04');
    expect(e.text).toBe('ello there ');
    type(e, '\x05', '\x15');
    expect(e.text).toBe('');
  });

  it('Ctrl+D on an empty text is end of input; Ctrl+C and Esc are reported, the text kept', () => {
    const e = new LineEditor();
    expect(type(e, '\x04').map((a) => a.type)).toEqual(['eof']);
    expect(type(e, 'draft', '\x03').at(-1)?.type).toBe('interrupt');
    expect(e.text).toBe('draft');
    const r = new KeyReader();
    r.feed('\x1b');
    expect(r.flush().map((k) => e.handle(k).type)).toEqual(['escape']);
  });

  it('Up/Down move between lines of the text, then walk the history; the draft comes back', () => {
    const h = new MemoryHistory();
    const e = new LineEditor(h);
    type(e, 'first\r', 'second\r');
    expect(h.entries).toEqual(['first', 'second']);
    type(e, 'draft', '\x1b[A');
    expect(e.text).toBe('second');
    type(e, '\x1b[A');
    expect(e.text).toBe('first');
    type(e, '\x1b[A');
    expect(e.text).toBe('first');
    type(e, '\x1b[B', '\x1b[B');
    expect(e.text).toBe('draft');
    // In a multi-line text Up goes to the line above first.
    e.setText('');
    type(e, 'ab\x1b\rcd', '\x1b[A', 'X');
    expect(e.text).toBe('abX\ncd');
  });

  it('blank submissions are not kept in history; private-use delimiters cannot be typed', () => {
    const h = new MemoryHistory();
    const e = new LineEditor(h);
    type(e, '   \r', 'a\uE0001\uE001b\r');
    expect(h.entries).toEqual(['a1b']);
  });
});
