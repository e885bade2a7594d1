/**
 * Node's file-system errors (`ENOENT`, `EACCES`, `EISDIR`...) as one line naming the file, for user-facing messages:
 * `cannot open chat.jsonl: no such file or directory`.
 */

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  ELOOP: 'too many symbolic links',
  ENXIO: 'no such device or address (a socket, or a device that is not there)',
};

const VERBS: Record<string, string> = {
  open: 'open',
  read: 'read',
  write: 'write',
  mkdir: 'create the directory',
  scandir: 'list',
  stat: 'read',
  lstat: 'read',
  unlink: 'remove',
  rename: 'rename',
};

/** A Node system error carrying `code` and `syscall` (and usually `path`). */
export function isSystemError(
  err: unknown,
): err is NodeJS.ErrnoException & { code: string; syscall: string } {
  if (!(err instanceof Error)) return false;
  const e = err as NodeJS.ErrnoException;
  return typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && typeof e.syscall === 'string';
}

/** The plain-words reason of a system error (`no such file or directory`), or its code. */
export function systemErrorReason(err: NodeJS.ErrnoException & { code: string }): string {
  return REASONS[err.code] ?? err.code;
}

/** `cannot <verb> <path>: <reason>`; `label` replaces the error's own path (e.g. the path as the user typed it). */
export function describeSystemError(err: NodeJS.ErrnoException & { code: string }, label?: string): string {
  const reason = systemErrorReason(err);
  const target = label ?? err.path ?? (err as { dest?: string }).dest;
  const verb = VERBS[err.syscall ?? ''] ?? 'access';
  return target === undefined
    ? `${err.syscall ?? 'system call'} failed: ${reason}`
    : `cannot ${verb} ${target}: ${reason}`;
}
