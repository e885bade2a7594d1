/**
 * Hostile-input harness: load one session file through every loading path — `loadSession` lazy (default) and
 * `{ eager: true }`, `openSessionIndex` (+ `readAll`/`conversationView`), `SessionLog.open` lazy and eager (each on a
 * byte copy of a regular file, since an open repairs the file's end) — and reduce each to a comparable outcome: the session (header,
 * leaf, model, conversation, entries) or the error's code. Any error that is not a `PantoError` is kept as
 * `untyped: <name>: <message>`, so a test comparing outcomes fails on it.
 */
import { copyFileSync, statSync } from 'node:fs';
import { isPantoError } from '../../../src/errors.js';
import {
  type LoadedSession,
  type LoadSessionOptions,
  loadSession,
  openSessionIndex,
  SessionLog,
} from '../../../src/session/index.js';

export interface Loaded {
  header: unknown;
  leafId: string | null;
  model: string | undefined;
  conversation: unknown;
  entries: unknown;
  /** The load's warnings, read after `entries` (a lazy read adds `invalid_utf8` ones); an open's `repaired` left out. */
  warnings: unknown;
}

/** The header, or `'new header'` for a file that had none (`no_header`: a random id and the time of loading). */
function headerOf(header: unknown, warnings: readonly { kind: string }[]): unknown {
  return warnings.some((w) => w.kind === 'no_header') ? 'new header' : header;
}

export type Outcome = { ok: Loaded } | { code: string; message: string } | { untyped: string };

/** The outcome of `fn`: its value, a PantoError's code (and message), or the untyped error's name and message. */
export async function outcome(fn: () => Promise<Loaded>): Promise<Outcome> {
  try {
    return { ok: await fn() };
  } catch (err) {
    if (isPantoError(err)) return { code: err.code, message: err.message };
    const e = err as Error;
    return { untyped: `${e?.name}: ${e?.message}` };
  }
}

export type PathName = 'lazy' | 'eager' | 'index' | 'log' | 'logEager';

/** Every loading path's outcome for the file at `path`. */
export async function everyPath(
  path: string,
  options: LoadSessionOptions = {},
): Promise<Record<PathName, Outcome>> {
  const loaded = (s: LoadedSession) => ({
    header: headerOf(s.header, s.warnings),
    leafId: s.leafId,
    model: s.model,
    conversation: s.conversation,
    entries: s.entries,
    warnings: [...s.warnings],
  });
  const lazy = await outcome(async () => loaded(await loadSession(path, options)));
  const eager = await outcome(async () => loaded(await loadSession(path, { ...options, eager: true })));
  const index = await outcome(async () => {
    const indexOptions: { chunkBytes?: number; maxLineBytes?: number } = {};
    if (options.chunkBytes !== undefined) indexOptions.chunkBytes = options.chunkBytes;
    if (options.maxLineBytes !== undefined) indexOptions.maxLineBytes = options.maxLineBytes;
    const ix = await openSessionIndex(path, indexOptions);
    return {
      header: headerOf(ix.header, ix.warnings),
      leafId: ix.leafId,
      model: ix.model,
      conversation: await ix.conversation(),
      entries: ix.readAll(),
      warnings: [...ix.warnings],
    };
  });
  const viaLog = (eagerOpen: boolean) =>
    outcome(async () => {
      // A copy of a regular file (an open repairs the file's end); anything else is opened where it is.
      let copy = path;
      if (statSync(path).isFile()) {
        copy = `${path}.${eagerOpen ? 'e' : 'l'}copy`;
        copyFileSync(path, copy);
      }
      const log = await SessionLog.open(copy, { ...options, eager: eagerOpen });
      try {
        return {
          header: headerOf(log.header, log.warnings),
          leafId: log.leafId,
          model: log.model,
          conversation: log.conversation,
          entries: log.entries,
          warnings: log.warnings
            .filter((w) => w.kind !== 'repaired')
            .map((w) => ({ ...w, message: w.message.replaceAll(copy, path) })),
        };
      } finally {
        log.close();
      }
    });
  return { lazy, eager, index, log: await viaLog(false), logEager: await viaLog(true) };
}

/** The outcome with the message dropped (messages may differ by path; codes may not). */
export function codeOnly(o: Outcome): Outcome {
  return 'code' in o ? { code: o.code, message: '' } : o;
}

/**
 * Asserts through `expectEqual` that every path gave the same outcome as the eager load (same session, or the same
 * error code), and returns that outcome.
 */
export async function sameOnEveryPath(
  path: string,
  expectEqual: (actual: unknown, expected: unknown, name: string) => void,
  options: LoadSessionOptions = {},
): Promise<Outcome> {
  const all = await everyPath(path, options);
  const reference = codeOnly(all.eager);
  for (const [name, o] of Object.entries(all)) expectEqual(codeOnly(o), reference, name);
  return all.eager;
}

/** A session file's lines, written by hand (tests of hostile input). */
export const HEADER = '{"type":"session","version":1,"id":"h","created":"2026-01-01T00:00:00Z"}';

/** A user message with one text part, as JSON text. */
export const userJson = (text: string): string =>
  `{"role":"user","content":[{"type":"text","text":${JSON.stringify(text)}}]}`;

/** A message entry line in SessionLog's leading-field form; `extra` is appended inside the object. */
export const messageLine = (id: string, parentId: string | null, text: string, extra = ''): string =>
  `{"type":"message","id":${JSON.stringify(id)},"parentId":${JSON.stringify(parentId)},"timestamp":"t","message":${userJson(text)}${extra}}`;

/** A compaction entry line; `replacement` is JSON text (default: one summary message). */
export const compactionLine = (
  id: string,
  parentId: string,
  firstKept: string | null,
  replacement = `[${userJson('summary')}]`,
): string =>
  `{"type":"compaction","id":${JSON.stringify(id)},"parentId":${JSON.stringify(parentId)},"timestamp":"t","summary":"s","replacement":${replacement},"firstKeptEntryId":${JSON.stringify(firstKept)},"tokensBefore":1,"tokensAfter":1,"usageBefore":[]}`;

/** A custom entry line; `data` is JSON text. */
export const customLine = (id: string, parentId: string | null, customType: string, data: string): string =>
  `{"type":"custom","id":${JSON.stringify(id)},"parentId":${JSON.stringify(parentId)},"timestamp":"t","customType":${JSON.stringify(customType)},"data":${data}}`;
