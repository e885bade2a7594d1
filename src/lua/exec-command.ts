/**
 * `panto.exec`: run a command for a Lua tool, contained (docs/lua-tools.md "exec"; facts in
 * shared/reference/scriptable-host.md).
 *
 * - An argv array, no shell (`shell: true` only when the tool asks, with a command string).
 * - Its own process group (POSIX: `detached`, i.e. setsid), so a timeout or an abort ends the whole tree the command
 *   started: SIGKILL to the group, repeated while members remain (a fork bomb forks while it is killed). When the
 *   command exits, whatever it left running in its group is killed too, and the output pipes are drained for at most
 *   `DRAIN_MS` (a process that left the group with setsid and holds the pipe cannot hold the call). Windows: the tree
 *   is ended with `taskkill /T /F` (by pid; the libuv job object covers the direct child).
 * - A minimal environment: only the variables the host lists (`passEnv`, default `CORE_ENV`) plus fixed ones.
 * - stdout and stderr capped at `maxOutputBytes` each: the head and the tail are kept (half each), the middle is
 *   replaced by a note saying how much was left out; the pipes are read to the end so the command never blocks.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { FileResult } from './file-read.js';
import { concatOwned } from './owned-bytes.js';

const IS_WINDOWS = process.platform === 'win32';

/** Host settings of `exec` (plain data: they cross to a worker). */
export interface ExecOptions {
  /**
   * Environment variables passed from the host's environment (by name; missing ones are skipped). Default
   * `CORE_ENV`: PATH, HOME, the user and locale, temp dirs, and what Windows programs need to start.
   */
  passEnv?: readonly string[];
  /** Variables set for every command (after `passEnv`; a tool's `env` comes last). */
  env?: Readonly<Record<string, string>>;
  /** Timeout of a command whose tool gives none, ms. Default 120,000. The call's time budget still applies. */
  timeoutMs?: number;
  /** Cap of stdout and of stderr, bytes each (head and tail kept). Default 1 MiB. */
  maxOutputBytes?: number;
}

/** The variables a command gets by default (those set in the host's environment). */
export const CORE_ENV: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'USERNAME',
  'SHELL',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TERM',
  'TMPDIR',
  'TEMP',
  'TMP',
  // Windows: what programs need to start and find their files
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'NUMBER_OF_PROCESSORS',
  'PROCESSOR_ARCHITECTURE',
  'OS',
]);

export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** How long the pipes may stay open after the command exited and its group was killed. */
const DRAIN_MS = 2000;

/** What `panto.exec` returns. `code` is null when a signal ended the command. */
export interface ExecResult {
  code: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout or stderr was cut (head and tail kept, with a note between). */
  truncated: boolean;
  /** The command ran past its timeout and was killed. */
  timed_out: boolean;
}

export interface ExecRequest {
  /** argv (program first), or with `shell` one command line. */
  argv: readonly string[] | string;
  shell: boolean;
  /** Real path of the directory to run in (already judged). */
  cwd: string;
  stdin?: Uint8Array | undefined;
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
}

/** The environment of a command: the host's `passEnv` variables, its fixed `env`, then the tool's `extra`. */
export function commandEnv(
  options: ExecOptions,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of options.passEnv ?? CORE_ENV) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  Object.assign(env, options.env ?? {}, extra);
  return env;
}

/** Keeps the first and last `cap / 2` bytes of a stream and counts the rest. */
class HeadTail {
  readonly #half: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  total = 0;

  constructor(cap: number) {
    this.#half = Math.max(1, Math.floor(cap / 2));
  }

  add(chunk: Buffer): void {
    this.total += chunk.byteLength;
    let rest = chunk;
    if (this.#headBytes < this.#half) {
      const take = rest.subarray(0, this.#half - this.#headBytes);
      this.#head.push(Buffer.from(take));
      this.#headBytes += take.byteLength;
      rest = rest.subarray(take.byteLength);
    }
    if (rest.byteLength === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.byteLength;
    // Drop whole chunks the tail no longer needs (it keeps at most one chunk more than half the cap).
    while (this.#tail.length > 1 && this.#tailBytes - (this.#tail[0] as Buffer).byteLength >= this.#half) {
      this.#tailBytes -= (this.#tail.shift() as Buffer).byteLength;
    }
  }

  get cut(): boolean {
    return this.total > this.#headBytes + Math.min(this.#tailBytes, this.#half);
  }

  /** The kept bytes (memory of their own), with a note where the middle was left out. */
  bytes(): Buffer {
    const head = concatOwned(this.#head);
    let tail = concatOwned(this.#tail);
    if (tail.byteLength > this.#half) tail = tail.subarray(tail.byteLength - this.#half);
    if (!this.cut) return concatOwned([head, tail]);
    const omitted = this.total - head.byteLength - tail.byteLength;
    const note = Buffer.from(
      `\n[... ${omitted} bytes left out of ${this.total} (the middle of the output) ...]\n`,
    );
    return concatOwned([head, note, tail]);
  }
}

/** Run a command; never rejects. A command that cannot start is `{ok: false, error}`. */
export function runCommand(req: ExecRequest): Promise<FileResult<ExecResult>> {
  return new Promise((resolve) => {
    const program = typeof req.argv === 'string' ? req.argv : (req.argv[0] as string);
    const args = typeof req.argv === 'string' ? [] : req.argv.slice(1);
    if (req.signal.aborted) {
      resolve({ ok: false, error: 'exec: aborted before the command started' });
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(program, args, {
        cwd: req.cwd,
        env: req.env,
        shell: req.shell,
        detached: !IS_WINDOWS,
        windowsHide: true,
        stdio: [req.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
    } catch (err) {
      resolve({ ok: false, error: startError(program, err) });
      return;
    }
    const out = new HeadTail(req.maxOutputBytes);
    const err = new HeadTail(req.maxOutputBytes);
    let timedOut = false;
    let exited: { code: number | null; signal: string | null } | null = null;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;

    const finish = (result: FileResult<ExecResult>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      req.signal.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.stdin?.destroy();
      resolve(result);
    };
    const result = (): FileResult<ExecResult> => ({
      ok: true,
      value: {
        code: exited?.code ?? null,
        signal: exited?.signal ?? null,
        stdout: out.bytes(),
        stderr: err.bytes(),
        truncated: out.cut || err.cut,
        timed_out: timedOut,
      },
    });
    const stop = () => killTree(child);
    const onAbort = () => {
      stop();
      finish({ ok: false, error: 'exec: aborted; the command was killed' });
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, req.timeoutMs);

    child.stdout?.on('data', (d: Buffer) => out.add(d));
    child.stderr?.on('data', (d: Buffer) => err.add(d));
    if (req.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE: the command did not read all of it
      child.stdin.end(req.stdin);
    }
    child.on('error', (e) => {
      if (child.pid === undefined) finish({ ok: false, error: startError(program, e) });
    });
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      // What the command left running in its group goes with it (and lets go of the pipes). Windows has no group to
      // reach once the parent is gone (taskkill /T follows the living tree only): the drain limit bounds the wait.
      if (!IS_WINDOWS) killTree(child);
      drainTimer = setTimeout(() => finish(result()), DRAIN_MS);
    });
    child.on('close', () => {
      if (exited !== null) finish(result());
    });
  });
}

function startError(program: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const name = path.basename(program).slice(0, 200);
  if (e.code === 'ENOENT') return `exec: ${name}: command not found (or the working directory is gone)`;
  if (e.code === 'EACCES') return `exec: ${name}: permission denied`;
  if (e.code === 'EINVAL' && IS_WINDOWS && /\.(bat|cmd)$/i.test(program)) {
    return `exec: ${name}: a .bat/.cmd file runs only through a shell: pass the command line with {shell = true}`;
  }
  return `exec: ${name}: ${e.message ?? String(err)}`;
}

/**
 * End `child` and everything it started. POSIX: SIGKILL to its process group, again every 20 ms while the group has
 * members (up to 25 times: a fork bomb forks while it is being killed). Windows: `taskkill /T /F` on its pid, then
 * the child itself.
 */
function killTree(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (IS_WINDOWS) {
    const root = process.env.SystemRoot ?? process.env.SYSTEMROOT ?? 'C:\\Windows';
    try {
      const tk = spawn(path.join(root, 'System32', 'taskkill.exe'), ['/PID', String(pid), '/T', '/F'], {
        stdio: 'ignore',
        windowsHide: true,
      });
      tk.on('error', () => {});
      tk.unref();
    } catch {
      // taskkill missing: the child alone below.
    }
    child.kill();
    return;
  }
  let tries = 0;
  const again = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      return; // ESRCH: the group is empty
    }
    if (++tries < 25) setTimeout(again, 20).unref();
  };
  again();
}
