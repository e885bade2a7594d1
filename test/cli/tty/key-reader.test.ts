import { describe, expect, it } from 'vitest';
import { type Key, KeyReader } from '../../../src/cli/tty/key-reader.js';

const k = (name: string, mods: { ctrl?: boolean; alt?: boolean; shift?: boolean } = {}): Key => ({
  type: 'key',
  name,
  ctrl: mods.ctrl ?? false,
  alt: mods.alt ?? false,
  shift: mods.shift ?? false,
});

function feedAll(chunks: string[]): Key[] {
  const r = new KeyReader();
  return chunks.flatMap((c) => r.feed(c));
}

describe('key reader: bytes from a terminal in raw mode to keys', () => {
  it('typed text is one run; Enter is CR; Ctrl+letters; DEL and BS are Backspace', () => {
    expect(feedAll(['héllo 漢字\r'])).toEqual([{ type: 'text', text: 'héllo 漢字' }, k('enter')]);
    expect(feedAll(['\x03\x04\x01\x05\x7f\x08\t'])).toEqual([
      k('c', { ctrl: true }),
      k('d', { ctrl: true }),
      k('a', { ctrl: true }),
      k('e', { ctrl: true }),
      k('backspace'),
      k('backspace'),
      k('tab'),
    ]);
    expect(feedAll(['\n'])).toEqual([k('j', { ctrl: true })]);
  });

  it('Alt+Enter (ESC CR), Shift+Enter from the kitty protocol and from xterm modifyOtherKeys', () => {
    expect(feedAll(['\x1b\r'])).toEqual([k('enter', { alt: true })]);
    expect(feedAll(['\x1b[13;2u'])).toEqual([k('enter', { shift: true })]);
    expect(feedAll(['\x1b[27;2;13~'])).toEqual([k('enter', { shift: true })]);
    expect(feedAll(['\x1b[13;3u'])).toEqual([k('enter', { alt: true })]);
  });

  it('cursor keys with and without modifiers, SS3 forms, Home/End/Delete, Shift+Tab', () => {
    expect(feedAll(['\x1b[A\x1b[B\x1b[C\x1b[D\x1bOA\x1b[H\x1b[F\x1b[3~\x1b[1~\x1b[4~\x1b[Z'])).toEqual([
      k('up'),
      k('down'),
      k('right'),
      k('left'),
      k('up'),
      k('home'),
      k('end'),
      k('delete'),
      k('home'),
      k('end'),
      k('tab', { shift: true }),
    ]);
    expect(feedAll(['\x1b[1;5C\x1b[1;3D'])).toEqual([k('right', { ctrl: true }), k('left', { alt: true })]);
  });

  it('the kitty protocol: Esc, Ctrl+C and Alt+letters arrive as CSI u and read as the same keys', () => {
    expect(feedAll(['\x1b[27u\x1b[99;5u\x1b[98;3u'])).toEqual([
      k('escape'),
      k('c', { ctrl: true }),
      k('b', { alt: true }),
    ]);
    // Key releases and other functional keys are dropped, never typed.
    expect(feedAll(['\x1b[97;1:3u\x1b[57441u'])).toEqual([]);
  });

  it('a sequence split across chunks is held until complete; a lone ESC becomes Escape only on flush', () => {
    const r = new KeyReader();
    expect(r.feed('\x1b')).toEqual([]);
    expect(r.waiting).toBe(true);
    expect(r.feed('[1;')).toEqual([]);
    expect(r.feed('5A')).toEqual([k('up', { ctrl: true })]);
    expect(r.feed('\x1b')).toEqual([]);
    expect(r.flush()).toEqual([k('escape')]);
    expect(r.waiting).toBe(false);
  });

  it('bracketed paste is one event whatever it holds: newlines, escapes, the end marker split across chunks', () => {
    const r = new KeyReader();
    const keys = [
      ...r.feed('a\x1b[200~line one\r\nline two\x1b[A\x03'),
      ...r.feed('tail\x1b[20'),
      ...r.feed('1~b'),
    ];
    expect(keys).toEqual([
      { type: 'text', text: 'a' },
      { type: 'paste', text: 'line one\r\nline two\x1b[A\x03tail', droppedChars: 0 },
      { type: 'text', text: 'b' },
    ]);
  });

  it('a paste past the cap is cut (the event says how much was dropped); memory stays bounded', () => {
    const r = new KeyReader({ maxPasteChars: 10 });
    const keys = [
      ...r.feed('\x1b[200~0123456789'),
      ...r.feed('ABCDEFGHIJ'.repeat(1000)),
      ...r.feed('\x1b[201~'),
    ];
    expect(keys).toEqual([{ type: 'paste', text: '0123456789', droppedChars: 10_000 }]);
  });

  it('garbage never becomes text: an unknown CSI, mouse reports, a runaway sequence are dropped', () => {
    expect(feedAll(['\x1b[<0;10;5M', 'x'])).toEqual([{ type: 'text', text: 'x' }]);
    expect(feedAll(['\x1b[99X', 'y'])).toEqual([{ type: 'text', text: 'y' }]);
    const runaway = `\x1b[${'1;'.repeat(100)}`;
    const keys = feedAll([runaway, 'z']);
    expect(
      keys
        .filter((x) => x.type === 'text')
        .map((x) => (x as { text: string }).text)
        .join(''),
    ).not.toContain('\x1b');
  });
});
