/**
 * Checking a session given as JSONL lines while a store takes it, one line at a time: every check an eager load makes
 * (load-session.ts `EntryCollector`), keeping only each entry's place in the tree (its id, parent, and for the few
 * entries the end needs, a compaction's kept entry and a model change's model), never the entries themselves — so an
 * import's memory does not grow with the size of what it imports.
 */

import { PantoError } from '../errors.js';
import { corruptLine, formatError } from '../session/jsonl-reader.js';
import { repeatedKeyProblem } from '../session/leading-fields.js';
import type { SessionEntry, SessionHeader } from '../session/session-entry.js';
import { entryProblem, readableHeaderProblem } from '../session/validate-entry.js';

/** A line that passed: its text (no newline, no trailing CR) and its entry (`undefined` for the header). */
export interface CheckedLine {
  text: string;
  entry: SessionEntry | undefined;
}

/** What the whole session is, known once its last line passed. */
export interface CheckedSession {
  header: SessionHeader;
  /** Number of entries (the header not counted). */
  entries: number;
  /** The current model: the latest `model_change` on the leaf's branch, else the header's. */
  model: string | undefined;
}

export class ImportChecker {
  header: SessionHeader | undefined;
  readonly #where: string;
  #n = 0;
  /** Position (0-based, in order) of each entry id, and each position's parent position (-1 for none). */
  readonly #position = new Map<string, number>();
  readonly #parents: number[] = [];
  /** Compactions (position → kept entry id and line) and model changes (position → model). */
  readonly #compactions = new Map<number, { kept: string | null; id: string; line: number }>();
  readonly #models = new Map<number, string>();

  constructor(where: string) {
    this.#where = where;
  }

  /**
   * Line `raw` (the next one): `ERR_SESSION_CORRUPT` when it is not JSON, `ERR_SESSION_FORMAT` when it is not a header
   * (first) or an entry (after), or does not fit the tree (a duplicate id, a parent not earlier). `undefined` for an
   * empty line (skipped).
   */
  /** The number of the line checked last (1-based). */
  get line(): number {
    return this.#n;
  }

  check(raw: unknown): CheckedLine | undefined {
    const where = this.#where;
    const n = ++this.#n;
    if (typeof raw !== 'string')
      throw new PantoError('ERR_INVALID_ARGUMENT', `${where}: line ${n} is not a string`);
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text === '') return undefined;
    if (text.includes('\n'))
      throw new PantoError('ERR_SESSION_CORRUPT', `${where}:${n}: a line holds a newline`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw corruptLine(where, n, err);
    }
    if (this.header === undefined) {
      const problem = readableHeaderProblem(value);
      if (problem) throw formatError(where, n, problem);
      this.header = value as SessionHeader;
      return { text, entry: undefined };
    }
    const problem = entryProblem(value);
    if (problem) throw formatError(where, n, problem);
    const entry = value as SessionEntry;
    const repeated = repeatedKeyProblem(text, entry);
    if (repeated) throw formatError(where, n, repeated);
    const { id, parentId } = entry;
    if (this.#position.has(id)) throw formatError(where, n, `duplicate entry id ${id}`);
    let parent = -1;
    if (parentId !== null) {
      const p = this.#position.get(parentId);
      if (p === undefined) throw formatError(where, n, `parentId ${parentId} does not name an earlier entry`);
      parent = p;
    }
    const at = this.#parents.length;
    this.#position.set(id, at);
    this.#parents.push(parent);
    if (entry.type === 'compaction') this.#compactions.set(at, { kept: entry.firstKeptEntryId, id, line: n });
    else if (entry.type === 'model_change') this.#models.set(at, entry.model);
    return { text, entry };
  }

  /**
   * After the last line: `ERR_INVALID_ARGUMENT` for no header at all, `ERR_SESSION_FORMAT` when the latest compaction
   * on the leaf's branch keeps from an entry that is not earlier on that branch (as a load refuses it).
   */
  finish(): CheckedSession {
    const header = this.header;
    if (header === undefined)
      throw new PantoError('ERR_INVALID_ARGUMENT', `${this.#where}: no session header`);
    const branch = new Set<number>();
    let compaction: number | undefined;
    let model: string | undefined;
    for (let i = this.#parents.length - 1; i !== -1; i = this.#parents[i] as number) {
      branch.add(i);
      if (compaction === undefined && this.#compactions.has(i)) compaction = i;
      if (model === undefined) model = this.#models.get(i);
    }
    if (compaction !== undefined) {
      const c = this.#compactions.get(compaction) as { kept: string | null; id: string; line: number };
      const kept = c.kept === null ? undefined : this.#position.get(c.kept);
      if (c.kept !== null && (kept === undefined || kept >= compaction || !branch.has(kept)))
        throw formatError(
          this.#where,
          c.line,
          `compaction ${c.id} keeps from entry ${c.kept}, which is not on its branch`,
        );
    }
    return { header, entries: this.#parents.length, model: model ?? header.model };
  }
}
