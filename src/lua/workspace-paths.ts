/**
 * Path confinement for the Lua host API: every path a tool passes is resolved against the workspace root and must
 * stay inside it, after symlinks are resolved; a denylist of secret files is refused even inside the root.
 */

import { realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * Secrets refused by default, even inside the workspace: defence in depth, not a sandbox (a tool with `exec` can read
 * what the user can; a hard link or a copy under another name is not caught). Pattern syntax: `*` and `?` globs
 * within one path segment; a pattern is one or more segments (`.env`, `.ssh/`, `.config/gh/hosts.yml`) and matches
 * when the path holds those segments in a row, at any depth (so `.ssh/` covers the directory and everything below
 * it); matching is case-insensitive.
 */
export const DEFAULT_DENYLIST: readonly string[] = Object.freeze([
  // environment files and keys
  '.env',
  '.env.*',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  '*.kdbx',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  // key stores and credential folders
  '.ssh/',
  '.gnupg/',
  '.password-store/',
  '.aws/',
  '.azure/',
  '.kube/',
  '.config/gcloud/',
  '.docker/config.json',
  // tokens of command-line tools
  '.config/gh/hosts.yml',
  '.config/hub',
  '.vault-token',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.pgpass',
  '.git-credentials',
  '.git/config', // remote URLs may carry tokens (https://user:token@host/...)
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.terraformrc',
  '.terraform.d/credentials.tfrc.json',
  '.s3cfg',
  '.boto',
  '.htpasswd',
  '.config/rclone/rclone.conf',
  // shell and REPL histories (commands typed with secrets in them)
  '.bash_history',
  '.zsh_history',
  '.sh_history',
  '.history',
  'fish_history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.lesshst',
]);

/** A compiled denylist. */
export class Denylist {
  /** Each pattern as a run of segment matchers. */
  readonly #runs: Array<{ pattern: string; segments: RegExp[] }> = [];

  constructor(patterns: readonly string[]) {
    for (const raw of patterns) {
      const p = raw.replaceAll('\\', '/').replace(/^\.\//, '');
      const segments = p.split('/').filter((x) => x.length > 0);
      if (segments.length === 0) continue;
      this.#runs.push({ pattern: p, segments: segments.map(glob) });
    }
  }

  /**
   * The reason `rel` (a path, `/`-separated; relative to the root or absolute) is refused, or null when allowed: the
   * pattern that matched (`.ssh/`, `.env`).
   */
  match(rel: string): string | null {
    const segments = rel.split('/').filter((s) => s.length > 0);
    for (const { pattern, segments: run } of this.#runs) {
      for (let i = 0; i + run.length <= segments.length; i++) {
        let all = true;
        for (let j = 0; j < run.length && all; j++) all = (run[j] as RegExp).test(segments[i + j] as string);
        if (all) return run.length === 1 && !pattern.endsWith('/') ? (segments[i] as string) : pattern;
      }
    }
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

/** Windows device names: opening `nul` or `con.txt` opens the device, wherever the path points. */
const WINDOWS_DEVICE =
  /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\..*)?$/i;

/**
 * Why `p` is refused under Windows path rules, or null. NTFS gives one file many spellings that a text comparison
 * misses: `.env.` and `.env ` (trailing dot or space), `.env::$DATA` and `.env:x` (alternate data streams), device
 * paths (`\\?\`, `\\.\`) and device names (`nul`, `con.txt`). Those are refused outright; 8.3 short names
 * (`SECRE~1.ENV`) and case variants are caught by judging the resolved real path (`realpath` expands them).
 */
export function windowsPathProblem(p: string): string | null {
  if (/^[\\/]{2}[?.][\\/]/.test(p)) return 'a Windows device or verbatim path (\\\\?\\, \\\\.\\) is refused';
  const segments = p.split(/[\\/]/);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    if (seg === '' || seg === '.' || seg === '..') continue;
    // A drive letter is allowed as the first segment of an absolute path (C:\...), nowhere else.
    if (i === 0 && /^[a-zA-Z]:$/.test(seg)) continue;
    if (seg.includes(':')) return `'${seg}' has a ':' (a drive or an alternate data stream inside a path)`;
    if (/[. ]$/.test(seg))
      return `'${seg}' ends in a dot or a space (Windows drops it: another name for the same file)`;
    if (WINDOWS_DEVICE.test(seg)) return `'${seg}' is a Windows device name`;
  }
  return null;
}

export type ResolvedPath = { ok: true; abs: string; rel: string } | { ok: false; error: string };

/**
 * The lexical half of `resolveInWorkspace`, a pure function of its arguments (so the Windows rules are testable on any
 * platform with `path.win32`): `p` resolved against `root` without touching the disk, refused when empty, holding a
 * NUL byte, breaking a Windows rule (`windowsPathProblem`, with `path.win32`), outside the root or denylisted.
 */
export function resolveLexical(
  root: string,
  p: string,
  denylist: Denylist,
  flavor: path.PlatformPath = path,
): ResolvedPath {
  if (p.length === 0) return { ok: false, error: 'empty path' };
  if (p.includes('\0')) return { ok: false, error: 'path contains a NUL byte' };
  if (flavor.sep === '\\') {
    const problem = windowsPathProblem(p);
    if (problem !== null) return { ok: false, error: `${p}: ${problem}` };
  }
  const lexical = flavor.resolve(root, p);
  const rel = relativeInside(root, lexical, flavor);
  if (rel === null) return { ok: false, error: `${p}: outside the workspace` };
  const denied = denylist.match(rel);
  if (denied !== null) return { ok: false, error: deniedMessage(p, denied) };
  return { ok: true, abs: lexical, rel };
}

/** The refusal of a denylisted path. */
export function deniedMessage(p: string, denied: string): string {
  return `${p}: access denied (matches the secrets denylist: ${denied})`;
}

/**
 * Judge a real path (what `realpath` or an open descriptor says a path IS): inside the root and not denylisted.
 * `shown` is the path as the tool wrote it, for the message.
 */
export function judgeReal(
  root: string,
  real: string,
  shown: string,
  denylist: Denylist,
  flavor: path.PlatformPath = path,
): ResolvedPath {
  const rel = relativeInside(root, real, flavor);
  if (rel === null)
    return { ok: false, error: `${shown}: resolves outside the workspace (through a symbolic link)` };
  const denied = denylist.match(rel);
  if (denied !== null) return { ok: false, error: deniedMessage(shown, denied) };
  return { ok: true, abs: real, rel };
}

/** A system error of a path operation as the text a tool reads. */
export function pathError(p: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return `${p}: no such file or directory`;
  if (code === 'EACCES' || code === 'EPERM') return `${p}: permission denied`;
  if (code === 'ELOOP') return `${p}: too many levels of symbolic links`;
  if (code === 'EISDIR') return `${p}: is a directory`;
  if (code === 'EEXIST') return `${p}: already exists`;
  if (code === 'ENOSPC') return `${p}: no space left on the device`;
  if (code === 'EROFS') return `${p}: read-only file system`;
  if (code === 'ENAMETOOLONG') return `${p}: file name too long`;
  return `${p}: ${(err as Error)?.message ?? String(err)}`;
}

/**
 * Resolve `p` (relative to `realRoot`, or absolute inside it) to a real absolute path inside the root.
 * `realRoot` must already be a real path (see `realRoot`). Refuses: empty paths, NUL bytes, Windows aliases (on
 * Windows), paths outside the root (lexically or after resolving symlinks) and denylisted paths (checked on the path
 * as given and as resolved: on Windows `realpath` expands 8.3 short names and gives the stored case). A missing file
 * gives `<p>: no such file or directory`. A check of the NAME only: what is opened must be judged again by its
 * descriptor (workspace-files.ts).
 */
export async function resolveInWorkspace(
  realRoot: string,
  p: string,
  denylist: Denylist,
): Promise<ResolvedPath> {
  const lex = resolveLexical(realRoot, p, denylist);
  if (!lex.ok) return lex;
  let real: string;
  try {
    real = await realpath(lex.abs);
  } catch (err) {
    return { ok: false, error: pathError(p, err) };
  }
  return judgeReal(realRoot, real, p, denylist);
}

/** `abs` relative to `root` with `/` separators, or null when `abs` is not inside `root` (root itself gives ''). */
function relativeInside(root: string, abs: string, flavor: path.PlatformPath = path): string | null {
  const rel = flavor.relative(root, abs);
  if (rel === '') return '';
  if (flavor.isAbsolute(rel) || rel.split(flavor.sep)[0] === '..') return null;
  return rel.split(flavor.sep).join('/');
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
