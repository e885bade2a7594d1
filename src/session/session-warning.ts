/** What the session loader recovered from (`SessionWarning`), and the warnings both loading paths write alike. */

import { newHeader, type SessionHeader } from './session-entry.js';

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
  return newHeader();
}

/** A final line that ended without a newline and did not parse (a write cut short by a crash). */
export interface TornLine {
  /** 1-based line number. */
  line: number;
  /** Byte offset where the torn line starts (the file is intact up to here). */
  offset: number;
  /** Length in bytes of the torn fragment. */
  bytes: number;
}

/** The warnings of reading one file, in line order, with the same text on every path. */
export class LineWarnings {
  readonly list: SessionWarning[] = [];
  #run: { line: number; count: number; warning: SessionWarning } | undefined;

  constructor(readonly path: string) {}

  /** Empty line `line`: one warning per run of consecutive empty lines. */
  empty(line: number): void {
    const run = this.#run;
    if (run !== undefined && run.line + run.count === line) run.count++;
    else {
      this.#run = { line, count: 1, warning: { kind: 'empty_line', line, message: '' } };
      this.list.push(this.#run.warning);
    }
    const { count, warning } = this.#run as NonNullable<typeof run>;
    warning.message =
      count === 1
        ? `${this.path}:${line}: empty line skipped`
        : `${this.path}:${warning.line}: ${count} empty lines skipped (lines ${warning.line}-${line})`;
  }

  /** Line `line` is not valid UTF-8: inserted in line order (once; before a torn/unterminated report of it). */
  invalidUtf8(line: number): void {
    const list = this.list;
    let at = list.length;
    for (let k = 0; k < list.length; k++) {
      const w = list[k] as SessionWarning;
      if (w.line === line && w.kind === 'invalid_utf8') return;
      if (w.line > line || (w.line === line && (w.kind === 'unterminated_line' || w.kind === 'torn_line'))) {
        at = k;
        break;
      }
    }
    list.splice(at, 0, {
      kind: 'invalid_utf8',
      line,
      message: `${this.path}:${line}: not valid UTF-8; each bad byte sequence was read as U+FFFD and the line loaded`,
    });
  }

  torn(torn: TornLine): void {
    this.list.push({
      kind: 'torn_line',
      line: torn.line,
      message: `${this.path}:${torn.line}: last line is incomplete (${torn.bytes} bytes, likely a crash mid-write); skipped, everything before it loaded`,
    });
  }

  unterminated(line: number): void {
    this.list.push({
      kind: 'unterminated_line',
      line,
      message: `${this.path}: last line has no trailing newline; loaded`,
    });
  }
}
