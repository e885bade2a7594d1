/**
 * `textInFile` read-ahead: a worker thread reads the next chunk and scans its lines for long texts while the loader
 * parses the current one (text-scan-ahead.ts). What the worker finds must be exactly what the loader would find
 * scanning on its own thread, and the load must not depend on the worker: a worker that is gone mid-read leaves the
 * same session. Uses the built worker script (dist/session/text-scan-worker.js; `npm test` builds it first).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionText } from '../../src/session/file-text.js';
import { loadSession } from '../../src/session/index.js';
import { readJsonl } from '../../src/session/jsonl-reader.js';
import { LineTexts } from '../../src/session/line-texts.js';
import { LINE_INTS, LineScanner, MessageTextLiterals, RECORD_INTS } from '../../src/session/text-literals.js';
import type { TextScanAhead } from '../../src/session/text-scan-ahead.js';
import { hostileTextLines, mulberry32 } from './helpers/hostile-text-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-scan-ahead-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALWAYS = { minFileBytes: 0, minTextBytes: 8 };
const PROSE = 'Ünïcödé prose — 日本語 "quoted" \\ back\\slash\ttab\nnewline \u2028 😀 end. ';
const HEADER = JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' });

/**
 * A session file's lines: generated hostile message lines (repeated and escaped keys, odd values), linked. Lines
 * that are not valid JSON (a broken literal) are left out unless `broken`.
 */
function hostileSession(seed: number, entries: number, broken = false): string[] {
  const random = mulberry32(seed);
  const { key, message } = hostileTextLines(random, PROSE);
  const lines = [HEADER];
  let parent: string | null = null;
  for (let i = 0; i < entries; i++) {
    const id = `e${i}`;
    const type = random() < 0.9 ? 'message' : 'custom","customType":"k';
    const line = `{"type":"${type}","id":"${id}","parentId":${JSON.stringify(parent)},"timestamp":"2026-01-01T00:00:00Z","${key('message')}":${message()}}`;
    if (!broken && !parses(line)) continue;
    lines.push(line);
    parent = id;
  }
  return lines;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Per line of `buf` (split as `LineScanner` does), what scanning it on this thread records. */
function scannedHere(buf: Buffer, minBytes: number): { start: number; records: number[] }[] {
  const out: { start: number; records: number[] }[] = [];
  const literals = new MessageTextLiterals();
  let s = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, s);
    if (nl === -1) break;
    const stop = nl > s && buf[nl - 1] === 0x0d ? nl - 1 : nl;
    if (stop > s && Buffer.from(buf.subarray(s, nl)).toString('utf8').indexOf('\ufffd') === -1) {
      literals.scan(buf, s, stop, minBytes);
      if (literals.count > 0) literals.check(buf);
      if (literals.count > 0) {
        const records: number[] = [];
        for (let r = 0; r < literals.count; r++) {
          records.push(
            literals.starts[r] as number,
            literals.ends[r] as number,
            literals.result[r] as number,
            literals.part[r] as number,
            literals.lengths[r] as number,
            literals.crcs[r] as number,
          );
        }
        out.push({ start: s, records });
      }
    }
    s = nl + 1;
  }
  return out;
}

describe('LineScanner finds what a line-by-line scan finds', () => {
  it('hostile lines, CRLF and CR bytes, empty lines and invalid UTF-8; one scanner for every chunk', () => {
    const scanner = new LineScanner();
    for (let seed = 1; seed <= 40; seed++) {
      const random = mulberry32(seed * 7);
      const parts: Buffer[] = [];
      for (const line of hostileSession(seed, 30, true)) {
        parts.push(Buffer.from(line));
        const end = random();
        parts.push(Buffer.from(end < 0.15 ? '\r\n' : end < 0.2 ? '\n\n' : '\n'));
        if (random() < 0.05) parts.push(Buffer.from([0xff, 0xfe, 0x0a])); // a line of bytes that are not UTF-8
      }
      const buf = Buffer.concat(parts);
      const got = scanner.scan(buf, 0, buf.length, 10);
      const lines: { start: number; records: number[] }[] = [];
      for (let l = 0; l < got.lines.length; l += LINE_INTS) {
        const first = got.lines[l + 1] as number;
        const count = got.lines[l + 2] as number;
        lines.push({
          start: got.lines[l] as number,
          records: [...got.records.subarray(first * RECORD_INTS, (first + count) * RECORD_INTS)],
        });
      }
      expect(lines).toEqual(scannedHere(buf, 10));
    }
  });
});

/**
 * Read `path` with `readJsonl` and a `LineTexts` (long texts emptied from what is parsed): the texts parsed, line by
 * line. With `ahead`, a read-ahead whose worker the first line's handler waits for (a test file is read faster than a
 * worker starts); `stopAfter`: close the read-ahead once it served that many chunks.
 */
async function parsedTexts(
  path: string,
  options: { ahead: boolean; stopAfter?: number; chunkBytes?: number; onLine?: (line: number) => void },
) {
  const chunkBytes = options.chunkBytes ?? 2048;
  const texts = new LineTexts(new SessionText(path, { size: 0, mtimeMs: 0, ino: 0, dev: 0 }, 0), 8);
  const ahead = options.ahead ? texts.readAhead(1 << 30, chunkBytes) : undefined;
  if (options.ahead && ahead === undefined) throw new Error('no read-ahead');
  const out: string[] = [];
  let closing: Promise<void> | undefined;
  await readJsonl(
    path,
    (_value, line, text) => {
      if (line === 1 && ahead !== undefined) {
        const deadline = Date.now() + 20_000;
        while (!ahead.ready && Date.now() < deadline)
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
      options.onLine?.(line);
      out.push(text);
      if (ahead !== undefined && closing === undefined && ahead.served >= (options.stopAfter ?? Infinity)) {
        closing = ahead.close();
      }
    },
    { chunkBytes },
    (buf, start, end, offset) => texts.reduce(buf, start, end, offset),
    ahead,
  );
  await closing;
  return { out, stopped: closing !== undefined, served: ahead?.served ?? 0, ahead };
}

describe('with the read-ahead, the lines parse as without it', () => {
  it('generated hostile sessions, CRLF, empty and non-UTF-8 lines, lines across chunks: the same texts', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const random = mulberry32(seed);
      const path = file();
      const parts: string[] = [];
      for (const line of hostileSession(seed, 300)) {
        const r = random();
        parts.push(line, r < 0.1 ? '\r\n' : r < 0.15 ? '\n\n' : '\n');
      }
      // Half the files: a line whose long text holds bytes that are not UTF-8 (parsed whole, with U+FFFD).
      const bad = Buffer.concat([
        Buffer.from(
          `{"type":"message","id":"bad","parentId":"e0","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"${'x'.repeat(40)}`,
        ),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('"}]}}\n'),
      ]);
      const cut = parts.length / 2 + ((parts.length / 2) % 2);
      const bytes = Buffer.concat([
        Buffer.from(parts.slice(0, cut).join('')),
        random() < 0.5 ? bad : Buffer.alloc(0),
        Buffer.from(parts.slice(cut).join('')),
      ]);
      writeFileSync(path, bytes);
      const chunkBytes = seed % 2 === 0 ? 2048 : 1500; // every line shorter than a chunk, or some longer
      const here = await parsedTexts(path, { ahead: false, chunkBytes });
      const ahead = await parsedTexts(path, { ahead: true, chunkBytes });
      expect(ahead.out).toEqual(here.out);
      expect(ahead.served).toBeGreaterThan(20);
      // Emptied texts: the comparison covers the scan's records.
      expect(here.out.filter((t) => t.includes('"text":""')).length).toBeGreaterThan(50);
    }
  });

  it('a worker that is gone mid-read: the loader reads and scans the rest itself', async () => {
    const path = file();
    writeFileSync(path, `${hostileSession(99, 600).join('\n')}\n`);
    const here = await parsedTexts(path, { ahead: false });
    const stopped = await parsedTexts(path, { ahead: true, stopAfter: 3 });
    expect(stopped.stopped).toBe(true);
    expect(stopped.served).toBe(3);
    expect(stopped.out).toEqual(here.out);
  });

  it('a line handler that throws mid-read: the error propagates and the read-ahead is closed', async () => {
    const path = file();
    writeFileSync(path, `${hostileSession(5, 400).join('\n')}\n`);
    let ahead: TextScanAhead | undefined;
    await expect(
      parsedTexts(path, {
        ahead: true,
        onLine: (line) => {
          if (line === 150) throw new Error('handler stops');
        },
      }).then((r) => {
        ahead = r.ahead;
      }),
    ).rejects.toThrow('handler stops');
    expect(ahead).toBeUndefined();
  });

  it('loadSession: the same session or the same error as without textInFile', async () => {
    for (let seed = 1; seed <= 9; seed++) {
      const path = file();
      writeFileSync(path, `${hostileSession(seed, 300, seed % 3 === 0).join('\n')}\n`);
      const load = async (textInFile: false | typeof ALWAYS) => {
        try {
          const s = await loadSession(path, { eager: true, textInFile, chunkBytes: 4096 });
          return { json: JSON.stringify({ c: s.conversation, e: s.entries }) };
        } catch (err) {
          const e = err as { code?: string; message: string };
          return { code: e.code, message: e.message };
        }
      };
      expect(await load(ALWAYS)).toEqual(await load(false));
    }
  });

  it('no read-ahead for a file of few chunks', () => {
    const texts = new LineTexts(new SessionText(file(), { size: 0, mtimeMs: 0, ino: 0, dev: 0 }, 0), 8);
    expect(texts.readAhead(3 * 4096, 4096)).toBeUndefined();
  });
});
