/** Checking a session given as JSONL lines before a store takes it: every check a load makes, nothing kept on failure. */

import { PantoError } from '../errors.js';
import { corruptLine } from '../session/jsonl-reader.js';
import { EntryCollector } from '../session/load-session.js';
import type { SessionEntry, SessionHeader } from '../session/session-entry.js';

export interface CheckedSession {
  header: SessionHeader;
  /** The lines as given (header first), each one checked. */
  lines: string[];
  entries: SessionEntry[];
  /** The current model (latest `model_change` on the branch, else the header's). */
  model: string | undefined;
}

/**
 * The lines checked as an eager load checks a file (`where:line` names a bad line): `ERR_SESSION_CORRUPT` for a line
 * that is not JSON, `ERR_SESSION_FORMAT` for one that is not a header / entry or does not fit the tree,
 * `ERR_INVALID_ARGUMENT` for no header at all. Empty lines are skipped.
 */
export async function importChecked(
  lines: AsyncIterable<string> | Iterable<string>,
  where: string,
): Promise<CheckedSession> {
  const collector = new EntryCollector(where);
  const kept: string[] = [];
  let n = 0;
  for await (const raw of lines) {
    n++;
    if (typeof raw !== 'string')
      throw new PantoError('ERR_INVALID_ARGUMENT', `${where}: line ${n} is not a string`);
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text === '') continue;
    if (text.includes('\n'))
      throw new PantoError('ERR_SESSION_CORRUPT', `${where}:${n}: a line holds a newline`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw corruptLine(where, n, err);
    }
    collector.add(value, n, text);
    kept.push(text);
  }
  if (collector.header === undefined)
    throw new PantoError('ERR_INVALID_ARGUMENT', `${where}: no session header`);
  const { session } = collector.session([]);
  return { header: session.header, lines: kept, entries: session.entries, model: session.model };
}
