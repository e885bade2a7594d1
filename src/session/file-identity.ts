/**
 * What a later read of a session file compares with the file on disk, and the rule it applies: the index's lazy
 * reads (session-index.ts) and file-backed texts (file-text.ts) both use it.
 */

/** The `fstat` fields a read compares. */
export interface FileIdentity {
  size: number;
  mtimeMs: number;
  ino: number;
  dev: number;
}

/** Just the compared fields of `stat` (a `Stats` holds many more). */
export function fileIdentity(stat: FileIdentity): FileIdentity {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, dev: stat.dev };
}

/**
 * Why the file `now` describes may no longer hold the loaded bytes — the first `covered` bytes of the file `was`
 * describes — or null when it may (the reader's own checks of what it reads decide the rest). Another file (inode or
 * device differ), a file shorter than `covered`, or one of the same size with another mtime (rewritten in place:
 * nothing was appended) changed; a file that only grew past them did not (another writer appending: an agent still
 * running).
 */
export function prefixChange(now: FileIdentity, was: FileIdentity, covered: number): string | null {
  if (now.ino !== was.ino || now.dev !== was.dev) return 'it was replaced by another file';
  if (now.size < covered) return `it shrank (size ${was.size} → ${now.size})`;
  if (now.size === was.size && now.mtimeMs !== was.mtimeMs)
    return 'it was rewritten in place (same size, another mtime)';
  return null;
}
