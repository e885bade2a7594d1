/**
 * Loading a session file, on one of two paths chosen once by compaction-probe.ts: the index path (session-index.ts;
 * only the current conversation parsed, `entries` parses the rest on first read) or the one pass (jsonl-reader.ts, as
 * `eager: true`). The file is read once and never held as one string.
 */

import type { Conversation } from '../conversation.js';
import { mentionsCompaction } from './compaction-probe.js';
import { formatError, type JsonlReadOptions, type JsonlReadResult, readJsonl } from './jsonl-reader.js';
import { repeatedKeyProblem } from './leading-fields.js';
import { type ConversationView, pathToLeaf, resolveConversation } from './resolve-conversation.js';
import type { SessionEntry, SessionHeader } from './session-entry.js';
import { openSessionIndex, type ParsedRun, type SessionIndex } from './session-index.js';
import { headerlessSession, type SessionWarning } from './session-warning.js';
import { entryProblem, readableHeaderProblem } from './validate-entry.js';

export type { SessionWarning } from './session-warning.js';

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

/** What an eager read gives `SessionLog.open` besides the loaded session. */
export interface EagerState {
  session: LoadedSession & { entries: SessionEntry[] };
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
  session(warnings: SessionWarning[]): Omit<EagerState, 'read'> {
    const { entries, byId, where } = this;
    const headerMissing = this.header === undefined;
    // Nothing parsed: an empty file, blank lines, or a first line cut short by a crash before the header was written.
    const header = this.header ?? headerlessSession(where, warnings);
    const leafId = entries.length > 0 ? (entries[entries.length - 1] as SessionEntry).id : null;
    const branch = this.#linear ? entries : pathToLeaf(byId, leafId);
    const changed = branch.findLast((e) => e.type === 'model_change');
    const model = changed?.type === 'model_change' ? changed.model : header.model;
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
  const { session, view, headerMissing } = collector.session(read.warnings);
  return { session, view, read, headerMissing };
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
 * Load a session file written by `SessionLog`, streamed once (bounded extra memory; no whole-file string). Lazily by
 * default: a file that mentions `"compaction"` (compaction-probe.ts) is indexed and only its current conversation
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
  if (options.eager || !(await mentionsCompaction(path))) return (await readEagerly(path, options)).session;
  return new LazyLoadedSession(await openSessionIndex(path, options));
}
