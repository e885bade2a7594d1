/**
 * The cheap look a lazy load takes before choosing its path: whether a session file mentions a compaction. A lazy
 * load gains only when the current branch holds a compaction (it then never parses the history the compaction
 * replaced); without one, the conversation is every message on the branch and one pass that parses every line is
 * the fastest load. A session's latest compaction sits near its end (what follows it fits in one
 * context window), so the file is searched from its end backwards for the bytes `"compaction"`, stopping at the first
 * match: a compacted session answers within its tail, and a never-compacted one costs one search of its bytes (a
 * 270 MB file in ~45 ms, ~1% of parsing it) — cheaper than a false "no", which would parse the history a compaction
 * replaced (for an image-heavy session, every image's base64 before it).
 *
 * The answer only chooses a path, it never decides a result: both paths load the same session. A false "yes" (the
 * bytes as a JSON string value of a message, e.g. a tool input `{"mode":"compaction"}`) costs the index pass; text
 * that merely contains the word is escaped in JSON (`\"compaction\"`) and does not match. A false "no" (only a type
 * spelled with `\u` escapes, which SessionLog never writes) costs parsing the history that compaction replaced: the
 * one-pass reader resolves the compaction like any other (load-session.ts).
 */

import { openRegularFile } from './regular-file.js';

const MARKER = Buffer.from('"compaction"', 'latin1');
/** Bytes read per call (one buffer, reused). */
const STEP = 1024 * 1024;

/**
 * Whether `path` contains `"compaction"`. One open, one stat, reads of at most 1 MiB from the end backwards
 * (stopping at the first match). `ERR_INVALID_ARGUMENT` when `path` is not a regular file
 * (regular-file.ts); file-system errors (e.g. `ENOENT`) propagate.
 */
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
