/**
 * Opening a session file for reading: anything but a regular file (a directory, a FIFO, a device) is refused with
 * `ERR_INVALID_ARGUMENT` before anything is read. Opened with `O_NONBLOCK` where the platform has it (a FIFO without
 * a writer never blocks) and checked with `fstat` on that descriptor (no window between check and open).
 */

import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { PantoError } from '../errors.js';
import { notRegular } from '../regular-file.js';

/** Flags every read of a session file opens it with. */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * `path` opened for reading, after checking it is a regular file (see the module comment).
 * @throws PantoError `ERR_INVALID_ARGUMENT` when it is not; file-system errors (e.g. `ENOENT`) propagate.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const fh = await open(path, READ_FLAGS);
  try {
    const kind = notRegular(await fh.stat());
    if (kind === null) return fh;
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `${path}: is ${kind}, not a regular file; a session file must be a regular file`,
    );
  } catch (err) {
    await fh.close();
    throw err;
  }
}
