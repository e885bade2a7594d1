/**
 * Reading a file someone named (the user, the model, a library caller), safely — shared by the CLI (@mentions, context
 * files, `panto image`, `--mcp`), the MCP config loader and the Lua tool loader: only a regular file is opened — a FIFO or a device would
 * block the open or never end (/dev/zero), a socket cannot be opened — and every read is capped, so a file that grows
 * after the check, or a sparse 2 GB one, costs no more than the cap. The open is non-blocking: a file swapped for a
 * FIFO between the check and the open fails instead of hanging.
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';

/** The type tests of `Stats` and `BigIntStats`. */
type StatKind = Pick<
  Stats,
  'isFile' | 'isDirectory' | 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'
>;

/** Why `info` is not a regular file (`a FIFO`, `a directory`...), or null when it is one. */
export function notRegular(info: StatKind): string | null {
  if (info.isFile()) return null;
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  return 'a special file';
}

/**
 * Open `file` for reading, non-blocking; the caller closes it. A file that is not regular is not opened at all (opening
 * some devices has effects). Throws the system error of a failed stat or open (syscall `open` for either).
 */
export async function openRegular(file: string): Promise<{ fh: FileHandle; info: Stats } | { not: string }> {
  let before: Stats;
  try {
    before = await stat(file);
  } catch (err) {
    // Reported as the open it stands for: `cannot open x: no such file or directory`.
    if ((err as NodeJS.ErrnoException).syscall === 'stat') (err as NodeJS.ErrnoException).syscall = 'open';
    throw err;
  }
  const kind = notRegular(before);
  if (kind !== null) return { not: kind };
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  const info = await fh.stat();
  const swapped = notRegular(info);
  if (swapped !== null) {
    await fh.close();
    return { not: swapped };
  }
  return { fh, info };
}

/** Up to `max` bytes from the start of the file (fewer when it is shorter, or shrank while read). */
export async function readUpTo(fh: FileHandle, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const buf = Buffer.allocUnsafe(Math.min(max - total, 1024 * 1024));
    const { bytesRead } = await fh.read(buf, 0, buf.length, total);
    if (bytesRead === 0) break;
    chunks.push(buf.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}

/** What `readRegularFile` found: the bytes, or why it read nothing. */
export type RegularFileRead =
  | { bytes: Buffer }
  /** Not a regular file: what it is (`a FIFO`, `a directory`...). Nothing was read. */
  | { not: string }
  /** Over `cap` bytes (by its size, or by what a read found when it grew): nothing is returned. */
  | { over: true };

/**
 * The whole of `file` when it is a regular file of at most `cap` bytes. Opened non-blocking (a FIFO, even one swapped
 * in after the check, never blocks the open) and judged by `fstat` on the descriptor read; at most `cap + 1` bytes
 * are read, so a file that grows after the check, or an endless one, costs no more than the cap. Throws the system
 * error of a failed stat or open (`ENOENT`...).
 */
export async function readRegularFile(file: string, cap: number): Promise<RegularFileRead> {
  const opened = await openRegular(file);
  if ('not' in opened) return opened;
  try {
    if (opened.info.size > cap) return { over: true };
    const bytes = await readUpTo(opened.fh, cap + 1);
    return bytes.byteLength > cap ? { over: true } : { bytes };
  } finally {
    await opened.fh.close();
  }
}
