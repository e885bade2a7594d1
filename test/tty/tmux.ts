/**
 * A program in a real terminal: a detached tmux session of a fixed size, keys sent with `send-keys`, the screen read
 * with `capture-pane`. Every wait is bounded and fails naming what it waited for, with the screen at that moment.
 */
import { execFileSync } from 'node:child_process';

/** A tmux server of our own (`-L`), so tests never touch a user's sessions. */
const SOCKET = `panto-test-${process.pid}`;

function tmux(args: string[], options: { encoding?: 'utf8'; stdio?: 'ignore'; input?: string } = {}): string {
  return String(execFileSync('tmux', ['-L', SOCKET, ...args], options) ?? '');
}

export class TmuxPane {
  readonly name: string;

  private constructor(name: string) {
    this.name = name;
  }

  /** Start `command` (run by sh) in a new 120x40 terminal. */
  static start(name: string, command: string, env: Record<string, string> = {}): TmuxPane {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    tmux(['new-session', '-d', '-s', name, '-x', '120', '-y', '40', ...envArgs, command]);
    // Keep the pane after the program exits, so its last screen can still be read.
    tmux(['set-option', '-t', name, 'remain-on-exit', 'on']);
    return new TmuxPane(name);
  }

  /** Type literal text (no Enter). */
  type(text: string): void {
    tmux(['send-keys', '-t', this.name, '-l', text]);
  }

  /** Paste `text` as a terminal paste: bracketed (`ESC [200~ … ESC [201~`) when the program asked for that. */
  paste(text: string): void {
    tmux(['load-buffer', '-b', `paste-${this.name}`, '-'], { input: text });
    tmux(['paste-buffer', '-p', '-d', '-b', `paste-${this.name}`, '-t', this.name]);
  }

  /** Append everything the program writes from now on, raw (escape sequences included), to `file`. */
  recordRaw(file: string): void {
    tmux(['pipe-pane', '-O', '-t', this.name, `cat >> '${file.replace(/'/g, "'\\''")}'`]);
  }

  /** Send named keys: `Enter`, `C-c`, `C-d`, `Escape`, `M-Enter`. */
  keys(...keys: string[]): void {
    tmux(['send-keys', '-t', this.name, ...keys]);
  }

  /** The screen and its scrollback, as text. */
  screen(): string {
    return tmux(['capture-pane', '-p', '-J', '-S', '-500', '-t', this.name], { encoding: 'utf8' });
  }

  /** Wait until `test` holds on the screen text (or `count` occurrences of a string appear). */
  async waitFor(
    what: string | RegExp,
    options: { timeoutMs?: number; count?: number } = {},
  ): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    const count = options.count ?? 1;
    for (;;) {
      const screen = this.screen();
      const n =
        typeof what === 'string'
          ? screen.split(what).length - 1
          : (screen.match(new RegExp(what.source, `${what.flags.replace('g', '')}g`)) ?? []).length;
      if (n >= count) return screen;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${String(what)} (x${count}); the screen:\n${screen}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The pane's title (what an OSC 0/2 sequence sets). */
  title(): string {
    return tmux(['display-message', '-p', '-t', this.name, '#{pane_title}'], { encoding: 'utf8' }).trim();
  }

  kill(): void {
    try {
      tmux(['kill-session', '-t', this.name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}

/** Stop this process's tmux server (every pane it still has). */
export function stopTmuxServer(): void {
  try {
    tmux(['kill-server'], { stdio: 'ignore' });
  } catch {
    // no server was started
  }
}

/** True when tmux can be run. */
export function haveTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
