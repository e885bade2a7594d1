/**
 * The writing capabilities of the Lua host (`write_file`, `make_dir`) as plain async functions. Never throw; a
 * refusal or a system error is `{ok: false, error}` naming the path as the tool wrote it.
 *
 * - Confinement: the target is judged by name (lexical rules, the real path of the file or of its parent, root,
 *   denylist), and the file actually opened is judged again by its descriptor (workspace-files.ts), so a parent
 *   directory swapped for a symlink between the check and the open is caught at the open. A symlink as the target is
 *   followed only when it stays inside the workspace (the write goes to its real target); a dangling one is refused.
 * - Atomic replace: the data goes to a new temporary file in the target's directory (`O_CREAT|O_EXCL|O_NOFOLLOW`,
 *   a random name, the old file's permission bits), is flushed, and `rename` replaces the target in one step; readers
 *   see the old or the new file, never a part. `append` writes in place instead (`O_APPEND`).
 * - Missing parent directories are created, each judged like `make_dir`'s.
 */

import { randomBytes } from 'node:crypto';
import { type BigIntStats, constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FileResult } from './file-read.js';
import { judgeDescriptor, realpathOrNull } from './workspace-files.js';
import { type Denylist, judgeReal, pathError, resolveLexical } from './workspace-paths.js';

const IS_WINDOWS = process.platform === 'win32';
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * Write `data` to `p` (atomic replace, or `append`), creating missing parent directories. At most `cap` bytes.
 */
export async function writeWorkspaceFile(
  root: string,
  p: string,
  denylist: Denylist,
  data: Uint8Array,
  cap: number,
  append = false,
): Promise<FileResult<true>> {
  if (data.byteLength > cap) {
    return { ok: false, error: `${p}: ${data.byteLength} bytes, over the write cap of ${cap} bytes` };
  }
  const lex = resolveLexical(root, p, denylist);
  if (!lex.ok) return lex;
  if (lex.rel === '') return { ok: false, error: `${p}: is the workspace root` };
  try {
    const target = await writeTarget(root, p, lex.abs, denylist);
    if (!target.ok) return target;
    return append
      ? await appendTo(root, p, target.abs, target.existing, denylist, data)
      : await replace(root, p, target.abs, target.existing, denylist, data);
  } catch (err) {
    return { ok: false, error: pathError(p, err) };
  }
}

/** Where a write to `lexical` goes (its real path, judged), and what is there now. */
async function writeTarget(
  root: string,
  p: string,
  lexical: string,
  denylist: Denylist,
): Promise<{ ok: true; abs: string; existing: BigIntStats | null } | { ok: false; error: string }> {
  const real = await realpathOrNull(lexical);
  if (real !== null) {
    const judged = judgeReal(root, real, p, denylist);
    if (!judged.ok) return judged;
    const st = await lstat(real, { bigint: true });
    if (st.isDirectory()) return { ok: false, error: `${p}: is a directory` };
    if (!st.isFile()) return { ok: false, error: `${p}: not a regular file` };
    return { ok: true, abs: real, existing: st };
  }
  // Missing: a dangling symlink (pointing who knows where) is refused; otherwise create it in its real parent.
  const link = await lstat(lexical).catch(() => null);
  if (link?.isSymbolicLink())
    return { ok: false, error: `${p}: a symbolic link to a missing file; not followed` };
  const parent = await makeDirs(root, p, path.dirname(lexical), denylist);
  if (!parent.ok) return parent;
  const abs = path.join(parent.abs, path.basename(lexical));
  const judged = judgeReal(root, abs, p, denylist);
  if (!judged.ok) return judged;
  return { ok: true, abs, existing: null };
}

/** Temporary file + rename in the target's directory. */
async function replace(
  root: string,
  p: string,
  abs: string,
  existing: BigIntStats | null,
  denylist: Denylist,
  data: Uint8Array,
): Promise<FileResult<true>> {
  const dir = path.dirname(abs);
  // The prefix keeps the name off the denylist's patterns (`env` must not get a temporary `.env.x`).
  const temp = path.join(
    dir,
    `.panto-tmp-${randomBytes(6).toString('hex')}-${path.basename(abs).slice(0, 100)}`,
  );
  const mode = existing === null ? 0o666 : Number(existing.mode & 0o7777n);
  const created = await createChecked(root, p, temp, denylist, mode);
  if (!created.ok) return created;
  const { fh } = created;
  let renamed = false;
  try {
    await writeAll(fh, data);
    if (existing !== null && !IS_WINDOWS) await fh.chmod(mode);
    await fh.datasync();
    await fh.close();
    await renameRetrying(temp, abs);
    renamed = true;
    await syncDir(dir);
    return { ok: true, value: true };
  } finally {
    if (!renamed) {
      await fh.close().catch(() => {});
      await unlink(temp).catch(() => {});
    }
  }
}

/** Append in place (the file is created when missing). */
async function appendTo(
  root: string,
  p: string,
  abs: string,
  existing: BigIntStats | null,
  denylist: Denylist,
  data: Uint8Array,
): Promise<FileResult<true>> {
  if (existing === null) {
    const created = await createChecked(root, p, abs, denylist, 0o666);
    if (!created.ok) return created;
    try {
      await writeAll(created.fh, data);
      return { ok: true, value: true };
    } finally {
      await created.fh.close().catch(() => {});
    }
  }
  let fh: FileHandle;
  try {
    fh = await open(abs, constants.O_WRONLY | constants.O_APPEND | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { ok: false, error: `${p}: changed while being opened; not used` };
    return { ok: false, error: pathError(p, err) };
  }
  try {
    const info = await fh.stat({ bigint: true });
    if (!info.isFile()) return { ok: false, error: `${p}: changed while being opened; not used` };
    const judged = await judgeDescriptor(fh, info, abs, p, root, denylist);
    if (!judged.ok) return judged;
    await writeAll(fh, data);
    return { ok: true, value: true };
  } finally {
    await fh.close().catch(() => {});
  }
}

/**
 * Create `file` (it must not exist: `O_EXCL`, and `O_NOFOLLOW` refuses a symlink planted there) and judge the new
 * descriptor. A file that turns out to be outside the workspace (its parent was swapped for a symlink) is removed.
 */
async function createChecked(
  root: string,
  p: string,
  file: string,
  denylist: Denylist,
  mode: number,
): Promise<{ ok: true; fh: FileHandle } | { ok: false; error: string }> {
  let fh: FileHandle;
  try {
    fh = await open(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NONBLOCK,
      mode,
    );
  } catch (err) {
    return { ok: false, error: pathError(p, err) };
  }
  try {
    const info = await fh.stat({ bigint: true });
    const judged = await judgeDescriptor(fh, info, file, p, root, denylist);
    if (judged.ok) return { ok: true, fh };
    await fh.close();
    // Ours (O_EXCL): remove it where it really is, never leave a file outside the workspace behind.
    await unlink(file).catch(() => {});
    return judged;
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(file).catch(() => {});
    return { ok: false, error: pathError(p, err) };
  }
}

async function writeAll(fh: FileHandle, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.byteLength) {
    const { bytesWritten } = await fh.write(data, at, data.byteLength - at);
    at += bytesWritten;
  }
}

/** `rename`, retried briefly on Windows while another process holds the target (EPERM/EACCES/EBUSY). */
async function renameRetrying(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!IS_WINDOWS || attempt >= 10 || (code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY'))
        throw err;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
}

/** Flush a directory entry change (rename) to disk; best effort (not possible on Windows). */
async function syncDir(dir: string): Promise<void> {
  if (IS_WINDOWS) return;
  const fh = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0)).catch(() => null);
  if (fh === null) return;
  await fh.sync().catch(() => {});
  await fh.close().catch(() => {});
}

/** `panto.make_dir(path)`: create `p` and missing parents (`mkdir -p`); an existing directory is fine. */
export async function makeWorkspaceDir(
  root: string,
  p: string,
  denylist: Denylist,
): Promise<FileResult<true>> {
  const lex = resolveLexical(root, p, denylist);
  if (!lex.ok) return lex;
  try {
    const made = await makeDirs(root, p, lex.abs, denylist);
    return made.ok ? { ok: true, value: true } : made;
  } catch (err) {
    return { ok: false, error: pathError(p, err) };
  }
}

/**
 * Make directory `lexical` (already checked by name) and its missing parents, one level at a time: the deepest
 * existing ancestor is judged by its real path, and each new directory by its real path right after `mkdir`. A new
 * directory that turns out to be outside the workspace (a parent swapped for a symlink in between) is removed again.
 * Returns the real path of `lexical`.
 */
async function makeDirs(
  root: string,
  p: string,
  lexical: string,
  denylist: Denylist,
): Promise<{ ok: true; abs: string } | { ok: false; error: string }> {
  const missing: string[] = [];
  let existing = lexical;
  let real = await realpathOrNull(existing);
  while (real === null) {
    const link = await lstat(existing).catch(() => null);
    if (link?.isSymbolicLink())
      return { ok: false, error: `${p}: a symbolic link to a missing directory; not followed` };
    missing.unshift(path.basename(existing));
    const up = path.dirname(existing);
    if (up === existing) return { ok: false, error: `${p}: no such file or directory` };
    existing = up;
    real = await realpathOrNull(existing);
  }
  let at = judgeReal(root, real, p, denylist);
  if (!at.ok) return at;
  const st = await lstat(at.abs);
  if (!st.isDirectory()) return { ok: false, error: `${p}: ${path.basename(existing)} is not a directory` };
  for (const name of missing) {
    const next = path.join(at.abs, name);
    let made = true;
    try {
      await mkdir(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      made = false;
    }
    const nextReal = await realpathOrNull(next);
    if (nextReal === null) return { ok: false, error: `${p}: changed while being created; not used` };
    const judged = judgeReal(root, nextReal, p, denylist);
    if (!judged.ok) {
      if (made) await rmdir(nextReal).catch(() => {});
      return judged;
    }
    if (!(await lstat(nextReal)).isDirectory())
      return { ok: false, error: `${p}: ${name} is not a directory` };
    at = judged;
  }
  return at;
}
