/**
 * Large noise images for abort tests, built at test time: slow to decode or encode, so an abort lands inside a codec.
 * BMP: trivial to decode, slow to re-encode. GIF: an "uncompressed" LZW stream (a clear code before every 254
 * literals keeps 9-bit codes), ~1.1 bytes per pixel to decode. Animated WebP: any simple-format still wrapped as the
 * first of two frames.
 */

/** Deterministic noise bytes (xorshift32). */
export function noiseBytes(n: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s >>> 24;
  }
  return out;
}

/** A top-down 24-bit BMP of noise. */
export function noiseBmp(width: number, height: number): Buffer {
  const stride = Math.ceil((width * 3) / 4) * 4;
  const out = Buffer.alloc(54 + stride * height);
  out.write('BM', 0, 'latin1');
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(54, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(-height, 22);
  out.writeUInt16LE(1, 26);
  out.writeUInt16LE(24, 28);
  const px = noiseBytes(width * 3);
  for (let y = 0; y < height; y++) {
    // Rotate one row of noise so rows differ (PNG filters cannot predict them) without generating w*h*3 randoms.
    const k = (y * 7919) % px.length;
    out.set(px.subarray(k), 54 + y * stride);
    out.set(px.subarray(0, k), 54 + y * stride + px.length - k);
  }
  return out;
}

/** A GIF of `width` x `height` grey noise (256-entry palette), 9-bit LZW codes in 255-byte sub-blocks. */
export function noiseGif(width: number, height: number): Buffer {
  const head = Buffer.alloc(13 + 768 + 10 + 1);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  head[10] = 0xf7; // global colour table, 256 entries
  for (let i = 0; i < 256; i++) head.fill(i, 13 + 3 * i, 16 + 3 * i);
  let o = 13 + 768;
  head[o++] = 0x2c;
  o += 4; // left, top = 0
  head.writeUInt16LE(width, o);
  head.writeUInt16LE(height, o + 2);
  o += 5; // width, height, no local table
  head[o] = 8; // LZW minimum code size
  const pixels = width * height;
  const codes = pixels + Math.ceil(pixels / 254) + 1;
  const lzw = Buffer.alloc(Math.ceil((codes * 9) / 8));
  const noise = noiseBytes(pixels);
  let acc = 0;
  let bits = 0;
  let n = 0;
  const emit = (code: number): void => {
    acc |= code << bits;
    bits += 9;
    while (bits >= 8) {
      lzw[n++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  };
  for (let i = 0; i < pixels; i++) {
    if (i % 254 === 0) emit(256);
    emit(noise[i] as number);
  }
  emit(257);
  if (bits > 0) lzw[n++] = acc & 0xff;
  const blocks = Math.ceil(n / 255);
  const body = Buffer.alloc(n + blocks + 2);
  let w = 0;
  for (let i = 0; i < n; i += 255) {
    const len = Math.min(255, n - i);
    body[w++] = len;
    lzw.copy(body, w, i, i + len);
    w += len;
  }
  body[w++] = 0; // block terminator
  body[w] = 0x3b; // trailer
  return Buffer.concat([head, body]);
}

function riffChunk(type: string, payload: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.write(type, 0, 'latin1');
  head.writeUInt32LE(payload.length, 4);
  return Buffer.concat([head, payload, Buffer.alloc(payload.length & 1)]);
}

/** A two-frame animated WebP whose canvas and both frames are the simple-format (VP8 or VP8L) still `webp`. */
export function webpAsAnimation(webp: Uint8Array, width: number, height: number): Buffer {
  const b = Buffer.from(webp);
  const type = b.toString('latin1', 12, 16);
  if (type !== 'VP8 ' && type !== 'VP8L') throw new Error('not a simple-format WebP');
  const frame = riffChunk(type, b.subarray(20, 20 + b.readUInt32LE(16)));
  const u24 = (buf: Buffer, v: number, at: number): void => {
    buf[at] = v & 0xff;
    buf[at + 1] = (v >> 8) & 0xff;
    buf[at + 2] = (v >> 16) & 0xff;
  };
  const vp8x = Buffer.alloc(10);
  vp8x[0] = 0x02; // animation
  u24(vp8x, width - 1, 4);
  u24(vp8x, height - 1, 7);
  const anmf = Buffer.alloc(16);
  u24(anmf, width - 1, 6);
  u24(anmf, height - 1, 9);
  u24(anmf, 100, 12);
  const frameChunk = riffChunk('ANMF', Buffer.concat([anmf, frame]));
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    riffChunk('VP8X', vp8x),
    riffChunk('ANIM', Buffer.alloc(6)),
    frameChunk,
    frameChunk,
  ]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}
