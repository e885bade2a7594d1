/**
 * Whether a session file mentions a compaction: the look a lazy load takes to choose its path once (load-session.ts).
 * Only a compacted branch gains from the index; without one, one pass parsing every line is fastest. The latest
 * compaction sits near the end, so the file is searched from its end for the bytes `"compaction"` (a never-compacted
 * 270 MB file costs ~45 ms, ~1% of parsing it). The answer only chooses a path; both load the same session. A false
 * "yes" (the JSON string `"compaction"` in a tool input) costs the index pass; a false "no" (a type spelled with `\u`
 * escapes, which SessionLog never writes) costs parsing the replaced history.
 */

import { openRegularFile } from './regular-file.js';

const MARKER = Buffer.from('"compaction"', 'latin1');
/** Bytes read per call (one buffer, reused). */
const STEP = 1024 * 1024;

/** Whether `path` contains `"compaction"` (1 MiB reads from the end). `ERR_INVALID_ARGUMENT`: not a regular file. */
export async function mentionsCompaction(path: string): Promise<boolean> {
  const fh = await openRegularFile(path);
  try {
    const { size } = await fh.stat();
    // Each read overlaps the previous one by the marker's length - 1, so a marker across two reads is seen.
    const buf = Buffer.allocUnsafe(Math.min(STEP, size) + MARKER.length - 1);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - STEP);
      const want = Math.min(end + MARKER.length - 1, size) - start;
      const { bytesRead } = await fh.read(buf, 0, want, start);
      if (buf.subarray(0, bytesRead).includes(MARKER)) return true;
      end = start;
    }
    return false;
  } finally {
    await fh.close();
  }
}
