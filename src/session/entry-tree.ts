/**
 * A session's entries by position in file order: each one's id, parent and type, its links checked as it is added
 * (a unique id, a parent that is an earlier entry), and the branch from the root to any entry. The index
 * (session-index.ts: entries parsed on request) and the one-pass collector (load-session.ts: every entry parsed) are
 * trees; resolve-conversation.ts reads a conversation from one, and `SessionLog` appends to one.
 */

import { randomBytes } from 'node:crypto';
import type { PantoError } from '../errors.js';
import { addAnswer, copyUsage } from './answer-usage.js';
import { formatError } from './jsonl-reader.js';
import type { LazyEntries } from './resolve-conversation.js';
import {
  type CompactionEntry,
  ENTRY_TYPES,
  type ModelUsage,
  type SessionEntry,
  type SessionHeader,
} from './session-entry.js';
import { entryProblem, readableHeaderProblem } from './validate-entry.js';

type EntryType = SessionEntry['type'];

/** The id table's hash seed, random per process (see `#slots`). */
const HASH_SEED = randomBytes(4).readInt32LE();

/** FNV-1a of `id` from the per-process seed, mixed (the id table's hash). */
function idHash(id: string): number {
  let h = HASH_SEED;
  for (let k = 0; k < id.length; k++) h = Math.imul(h ^ id.charCodeAt(k), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** Bytes of lines `usage()` parses before it counts them. */
const USAGE_BATCH_BYTES = 8 * 1024 * 1024;

/** `value` (line `line` of `path`) as a header this library reads. @throws PantoError `ERR_SESSION_FORMAT` */
export function checkedHeader(path: string, line: number, value: unknown): SessionHeader {
  const problem = readableHeaderProblem(value);
  if (problem) throw formatError(path, line, problem);
  return value as SessionHeader;
}

/** `value` (line `line` of `path`, `chars` long) as an entry. @throws PantoError `ERR_SESSION_FORMAT` */
export function checkedEntry(path: string, line: number, value: unknown, chars?: number): SessionEntry {
  const problem = entryProblem(value, chars);
  if (problem) throw formatError(path, line, problem);
  return value as SessionEntry;
}

export abstract class EntryTree implements LazyEntries {
  readonly ids: readonly string[] = [];
  /** Per entry `i` at `3i`: its parent's position (-1: none), its type (in `ENTRY_TYPES`) and its line number. */
  #facts = new Int32Array(3 * 1024);
  /**
   * Positions + 1 (0: empty slot) of the entries, open-addressed by a hash of the id (a fraction of a Map's cost),
   * seeded per process and mixed, so that a file cannot be written whose ids all land in one run of slots. Each
   * slot's hash is kept beside it: a probe compares an id only when the hashes match, and growing never rehashes.
   */
  #slots = new Int32Array(1024);
  #hashes = new Int32Array(1024);
  readonly #parents: (string | null)[] = [];
  readonly #types: EntryType[] = [];

  /** `path` names the source in errors (`path:line: problem`). */
  constructor(readonly path: string) {}

  /** 1-based line number of entry `i` (for -1: 1, the header's line). */
  lineOf(i: number): number {
    return i < 0 ? 1 : (this.#facts[3 * i + 2] as number);
  }

  /** Parent id of entry `i`. */
  parentOf(i: number): string | null {
    const p = this.#facts[3 * i] as number;
    return p < 0 ? null : (this.ids[p] as string);
  }

  /** Each entry's parent id (built on first read, extended as entries are added; do not mutate). */
  get parents(): readonly (string | null)[] {
    for (let i = this.#parents.length; i < this.size; i++) this.#parents.push(this.parentOf(i));
    return this.#parents;
  }

  /** Each entry's type (the index's: as the leading fields give them, checked when the entry is read); as `parents`. */
  get types(): readonly EntryType[] {
    for (let i = this.#types.length; i < this.size; i++) this.#types.push(this.typeAt(i));
    return this.#types;
  }

  /** The entries at these positions (in the order asked), parsed and checked; throws typed errors. */
  abstract readAt(positions: readonly number[]): SessionEntry[];

  /** Bytes of entry `i`'s line that a read of it parses (0: it is held parsed). */
  lineBytes(_i: number): number {
    return 0;
  }

  /** @internal For `SessionLog`: the entry it wrote at byte `offset` (`bytes` long without the newline), kept. */
  abstract appendEntry(entry: SessionEntry, offset: number, bytes: number): void;

  /** Number of entries. */
  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.positionOf(id) !== undefined;
  }

  /** Position (index into `ids`) of the entry with this id, or `undefined`. */
  positionOf(id: string): number | undefined {
    const p = this.#slots[this.#slot(id, idHash(id))] as number;
    return p === 0 ? undefined : p - 1;
  }

  /** The slot of `id` (hash `h`): where it is, else the empty slot where it would go. */
  #slot(id: string, h: number): number {
    const mask = this.#slots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const p = this.#slots[i] as number;
      if (p === 0 || (this.#hashes[i] === h && this.ids[p - 1] === id)) return i;
    }
  }

  /** The id table at twice its size, each position moved by its kept hash. */
  #grow(): void {
    const [slots, hashes] = [this.#slots, this.#hashes];
    this.#slots = new Int32Array(2 * slots.length);
    this.#hashes = new Int32Array(2 * slots.length);
    const mask = this.#slots.length - 1;
    for (let j = 0; j < slots.length; j++) {
      if (slots[j] === 0) continue;
      const h = hashes[j] as number;
      let i = h & mask;
      while (this.#slots[i] !== 0) i = (i + 1) & mask;
      this.#slots[i] = slots[j] as number;
      this.#hashes[i] = h;
    }
  }

  typeAt(i: number): EntryType {
    return ENTRY_TYPES[this.#facts[3 * i + 1] as number] as EntryType;
  }

  offBranch(compaction: CompactionEntry, i: number): PantoError {
    return formatError(
      this.path,
      this.lineOf(i),
      `compaction ${compaction.id} keeps from entry ${compaction.firstKeptEntryId}, which is not on its branch`,
    );
  }

  /** Positions of the entries from the root to entry `leaf` (none for -1), in order. */
  branchTo(leaf: number): number[] {
    const path: number[] = [];
    for (let i = leaf; i >= 0; ) {
      path.push(i);
      // Parents are earlier entries (checked as each entry is added), so this ends.
      i = this.#facts[3 * i] as number;
    }
    return path.reverse();
  }

  /**
   * The usage of the session's answers (answer-usage.ts), read now: the compactions from the last back to the latest
   * that records `usageBefore`, then the messages after it (a few MiB of lines not parsed yet at a time). Throws as
   * `readAt`, for any line it reads.
   */
  usage(): ModelUsage[] {
    let totals: ModelUsage[] = [];
    let from = 0;
    for (let i = this.size - 1; i >= 0; i--) {
      if (this.typeAt(i) !== 'compaction') continue;
      const c = this.readAt([i])[0] as CompactionEntry;
      if (c.usageBefore !== undefined) {
        totals = copyUsage(c.usageBefore);
        from = i + 1;
        break;
      }
    }
    for (let i = from; i < this.size; ) {
      const batch: number[] = [];
      for (let bytes = 0; i < this.size && bytes < USAGE_BATCH_BYTES; i++) {
        if (this.typeAt(i) !== 'message') continue;
        batch.push(i);
        bytes += this.lineBytes(i);
      }
      for (const e of this.readAt(batch)) if (e.type === 'message') addAnswer(totals, e.message);
    }
    return totals;
  }

  /**
   * Add the entry of line `line` at the end. One hash lookup per entry; a parent that is the previous entry needs
   * none.
   * @throws PantoError `ERR_SESSION_FORMAT` for a duplicate id or a parent that is not an earlier entry.
   */
  protected link(line: number, type: EntryType, id: string, parentId: string | null): void {
    const ids = this.ids as string[];
    const n = ids.length;
    if (2 * n >= this.#slots.length) this.#grow();
    const h = idHash(id);
    const slot = this.#slot(id, h);
    if (this.#slots[slot] !== 0) throw formatError(this.path, line, `duplicate entry id ${id}`);
    const parent =
      parentId === null ? -1 : parentId === ids[n - 1] ? n - 1 : (this.positionOf(parentId) ?? -2);
    if (parent === -2)
      throw formatError(this.path, line, `parentId ${parentId} does not name an earlier entry`);
    if (3 * n === this.#facts.length) {
      const facts = this.#facts;
      this.#facts = new Int32Array(2 * facts.length);
      this.#facts.set(facts);
    }
    ids.push(id);
    this.#slots[slot] = n + 1;
    this.#hashes[slot] = h;
    this.#facts[3 * n] = parent;
    this.#facts[3 * n + 1] = ENTRY_TYPES.indexOf(type);
    this.#facts[3 * n + 2] = line;
  }
}
