/**
 * Loading a session file. By default lazily, on one of two paths chosen once, before reading, by a byte search of the
 * file (compaction-probe.ts): when it mentions a compaction, the file is indexed in one pass over its bytes
 * (session-index.ts: header, ids, parents, types and line offsets) and only the current conversation is parsed — the
 * lines of the current branch from its latest compaction on — and `entries` parses the rest when it is first read;
 * when it does not, the conversation is every message of the branch, and one pass parses and checks every line
 * (jsonl-reader.ts, as `eager: true`). Either way the file is read once and never held as one string, so sessions far
 * beyond V8's string limit load. Bytes that are not valid UTF-8 read as U+FFFD with an `invalid_utf8` warning on
 * every path.
 */

import type { Conversation } from '../conversation.js';
import { PantoError } from '../errors.js';
import { mentionsCompaction } from './compaction-probe.js';
import {
  emptyRunMessage,
  type JsonlReadOptions,
  type JsonlReadResult,
  readJsonl,
  tornLineMessage,
} from './jsonl-reader.js';
import { repeatedKeyProblem } from './leading-fields.js';
import { type ConversationView, pathToLeaf, resolveConversation } from './resolve-conversation.js';
import type { SessionEntry, SessionHeader } from './session-entry.js';
import { openSessionIndex, type ParsedRun, type SessionIndex } from './session-index.js';
import { headerlessSession, invalidUtf8Warning, type SessionWarning } from './session-warning.js';
import { entryProblem, readableHeaderProblem } from './validate-entry.js';

export type { SessionWarning } from './session-warning.js';

export interface LoadSessionOptions extends JsonlReadOptions {
  /**
   * Parse and check every line while loading (default false: a file that mentions a compaction is indexed and only
   * its current conversation parsed, the other lines when `entries` is first read; any other file is parsed in one
   * pass anyway — see `loadSession`). Eager loading reports any damaged line at load time, at the cost of holding
   * every entry.
   */
  eager?: boolean;
}

export interface LoadedSession {
  header: SessionHeader;
  /**
   * Every entry in file order (all branches, including the messages a compaction replaced). After a lazy load (the
   * default) the lines not yet parsed are read, parsed and checked on the first access, synchronously, and the array
   * is kept (later reads return the same array; it belongs to the session object, do not mutate it). That first
   * access throws what loading would have thrown for those lines — `ERR_SESSION_CORRUPT` (not valid JSON, with the
   * line number) or `ERR_SESSION_FORMAT` (not a valid entry) — and `ERR_SESSION_CHANGED` when the bytes loaded from
   * are no longer the file's start: another file (inode differs), a file shorter than them, one of the same size with
   * another mtime (rewritten in place), a last line loaded that now continues past its old end, or a line whose
   * id/parent/type does not match the index. A file that only grew (another writer, e.g. a running agent's
   * `SessionLog`, appended lines; a torn last line cut off and appended after) is not a change: the array holds the
   * entries as of the load, without the appended ones (load again to see them). Until then the
   * session object keeps the file's index (a few dozen bytes per entry) and the path, not the file's text. After a
   * lazy load that took the one-pass path (no compaction in the file, see `loadSession`) the array is ready and
   * reading it never touches the file.
   */
  readonly entries: readonly SessionEntry[];
  /** The current conversation: the path to the leaf with the latest compaction applied. */
  conversation: Conversation;
  /** Id of the last entry, or `null` when the file holds only a header. */
  leafId: string | null;
  /** The current model: the latest `model_change` on the path to the leaf, else the header's `model`. */
  model?: string;
  /**
   * What the load recovered from, in line order. After a lazy load on the index path, a line first parsed by
   * `entries` that is not valid UTF-8 adds its `invalid_utf8` warning then (the array is live).
   */
  warnings: SessionWarning[];
}

/** The latest `model_change` model on `path`, else `fallback`. */
export function currentModel(
  path: readonly SessionEntry[],
  fallback: string | undefined,
): string | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i];
    if (e?.type === 'model_change') return e.model;
  }
  return fallback;
}

function formatError(path: string, line: number, problem: string): PantoError {
  return new PantoError('ERR_SESSION_FORMAT', `${path}:${line}: ${problem}`);
}

/** What an eager read gives `SessionLog.open` besides the loaded session. */
export interface EagerState {
  session: LoadedSession & { entries: SessionEntry[] };
  byId: Map<string, SessionEntry>;
  /** The conversation with the entry id of each message (`null` for a compaction's replacement). */
  view: ConversationView;
  read: JsonlReadResult;
  /** True when the file has no header (`no_header`): `session.header` is a new one, not in the file. */
  headerMissing: boolean;
}

/**
 * The checks and the tree of a session read line by line, every line parsed (the one-pass and eager loads; a store
 * reading all of a session's rows). `where` names the source in errors (`where:line: problem`).
 */
export class EntryCollector {
  header: SessionHeader | undefined;
  readonly entries: SessionEntry[] = [];
  readonly byId = new Map<string, SessionEntry>();
  /** The line of each entry (for an error found after reading: a compaction that keeps from off its branch). */
  readonly #lineNumbers: number[] = [];
  // The previous entry's id: a parent equal to it is known to be earlier without a lookup. `linear` stays true while
  // every entry's parent is the entry before it (the common, unbranched file): the branch is then `entries` itself.
  #prevId: string | null = null;
  #linear = true;

  constructor(readonly where: string) {}

  /** One parsed line (`text` as parsed): the header first, then entries. Throws `ERR_SESSION_FORMAT`. */
  add(value: unknown, line: number, text: string): void {
    const where = this.where;
    if (this.header === undefined) {
      const problem = readableHeaderProblem(value);
      if (problem) throw formatError(where, line, problem);
      this.header = value as SessionHeader;
      return;
    }
    const problem = entryProblem(value);
    if (problem) throw formatError(where, line, problem);
    const entry = value as SessionEntry;
    // A line that begins in SessionLog's form but repeats a key is refused, as the index refuses it (leading-fields.ts).
    const repeated = repeatedKeyProblem(text, entry);
    if (repeated) throw formatError(where, line, repeated);
    const { id, parentId } = entry;
    // One hash operation per entry: an id already present leaves the size unchanged (and fails the load).
    const known = this.byId.size;
    this.byId.set(id, entry);
    if (this.byId.size === known) throw formatError(where, line, `duplicate entry id ${id}`);
    if (parentId !== this.#prevId) {
      this.#linear = false;
      if (parentId !== null && (parentId === id || !this.byId.has(parentId))) {
        throw formatError(where, line, `parentId ${parentId} does not name an earlier entry`);
      }
    }
    this.#prevId = id;
    this.entries.push(entry);
    this.#lineNumbers.push(line);
  }

  /** The session the lines make (`warnings` pushed to; a new header when there was none). */
  session(warnings: SessionWarning[]): {
    session: LoadedSession & { entries: SessionEntry[] };
    view: ConversationView;
    headerMissing: boolean;
  } {
    const { entries, byId, where } = this;
    const headerMissing = this.header === undefined;
    // Nothing parsed: an empty file, blank lines, or a first line cut short by a crash before the header was written.
    const header = this.header ?? headerlessSession(where, warnings);
    const leafId = entries.length > 0 ? (entries[entries.length - 1] as SessionEntry).id : null;
    const branch = this.#linear ? entries : pathToLeaf(byId, leafId);
    const model = currentModel(branch, header.model);
    const view = resolveConversation(branch, (compaction) =>
      formatError(
        where,
        this.#lineNumbers[entries.indexOf(compaction)] ?? 0,
        `compaction ${compaction.id} keeps from entry ${compaction.firstKeptEntryId}, which is not on its branch`,
      ),
    );
    return {
      session: {
        header,
        entries,
        conversation: { messages: view.messages },
        leafId,
        ...(model === undefined ? {} : { model }),
        warnings,
      },
      view,
      headerMissing,
    };
  }
}

/** Read and check every line of a session file now (`eager: true`, or a file with no compaction). See `loadSession`. */
export async function readEagerly(path: string, options: LoadSessionOptions): Promise<EagerState> {
  const collector = new EntryCollector(path);
  const read = await readJsonl(path, (value, line, text) => collector.add(value, line, text), options);
  const warnings: SessionWarning[] = read.emptyLines.map((run) => ({
    kind: 'empty_line',
    line: run.line,
    message: emptyRunMessage(path, run),
  }));
  if (read.invalidUtf8.length > 0) {
    for (const line of read.invalidUtf8) warnings.push(invalidUtf8Warning(path, line));
    warnings.sort((a, b) => a.line - b.line);
  }
  if (read.torn) {
    warnings.push({ kind: 'torn_line', line: read.torn.line, message: tornLineMessage(path, read.torn) });
  } else if (read.unterminated) {
    warnings.push({
      kind: 'unterminated_line',
      line: read.lineCount,
      message: `${path}: last line has no trailing newline; loaded`,
    });
  }
  const { session, view, headerMissing } = collector.session(warnings);
  return { session, byId: collector.byId, view, read, headerMissing };
}

/** A lazily loaded session: `entries` reads the index's remaining lines on first access (see `LoadedSession`). */
class LazyLoadedSession implements LoadedSession {
  readonly header: SessionHeader;
  readonly conversation: Conversation;
  readonly leafId: string | null;
  declare readonly model?: string;
  /** The index, until `entries` has read every line (then released). */
  #index: SessionIndex | null;
  /** The index's live warnings array (kept when the index is released). */
  readonly #warnings: SessionWarning[];
  #entries: readonly SessionEntry[] | undefined;
  /** The entries the conversation was parsed from, until `entries` takes them over. */
  #known: ParsedRun[] = [];

  constructor(index: SessionIndex) {
    this.#index = index;
    this.#warnings = index.warnings as SessionWarning[];
    this.header = index.header;
    this.conversation = { messages: index.conversationView(this.#known).messages };
    this.leafId = index.leafId;
    if (index.model !== undefined) this.model = index.model;
  }

  /** The index's warnings (live: a line read by `entries` that is not valid UTF-8 adds its `invalid_utf8`). */
  get warnings(): SessionWarning[] {
    return this.#warnings;
  }

  get entries(): readonly SessionEntry[] {
    if (this.#entries === undefined) {
      this.#entries = (this.#index as SessionIndex).readAll(this.#known);
      this.#known = [];
      this.#index = null;
    }
    return this.#entries;
  }
}

/**
 * Load a session file written by `SessionLog`. Streams the file (bounded extra memory; no whole-file string), once.
 *
 * Lazy (the default): the file is searched, from its end, for `"compaction"` (compaction-probe.ts), which chooses the
 * path once.
 * - Found — the index path: the file is indexed (header, ids, parents, types, line offsets) and only the current
 *   conversation's lines are parsed — the latest compaction and what follows it on the branch, never the history it
 *   replaced. Checked at load time: the header, every line's length, unique ids, parents that name earlier entries,
 *   the unterminated/torn last line, the branch's compaction, and every line that was parsed (the conversation's,
 *   the current model's `model_change`, lines not in `SessionLog`'s leading-field form). Checked when `entries` is
 *   first read instead: the other lines' JSON and entry shape (same error codes and line numbers as at load; see
 *   `LoadedSession.entries`).
 * - Not found — the one-pass path: every line is parsed and checked now, as with `eager: true`, and `entries` is
 *   ready (the conversation is every message of the branch: nothing to skip).
 * With `eager: true` every line is parsed and checked now, and `entries` is ready. On every path a line that is not
 * valid UTF-8 is read with U+FFFD for each bad sequence and reported as an `invalid_utf8` warning (see
 * `LoadedSession.warnings` for when the index path reports it).
 *
 * Errors (`PantoError`): `ERR_SESSION_CORRUPT` for a line that is not valid JSON or a line longer than `maxLineBytes`
 * (the message names the line number); `ERR_SESSION_FORMAT` for a first line that is not a header, a newer header, a
 * line that is valid JSON but not a valid entry (nested deeper than `MAX_JSON_DEPTH` included), a duplicate id or a
 * parent that is not an earlier entry; `ERR_SESSION_CHANGED` (index path only) when the file changed while it was
 * indexed (other than by growing: lines appended meanwhile are not loaded). A torn LAST line is not an error: it is
 * skipped and reported in `warnings`; a file with no header at all (empty, or only a torn first line) loads as an
 * empty session with a `no_header` warning. `ERR_INVALID_ARGUMENT` when `path` is not a regular file (a directory,
 * a FIFO, a device: refused before anything is read, regular-file.ts). File-system errors (e.g. `ENOENT`) propagate
 * unchanged.
 */
export async function loadSession(path: string, options: LoadSessionOptions = {}): Promise<LoadedSession> {
  if (options.eager || !(await mentionsCompaction(path))) return (await readEagerly(path, options)).session;
  return new LazyLoadedSession(await openSessionIndex(path, options));
}
