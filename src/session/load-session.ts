/**
 * Loading a session file, on one of two paths chosen once by `mentionsCompaction`: the index path (session-index.ts;
 * only the current conversation parsed, `entries` parses the rest on first read) or the one pass (jsonl-reader.ts, as
 * `eager: true`). The file is read once and never held as one string.
 */

import type { Conversation } from '../conversation.js';
import { checkedEntry, checkedHeader, EntryTree } from './entry-tree.js';
import { formatError, type JsonlReadOptions, readJsonl } from './jsonl-reader.js';
import { repeatedKeyProblem } from './leading-fields.js';
import { openRegularFile } from './line-reader.js';
import { type ConversationView, modelOnBranch, resolveBranch } from './resolve-conversation.js';
import type { SessionEntry, SessionHeader } from './session-entry.js';
import { openSessionIndex, type SessionIndex } from './session-index.js';
import { headerlessSession, type SessionWarning, type TornLine } from './session-warning.js';

export interface LoadSessionOptions extends JsonlReadOptions {
  /** Parse and check every line while loading (default false: see `loadSession`). */
  eager?: boolean;
}

export interface LoadedSession {
  header: SessionHeader;
  /**
   * Every entry in file order (all branches; owned by the session object, do not mutate it). After a lazy load on the
   * index path the first read parses the lines not parsed yet (synchronously; kept) and throws what loading would
   * have for them (`ERR_SESSION_CORRUPT`, `ERR_SESSION_FORMAT`), or `ERR_SESSION_CHANGED` when the loaded bytes are no
   * longer the file's start (docs/session-format.md); a file that only grew is not a change (the appended lines are
   * not included). Otherwise it is ready and never touches the file.
   */
  readonly entries: readonly SessionEntry[];
  /** The current conversation: the path to the leaf with the latest compaction applied. */
  conversation: Conversation;
  /** Id of the last entry, or `null` when the file holds only a header. */
  leafId: string | null;
  /** The current model: the latest `model_change` on the path to the leaf, else the header's `model`. */
  model?: string;
  /** What the load recovered from, in line order (live on the index path: `entries` may add `invalid_utf8`). */
  warnings: SessionWarning[];
}

/** A session file read on the path `loadSession` chooses: what it loaded, and what `SessionLog.open` builds on. */
export interface SessionSource {
  session: LoadedSession;
  /** Every entry: the file's index on the index path, else all of them parsed. */
  tree: SessionIndex | EntryCollector;
  /** The conversation with the entry id of each message (`null` for a compaction's replacement). */
  view: ConversationView;
  /** How the file ends (`headerMissing`: no header; `session.header` is a new one, not in the file). */
  end: { headerMissing: boolean; fileBytes: number; torn?: TornLine | undefined; unterminated: boolean };
}

/**
 * The checks and the tree of a session read line by line, every line parsed (the one-pass and eager loads; a store
 * reading all of a session's rows). `path` names the source in errors (`path:line: problem`).
 */
export class EntryCollector extends EntryTree {
  header: SessionHeader | undefined;
  readonly entries: SessionEntry[] = [];

  /** One parsed line (`text` as parsed): the header first, then entries. Throws `ERR_SESSION_FORMAT`. */
  add(value: unknown, line: number, text: string): void {
    if (this.header === undefined) {
      this.header = checkedHeader(this.path, line, value);
      return;
    }
    const entry = checkedEntry(this.path, line, value, text.length);
    // A line that begins in SessionLog's form but repeats a key is refused, as the index refuses it (leading-fields.ts).
    const repeated = repeatedKeyProblem(text, entry);
    if (repeated) throw formatError(this.path, line, repeated);
    this.link(line, entry.type, entry.id, entry.parentId);
    this.entries.push(entry);
  }

  override appendEntry(entry: SessionEntry): void {
    this.link(this.lineOf(this.size - 1) + 1, entry.type, entry.id, entry.parentId);
    this.entries.push(entry);
  }

  override readAt(positions: readonly number[]): SessionEntry[] {
    return positions.map((i) => this.entries[i] as SessionEntry);
  }

  /** The session the lines make (`warnings` pushed to; a new header when there was none). */
  session(warnings: SessionWarning[]): {
    session: LoadedSession & { entries: SessionEntry[] };
    view: ConversationView;
    headerMissing: boolean;
  } {
    const headerMissing = this.header === undefined;
    // Nothing parsed: an empty file, blank lines, or a first line cut short by a crash before the header was written.
    const header = this.header ?? headerlessSession(this.path, warnings);
    const branch = this.branchTo(this.size - 1);
    const view = resolveBranch(branch, this);
    const model = modelOnBranch(branch, this, header.model);
    return {
      session: {
        header,
        entries: this.entries,
        conversation: { messages: view.messages },
        leafId: this.ids[this.size - 1] ?? null,
        ...(model === undefined ? {} : { model }),
        warnings,
      },
      view,
      headerMissing,
    };
  }
}

const MARKER = Buffer.from('"compaction"', 'latin1');
/** Where the marker's core starts in it. */
const CORE_AT = 3;
/**
 * The marker's core (`mpactio`), searched for first: Node scans for a needle shorter than 8 bytes with memchr on its
 * first byte, 2.7x faster here than its Boyer-Moore for the whole marker. A run of `m` bytes is its slowest input
 * (~6 ns a byte, about half of what parsing those bytes costs).
 */
const CORE = MARKER.subarray(CORE_AT, CORE_AT + 7);

/**
 * Whether `b` holds the marker: found by its core, each hit checked whole; after 64 hits that are not the marker, by
 * the whole marker (a file that repeats the core would make a search by it slow).
 */
function holdsMarker(b: Buffer): boolean {
  const n = MARKER.length;
  let i = b.indexOf(CORE, CORE_AT);
  for (let misses = 0; misses < 64; misses++) {
    const start = i - CORE_AT;
    if (i === -1 || start + n > b.length) return false;
    if (b.compare(MARKER, 0, n, start, start + n) === 0) return true;
    i = b.indexOf(CORE, i + 1);
  }
  return i !== -1 && b.includes(MARKER, i - CORE_AT);
}

/**
 * Whether `path` mentions a compaction: the look a lazy load takes to choose its path once. Only a compacted branch
 * gains from the index; without one, one pass parsing every line is fastest. The latest compaction sits near the end,
 * so the file is searched from its end for the bytes `"compaction"`, 1 MiB at a time, the next piece read while one is
 * searched (a never-compacted 200 MB file costs ~85 ms, ~3% of parsing it). The answer only chooses a path; both load
 * the same session. A false "yes" (the JSON string `"compaction"` in a tool input) costs the index pass; a false "no"
 * (a type spelled with `\u` escapes, which SessionLog never writes) costs parsing the replaced history.
 * `ERR_INVALID_ARGUMENT`: not a regular file.
 */
async function mentionsCompaction(path: string): Promise<boolean> {
  const step = 1024 * 1024;
  const fh = await openRegularFile(path);
  // Two buffers: the next (earlier) piece is read while this one is searched.
  let next: Promise<{ bytesRead: number }> | undefined;
  try {
    const { size } = await fh.stat();
    // Each read overlaps the previous one by the marker's length - 1, so a marker across two reads is seen.
    const bufs = [0, 1].map(() => Buffer.allocUnsafe(Math.min(step, size) + MARKER.length - 1));
    const readBefore = (k: number, end: number) => {
      const start = Math.max(0, end - step);
      return fh.read(bufs[k] as Buffer, 0, Math.min(end + MARKER.length - 1, size) - start, start);
    };
    if (size > 0) next = readBefore(0, size);
    for (let end = size, k = 0; end > 0; end -= step, k ^= 1) {
      const { bytesRead } = await (next as Promise<{ bytesRead: number }>);
      next = end > step ? readBefore(k ^ 1, end - step) : undefined;
      if (holdsMarker((bufs[k] as Buffer).subarray(0, bytesRead))) return true;
    }
    return false;
  } finally {
    await next?.catch(() => undefined);
    await fh.close();
  }
}

/**
 * Read a session file on the path `loadSession` chooses (see there): the index path, or every line parsed and checked
 * now (`eager: true`, or a file with no compaction).
 */
export async function readSession(path: string, options: LoadSessionOptions): Promise<SessionSource> {
  if (options.eager || !(await mentionsCompaction(path))) {
    const tree = new EntryCollector(path);
    const read = await readJsonl(path, (value, line, text) => tree.add(value, line, text), options);
    const { session, view, headerMissing } = tree.session(read.warnings);
    return { session, tree, view, end: { ...read, headerMissing } };
  }
  const index = await openSessionIndex(path, options);
  const view = index.conversationView(true);
  let pending: SessionIndex | undefined = index;
  let entries: readonly SessionEntry[] = [];
  const session = {
    header: index.header,
    conversation: { messages: view.messages },
    leafId: index.leafId,
    ...(index.model === undefined ? {} : { model: index.model }),
    warnings: index.warnings as SessionWarning[],
  } as LoadedSession;
  // Reads the lines not parsed yet on first access (see `LoadedSession`), then lets the index go. Not enumerable, as a
  // class getter: a spread or JSON.stringify of the session does not read the file.
  Object.defineProperty(session, 'entries', {
    get: () => {
      if (pending !== undefined) [entries, pending] = [pending.readAll(), undefined];
      return entries;
    },
  });
  return { session, tree: index, view, end: index };
}

/**
 * Load a session file written by `SessionLog`, streamed once (bounded extra memory; no whole-file string). Lazily by
 * default: a file that mentions `"compaction"` (`mentionsCompaction`) is indexed and only its current conversation
 * parsed (the latest compaction on; see `LoadedSession.entries` for the rest), any other file is parsed in one pass.
 * With `eager: true` every line is parsed and checked now. Which lines are checked when: docs/session-format.md.
 *
 * Errors (`PantoError`): `ERR_SESSION_CORRUPT` (a line not valid JSON or longer than `maxLineBytes`, naming it),
 * `ERR_SESSION_FORMAT` (no or a newer header, an invalid entry, a duplicate id, a parent not earlier in the file),
 * `ERR_SESSION_CHANGED` (index path: the file changed while indexed, other than by growing), `ERR_INVALID_ARGUMENT`
 * (not a regular file); file-system errors propagate. A torn last line is skipped with a warning; a file with no
 * header loads as an empty session (`no_header`).
 */
export async function loadSession(path: string, options: LoadSessionOptions = {}): Promise<LoadedSession> {
  return (await readSession(path, options)).session;
}
