/**
 * Path confinement for the Lua host API: every path a tool passes is resolved against the workspace root and must
 * stay inside it, after symlinks are resolved; a denylist of secret files is refused even inside the root.
 */

import { realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * Secrets refused by default, even inside the workspace. Pattern syntax: `*` and `?` globs; a pattern without `/`
 * matches any path segment's name (`.env`, `*.pem`); a pattern ending in `/` matches a directory anywhere in the path
 * (`.ssh/`); matching is case-insensitive.
 */
export const DEFAULT_DENYLIST: readonly string[] = Object.freeze([
  '.env',
  '.env.*',
  '.ssh/',
  '.gnupg/',
  '.aws/',
  '.docker/config.json',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.pgpass',
  '.git-credentials',
]);

/** A compiled denylist. */
export class Denylist {
  readonly #segment: RegExp[] = [];
  readonly #dir: RegExp[] = [];
  readonly #path: RegExp[] = [];

  constructor(patterns: readonly string[]) {
    for (const raw of patterns) {
      const p = raw.replaceAll('\\', '/').replace(/^\.\//, '');
      if (p.length === 0) continue;
      if (p.endsWith('/')) this.#dir.push(glob(p.slice(0, -1)));
      else if (p.includes('/')) this.#path.push(glob(p));
      else this.#segment.push(glob(p));
    }
  }

  /** The reason `rel` (a path relative to the root, `/`-separated) is refused, or null when allowed. */
  match(rel: string): string | null {
    const segments = rel.split('/').filter((s) => s.length > 0);
    for (const seg of segments) {
      if (this.#segment.some((r) => r.test(seg))) return seg;
      // A directory pattern matches any segment: the directory itself or anything below it.
      if (this.#dir.some((r) => r.test(seg))) return `${seg}/`;
    }
    const joined = segments.join('/');
    for (const r of this.#path) if (r.test(joined)) return joined;
    return null;
  }
}

function glob(pattern: string): RegExp {
  let re = '';
  for (const ch of pattern) {
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

export type ResolvedPath = { ok: true; abs: string; rel: string } | { ok: false; error: string };

/**
 * Resolve `p` (relative to `realRoot`, or absolute inside it) to a real absolute path inside the root.
 * `realRoot` must already be a real path (see `realRoot`). Refuses: empty paths, NUL bytes, paths outside the root
 * (lexically or after resolving symlinks) and denylisted paths (checked on the path as given and as resolved).
 * A missing file gives `no such file or directory: <p>`.
 */
export async function resolveInWorkspace(
  realRoot: string,
  p: string,
  denylist: Denylist,
): Promise<ResolvedPath> {
  if (p.length === 0) return { ok: false, error: 'empty path' };
  if (p.includes('\0')) return { ok: false, error: 'path contains a NUL byte' };
  const lexical = path.resolve(realRoot, p);
  const lexRel = relativeInside(realRoot, lexical);
  if (lexRel === null) return { ok: false, error: `${p}: outside the workspace` };
  const deniedLex = denylist.match(lexRel);
  if (deniedLex !== null)
    return { ok: false, error: `${p}: access denied (matches the secrets denylist: ${deniedLex})` };
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { ok: false, error: `${p}: no such file or directory` };
    if (code === 'EACCES' || code === 'EPERM') return { ok: false, error: `${p}: permission denied` };
    if (code === 'ELOOP') return { ok: false, error: `${p}: too many levels of symbolic links` };
    return { ok: false, error: `${p}: ${(err as Error).message}` };
  }
  const rel = relativeInside(realRoot, real);
  if (rel === null)
    return { ok: false, error: `${p}: resolves outside the workspace (through a symbolic link)` };
  const denied = denylist.match(rel);
  if (denied !== null)
    return { ok: false, error: `${p}: access denied (matches the secrets denylist: ${denied})` };
  return { ok: true, abs: real, rel };
}

/** `abs` relative to `root` with `/` separators, or null when `abs` is not inside `root` (root itself gives ''). */
function relativeInside(root: string, abs: string): string | null {
  const rel = path.relative(root, abs);
  if (rel === '') return '';
  if (path.isAbsolute(rel) || rel.split(path.sep)[0] === '..') return null;
  return rel.split(path.sep).join('/');
}

const realRoots = new Map<string, Promise<string>>();

/** The real path of a workspace root (cached per root string). Rejects when the root does not exist. */
export function realRoot(root: string): Promise<string> {
  let p = realRoots.get(root);
  if (!p) {
    p = realpath(path.resolve(root));
    p.catch(() => realRoots.delete(root));
    realRoots.set(root, p);
  }
  return p;
}
