import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  detectImageProtocol,
  imageColumns,
  itermImage,
  kittyImage,
} from '../../../src/cli/tty/image-protocol.js';
import { inlineImage } from '../../../src/cli/tty/inline-image.js';
import { probeMedia, sniffMedia } from '../../../src/media/index.js';
import { repoRoot } from '../run-cli.js';

const photo = path.join(repoRoot, 'examples', 'workspace', 'photo.jpg');
const chart = path.join(repoRoot, 'examples', 'workspace', 'chart.png');

/** The payloads of kitty graphics escapes in `text`, joined, with the keys of the first. */
function kittyPayload(text: string): { keys: string; data: Buffer; chunks: number } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: parsing terminal escapes is the point
  const parts = [...text.matchAll(/\x1b_G([^;]*);([A-Za-z0-9+/=]*)\x1b\\/g)];
  return {
    keys: parts[0]?.[1] ?? '',
    data: Buffer.from(parts.map((p) => p[2]).join(''), 'base64'),
    chunks: parts.length,
  };
}

describe('inline images: which protocol, and the escapes', () => {
  it('detection from the environment; tmux and screen get none; PANTO_IMAGES overrides', () => {
    expect(detectImageProtocol({ TERM: 'xterm-kitty' })).toBe('kitty');
    expect(detectImageProtocol({ KITTY_WINDOW_ID: '1', TERM: 'xterm-256color' })).toBe('kitty');
    expect(detectImageProtocol({ TERM_PROGRAM: 'ghostty' })).toBe('kitty');
    expect(detectImageProtocol({ TERM_PROGRAM: 'iTerm.app' })).toBe('iterm');
    expect(detectImageProtocol({ TERM: 'xterm-256color' })).toBe('none');
    expect(detectImageProtocol({ TERM: 'xterm-kitty', TMUX: '/tmp/tmux-0/default,1,0' })).toBe('none');
    expect(detectImageProtocol({ TERM: 'screen-256color', KITTY_WINDOW_ID: '1' })).toBe('none');
    expect(detectImageProtocol({ TERM: 'xterm', PANTO_IMAGES: 'kitty' })).toBe('kitty');
    expect(detectImageProtocol({ TERM: 'xterm-kitty', PANTO_IMAGES: 'off' })).toBe('none');
  });

  it('kitty: PNG in chunks of at most 4096 base64 characters, no replies asked, the width in cells', () => {
    const png = Buffer.alloc(10_000, 7);
    const seq = kittyImage(png, 40);
    const { keys, data, chunks } = kittyPayload(seq);
    expect(keys).toBe('a=T,f=100,q=2,c=40,m=1');
    expect(chunks).toBe(Math.ceil((Math.ceil(10_000 / 3) * 4) / 4096));
    expect(data.equals(png)).toBe(true);
    expect(seq.endsWith(`\x1b\\`)).toBe(true);
    expect(seq).toContain('\x1b_Gm=0;');
  });

  it('iTerm2: an OSC 1337 File with the size and the width in cells', () => {
    const seq = itermImage(Buffer.from('abc'), 30, 'a.png');
    expect(seq).toBe(
      `\x1b]1337;File=inline=1;name=${Buffer.from('a.png').toString('base64')};size=3;width=30;preserveAspectRatio=1:YWJj\x07`,
    );
  });

  it('columns keep the picture inside the box (cells twice as tall as wide)', () => {
    expect(imageColumns(2000, 1500, 60, 20)).toBe(53); // 20 rows * 2 * 2000/1500
    expect(imageColumns(400, 100, 60, 20)).toBe(40);
    expect(imageColumns(10, 10, 60, 20)).toBe(1);
  });

  it('a JPEG for kitty is converted to PNG by the media pipeline (at most 1024 px a side)', async () => {
    const bytes = await readFile(photo);
    const probe = probeMedia(bytes);
    const seq = await inlineImage(
      { data: bytes, mediaType: 'image/jpeg', width: probe?.width ?? 0, height: probe?.height ?? 0 },
      { protocol: 'kitty', maxColumns: 60, maxRows: 20 },
    );
    const { data } = kittyPayload(seq ?? '');
    expect(sniffMedia(data)).toBe('image/png');
    const out = probeMedia(data);
    expect(Math.max(out?.width ?? 0, out?.height ?? 0)).toBeLessThanOrEqual(1024);
  });

  it('a small PNG goes to kitty as it is; undecodable bytes give no escape (the summary line stays)', async () => {
    const png = await readFile(chart);
    const seq = await inlineImage(
      { data: png, mediaType: 'image/png', width: 640, height: 360 },
      { protocol: 'kitty', maxColumns: 60, maxRows: 20 },
    );
    expect(kittyPayload(seq ?? '').data.equals(png)).toBe(true);
    const broken = await inlineImage(
      { data: Buffer.from('not a picture'), mediaType: 'image/jpeg', width: 10, height: 10 },
      { protocol: 'kitty', maxColumns: 60, maxRows: 20 },
    );
    expect(broken).toBeUndefined();
    expect(
      await inlineImage(
        { data: png, mediaType: 'image/png', width: 1, height: 1 },
        { protocol: 'none', maxColumns: 9, maxRows: 9 },
      ),
    ).toBeUndefined();
  });
});
