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
import { type FileHandle, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FileResult } from './file-read.js';
import { descriptorLocation, judgeDescriptor, openResolved, realpathOrNull } from './workspace-files.js';
import { type Denylist, judgeReal, pathError, resolveLexical } from './workspace-paths.js';

const IS_WINDOWS = process.platform === 'win32';
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;

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

/**
 * Run `fn` with the target's directory open and judged: `base` reaches exactly that directory (on Linux through its
 * descriptor), so what is created and renamed under it lands in it even when its path is swapped meanwhile.
 */
async function inDir<T>(
  root: string,
  p: string,
  dirAbs: string,
  denylist: Denylist,
  fn: (base: string, dir: FileHandle | null) => Promise<FileResult<T>>,
): Promise<FileResult<T>> {
  const dir = await openResolved(root, dirAbs, p, denylist, 'dir');
  if (!dir.ok) return dir;
  try {
    return await fn(dir.dirPath, dir.fh);
  } finally {
    await dir.fh?.close().catch(() => {});
  }
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
  const name = path.basename(abs);
  const mode = existing === null ? 0o666 : Number(existing.mode & 0o7777n);
  return inDir(root, p, path.dirname(abs), denylist, async (base, dir) => {
    // The prefix keeps the name off the denylist's patterns (`env` must not get a temporary `.env.x`).
    const temp = path.join(base, `.panto-tmp-${randomBytes(6).toString('hex')}-${name.slice(0, 100)}`);
    const created = await createChecked(root, p, temp, denylist, mode);
    if (!created.ok) return created;
    const { fh } = created;
    let renamed = false;
    try {
      await writeAll(fh, data);
      if (existing !== null && !IS_WINDOWS) await fh.chmod(mode);
      await fh.datasync();
      await fh.close();
      await renameRetrying(temp, path.join(base, name));
      renamed = true;
      // Flush the directory entry change too (best effort; not possible on Windows).
      if (dir !== null && !IS_WINDOWS) await dir.sync().catch(() => {});
      return { ok: true, value: true };
    } finally {
      if (!renamed) {
        await fh.close().catch(() => {});
        await unlink(temp).catch(() => {});
      }
    }
  });
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
  return inDir(root, p, path.dirname(abs), denylist, async (base) => {
    const file = path.join(base, path.basename(abs));
    if (existing === null) {
      const created = await createChecked(root, p, file, denylist, 0o666);
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
      fh = await open(file, constants.O_WRONLY | constants.O_APPEND | O_NOFOLLOW | O_NONBLOCK);
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
  });
}

/**
 * Create `file` (it must not exist: `O_EXCL`, and `O_NOFOLLOW` refuses a symlink planted there) and judge the new
 * descriptor. A file that turns out to be outside the workspace (its directory was moved out meanwhile) is removed
 * where it really is.
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
  const where = (await descriptorLocation(fh.fd)) ?? file;
  try {
    const info = await fh.stat({ bigint: true });
    const judged = await judgeDescriptor(fh, info, file, p, root, denylist);
    if (judged.ok) return { ok: true, fh };
    await fh.close();
    await unlink(where).catch(() => {}); // ours (O_EXCL): never left behind outside the workspace
    return judged;
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(where).catch(() => {});
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
 * existing ancestor is judged by its real path, each new level is made under its opened parent and judged by its own
 * descriptor. Returns the real path of `lexical`.
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
  const first = judgeReal(root, real, p, denylist);
  if (!first.ok) return first;
  let at: string = first.abs;
  const st = await lstat(at);
  if (!st.isDirectory()) return { ok: false, error: `${p}: ${path.basename(existing)} is not a directory` };
  for (const name of missing) {
    const step: FileResult<string> = await inDir(root, p, at, denylist, async (base) => {
      // Made under the opened directory (see inDir), then opened without following a symlink and judged by its
      // descriptor. Nothing is ever removed: a name swapped meanwhile is not ours any more.
      const next = path.join(base, name);
      try {
        await mkdir(next);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (IS_WINDOWS) {
        // Directories are not opened on Windows (see workspace-files.ts): judged by their real path.
        const real = await realpathOrNull(next);
        return real === null
          ? { ok: false, error: `${p}: changed while being created; not used` }
          : judgeWorkspacePath(root, real, p, denylist);
      }
      let fh: FileHandle;
      try {
        fh = await open(next, constants.O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') {
          return { ok: false, error: `${p}: changed while being created; not used` };
        }
        throw err;
      }
      try {
        const judged = await judgeDescriptor(fh, await fh.stat({ bigint: true }), next, p, root, denylist);
        return judged.ok ? { ok: true, value: judged.abs } : judged;
      } finally {
        await fh.close().catch(() => {});
      }
    });
    if (!step.ok) return step;
    at = step.value;
  }
  return { ok: true, abs: at };
}

/** `judgeReal` as a `FileResult` of the real path. */
function judgeWorkspacePath(root: string, real: string, p: string, denylist: Denylist): FileResult<string> {
  const judged = judgeReal(root, real, p, denylist);
  return judged.ok ? { ok: true, value: judged.abs } : judged;
}
