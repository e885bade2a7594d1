/**
 * Abort reaches every long-running codec step (issue 12): WebP decode (still and first animation frame), GIF LZW
 * decode, WebP encode and PNG encode, each on a large noise image generated here.
 *
 * Two views of each case. Through `processMedia` with an AbortSignal raised a few ms after the start: it rejects with
 * ERR_ABORTED and the native call then settles (its memory reservation returns to the pool). Through the addon
 * directly with an abort token: the native promise itself rejects with ERR_ABORTED. For the encoders this is the
 * discriminating check — the pipeline does not poll after its final encode, so an encoder that ignored the flag would
 * resolve with an image. No timing is asserted; the delays only make it likely that the abort lands mid-codec.
 */
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mediaMemoryInFlight, processMedia } from '../../src/media/index.js';
import { loadNativeAddon } from '../../src/media/native-addon.js';
import { resolveProcessOptions } from '../../src/media/policy.js';
import type { ProcessMediaOptions } from '../../src/media/types.js';
import { noiseBmp, noiseBytes, noiseGif, webpAsAnimation } from '../helpers/media-noise.js';

const SIDE = 4000;
const inputs: Record<string, Buffer> = {};

beforeAll(async () => {
  const raw = { raw: { width: SIDE, height: SIDE, channels: 3 as const } };
  const px = noiseBytes(SIDE * SIDE * 3);
  // Quality 50: at q90 the noise overflows a VP8 partition at this size.
  inputs.lossyWebp = await sharp(px, raw).webp({ quality: 50, effort: 0 }).toBuffer();
  const small = { raw: { width: 2500, height: 2500, channels: 3 as const } };
  inputs.losslessWebp = await sharp(px.subarray(0, 2500 * 2500 * 3), small)
    .webp({ lossless: true, effort: 0 })
    .toBuffer();
  inputs.animatedWebp = webpAsAnimation(inputs.lossyWebp, SIDE, SIDE);
  inputs.gif = noiseGif(SIDE, SIDE);
  inputs.bmp = noiseBmp(SIDE, SIDE);
}, 180_000);

afterEach(async () => {
  await expect.poll(() => mediaMemoryInFlight(), { timeout: 120_000, interval: 50 }).toBe(0);
});

const big: ProcessMediaOptions = { maxDimension: SIDE, maxEncodedBytes: 1 << 30 };

const cases: Array<{ name: string; input: string; options: ProcessMediaOptions; delayMs: number }> = [
  { name: 'lossy WebP decode', input: 'lossyWebp', options: {}, delayMs: 5 },
  { name: 'lossless WebP decode', input: 'losslessWebp', options: {}, delayMs: 5 },
  { name: 'animated WebP first-frame decode', input: 'animatedWebp', options: {}, delayMs: 5 },
  { name: 'GIF LZW decode', input: 'gif', options: {}, delayMs: 5 },
  // BMP decoding is a copy: an abort a little later lands in the encoder.
  { name: 'WebP encode', input: 'bmp', options: { ...big, format: 'webp' }, delayMs: 150 },
  { name: 'PNG encode', input: 'bmp', options: { ...big, format: 'png' }, delayMs: 150 },
];

describe('abort reaches every long-running codec step', () => {
  for (const c of cases) {
    it(`${c.name}: processMedia with an AbortSignal rejects with ERR_ABORTED, and the native call settles`, async () => {
      const bytes = inputs[c.input] as Buffer;
      const controller = new AbortController();
      const p = processMedia(bytes, { ...c.options, signal: controller.signal });
      setTimeout(() => controller.abort(), c.delayMs);
      await expect(p).rejects.toMatchObject({ code: 'ERR_ABORTED' });
      // afterEach: the reservation of the native call returns to the pool, i.e. the native work has settled.
    });

    it(`${c.name}: the native call itself stops with ERR_ABORTED`, async () => {
      const addon = loadNativeAddon();
      const token = addon.abortToken();
      const work = addon.process(inputs[c.input] as Buffer, resolveProcessOptions(c.options), token);
      setTimeout(() => addon.abort(token), c.delayMs);
      await expect(work).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    });
  }

  it('without an abort, the same inputs process (the generated images are valid)', async () => {
    const r = await processMedia(inputs.animatedWebp as Buffer, { maxDimension: 64 });
    expect(r).toMatchObject({ width: 64, height: 64, original: { frames: 2 } });
    const g = await processMedia(inputs.gif as Buffer, { maxDimension: 64 });
    expect(g).toMatchObject({ width: 64, height: 64, original: { mediaType: 'image/gif' } });
    const l = await processMedia(inputs.losslessWebp as Buffer, { maxDimension: 64 });
    expect(l.original).toMatchObject({ width: 2500, height: 2500 });
  });
});
