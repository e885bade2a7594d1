/**
 * Single-writer lock for a session file: `FILE.lock` (symlinks resolved), created with O_CREAT|O_EXCL, holding
 * `{"pid","hostname","token","acquired","start"?}`. Advisory: it stops every `SessionLog`, not other programs.
 *
 * Stale (taken over): a lock of this host whose pid is not running, or runs a process started at another time than
 * `start` (Linux: boot id + start ticks from `/proc`), or is this process's pid with no `FileLock` here holding it (a
 * container restarted as PID 1); an empty or unreadable lock older than 10 s. Another host's lock is never taken
 * over (the error names the file to delete). Released by `release()` and, while held, on process `exit`.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { PantoError } from '../errors.js';

interface LockInfo {
  pid: number;
  hostname: string;
  token: string;
  acquired: string;
  /** The holder's process start (see `processStart`), when the platform tells it. */
  start?: string;
}

const UNREADABLE_STALE_MS = 10_000;

/**
 * Locks held by this process. Shared through a global symbol, so two copies of this module in one process (a bundled
 * and an installed libpanto) still see each other's locks and never take one over as stale.
 */
type HeldLock = { release(): void; ownsToken(token: string): boolean };
const registry = globalThis as { [key: symbol]: unknown };
const HELD = Symbol.for('libpanto.session-locks');
registry[HELD] ??= new Set<HeldLock>();
const held = registry[HELD] as Set<HeldLock>;
let exitHookInstalled = false;

function releaseAllOnExit(): void {
  for (const lock of held) {
    try {
      lock.release();
    } catch {
      // exiting: a lock we cannot remove is found stale by the next writer on this host
    }
  }
}

/** The file's canonical path (symlinks resolved), so every alias of one file maps to one lock. */
function canonical(filePath: string): string {
  try {
    return realpathSync(filePath);
  } catch {
    try {
      return join(realpathSync(dirname(filePath)), basename(filePath));
    } catch {
      return filePath;
    }
  }
}

let bootId: string | null | undefined;

/**
 * When process `pid` started, as `<boot id>:<start time in clock ticks>` from `/proc` (Linux), or `undefined` where
 * the platform does not tell (macOS, Windows) or the process does not exist.
 */
export function processStart(pid: number): string | undefined {
  if (bootId === undefined) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootId = null;
    }
  }
  if (bootId === null) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) is in parentheses and may hold spaces; fields after it are space separated. starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = fields[19];
    return start === undefined || start === '' ? undefined : `${bootId}:${start}`;
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

type LockRead =
  | { kind: 'missing' }
  | { kind: 'unreadable'; raw: string }
  | { kind: 'ok'; info: LockInfo; raw: string };

function readLock(lockPath: string): LockRead {
  let raw: string;
  try {
    raw = readFileSync(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  try {
    const v = JSON.parse(raw) as Partial<LockInfo>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string' && typeof v.token === 'string') {
      return { kind: 'ok', info: v as LockInfo, raw };
    }
  } catch {
    // fall through: unreadable
  }
  return { kind: 'unreadable', raw };
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function isStale(lockPath: string, read: LockRead): boolean {
  if (read.kind === 'ok') {
    const { info } = read;
    if (info.hostname !== hostname()) return false;
    // Our own pid: every lock this process holds is in `held`, so a lock file naming us otherwise is a leftover of an
    // earlier process that had the same pid (a container restarted as PID 1).
    if (info.pid === process.pid) return ![...held].some((l) => l.ownsToken(info.token));
    if (!pidAlive(info.pid)) return true;
    if (typeof info.start === 'string') {
      const now = processStart(info.pid);
      return now !== undefined && now !== info.start;
    }
    return false;
  }
  try {
    return read.kind === 'unreadable' && Date.now() - statSync(lockPath).mtimeMs > UNREADABLE_STALE_MS;
  } catch {
    return false;
  }
}

/** A held lock. */
export class FileLock {
  readonly lockPath: string;
  readonly #token: string;
  #released = false;

  private constructor(lockPath: string, token: string) {
    this.lockPath = lockPath;
    this.#token = token;
  }

  /**
   * Take the lock for `filePath` (the lock file is `<canonical path of filePath>.lock`).
   * Throws `ERR_SESSION_LOCKED` naming the holder when another live process (or this one) holds it.
   */
  static acquire(filePath: string): FileLock {
    const lockPath = `${canonical(filePath)}.lock`;
    const info: LockInfo = {
      pid: process.pid,
      hostname: hostname(),
      token: randomBytes(8).toString('hex'),
      acquired: new Date().toISOString(),
    };
    const start = processStart(process.pid);
    if (start !== undefined) info.start = start;
    for (let attempt = 0; attempt < 3; attempt++) {
      let fd: number;
      try {
        fd = openSync(lockPath, 'wx');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const read = readLock(lockPath);
        if (read.kind === 'missing') continue;
        if (!isStale(lockPath, read)) {
          const holder =
            read.kind === 'ok'
              ? `process ${read.info.pid} on ${read.info.hostname} (since ${read.info.acquired})`
              : 'a process that has not finished writing the lock file';
          throw new PantoError(
            'ERR_SESSION_LOCKED',
            `session ${filePath} is open for writing by ${holder}; lock file ${lockPath} ` +
              '(delete it only if that process is gone)',
          );
        }
        // Stale: remove it only if it is still the same stale lock (another taker may have replaced it).
        const again = readLock(lockPath);
        if (again.kind !== 'missing' && again.raw === read.raw) unlinkIfPresent(lockPath);
        continue;
      }
      try {
        writeSync(fd, JSON.stringify(info));
      } finally {
        closeSync(fd);
      }
      const lock = new FileLock(lockPath, info.token);
      held.add(lock);
      if (!exitHookInstalled) {
        process.on('exit', releaseAllOnExit);
        exitHookInstalled = true;
      }
      return lock;
    }
    throw new PantoError(
      'ERR_SESSION_LOCKED',
      `session ${filePath}: could not take lock ${lockPath} (contended)`,
    );
  }

  /** True when `token` is this lock's token (used to recognise a lock file this process holds). */
  ownsToken(token: string): boolean {
    return !this.#released && token === this.#token;
  }

  /** Remove the lock file if it is still ours. Idempotent; never throws for a lock file already gone. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    held.delete(this);
    const read = readLock(this.lockPath);
    if (read.kind === 'ok' && read.info.token === this.#token) unlinkIfPresent(this.lockPath);
  }
}
