/**
 * The long texts of the lines a loader parses, left in the file (`textInFile`): a line about to be parsed is scanned
 * for its long text literals (`reduce`, text-literals.ts), parsed with them emptied, and once its value passed the
 * loader's checks `attach` turns the emptied parts into file-backed ones (or decodes them back where they are not a
 * message's text part: file-text.ts `attachFileTexts`). One line at a time: a `reduce` (or `clear`) forgets the
 * previous line. Used by both loading paths: `readEagerly` (load-session.ts) and the index (session-index.ts).
 */

import { attachFileTexts, type SessionText } from './file-text.js';
import type { LineBytes } from './jsonl-reader.js';
import { MessageTextLiterals } from './text-literals.js';
import { TextScanAhead } from './text-scan-ahead.js';

const EMPTY = Buffer.alloc(0);
/** Chunks a file must span for `readAhead` to start a worker (its start costs about what scanning a chunk does). */
const READ_AHEAD_CHUNKS = 4;

export class LineTexts {
  readonly source: SessionText;
  readonly #literals = new MessageTextLiterals();
  /** Literal bytes, quotes included, from which a text stays in the file. */
  readonly #minBytes: number;
  readonly #at: LineBytes = { buf: EMPTY, start: 0, end: 0, fileOffset: 0 };
  /** The text `reduce` last gave, until its value is attached or the line is cleared. */
  #reduced: string | undefined;
  #covered = 0;
  /** The worker that scans the next chunk while this thread parses the current one (`readAhead`), if any. */
  #ahead: TextScanAhead | undefined;

  constructor(source: SessionText, minTextBytes: number) {
    this.source = source;
    this.#minBytes = minTextBytes + 2;
  }

  /**
   * A read-ahead for `readJsonl` whose chunks come scanned from a worker thread (text-scan-ahead.ts), when the file
   * (`fileBytes`, read `chunkBytes` at a time) spans enough chunks to repay starting one; `reduce` then takes a line's
   * records from the worker's scan instead of scanning it here. One per read.
   */
  readAhead(fileBytes: number, chunkBytes: number): TextScanAhead | undefined {
    if (fileBytes < READ_AHEAD_CHUNKS * chunkBytes) return undefined;
    this.#ahead = new TextScanAhead(this.#minBytes);
    return this.#ahead;
  }

  /** File offset just past the last literal left in the file so far (0 if none). */
  get covered(): number {
    return this.#covered;
  }

  /**
   * The line buf[start, end) (valid UTF-8, no newline, no CR), whose first byte is at `fileOffset` in the file, with
   * its long texts emptied, or undefined when it has none (parse the line itself).
   */
  reduce(buf: Buffer, start: number, end: number, fileOffset: number): string | undefined {
    this.#reduced = undefined;
    const literals = this.#literals;
    const scanned = this.#ahead?.recordsFor(buf, start, end);
    if (scanned === null) return undefined;
    if (scanned !== undefined) literals.load(scanned.records, scanned.first, scanned.count);
    else {
      literals.scan(buf, start, end, this.#minBytes);
      if (literals.count === 0) return undefined;
      literals.check(buf);
      if (literals.count === 0) return undefined;
    }
    const at = this.#at;
    at.buf = buf;
    at.start = start;
    at.end = end;
    at.fileOffset = fileOffset;
    this.#reduced = scanned?.text ?? literals.reduced(buf, start, end);
    return this.#reduced;
  }

  /** The reduced text did not parse (the line itself is parsed instead): nothing to attach. */
  clear(): void {
    this.#reduced = undefined;
    this.#at.buf = EMPTY;
  }

  /**
   * After the value parsed from `reduce`'s text passed its checks: its emptied texts put back. `parsedFrom`, when
   * given, is the text the value was parsed from: another string than `reduce` gave (the line itself, parsed because
   * the reduced text did not parse) attaches nothing.
   */
  attach(value: unknown, parsedFrom?: string): void {
    const reduced = this.#reduced;
    if (reduced === undefined) return;
    if (parsedFrom === undefined || parsedFrom === reduced) {
      const end = attachFileTexts(value, this.#literals, this.#at, this.source);
      if (end > this.#covered) this.#covered = end;
    }
    this.clear();
  }
}
