/**
 * The native addon runs libwebp with a helper thread per call (WEBP_USE_THREAD: alpha plane and half the analysis
 * on it when encoding; rows, filtering and alpha on it when decoding a lossy image >= 512 px wide); the wasm build
 * has no threads. Both must give the same bytes. The fixtures of wasm-backend.test.ts are small (the decoder's
 * threaded path needs 512 px), so this compares the two backends on large lossy+alpha WebP work: an RGBA PNG encoded
 * to WebP, then that WebP decoded, resized and encoded again, and decoded to RGBA. Runs when prebuilds/wasm32 exists
 * (see wasm-build.ts); the native-only half of the promise is pinned by native/tests/test-webp-threads.cpp.
 */
import { describe, expect, it } from 'vitest';
import type { NativeAddon } from '../../src/media/addon-types.js';
import { resolveProcessOptions } from '../../src/media/policy.js';
import { makePng } from './pixel-helpers.js';
import { nativeAndWasm } from './wasm-build.js';

const { native, wasm } = nativeAndWasm();

/** A photo-like RGBA image: gradients plus seeded noise, alpha a radial ramp with a transparent corner. */
function photoPng(width: number, height: number, seed: number): Buffer {
  let s = seed >>> 0 || 1;
  return makePng(width, height, 4, (x, y, out) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const n = (s >>> 27) - 16;
    const clamp = (v: number) => Math.max(0, Math.min(255, Math.round(v)));
    out[0] = clamp((x / width) * 255 + n);
    out[1] = clamp((y / height) * 255 - n);
    out[2] = clamp(((x ^ y) & 0xff) / 2 + 64 + n);
    const dx = x - width / 2;
    const dy = y - height / 2;
    const r = ((dx * dx + dy * dy) * 255) / ((width * width) / 4 + (height * height) / 4);
    out[3] = x < width / 6 && y < height / 6 ? 0 : clamp(255 - r);
  });
}

describe.runIf(wasm && native)('WebP with libwebp’s helper thread (native) and without it (wasm)', () => {
  const n = native as NativeAddon;
  const w = wasm as NativeAddon;

  it('encode, decode + resize + encode, and decode to RGBA give identical bytes on large lossy+alpha images', async () => {
    for (const [width, height] of [
      [1200, 900],
      [1601, 1203],
    ] as const) {
      const png = photoPng(width, height, width * 31 + height);
      const toWebp = resolveProcessOptions({ format: 'webp' });
      const a = await n.process(png, toWebp);
      const b = await w.process(png, toWebp);
      expect(a.mediaType, `${width}x${height}`).toBe('image/webp');
      // Lossy with an alpha chunk: the case where the encoder's helper thread compresses the alpha plane.
      expect(Buffer.from(a.data).includes('ALPH'), 'ALPH chunk').toBe(true);
      expect(Buffer.from(a.data).includes('VP8 '), 'lossy VP8 chunk').toBe(true);
      expect(Buffer.from(b.data).equals(Buffer.from(a.data)), `${width}x${height} PNG -> WebP`).toBe(true);

      // The WebP back in, >= 512 px wide: the native decoder's threaded row pipeline; resized, so re-encoded.
      const shrink = resolveProcessOptions({ format: 'webp', maxDimension: 800 });
      const c = await n.process(a.data, shrink);
      const d = await w.process(a.data, shrink);
      expect(c.changes, `${width}x${height}`).toContain('resized');
      expect(Buffer.from(d.data).equals(Buffer.from(c.data)), `${width}x${height} WebP -> WebP 800`).toBe(
        true,
      );

      const e = n.decodeToRgba(a.data, width * height);
      const f = w.decodeToRgba(a.data, width * height);
      expect([e.width, e.height]).toEqual([width, height]);
      expect(Buffer.from(f.data).equals(Buffer.from(e.data)), `${width}x${height} WebP -> RGBA`).toBe(true);
    }
  });
});
