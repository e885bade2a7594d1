import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ChatRenderer } from '../../../src/cli/chat/chat-renderer.js';
import { Terminal } from '../../../src/cli/chat/terminal.js';
import { LineEditor } from '../../../src/cli/tty/line-editor.js';
import { TerminalInput } from '../../../src/cli/tty/terminal-input.js';
import { VtScreen } from './vt-screen.js';

/** A terminal: a screen for output, a stdin we type into, the chat's terminal view and input editor. */
function setup() {
  const screen = new VtScreen(60, 16);
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    raw: false,
    setRawMode(raw: boolean) {
      this.raw = raw;
    },
  });
  const terminal = new Terminal({ stdout: screen, stderr: screen }, { TERM: 'xterm-256color' });
  const submitted: string[] = [];
  const input = new TerminalInput({
    input: stdin as unknown as NodeJS.ReadStream,
    output: screen,
    terminal,
    editor: new LineEditor(),
    handlers: { submit: (t) => submitted.push(t), interrupt: () => {}, eof: () => {}, escape: () => {} },
  });
  const type = async (s: string) => {
    stdin.write(s);
    await new Promise((r) => setImmediate(r));
  };
  return { screen, stdin, terminal, input, submitted, type };
}

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('the input editor on a terminal', () => {
  it('turns on raw mode, bracketed paste and the keyboard protocols, and off again', async () => {
    const { screen, stdin, input } = setup();
    input.start();
    expect(stdin.raw).toBe(true);
    expect(screen.raw).toContain('\x1b[?2004h\x1b[>1u\x1b[>4;1m');
    input.stop();
    expect(stdin.raw).toBe(false);
    expect(
      screen.raw.endsWith('\x1b[?2004l\x1b[<u\x1b[>4m') || screen.raw.includes('\x1b[?2004l\x1b[<u\x1b[>4m'),
    ).toBe(true);
  });

  it('a lone Esc is the Escape key after a short pause (a split sequence: see the key reader test)', async () => {
    const { input, type } = setup();
    let escapes = 0;
    input.setHandlers({ submit: () => {}, interrupt: () => {}, eof: () => {}, escape: () => escapes++ });
    input.start();
    await type('\x1b');
    await tick(100);
    expect(escapes).toBe(1);
    await type('\x1b[A');
    await tick(100);
    expect(escapes).toBe(1);
    input.stop();
  });

  it('Tab: one completion is inserted; several insert their common part and show a menu until the next key', async () => {
    const { screen, input, type } = setup();
    input.setCompleter(async (text) => {
      const m = /@(\S*)$/.exec(text);
      if (!m) return undefined;
      const all = ['@shot-one.png', '@shot-two.png', '@notes.txt'].filter((n) => n.startsWith(`@${m[1]}`));
      return { start: text.length - m[0].length, items: all };
    });
    input.start();
    await type('see @no\t');
    await tick(10);
    expect(input.editor.text).toBe('see @notes.txt');
    await type('\x15see @sh\t');
    await tick(10);
    expect(input.editor.text).toBe('see @shot-');
    expect(screen.lines()).toContain('@shot-one.png  @shot-two.png');
    await type('o');
    expect(screen.lines()).not.toContain('@shot-one.png  @shot-two.png');
    input.stop();
  });

  it('ask: a question takes the keys while it is open; the text being typed survives it', async () => {
    const { screen, input, type } = setup();
    input.start();
    await type('half typed');
    const answer = input.ask(['Run `rm -rf build`? [y]es [n]o [a]lways'], ['y', 'n', 'a']);
    await tick();
    expect(screen.lines()).toContain('Run `rm -rf build`? [y]es [n]o [a]lways');
    await type('x');
    await type('a');
    expect(await answer).toBe('a');
    expect(input.editor.text).toBe('half typed');
    expect(screen.lines()).not.toContain('Run `rm -rf build`? [y]es [n]o [a]lways');
    const cancelled = input.ask(['Sure?'], ['y', 'n']);
    await type('\x03');
    expect(await cancelled).toBeUndefined();
    input.stop();
  });

  it('askLine: the answer is typed in the editor under the question; the half-typed text comes back; an abort ends it', async () => {
    const { screen, input, type, submitted } = setup();
    let interrupts = 0;
    input.setHandlers({
      submit: (t) => submitted.push(t),
      interrupt: () => interrupts++,
      eof: () => {},
      escape: () => {},
    });
    input.start();
    await type('half typed');
    const answer = input.askLine(["allow? [y]es / [n]o / [a]lways for 'bash': "]);
    await tick();
    const rows = screen.lines();
    const q = rows.findIndex((l) => l.startsWith('allow? [y]es'));
    expect(q).toBeGreaterThanOrEqual(0);
    expect(rows[q + 1]?.trimEnd()).toBe('>');
    await type('n: not on main\r');
    expect(await answer).toBe('n: not on main');
    expect(submitted).toEqual([]);
    expect(input.editor.text).toBe('half typed');
    expect(screen.lines().some((l) => l.startsWith('allow?'))).toBe(false);
    // Ctrl+C goes to the owner (it stops the turn, which aborts the question).
    const ctl = new AbortController();
    const stopped = input.askLine(['allow?'], ctl.signal);
    await type('\x03');
    expect(interrupts).toBe(1);
    ctl.abort();
    expect(await stopped).toBeUndefined();
    expect(input.editor.text).toBe('half typed');
    const ended = input.askLine(['allow?']);
    input.stop();
    expect(await ended).toBeUndefined();
  });

  it('select: Up/Down and Enter, or the number; Esc cancels', async () => {
    const { screen, input, type } = setup();
    input.start();
    const picked = input.select('Pick one', ['alpha', 'beta', 'gamma']);
    await tick();
    expect(screen.lines()).toContain('Pick one');
    await type('\x1b[B\x1b[B\x1b[A\r');
    expect(await picked).toBe(1);
    const byNumber = input.select('Pick one', ['alpha', 'beta', 'gamma']);
    await type('3');
    expect(await byNumber).toBe(2);
    const none = input.select('Pick one', ['alpha']);
    await type('\x1b');
    await tick(100);
    expect(await none).toBeUndefined();
    input.stop();
  });
});

describe('the chat renderer on a terminal', () => {
  it('a spinner until the first token, progress of a running tool, and a failed call shows its error text', async () => {
    const screen = new VtScreen(80, 20);
    const t = new Terminal({ stdout: screen, stderr: screen }, { TERM: 'xterm-256color' });
    const r = new ChatRenderer(t);
    r.handle({ type: 'turn_start', turn: 1 });
    expect(screen.lines().join('\n')).toMatch(/ waiting for the model…/);
    r.handle({ type: 'message_start', role: 'assistant' });
    r.handle({
      type: 'message_delta',
      delta: { type: 'text_delta', blockIndex: 0, text: 'Working on it.\n' },
    });
    expect(screen.lines().join('\n')).not.toMatch(/waiting for the model/);
    r.handle({ type: 'tool_call_start', toolCallId: 'c1', toolName: 'steps', index: 0, input: {} });
    r.handle({
      type: 'tool_call_update',
      toolCallId: 'c1',
      toolName: 'steps',
      index: 0,
      update: { message: 'half way', progress: 0.5 },
    });
    expect(screen.lines().join('\n')).toMatch(/ running steps… 50% half way/);
    r.handle({
      type: 'tool_call_end',
      toolCallId: 'c1',
      toolName: 'steps',
      index: 0,
      started: true,
      durationMs: 12,
      isError: true,
      aborted: false,
      result: {
        type: 'tool_result',
        toolUseId: 'c1',
        toolName: 'steps',
        isError: true,
        parts: [
          {
            type: 'text',
            text: `notes.txt: no such file\n${Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n')}`,
          },
        ],
      },
    });
    const text = screen.lines().join('\n');
    expect(text).toContain('[tool] steps failed in 12 ms');
    expect(text).toContain('       notes.txt: no such file');
    expect(text).toContain('… (13 more lines)');
    expect(text).not.toMatch(/running steps/);
    r.idle();
    t.dispose();
  });
});
