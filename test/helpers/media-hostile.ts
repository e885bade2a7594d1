/**
 * Hostile inputs (issue 12): small, mostly well-formed files that buy a naive decoder unbounded CPU or memory, read
 * uninitialised memory, or are real-world variants a strict decoder wrongly refuses. Every builder is deterministic
 * and cheap except the `*Large` async ones, which stream big zlib payloads (seconds) for the hostile suite/bench.
 */

import { createDeflate, deflateSync } from 'node:zlib';
import { PNG_SIGNATURE, pngChunk } from './png-file.js';

// ---- JPEG ---------------------------------------------------------------------------------------------------------

function seg(marker: number, payload: number[]): number[] {
  const len = payload.length + 2;
  return [0xff, marker, len >> 8, len & 0xff, ...payload];
}

/** SOI, a flat quantisation table, SOF2 (progressive) for one 8-bit grey component, and one-code DC/AC tables. */
function progressiveHeader(width: number, height: number): number[] {
  const dqt = seg(0xdb, [0x00, ...new Array<number>(64).fill(1)]);
  const sof2 = seg(0xc2, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]);
  const oneCode = (tc: number): number[] => [tc, 1, ...new Array<number>(15).fill(0), 0x00];
  const dht = seg(0xc4, [...oneCode(0x00), ...oneCode(0x10)]);
  return [0xff, 0xd8, ...dqt, ...sof2, ...dht];
}

/** One scan over component 1 with spectral selection ss..se and successive approximation ah/al, and 4 data bytes. */
function scan(ss: number, se: number, ah: number, al: number): number[] {
  return [...seg(0xda, [1, 1, 0x00, ss, se, (ah << 4) | al]), 0, 0, 0, 0];
}

/**
 * A progressive JPEG scan bomb with a CONSISTENT progression: a DC scan, then every AC coefficient 1..63 sent on its
 * own at Al=3 and refined bit by bit (3 refinement scans each): 253 scans, each visiting every block of a
 * `width` x `height` image — ~250x the work of the image, from ~3 KB. libjpeg-style decoders without a scan-work cap
 * spend minutes on 10000x10000.
 */
export function jpegScanBomb(width = 10000, height = 10000): Buffer {
  const out = progressiveHeader(width, height);
  out.push(...scan(0, 0, 0, 0));
  for (let k = 1; k <= 63; k++) {
    out.push(...scan(k, k, 0, 3));
    for (let al = 2; al >= 0; al--) out.push(...scan(k, k, al + 1, al));
  }
  out.push(0xff, 0xd9);
  return Buffer.from(out);
}

/** A progressive JPEG that repeats the same DC scan `repeats` times (a redundant progression; libjpeg warns). */
export function jpegRedundantScans(width = 10000, height = 10000, repeats = 200): Buffer {
  const out = progressiveHeader(width, height);
  for (let i = 0; i < repeats; i++) out.push(...scan(0, 0, 0, 0));
  out.push(0xff, 0xd9);
  return Buffer.from(out);
}

/** A small, valid progressive grey JPEG of the same construction: DC scan + one AC band (2 scans). Decodes to grey. */
export function jpegSmallProgressive(width = 64, height = 64): Buffer {
  return Buffer.from([
    ...progressiveHeader(width, height),
    ...scan(0, 0, 0, 0),
    ...scan(1, 63, 0, 0),
    0xff,
    0xd9,
  ]);
}

// ---- PNG ----------------------------------------------------------------------------------------------------------

function ihdr(width: number, height: number, depth: number, colorType: number): Buffer {
  const b = Buffer.alloc(13);
  b.writeUInt32BE(width, 0);
  b.writeUInt32BE(height, 4);
  b[8] = depth;
  b[9] = colorType;
  return b;
}

function pngOf(header: Buffer, idat: Uint8Array, extra: Buffer[] = []): Buffer {
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', header),
    ...extra,
    pngChunk('IDAT', idat),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/**
 * A paletted PNG (8-bit indices) whose PLTE has only `entries` colours (all red) while its pixels use indices 0..255
 * in row-major order (width 16): indices >= `entries` are out of range. A decoder must give opaque black for them (as
 * libpng does) or refuse the file — never stack contents.
 */
export function pngPaletteOutOfRange(entries = 2, height = 16): Buffer {
  const width = 16;
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) rows[y * (width + 1) + 1 + x] = (y * width + x) & 0xff;
  const plte = Buffer.alloc(entries * 3);
  for (let i = 0; i < entries; i++) plte[i * 3] = 255;
  return pngOf(ihdr(width, height, 8, 3), deflateSync(rows), [pngChunk('PLTE', plte)]);
}

/**
 * A PNG (8-bit RGB by default; 16-bit grey takes a decoder's general path) whose zlib stream inflates to `factor`
 * times the image's filtered size (zeros).
 */
export function pngZlibOverrun(
  width = 1000,
  height = 1000,
  factor = 4,
  kind: 'rgb8' | 'gray16' = 'rgb8',
): Buffer {
  const bytesPerPixel = kind === 'rgb8' ? 3 : 2;
  const raw = Buffer.alloc((width * bytesPerPixel + 1) * height * factor);
  const header = kind === 'rgb8' ? ihdr(width, height, 8, 2) : ihdr(width, height, 16, 0);
  return pngOf(header, deflateSync(raw, { level: 9 }));
}

/** Streams `total` zero bytes through deflate; resolves with the compressed stream. */
async function deflateZeros(total: number): Promise<Buffer> {
  const d = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  d.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    d.on('end', resolve);
    d.on('error', reject);
  });
  const block = Buffer.alloc(1 << 22);
  for (let left = total; left > 0; left -= block.length) {
    const piece = left >= block.length ? block : block.subarray(0, left);
    if (!d.write(piece)) await new Promise((r) => d.once('drain', r));
  }
  d.end();
  await done;
  return Buffer.concat(chunks);
}

/** Like `pngZlibOverrun` at bomb scale (e.g. 8000x8000, 4x): built by streaming, a few seconds. */
export async function pngZlibOverrunLarge(width = 8000, height = 8000, factor = 4): Promise<Buffer> {
  return pngOf(ihdr(width, height, 8, 2), await deflateZeros((width * 3 + 1) * height * factor));
}

/** A 16-bit RGBA PNG of zeros (8 bytes per pixel filtered): 10000x10000 declares 800 MB of samples in ~800 KB. */
export async function png16RgbaLarge(width = 10000, height = 10000): Promise<Buffer> {
  return pngOf(ihdr(width, height, 16, 6), await deflateZeros((width * 8 + 1) * height));
}

/**
 * `png` with an extra ancillary chunk (`type`, default iCCP) inserted after IHDR whose CRC is wrong — what the logo of
 * the MCP reference server carries. libpng and sharp drop the chunk and decode the image.
 */
export function pngWithDamagedAncillary(png: Uint8Array, type = 'iCCP'): Buffer {
  const body = Buffer.from('sRGB\0\0damaged profile bytes', 'latin1');
  const chunk = pngChunk(type, body);
  chunk.writeUInt32BE((chunk.readUInt32BE(chunk.length - 4) ^ 0xdeadbeef) >>> 0, chunk.length - 4);
  const b = Buffer.from(png);
  const afterIhdr = 8 + 12 + b.readUInt32BE(8);
  return Buffer.concat([b.subarray(0, afterIhdr), chunk, b.subarray(afterIhdr)]);
}

// ---- GIF ----------------------------------------------------------------------------------------------------------

/** Packs variable-width LZW codes LSB-first into GIF data sub-blocks. */
function lzwSubBlocks(codes: Array<[code: number, bits: number]>): number[] {
  const bytes: number[] = [];
  let acc = 0;
  let n = 0;
  for (const [code, bits] of codes) {
    acc |= code << n;
    n += bits;
    while (n >= 8) {
      bytes.push(acc & 0xff);
      acc >>>= 8;
      n -= 8;
    }
  }
  if (n > 0) bytes.push(acc & 0xff);
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i += 255) {
    const block = bytes.slice(i, i + 255);
    out.push(block.length, ...block);
  }
  out.push(0);
  return out;
}

/**
 * A 2x2 GIF whose LZW data does NOT start with a clear code (min code size 2: clear=4, end=5). Pixels are palette
 * entries 0,1 / 2,3 = red, green / blue, white. Browsers and Go's decoder accept it.
 */
export function gifWithoutClearCode(): Buffer {
  const header = [...Buffer.from('GIF89a', 'latin1'), 2, 0, 2, 0, 0x81, 0, 0];
  const palette = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255];
  const descriptor = [0x2c, 0, 0, 0, 0, 2, 0, 2, 0, 0];
  // Codes 0,1,2 at 3 bits; after code 2 the table holds 8 entries, so the width grows to 4 bits for 3 and end.
  const data = lzwSubBlocks([
    [0, 3],
    [1, 3],
    [2, 3],
    [3, 4],
    [5, 4],
  ]);
  return Buffer.from([...header, ...palette, ...descriptor, 2, ...data, 0x3b]);
}

// ---- BMP ----------------------------------------------------------------------------------------------------------

/** The pixel layouts of the 56-byte (V3, Photoshop) BI_BITFIELDS BMPs that viewers open. */
export type BmpV3Layout = 'rgb565' | 'argb1555' | 'argb4444' | 'xrgb4444' | 'argb8888';

const BMP_V3_MASKS: Record<BmpV3Layout, { bpp: 16 | 32; r: number; g: number; b: number; a: number }> = {
  rgb565: { bpp: 16, r: 0xf800, g: 0x07e0, b: 0x001f, a: 0 },
  argb1555: { bpp: 16, r: 0x7c00, g: 0x03e0, b: 0x001f, a: 0x8000 },
  argb4444: { bpp: 16, r: 0x0f00, g: 0x00f0, b: 0x000f, a: 0xf000 },
  xrgb4444: { bpp: 16, r: 0x0f00, g: 0x00f0, b: 0x000f, a: 0 },
  argb8888: { bpp: 32, r: 0x00ff0000, g: 0x0000ff00, b: 0x000000ff, a: 0xff000000 },
};

/**
 * A 2x2 bottom-up V3 BMP (56-byte header, BI_BITFIELDS, masks inside the header) with the top row red, green and the
 * bottom row blue, white — all fully opaque (alpha bits set where the layout has alpha).
 */
export function bmpV3Bitfields(layout: BmpV3Layout): Buffer {
  const m = BMP_V3_MASKS[layout];
  const px = (r: number, g: number, b: number): number => {
    const put = (mask: number, v: number): number => {
      if (mask === 0) return 0;
      let shift = 0;
      while (((mask >>> shift) & 1) === 0) shift++;
      const max = mask >>> shift;
      return (Math.round((v / 255) * max) << shift) >>> 0;
    };
    return (put(m.r, r) | put(m.g, g) | put(m.b, b) | put(m.a, 255)) >>> 0;
  };
  const bytesPerPx = m.bpp / 8;
  const stride = Math.ceil((2 * bytesPerPx) / 4) * 4;
  const pixels = Buffer.alloc(stride * 2);
  const rows = [
    [px(0, 0, 255), px(255, 255, 255)], // bottom row first (bottom-up)
    [px(255, 0, 0), px(0, 255, 0)],
  ];
  for (const [y, row] of rows.entries()) {
    for (const [x, v] of row.entries()) {
      if (bytesPerPx === 2) pixels.writeUInt16LE(v, y * stride + x * 2);
      else pixels.writeUInt32LE(v, y * stride + x * 4);
    }
  }
  const header = Buffer.alloc(14 + 56);
  header.write('BM', 0, 'latin1');
  header.writeUInt32LE(header.length + pixels.length, 2);
  header.writeUInt32LE(header.length, 10);
  header.writeUInt32LE(56, 14);
  header.writeInt32LE(2, 18);
  header.writeInt32LE(2, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(m.bpp, 28);
  header.writeUInt32LE(3, 30); // BI_BITFIELDS
  header.writeUInt32LE(pixels.length, 34);
  header.writeUInt32LE(m.r, 54);
  header.writeUInt32LE(m.g, 58);
  header.writeUInt32LE(m.b, 62);
  header.writeUInt32LE(m.a, 66);
  return Buffer.concat([header, pixels]);
}

// ---- WebP ---------------------------------------------------------------------------------------------------------

function riffChunk(fourcc: string, data: Uint8Array): Buffer {
  const pad = data.length & 1;
  const out = Buffer.alloc(8 + data.length + pad);
  out.write(fourcc, 0, 'latin1');
  out.writeUInt32LE(data.length, 4);
  out.set(data, 8);
  return out;
}

function u24(b: Buffer, v: number, at: number): void {
  b[at] = v & 0xff;
  b[at + 1] = (v >> 8) & 0xff;
  b[at + 2] = (v >> 16) & 0xff;
}

/**
 * An animated WebP with a `width` x `height` canvas and `frames` frames, each the 1x1 lossless image `vp8l` (the
 * payload of a VP8L chunk, e.g. from any lossless encoder) at the top-left. 10000x10000 costs an animation decoder two
 * 400 MB canvases; the first frame alone needs one canvas.
 */
export function webpAnimatedCanvas(vp8l: Uint8Array, width = 10000, height = 10000, frames = 2): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x[0] = 0x02 | 0x10; // animation + alpha
  u24(vp8x, width - 1, 4);
  u24(vp8x, height - 1, 7);
  const anim = Buffer.alloc(6);
  anim.writeUInt16LE(0, 4);
  const anmf: Buffer[] = [];
  for (let i = 0; i < frames; i++) {
    const head = Buffer.alloc(16);
    u24(head, 0, 0);
    u24(head, 0, 3);
    u24(head, 0, 6); // width - 1
    u24(head, 0, 9); // height - 1
    u24(head, 100, 12); // duration
    head[15] = 0;
    anmf.push(riffChunk('ANMF', Buffer.concat([head, riffChunk('VP8L', vp8l)])));
  }
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    riffChunk('VP8X', vp8x),
    riffChunk('ANIM', anim),
    ...anmf,
  ]);
  const out = Buffer.alloc(8 + body.length);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(body.length, 4);
  out.set(body, 8);
  return out;
}

/** The VP8L payload of a lossless WebP that holds exactly one VP8L chunk (simple format). */
export function vp8lPayload(webp: Uint8Array): Buffer {
  const b = Buffer.from(webp);
  if (b.toString('latin1', 12, 16) !== 'VP8L') throw new Error('not a simple lossless WebP');
  return b.subarray(20, 20 + b.readUInt32LE(16));
}
