/**
 * The default session store: one JSONL file per session, `<dir>/<id>.jsonl`, exactly the files `SessionLog` writes
 * and reads (its lock, repairs and lazy loading included). `exportLines` gives a file's lines as they are;
 * `importLines` writes them to a new file after checking them as a load does.
 */

import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isPantoError, PantoError } from '../errors.js';
import { readJsonl } from '../session/jsonl-reader.js';
import { type LoadedSession, loadSession } from '../session/load-session.js';
import { openSessionIndex } from '../session/session-index.js';
import { SessionLog } from '../session/session-log.js';
import { importChecked } from './import-lines.js';
import {
  type CreateStoredSessionOptions,
  checkSessionId,
  type OpenStoredSessionOptions,
  type SessionStore,
  type StoredSessionInfo,
} from './session-store.js';

export class JsonlSessionStore implements SessionStore {
  /** The folder holding the session files (created on first write). */
  readonly dir: string;

  constructor(dir: string) {
    if (typeof dir !== 'string' || dir === '')
      throw new PantoError('ERR_INVALID_ARGUMENT', 'JsonlSessionStore: dir must be a path');
    this.dir = dir;
  }

  /** The file of session `id`. */
  pathOf(id: string): string {
    return join(this.dir, `${checkSessionId(id)}.jsonl`);
  }

  async create(options: CreateStoredSessionOptions = {}): Promise<SessionLog> {
    if (options.id !== undefined) checkSessionId(options.id);
    await mkdir(this.dir, { recursive: true });
    const id = options.id ?? randomId();
    return SessionLog.create(this.pathOf(id), { ...options, id });
  }

  async open(id: string, options: OpenStoredSessionOptions = {}): Promise<SessionLog> {
    return notFound(id, () => SessionLog.open(this.pathOf(id), options.eager ? { eager: true } : {}));
  }

  async load(id: string, options: { eager?: boolean } = {}): Promise<LoadedSession> {
    return notFound(id, () => loadSession(this.pathOf(id), options));
  }

  async list(): Promise<StoredSessionInfo[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: StoredSessionInfo[] = [];
    for (const name of names.sort()) {
      if (!name.endsWith('.jsonl')) continue;
      const id = name.slice(0, -'.jsonl'.length);
      try {
        checkSessionId(id);
        const ix = await openSessionIndex(this.pathOf(id));
        const info: StoredSessionInfo = { id, created: ix.header.created, entries: ix.size };
        if (ix.model !== undefined) info.model = ix.model;
        out.push(info);
      } catch (err) {
        if (!isPantoError(err)) throw err;
        // not a session file this store can read: left out of the list
      }
    }
    return out.sort((a, b) => a.created.localeCompare(b.created));
  }

  async *exportLines(id: string): AsyncIterable<string> {
    const lines: string[] = [];
    await notFound(id, () => readJsonl(this.pathOf(id), (_value, _line, text) => lines.push(text)));
    yield* lines;
  }

  async importLines(lines: AsyncIterable<string> | Iterable<string>): Promise<string> {
    const checked = await importChecked(lines, 'import');
    const id = checkSessionId(checked.header.id);
    await mkdir(this.dir, { recursive: true });
    const path = this.pathOf(id);
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        throw new PantoError('ERR_INVALID_ARGUMENT', `import: session ${id} already exists (${path})`);
      throw err;
    }
    try {
      for (const text of checked.lines) writeSync(fd, `${text}\n`);
    } catch (err) {
      closeSync(fd);
      await rm(path, { force: true });
      throw err;
    }
    closeSync(fd);
    return id;
  }

  async close(): Promise<void> {}
}

function randomId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
}

/** `fn()`, with a missing file reported as `ERR_SESSION_NOT_FOUND`. */
async function notFound<T>(id: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new PantoError('ERR_SESSION_NOT_FOUND', `no session ${id} in this store`, { cause: err });
    throw err;
  }
}
