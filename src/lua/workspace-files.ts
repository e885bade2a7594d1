/**
 * Opening workspace files so that what is checked is what is used (issue 36: "check and use the same file").
 *
 * A path is checked by name first (workspace-paths.ts: lexical rules, `realpath`, root and denylist), then opened
 * ONCE by its real path with `O_NOFOLLOW` (a last component swapped for a symlink fails instead of being followed) and
 * `O_NONBLOCK` (a FIFO swapped in never blocks a libuv thread), and the DESCRIPTOR is judged: its type by `fstat`
 * (a file is never opened unless `lstat` called it regular: opening a device can have effects), its location by
 * what the kernel says it is (`/proc/self/fd/N` on Linux: inside the root and not denylisted). Everything afterwards
 * (reading, listing, writing) goes through that descriptor, so a file or directory swapped for a symlink between the
 * check and the use is refused, never followed out of the workspace.
 *
 * Where the kernel cannot name a descriptor (macOS, Windows, a Linux without /proc), the descriptor's device and inode
 * are compared with the checked path's: the same guarantee against a swap of the last component, a narrower window
 * (not a guarantee) against a swap of a parent directory racing the open. Node has no `openat`, so that is the best
 * plain Node can do. Windows has neither `O_NOFOLLOW` nor `O_NONBLOCK` (and no FIFOs in the file system); directories
 * are not opened there (checked by their real path again instead).
 */

import { type BigIntStats, constants } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises';
import { notRegular } from '../regular-file.js';
import { type Denylist, judgeReal, pathError, resolveInWorkspace } from './workspace-paths.js';

const IS_WINDOWS = process.platform === 'win32';
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;

/** A workspace file or directory, open and judged by its descriptor. The caller closes `fh` (when set). */
export interface OpenedEntry {
  /** Null for a directory on Windows (not opened there; see the module doc) and for a special file. */
  fh: FileHandle | null;
  /** A FIFO, socket or device (only with `want: 'any'`): never opened; `info` is its `lstat`. */
  special: boolean;
  info: BigIntStats;
  /** The real path, as the descriptor names it where the kernel can say. */
  abs: string;
  /** `abs` relative to the root, `/`-separated. */
  rel: string;
  /** A path that reaches exactly the opened directory (`/proc/self/fd/N` on Linux), for `readdir` and `lstat`. */
  dirPath: string;
}

export type Opened = ({ ok: true } & OpenedEntry) | { ok: false; error: string };

/** What a path must be: a regular file, a directory, or anything (a special file is then described, not opened). */
export type Want = 'file' | 'dir' | 'any';

let procFd: boolean | null = IS_WINDOWS ? false : null;

/** The path the kernel gives descriptor `fd` (Linux /proc), or null where it cannot. */
async function descriptorPath(fd: number): Promise<string | null> {
  if (procFd === false) return null;
  try {
    const p = await readlink(`/proc/self/fd/${fd}`);
    procFd = true;
    return p;
  } catch {
    procFd = false;
    return null;
  }
}

/**
 * Judge an open descriptor against the checked real path `real`: where the kernel names it, that name must be inside
 * the root and not denylisted; elsewhere `real` must still be the same file (device + inode, not a symlink now).
 * Returns the judged location or the error.
 */
export async function judgeDescriptor(
  fh: FileHandle,
  info: BigIntStats,
  real: string,
  shown: string,
  root: string,
  denylist: Denylist,
): Promise<{ ok: true; abs: string; rel: string } | { ok: false; error: string }> {
  const named = await descriptorPath(fh.fd);
  if (named !== null) {
    if (named.endsWith(' (deleted)') && named !== real)
      return { ok: false, error: `${shown}: was removed while being opened` };
    return judgeReal(root, named, shown, denylist);
  }
  let now: BigIntStats;
  try {
    now = await lstat(real, { bigint: true });
  } catch (err) {
    return { ok: false, error: pathError(shown, err) };
  }
  if (now.isSymbolicLink() || now.dev !== info.dev || now.ino !== info.ino) {
    return { ok: false, error: `${shown}: changed while being opened; not used` };
  }
  return judgeReal(root, real, shown, denylist);
}

/**
 * Resolve `p` in the workspace and open it for reading as `want` says, judged by its descriptor (see the module
 * doc). Never throws; a refusal or a system error is `{ok: false, error}` naming `p`.
 */
export async function openInWorkspace(
  root: string,
  p: string,
  denylist: Denylist,
  want: Want,
): Promise<Opened> {
  const r = await resolveInWorkspace(root, p, denylist);
  if (!r.ok) return r;
  return openResolved(root, r.abs, p, denylist, want);
}

/**
 * Open `real` (a real path already judged by name; `shown` names it in messages) as `want` says, judged by its
 * descriptor. For a directory, `dirPath` then reaches exactly the directory opened (on Linux through its descriptor),
 * so names created or renamed under it land in it whatever happens to its path meanwhile (Node's stand-in for
 * `openat`). Never throws.
 */
export async function openResolved(
  root: string,
  real: string,
  shown: string,
  denylist: Denylist,
  want: Want,
): Promise<Opened> {
  const named = judgeReal(root, real, shown, denylist);
  if (!named.ok) return named;
  let before: BigIntStats;
  try {
    before = await lstat(real, { bigint: true });
  } catch (err) {
    return { ok: false, error: pathError(shown, err) };
  }
  const isDir = before.isDirectory();
  if (want === 'file' && isDir) return { ok: false, error: `${shown}: is a directory` };
  if (want === 'dir' && !isDir) {
    return {
      ok: false,
      error: before.isFile()
        ? `${shown}: not a directory`
        : `${shown}: not a directory (${notRegular(before)})`,
    };
  }
  if (before.isSymbolicLink()) return { ok: false, error: `${shown}: changed while being opened; not used` };
  if (!isDir && !before.isFile()) {
    // A FIFO, socket or device is never opened (opening a device can have effects; a FIFO would wait for a writer).
    if (want === 'any')
      return { ok: true, fh: null, special: true, info: before, abs: real, rel: named.rel, dirPath: real };
    return { ok: false, error: `${shown}: ${notRegular(before)}, not a regular file` };
  }
  if (isDir && IS_WINDOWS) {
    // Not opened on Windows: the real path is judged again (a junction swapped in shows there).
    const again = await resolveInWorkspace(root, real, denylist);
    if (!again.ok) return { ok: false, error: again.error.replace(real, shown) };
    if (again.abs !== real) return { ok: false, error: `${shown}: changed while being opened; not used` };
    return { ok: true, fh: null, special: false, info: before, abs: real, rel: named.rel, dirPath: real };
  }
  let fh: FileHandle;
  try {
    fh = await open(real, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (isDir ? O_DIRECTORY : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR')
      return { ok: false, error: `${shown}: changed while being opened; not used` };
    return { ok: false, error: pathError(shown, err) };
  }
  try {
    const info = await fh.stat({ bigint: true });
    const kindNow = info.isDirectory() ? 'dir' : info.isFile() ? 'file' : null;
    if (kindNow === null || (isDir ? kindNow !== 'dir' : kindNow !== 'file')) {
      await fh.close();
      return { ok: false, error: `${shown}: changed while being opened; not used` };
    }
    const judged = await judgeDescriptor(fh, info, real, shown, root, denylist);
    if (!judged.ok) {
      await fh.close();
      return judged;
    }
    const dirPath = procFd === true && isDir ? `/proc/self/fd/${fh.fd}` : judged.abs;
    return { ok: true, fh, special: false, info, abs: judged.abs, rel: judged.rel, dirPath };
  } catch (err) {
    await fh.close().catch(() => {});
    return { ok: false, error: pathError(shown, err) };
  }
}

/** Where the kernel says descriptor `fd` is (Linux /proc), or null where it cannot say. */
export function descriptorLocation(fd: number): Promise<string | null> {
  return descriptorPath(fd);
}

/**
 * Read up to `max` bytes of `fh` from `position` (fewer at the end of the file) into memory nobody else shares (never
 * Node's Buffer pool: the bytes may become a Lua string). `expected` (the size `fstat` gave) sizes the first read,
 * so a small file costs a small buffer; a file that grew since is read on, up to `max`.
 */
export async function readRange(
  fh: FileHandle,
  position: number,
  max: number,
  expected: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let want = Math.max(1, Math.min(max, expected + 1));
  while (total < max) {
    const buf = Buffer.allocUnsafeSlow(want);
    const { bytesRead } = await fh.read(buf, 0, buf.length, position + total);
    if (bytesRead === 0) break;
    chunks.push(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
    total += bytesRead;
    if (bytesRead < buf.length) break;
    want = Math.min(max - total, 1024 * 1024);
  }
  if (chunks.length === 1) return chunks[0] as Buffer;
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** `realpath` of `p` or null when it does not exist (other errors throw). */
export async function realpathOrNull(p: string): Promise<string | null> {
  try {
    return await realpath(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
