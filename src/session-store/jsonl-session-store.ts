/**
 * The default session store: one JSONL file per session, `<dir>/<id>.jsonl`, exactly the files `SessionLog` writes
 * and reads (its lock, repairs and lazy loading included). `exportLines` gives a file's lines as they are;
 * `importLines` writes them to a new file after checking them as a load does.
 */

import { access, type FileHandle, link, mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isPantoError, PantoError } from '../errors.js';
import { type LoadedSession, loadSession } from '../session/load-session.js';
import { openSessionIndex } from '../session/session-index.js';
import { SessionLog } from '../session/session-log.js';
import { fileLines } from './file-lines.js';
import { ImportChecker } from './import-lines.js';
import {
  type CreateStoredSessionOptions,
  checkSessionId,
  type OpenStoredSessionOptions,
  type SessionStore,
  type StoredSessionInfo,
} from './session-store.js';

/** Text (UTF-16 code units) gathered before an import writes it. */
const WRITE_BATCH = 1024 * 1024;

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
    const path = this.pathOf(id);
    await notFound(id, () => access(path));
    yield* fileLines(path);
  }

  /**
   * Written to a hidden file in the folder as the lines pass the checks, linked to `<id>.jsonl` once all did (never
   * replacing a file), so a failed import leaves nothing and no reader sees half a session.
   */
  async importLines(lines: AsyncIterable<string> | Iterable<string>): Promise<string> {
    const checker = new ImportChecker('import');
    let id: string | undefined;
    let path = '';
    let temp: string | undefined;
    let fh: FileHandle | undefined;
    let pending: string[] = [];
    let size = 0;
    const write = async () => {
      if (pending.length === 0) return;
      const text = `${pending.join('\n')}\n`;
      pending = [];
      size = 0;
      await (fh as FileHandle).write(text);
    };
    const exists = () =>
      new PantoError('ERR_INVALID_ARGUMENT', `import: session ${id} already exists (${path})`);
    try {
      for await (const raw of lines) {
        const line = checker.check(raw);
        if (line === undefined) continue;
        if (id === undefined) {
          id = checkSessionId(checker.header?.id);
          path = this.pathOf(id);
          await mkdir(this.dir, { recursive: true });
          if (
            await access(path).then(
              () => true,
              () => false,
            )
          )
            throw exists();
          temp = join(this.dir, `.${id}.import-${randomId()}`);
          fh = await open(temp, 'wx');
        }
        pending.push(line.text);
        size += line.text.length;
        if (size >= WRITE_BATCH) await write();
      }
      checker.finish();
      await write();
      await fh?.close();
      fh = undefined;
      try {
        await link(temp as string, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw exists();
        throw err;
      }
      return id as string;
    } finally {
      await fh?.close();
      if (temp !== undefined) await rm(temp, { force: true });
    }
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
