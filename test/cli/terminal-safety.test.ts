import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ChatRenderer } from '../../src/cli/chat/chat-renderer.js';
import { Terminal } from '../../src/cli/chat/terminal.js';
import { escapeJsonControls, visibleControls } from '../../src/cli/safe-text.js';

/** A terminal-like stream that records what it is sent (the Terminal only writes to it). */
class Screen extends Writable {
  text = '';
  isTTY: boolean;
  columns = 40;
  rows = 30;
  constructor(tty: boolean) {
    super();
    this.isTTY = tty;
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

function terminal(tty: boolean, env: NodeJS.ProcessEnv = {}) {
  const stdout = new Screen(tty);
  const stderr = new Screen(tty);
  return { stdout, stderr, t: new Terminal({ stdout, stderr }, env) };
}

const ESC = '\x1b';

/**
 * `text` without the sequences the chat itself writes: styling (SGR), the live area's cursor moves and erases, the
 * synchronized-update and cursor-visibility modes, and the CRs that start its rows. Every hostile sequence is also
 * checked in its visible form, so one leaking raw would fail either way.
 */
function withoutOurSequences(text: string): string {
  return text.replace(new RegExp(`${ESC}\\[(\\?(2026|25)[hl]|[0-9;]*[mABCDGJK])|\r`, 'g'), '');
}
const hostile = [
  `${ESC}]52;c;cm0gLXJmIH4=${'\x07'}`, // OSC 52: write the clipboard
  `${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`, // OSC 8 hyperlink
  `${ESC}]0;pwned${'\x07'}`, // window title
  `${ESC}[2A${ESC}[2K`, // cursor up, erase line
  'fake\rreal', // overwrite with a lone CR
  '\u009b31m', // C1 CSI
  '\x07'.repeat(5), // BEL flood
  'evil\u202Egnp.exe', // bidi override in a file name
].join(' ');

/** The characters a terminal would act on (C0 but newline and tab, DEL, C1, bidi overrides) found in `text`. */
function rawControls(text: string): string[] {
  return [...text].filter((ch) => {
    const c = ch.codePointAt(0) ?? 0;
    return (c < 0x20 && c !== 0x0a && c !== 0x09) || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e);
  });
}

describe('untrusted text on a terminal: controls are shown, never obeyed', () => {
  it('visibleControls: caret notation for C0/DEL, <U+XXXX> for C1 and bidi; newline and tab pass; CRLF is a newline', () => {
    expect(visibleControls(`a${ESC}[2Jb\x07\x7f`)).toBe('a^[[2Jb^G^?');
    expect(visibleControls('x\u009by\u202Ez')).toBe('x<U+009B>y<U+202E>z');
    expect(visibleControls('one\ttwo\nthree\r\nfour\rfive')).toBe('one\ttwo\nthree\nfour^Mfive');
    expect(visibleControls('plain ü 漢字 👍')).toBe('plain ü 漢字 👍');
  });

  it('escapeJsonControls keeps the JSON value and leaves nothing a terminal obeys', () => {
    const value = { s: `\u009b2J\u202E${ESC}x\u2028` };
    const json = escapeJsonControls(JSON.stringify(value));
    expect(rawControls(json)).toEqual([]);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('a TTY: the answer, thinking, tool names, errors and notes are neutralised; our dim styling still works', () => {
    const { stdout, stderr, t } = terminal(true);
    const r = new ChatRenderer(t);
    r.thinkingMode = 'show';
    r.handle({ type: 'message_start' } as never);
    r.handle({ type: 'message_delta', delta: { type: 'thinking_delta', text: `hmm ${hostile}` } } as never);
    r.handle({ type: 'message_delta', delta: { type: 'text_delta', text: `answer ${hostile}` } } as never);
    r.handle({ type: 'tool_call_start', toolName: `rd${ESC}]0;x\x07`, input: { p: hostile } } as never);
    r.handle({ type: 'retry', delayMs: 1000, attempt: 1, error: { message: `boom ${hostile}` } } as never);
    t.line(`note: @${hostile}: not attached`);
    expect(rawControls(withoutOurSequences(stdout.text))).toEqual([]);
    expect(rawControls(stderr.text)).toEqual([]);
    expect(stdout.text).toContain('^[[2A^[[2K');
    expect(stdout.text).toContain('^[]52;c;cm0gLXJmIH4=^G');
    expect(stdout.text).toContain('fake^Mreal');
    expect(stdout.text).toContain('<U+009B>31m');
    expect(stdout.text).toContain('evil<U+202E>gnp.exe');
    // Our own styling: the thinking is dim, and only our SGR sequences are raw.
    expect(stdout.text).toContain(`${ESC}[2mhmm ^[]52`);
  });

  it('a CRLF split across two streamed chunks is one newline; a lone CR at a chunk end is shown', () => {
    const { stdout, t } = terminal(true);
    t.out('line one\r');
    t.out('\nline two\r');
    t.out('x');
    t.out('end\r');
    t.newline();
    expect(stdout.text).toBe('line one\nline two^Mxend^M\n');
  });

  it('piped stdout: the answer is byte for byte (the product); stderr status lines are still neutralised', () => {
    const { stdout, stderr, t } = terminal(false);
    t.out(`answer ${hostile}`);
    t.line(`[tool] ${hostile}`);
    expect(stdout.text).toContain(`answer ${hostile}`);
    expect(rawControls(stderr.text)).toEqual([]);
    expect(stderr.text).toContain('[tool] ^[]52;');
  });

  it('NO_COLOR: no styling at all on a TTY', () => {
    const { stdout, t } = terminal(true, { NO_COLOR: '1' });
    t.out('thought', 'dim');
    expect(stdout.text).toBe('thought');
  });
});

describe('row tracking: hostile text cannot make eraseSince erase rows written before the mark', () => {
  /** The number of rows `eraseSince` moves up (0 when it only clears the current row). */
  function rowsErased(screen: Screen): number {
    const m = new RegExp(`\r(?:${ESC}\\[(\\d+)A)?${ESC}\\[J$`).exec(screen.text);
    if (!m) throw new Error(`no erase in ${JSON.stringify(screen.text)}`);
    return Number(m[1] ?? 0);
  }

  it('combining marks and zero-width characters take no columns', () => {
    const { stdout, t } = terminal(true);
    t.out('before\n');
    const mark = t.mark();
    // 40 columns: 1 visible character carrying 200 combining marks, and zero-width joiners, is one row, not six.
    t.out(`a${'\u0301'.repeat(200)}${'\u200d'.repeat(100)}`);
    expect(t.eraseSince(mark)).toBe(true);
    expect(rowsErased(stdout)).toBe(0);
  });

  it('escape sequences, shown as ^[ text, count as the columns they take', () => {
    const { stdout, t } = terminal(true);
    const mark = t.mark();
    t.out(`${ESC}[A`.repeat(20)); // 20 x "^[[A" = 80 columns = 2 rows at 40
    expect(t.eraseSince(mark)).toBe(true);
    expect(rowsErased(stdout)).toBe(1);
  });

  it('wide characters count two columns; a tab never wraps', () => {
    const { stdout, t } = terminal(true);
    const mark = t.mark();
    t.out('漢'.repeat(30)); // 60 columns: 2 rows at 40
    t.out('\t'.repeat(50)); // tabs stop at the last column
    expect(t.eraseSince(mark)).toBe(true);
    expect(rowsErased(stdout)).toBe(1);
  });

  it('a lone \\r cannot rewind the tracked column (it is shown as ^M)', () => {
    const { stdout, t } = terminal(true);
    const mark = t.mark();
    t.out(`${'x'.repeat(39)}\r${'y'.repeat(39)}`); // 39 + 2 + 39 = 80 columns: 2 rows
    expect(t.eraseSince(mark)).toBe(true);
    expect(rowsErased(stdout)).toBe(1);
  });

  it('after a resize nothing is erased (the terminal may have re-flowed the rows)', () => {
    const { stdout, t } = terminal(true);
    const mark = t.mark();
    t.out('x'.repeat(100));
    stdout.columns = 120;
    stdout.emit('resize');
    expect(t.eraseSince(mark)).toBe(false);
    expect(stdout.text).not.toContain(`${ESC}[J`);
  });

  it('an eraseSince that erases nothing (no longer fits) keeps the CR the model ended a chunk with', () => {
    const { stdout, t } = terminal(true);
    const mark = t.mark();
    // More rows than the screen has: nothing is erased.
    t.out(`${'x'.repeat(stdout.columns * stdout.rows)}\nline\r`);
    expect(t.eraseSince(mark)).toBe(false);
    // A lone CR stays visible (it would let the model overwrite the line).
    t.out('next');
    expect(stdout.text.endsWith(`\nline${visibleControls('\r')}next`)).toBe(true);
  });

  it('dispose() stops listening to resize', () => {
    const { stdout, t } = terminal(true);
    expect(stdout.listenerCount('resize')).toBe(1);
    t.dispose();
    expect(stdout.listenerCount('resize')).toBe(0);
  });
});
