/**
 * The chat's input history, kept between runs: one JSON string per line in `$XDG_STATE_HOME/panto/history.jsonl`
 * (default `~/.local/state/panto/history.jsonl`). The newest `MAX_ENTRIES` are kept; an entry repeating the one before
 * it is not added again; an entry over `MAX_ENTRY_CHARS` (a huge paste) is kept for this run only. A damaged line is
 * skipped, a file that cannot be read or written means a history for this run only — never an error for the chat.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { History } from './line-editor.js';

export const MAX_ENTRIES = 500;
export const MAX_ENTRY_CHARS = 64 * 1024;
/** A history file larger than this is not read (it was not written by us). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Where the history is kept for `env`. */
export function historyPath(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(state, 'panto', 'history.jsonl');
}

export class InputHistory implements History {
  readonly #file: string | undefined;
  #entries: string[] = [];
  #appended = 0;

  private constructor(file: string | undefined) {
    this.#file = file;
  }

  /** The history in `file` (`undefined`: this run only). */
  static load(file: string | undefined): InputHistory {
    const h = new InputHistory(file);
    if (file === undefined) return h;
    let raw: string;
    try {
      raw = readFileSync(file, 'utf8');
    } catch {
      return h;
    }
    if (raw.length > MAX_FILE_BYTES) return h;
    for (const line of raw.split('\n')) {
      if (line === '') continue;
      try {
        const v: unknown = JSON.parse(line);
        if (typeof v === 'string' && v.length <= MAX_ENTRY_CHARS) h.#entries.push(v);
      } catch {
        // a damaged line: skipped
      }
    }
    const lines = h.#entries.length;
    h.#entries = h.#entries.slice(-MAX_ENTRIES);
    if (lines > 2 * MAX_ENTRIES) h.#rewrite();
    return h;
  }

  get entries(): readonly string[] {
    return this.#entries;
  }

  add(text: string): void {
    if (text.trim() === '' || this.#entries[this.#entries.length - 1] === text) return;
    this.#entries.push(text);
    if (this.#entries.length > MAX_ENTRIES) this.#entries.shift();
    if (this.#file === undefined || text.length > MAX_ENTRY_CHARS) return;
    try {
      mkdirSync(path.dirname(this.#file), { recursive: true });
      appendFileSync(this.#file, `${JSON.stringify(text)}\n`, { mode: 0o600 });
      // Rewrite the file now and then so it never grows much past the cap.
      if (++this.#appended >= MAX_ENTRIES) {
        this.#appended = 0;
        this.#rewrite();
      }
    } catch {
      // A read-only home: the history lasts this run.
    }
  }

  /** Write the kept entries back (the file then holds at most `MAX_ENTRIES` lines). */
  #rewrite(): void {
    if (this.#file === undefined) return;
    try {
      writeFileSync(this.#file, this.#entries.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
    } catch {
      // as above
    }
  }
}
