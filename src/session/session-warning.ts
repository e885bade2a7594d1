/** What the session loader recovered from (`SessionWarning`), and the warnings both loading paths write alike. */

import { randomBytes } from 'node:crypto';
import { SESSION_FORMAT_VERSION, type SessionHeader } from './session-entry.js';

/** Something the loader recovered from; the data it names was not loaded or was repaired. */
export interface SessionWarning {
  /** `torn_line`: a final line cut short by a crash was skipped; `unterminated_line`: the final line lacks a newline
   * (kept); `empty_line`: an empty line, or a run of consecutive ones (one warning per run, `line` is its first), was skipped; `repaired`: an appender fixed the file's end before writing;
   * `no_header`: the file is empty or holds only a torn first line (a crash before the header was written) — it
   * loads as an empty session with a new header, and `SessionLog.open` writes that header; `invalid_utf8`: the line
   * holds bytes that are not valid UTF-8 (`SessionLog` never writes them) — each bad sequence was read as U+FFFD and
   * the line loaded (its other checks apply as usual). */
  kind: 'torn_line' | 'unterminated_line' | 'empty_line' | 'repaired' | 'no_header' | 'invalid_utf8';
  /** 1-based line number. */
  line: number;
  message: string;
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

/** The `invalid_utf8` warning for `line` (the same text on every path). */
export function invalidUtf8Warning(path: string, line: number): SessionWarning {
  return {
    kind: 'invalid_utf8',
    line,
    message: `${path}:${line}: not valid UTF-8; each bad byte sequence was read as U+FFFD and the line loaded`,
  };
}
