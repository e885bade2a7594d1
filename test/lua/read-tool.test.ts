import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/index.js';
import type { MediaResultPart, TextResultPart } from '../../src/tool.js';
import { ctx } from './lua-test-helpers.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures', 'media');

let ws: string;
let source: LuaToolSource;
const read = (args: Record<string, unknown>) => source.call('read', args, ctx(ws));
const textOf = (r: Awaited<ReturnType<typeof read>>) =>
  r.ok ? (r.parts[0] as TextResultPart).text : r.error;

beforeAll(async () => {
  ws = await mkdtemp(path.join(tmpdir(), 'panto-read-'));
  source = await LuaToolSource.fromDir([], { includeBuiltins: true, workspaceRoot: ws });
  expect(source.loadErrors).toEqual([]);
  await writeFile(path.join(ws, 'small.txt'), 'alpha\nbeta\r\ngamma\n');
  await writeFile(path.join(ws, 'empty.txt'), '');
  await writeFile(path.join(ws, 'utf8.txt'), 'héllo wörld ✓\n');
  await writeFile(path.join(ws, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
  await writeFile(
    path.join(ws, 'long.txt'),
    Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join('\n'),
  );
  await writeFile(path.join(ws, 'wide.txt'), Array.from({ length: 1000 }, () => 'w'.repeat(200)).join('\n'));
  // Numbered output of exactly 50 KB: 99 entries of 7 + 505 bytes, one of 7 + 406, 99 newlines = 51,200 bytes.
  const at50k = (lastLine: number) =>
    `${Array.from({ length: 99 }, () => 'a'.repeat(505)).join('\n')}\n${'b'.repeat(lastLine)}\n`;
  await writeFile(path.join(ws, 'at-cap.txt'), at50k(406));
  await writeFile(path.join(ws, 'over-cap.txt'), at50k(407));
  await writeFile(path.join(ws, 'crlf.txt'), 'one\r\n\r\nthree\r\n');
  await copyFile(path.join(FIXTURES, 'png-rgb.png'), path.join(ws, 'pic.png'));
  await copyFile(path.join(FIXTURES, 'jpeg-baseline.jpg'), path.join(ws, 'photo.jpg'));
  await copyFile(path.join(FIXTURES, 'pdf-2page.pdf'), path.join(ws, 'doc.pdf'));
  await copyFile(path.join(FIXTURES, 'tiff-rgb.tiff'), path.join(ws, 'scan.tiff'));
  await copyFile(path.join(FIXTURES, 'svg-rgb.svg'), path.join(ws, 'logo.svg'));
  await writeFile(path.join(ws, 'blob.bin'), Buffer.concat([Buffer.from([0, 1, 2, 3]), randomBytes(1000)]));
  await mkdir(path.join(ws, 'dir'));
});

describe('read.lua: text', () => {
  it('returns numbered lines (CRLF trimmed)', async () => {
    const r = await read({ path: 'small.txt' });
    expect(r).toEqual({
      ok: true,
      parts: [{ type: 'text', text: '     1\talpha\n     2\tbeta\n     3\tgamma' }],
      meta: { path: 'small.txt', offset: 1, lines: 3, total_lines: 3 },
    });
  });

  it('keeps UTF-8 and reads legacy 8-bit text', async () => {
    expect(textOf(await read({ path: 'utf8.txt' }))).toBe('     1\théllo wörld ✓');
    expect(textOf(await read({ path: 'latin1.txt' }))).toBe('     1\tcaf\uFFFD cr\uFFFDme');
  });

  it('says so for an empty file', async () => {
    expect(textOf(await read({ path: 'empty.txt' }))).toBe('empty.txt: (empty file)');
  });

  it('stops at 2,000 lines with a note on how to read on', async () => {
    const text = textOf(await read({ path: 'long.txt' }));
    const lines = text.split('\n');
    expect(lines[0]).toBe('     1\tline 1');
    expect(lines[1999]).toBe('  2000\tline 2000');
    expect(
      text.endsWith('[long.txt: showing lines 1-2000 of 5000. Call read with offset=2001 to read on.]'),
    ).toBe(true);
  });

  it('pages with offset and limit', async () => {
    const r = await read({ path: 'long.txt', offset: 4999, limit: 10 });
    expect(textOf(r)).toBe('  4999\tline 4999\n  5000\tline 5000');
    const mid = textOf(await read({ path: 'long.txt', offset: 10, limit: 2 }));
    expect(mid).toBe(
      '    10\tline 10\n    11\tline 11\n\n[long.txt: showing lines 10-11 of 5000. Call read with offset=12 to read on.]',
    );
    expect(await read({ path: 'long.txt', offset: 6000 })).toEqual({
      ok: false,
      error: 'long.txt: offset 6000 is past the end of the file (5000 lines)',
    });
  });

  it('stops at 50 KB with a note', async () => {
    const text = textOf(await read({ path: 'wide.txt' }));
    expect(Buffer.byteLength(text)).toBeLessThan(51 * 1024);
    expect(text).toMatch(
      /\[wide\.txt: showing lines 1-\d+ of 1000 \(output capped at 50 KB\)\. Call read with offset=\d+/,
    );
  });

  it('an output of exactly 50 KB is whole; one byte more moves the last line to the next page', async () => {
    const whole = await read({ path: 'at-cap.txt' });
    expect(Buffer.byteLength(textOf(whole))).toBe(50 * 1024);
    expect(whole.ok && whole.meta).toEqual({ path: 'at-cap.txt', offset: 1, lines: 100, total_lines: 100 });
    expect(textOf(await read({ path: 'over-cap.txt' }))).toMatch(
      /\n\n\[over-cap\.txt: showing lines 1-99 of 100 \(output capped at 50 KB\)\. Call read with offset=100 to read on\.\]$/,
    );
  });

  it('CRLF lines, blank lines, and an offset just past the last line', async () => {
    expect(textOf(await read({ path: 'crlf.txt' }))).toBe('     1\tone\n     2\t\n     3\tthree');
    expect(textOf(await read({ path: 'crlf.txt', offset: 3 }))).toBe('     3\tthree');
    expect(await read({ path: 'crlf.txt', offset: 4 })).toEqual({
      ok: false,
      error: 'crlf.txt: offset 4 is past the end of the file (3 lines)',
    });
  });

  it('reads an SVG as text', async () => {
    expect(textOf(await read({ path: 'logo.svg' }))).toMatch(/^ {5}1\t<(\?xml|svg)/);
  });
});

describe('read.lua: images and PDFs', () => {
  it('returns an image as an attachment with raw bytes and meta.path', async () => {
    const r = await read({ path: 'pic.png' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.meta).toEqual({ path: 'pic.png' });
    expect((r.parts[0] as TextResultPart).text).toMatch(/^Image file pic\.png \(image\/png, \d+ bytes\)$/);
    const media = r.parts[1] as MediaResultPart;
    expect(media).toMatchObject({ type: 'media', mediaType: 'image/png', name: 'pic.png' });
    const { readFile } = await import('node:fs/promises');
    expect(Buffer.compare(Buffer.from(media.data), await readFile(path.join(ws, 'pic.png')))).toBe(0);
    expect(await read({ path: 'photo.jpg' })).toMatchObject({
      ok: true,
      parts: [{}, { mediaType: 'image/jpeg' }],
    });
  });

  it('returns a PDF as an attachment', async () => {
    const r = await read({ path: 'doc.pdf' });
    expect(r).toMatchObject({
      ok: true,
      parts: [
        { type: 'text', text: expect.stringMatching(/^PDF file doc\.pdf/) },
        { mediaType: 'application/pdf', name: 'doc.pdf' },
      ],
      meta: { path: 'doc.pdf' },
    });
  });
});

describe('read.lua: errors', () => {
  it('names size and sniffed type for other binary files', async () => {
    expect(await read({ path: 'scan.tiff' })).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^scan\.tiff: binary file \(image\/tiff, \d+ bytes\); read shows text files/,
      ),
    });
    expect(await read({ path: 'blob.bin' })).toEqual({
      ok: false,
      error:
        'blob.bin: binary file (unknown binary, 1004 bytes); read shows text files, images (PNG, JPEG, GIF, WebP, BMP) and PDFs',
    });
  });

  it('missing path, directory, outside the workspace', async () => {
    expect(await read({ path: 'missing.txt' })).toEqual({
      ok: false,
      error: 'missing.txt: no such file or directory',
    });
    expect(await read({ path: 'dir' })).toEqual({
      ok: false,
      error: 'dir: is a directory, not a file (read shows files; pass a file path inside it)',
    });
    expect(await read({ path: '../etc/passwd' })).toEqual({
      ok: false,
      error: '../etc/passwd: outside the workspace',
    });
  });
});
