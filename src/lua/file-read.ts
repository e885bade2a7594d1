/**
 * The reading capabilities of the Lua host (`read_file`, `stat`, `list_dir`) as plain async functions: every path is
 * opened once and judged by its descriptor (workspace-files.ts), and everything is read through that descriptor.
 * Never throw; a refusal or a system error is `{ok: false, error}` naming the path as the tool wrote it.
 */

import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { openInWorkspace, readRange } from './workspace-files.js';
import type { Denylist } from './workspace-paths.js';

export type FileResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** `panto.stat` fields. `mode` is the permission bits (e.g. 420 = 0644). */
export interface StatInfo {
  type: 'file' | 'directory' | 'other';
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
  mode: number;
}

/** A `panto.list_dir` entry; `size` and `mtime` with `details`. A symlink is listed as one (not followed). */
export interface DirEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size?: number;
  mtime?: number;
}

/**
 * The bytes of a regular file: the whole file (at most `cap` bytes, or an error naming the size), or with `offset`
 * / `length` a range of it (`length` at most `cap`; past the end gives fewer bytes, possibly none).
 */
export async function readWorkspaceFile(
  root: string,
  p: string,
  denylist: Denylist,
  cap: number,
  range?: { offset?: number | undefined; length?: number | undefined },
): Promise<FileResult<Buffer>> {
  const o = await openInWorkspace(root, p, denylist, 'file');
  if (!o.ok) return o;
  const fh = o.fh;
  if (fh === null) return { ok: false, error: `${p}: is a directory` };
  try {
    const size = Number(o.info.size);
    if (range?.offset !== undefined || range?.length !== undefined) {
      const offset = range.offset ?? 0;
      const length = Math.min(range.length ?? cap, cap);
      if (offset >= size) return { ok: true, value: Buffer.allocUnsafeSlow(0) };
      return { ok: true, value: await readRange(fh, offset, length, Math.min(length, size - offset)) };
    }
    if (size > cap) return { ok: false, error: `${p}: ${size} bytes, over the read cap of ${cap} bytes` };
    const data = await readRange(fh, 0, cap + 1, size);
    if (data.byteLength > cap)
      return { ok: false, error: `${p}: grew past the read cap of ${cap} bytes while read` };
    return { ok: true, value: data };
  } finally {
    await fh.close().catch(() => {});
  }
}

/** What `p` is (symlinks followed), judged by its descriptor; a FIFO, socket or device is `other`, never opened. */
export async function statWorkspace(
  root: string,
  p: string,
  denylist: Denylist,
): Promise<FileResult<StatInfo>> {
  const o = await openInWorkspace(root, p, denylist, 'any');
  if (!o.ok) return o;
  await o.fh?.close().catch(() => {});
  return { ok: true, value: statFields(o.info) };
}

function statFields(st: {
  isFile(): boolean;
  isDirectory(): boolean;
  size: bigint;
  mtimeMs: bigint;
  mode: bigint;
}): StatInfo {
  return {
    type: st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other',
    size: Number(st.size),
    mtime: Math.floor(Number(st.mtimeMs) / 1000),
    mode: Number(st.mode & 0o7777n),
  };
}

/**
 * The entries of directory `p` sorted by name, read from the directory that was opened and judged (on Linux through
 * its descriptor). Denylisted names are left out. With `details`, each entry has `size` and `mtime` (of the entry
 * itself: a symlink's own).
 */
export async function listWorkspaceDir(
  root: string,
  p: string,
  denylist: Denylist,
  details = false,
): Promise<FileResult<DirEntry[]>> {
  const o = await openInWorkspace(root, p, denylist, 'dir');
  if (!o.ok) return o;
  try {
    const entries = await readdir(o.dirPath, { withFileTypes: true });
    // Secrets on the denylist are not even named: a tool cannot read them, and their names can leak too.
    const kept = entries.filter((e) => denylist.match(o.rel === '' ? e.name : `${o.rel}/${e.name}`) === null);
    const list: DirEntry[] = kept.map((e) => ({
      name: e.name,
      type: e.isFile() ? 'file' : e.isDirectory() ? 'directory' : e.isSymbolicLink() ? 'symlink' : 'other',
    }));
    if (details) {
      await Promise.all(
        list.map(async (entry) => {
          try {
            const st = await lstat(path.join(o.dirPath, entry.name), { bigint: true });
            entry.size = Number(st.size);
            entry.mtime = Math.floor(Number(st.mtimeMs) / 1000);
          } catch {
            // Gone since the listing: listed without details.
          }
        }),
      );
    }
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { ok: true, value: list };
  } catch (err) {
    return { ok: false, error: `${p}: ${(err as Error).message}` };
  } finally {
    await o.fh?.close().catch(() => {});
  }
}
