/**
 * Output helpers shared by the commands: plain text for people, `--json` for scripts, progress on stderr.
 *
 * What the commands print comes partly from untrusted places (tool outputs, session logs, file names, error messages
 * of providers and MCP servers). `processIo` shows terminal controls visibly (`visibleControls`) on stderr always and
 * on stdout when it is a terminal; piped stdout is byte for byte (the product; see the README's CLI section).
 */
import { visibleControls } from './safe-text.js';

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Whether stderr is a terminal (progress is shown only then). */
  isTty: boolean;
}

/**
 * Make a closed pipe on stdout or stderr (`panto session F | head -3`) end the process quietly with code 0 instead of
 * an unhandled `EPIPE` error: the reader has everything it asked for. Installed once by the `panto` entry point.
 */
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0);
      throw err;
    });
  }
}

export const processIo: CliIo = {
  out: (text) => {
    const safe = process.stdout.isTTY ? visibleControls(text) : text;
    process.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  },
  err: (text) => {
    const safe = visibleControls(text);
    process.stderr.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  },
  isTty: Boolean(process.stderr.isTTY),
};

/**
 * Run `work` and, if it takes longer than a second, show a spinner line on stderr (TTY only) naming `label`.
 * The line is cleared when the work ends.
 */
export async function withProgress<T>(io: CliIo, label: string, work: () => Promise<T>): Promise<T> {
  if (!io.isTty) return work();
  // The label names a file or tool, which may carry terminal controls.
  const name = visibleControls(label);
  const frames = ['|', '/', '-', '\\'];
  let i = 0;
  const started = Date.now();
  let shown = false;
  const timer = setInterval(() => {
    if (Date.now() - started < 1000) return;
    shown = true;
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(`\r${frames[i++ % frames.length]} ${name} (${secs}s)`);
  }, 120);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    if (shown) process.stderr.write('\r\x1b[2K');
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}
