/**
 * Loading a session file: stream it line by line (see jsonl-reader.ts), check every line, and resolve the current
 * conversation (see resolve-conversation.ts). Memory: the parsed entries plus one line's bytes; the file is never
 * held as one string, so sessions far beyond V8's string limit load.
 */

import { randomBytes } from 'node:crypto';
import type { Conversation } from '../conversation.js';
import { PantoError } from '../errors.js';
import { type JsonlReadOptions, type JsonlReadResult, readJsonl } from './jsonl-reader.js';
import { type ConversationView, pathToLeaf, resolveConversation } from './resolve-conversation.js';
import { SESSION_FORMAT_VERSION, type SessionEntry, type SessionHeader } from './session-entry.js';
import { entryProblem, readableHeaderProblem } from './validate-entry.js';

export interface LoadSessionOptions extends JsonlReadOptions {}

/** Something the loader recovered from; the data it names was not loaded or was repaired. */
export interface SessionWarning {
  /** `torn_line`: a final line cut short by a crash was skipped; `unterminated_line`: the final line lacks a newline
   * (kept); `empty_line`: an empty line was skipped; `repaired`: an appender fixed the file's end before writing;
   * `no_header`: the file is empty or holds only a torn first line (a crash before the header was written) — it
   * loads as an empty session with a new header, and `SessionLog.open` writes that header. */
  kind: 'torn_line' | 'unterminated_line' | 'empty_line' | 'repaired' | 'no_header';
  /** 1-based line number. */
  line: number;
  message: string;
}

export interface LoadedSession {
  header: SessionHeader;
  /** Every entry in file order (all branches, including the messages a compaction replaced). */
  entries: SessionEntry[];
  /** The current conversation: the path to the leaf with the latest compaction applied. */
  conversation: Conversation;
  /** Id of the last entry, or `null` when the file holds only a header. */
  leafId: string | null;
  /** The current model: the latest `model_change` on the path to the leaf, else the header's `model`. */
  model?: string;
  warnings: SessionWarning[];
}

/** Internal result shared with SessionLog.open (which needs the tree and the file's tail state). */
export interface SessionState extends LoadedSession {
  byId: Map<string, SessionEntry>;
  view: ConversationView;
  read: JsonlReadResult;
  /** True when the file had no header (see the `no_header` warning): `header` is a new one, not yet written. */
  headerMissing: boolean;
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

/** A fresh header for a session file that has none (empty, or its first line torn), with the `no_header` warning. */
export function headerlessSession(path: string, warnings: SessionWarning[]): SessionHeader {
  warnings.push({
    kind: 'no_header',
    line: 1,
    message: `${path}: no session header (the file is empty or its first line was cut short, likely a crash before anything was recorded); loaded as an empty session`,
  });
  return {
    type: 'session',
    version: SESSION_FORMAT_VERSION,
    id: randomBytes(8).toString('hex'),
    created: new Date().toISOString(),
  };
}

function formatError(path: string, line: number, problem: string): PantoError {
  return new PantoError('ERR_SESSION_FORMAT', `${path}:${line}: ${problem}`);
}

/** Read and check a session file. See `loadSession` for errors. */
export async function readSessionState(
  path: string,
  options: LoadSessionOptions = {},
): Promise<SessionState> {
  let header: SessionHeader | undefined;
  const entries: SessionEntry[] = [];
  const byId = new Map<string, SessionEntry>();
  // The previous entry's id: a parent equal to it is known to be earlier without a lookup. `linear` stays true while
  // every entry's parent is the entry before it (the common, unbranched file): the branch is then `entries` itself.
  let prevId: string | null = null;
  let linear = true;
  const read = await readJsonl(
    path,
    (value, line) => {
      if (header === undefined) {
        const problem = readableHeaderProblem(value);
        if (problem) throw formatError(path, line, problem);
        header = value as SessionHeader;
        return;
      }
      const problem = entryProblem(value);
      if (problem) throw formatError(path, line, problem);
      const entry = value as SessionEntry;
      const id = entry.id;
      const parentId = entry.parentId;
      // One hash operation per entry: an id already present leaves the size unchanged (and fails the load).
      const known = byId.size;
      byId.set(id, entry);
      if (byId.size === known) throw formatError(path, line, `duplicate entry id ${id}`);
      if (parentId !== prevId) {
        linear = false;
        if (parentId !== null && (parentId === id || !byId.has(parentId))) {
          throw formatError(path, line, `parentId ${parentId} does not name an earlier entry`);
        }
      }
      prevId = id;
      entries.push(entry);
    },
    options,
  );
  const warnings: SessionWarning[] = read.emptyLines.map((line) => ({
    kind: 'empty_line',
    line,
    message: `${path}:${line}: empty line skipped`,
  }));
  if (read.torn) {
    warnings.push({
      kind: 'torn_line',
      line: read.torn.line,
      message:
        `${path}:${read.torn.line}: last line is incomplete (${read.torn.bytes} bytes, likely a crash mid-write); ` +
        'skipped, everything before it loaded',
    });
  } else if (read.unterminated) {
    warnings.push({
      kind: 'unterminated_line',
      line: read.lines + read.emptyLines.length,
      message: `${path}: last line has no trailing newline; loaded`,
    });
  }
  const headerMissing = header === undefined;
  if (header === undefined) {
    // Nothing parsed: an empty file, blank lines, or a first line cut short by a crash before the header was written.
    header = headerlessSession(path, warnings);
  }
  const leafId = entries.length > 0 ? (entries[entries.length - 1] as SessionEntry).id : null;
  const branch = linear ? entries : pathToLeaf(byId, leafId);
  const view = resolveConversation(branch);
  const model = currentModel(branch, header.model);
  return {
    header,
    entries,
    conversation: { messages: view.messages },
    leafId,
    ...(model === undefined ? {} : { model }),
    warnings,
    byId,
    view,
    read,
    headerMissing,
  };
}

/**
 * Load a session file written by `SessionLog`. Streams the file (bounded extra memory; no whole-file string).
 *
 * Errors (`PantoError`): `ERR_SESSION_CORRUPT` for a line in the middle that is not valid JSON or a line longer than
 * `maxLineBytes` (the message names the line number); `ERR_SESSION_FORMAT` for a first line that is not a header, a newer
 * header, or a line that is valid JSON but not a valid entry. A torn LAST line is not an error: it is skipped and
 * reported in `warnings`; a file with no header at all (empty, or only a torn first line) loads as an empty session
 * with a `no_header` warning.
 * File-system errors (e.g. `ENOENT`) propagate unchanged.
 */
export async function loadSession(path: string, options: LoadSessionOptions = {}): Promise<LoadedSession> {
  const { header, entries, conversation, leafId, model, warnings } = await readSessionState(path, options);
  return { header, entries, conversation, leafId, ...(model === undefined ? {} : { model }), warnings };
}
