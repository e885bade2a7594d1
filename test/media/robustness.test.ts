import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import {
  DEFAULT_PROCESS_OPTIONS,
  MediaError,
  type ProcessedMedia,
  probeMedia,
  processMedia,
  sniffMedia,
} from '../../src/media/index.js';
import { allPixelBombs, gifBomb, pngBomb } from '../helpers/media-bombs.js';
import { byteFlips, truncations, type Variant } from '../helpers/media-corruption.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/media/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fixture = (name: string): Buffer => readFileSync(`${FIXTURES}${name}`);

/** Fixtures of every format the pipeline processes (the recognised-only ones are covered by the functional tests). */
const SUPPORTED = readdirSync(FIXTURES)
  .filter((f) => /^(png|jpeg|gif|bmp|webp|pdf)-/.test(f))
  .sort();

const INPUT_ERRORS = ['ERR_CORRUPT_MEDIA', 'ERR_UNSUPPORTED_MEDIA', 'ERR_MEDIA_TOO_LARGE'];

type Outcome = { ok: true; result: ProcessedMedia } | { ok: false; code: string; error: unknown };

async function outcome(bytes: Buffer): Promise<Outcome> {
  try {
    return { ok: true, result: await processMedia(bytes) };
  } catch (error) {
    if (!(error instanceof MediaError) || !isPantoError(error)) throw error; // anything else is a bug
    return { ok: false, code: error.code, error };
  }
}

/** A resolved result must be a real, provider-ready file: its bytes sniff and probe as what it claims to be. */
function expectProviderReady(name: string, r: ProcessedMedia): void {
  expect(r.data.length, name).toBeGreaterThan(0);
  expect(sniffMedia(r.data), name).toBe(r.mediaType);
  if (r.mediaType === 'application/pdf') return;
  const info = probeMedia(r.data);
  expect(info, name).not.toBeNull();
  expect([info?.width, info?.height], name).toEqual([r.width, r.height]);
  expect(Math.max(r.width, r.height), name).toBeLessThanOrEqual(2000);
  expect(Math.min(r.width, r.height), name).toBeGreaterThan(0);
}

/** The synchronous header readers on bad bytes: a value, `null`, or a MediaError with an input code; nothing else. */
function expectCleanHeaderReads(label: string, bytes: Buffer): void {
  const sniffed = sniffMedia(bytes);
  expect(sniffed === null || typeof sniffed === 'string', label).toBe(true);
  try {
    const info = probeMedia(bytes);
    if (info) expect(info.width >= 0 && info.height >= 0 && info.frames >= 0, label).toBe(true);
  } catch (error) {
    expect(error, label).toBeInstanceOf(MediaError);
    expect(INPUT_ERRORS, `${label}: ${String(error)}`).toContain((error as MediaError).code);
  }
}

/** Runs every variant concurrently (the threadpool sees parallel calls) and checks each outcome. */
async function expectOnlyCleanOutcomes(file: string, variants: Variant[]): Promise<Map<string, Outcome>> {
  for (const v of variants) expectCleanHeaderReads(`${file} ${v.name}`, v.bytes);
  const results = await Promise.all(variants.map(async (v) => [v.name, await outcome(v.bytes)] as const));
  for (const [name, o] of results) {
    const label = `${file} ${name}`;
    if (o.ok) expectProviderReady(label, o.result);
    else if (name === 'truncated@0')
      expect([...INPUT_ERRORS, 'ERR_INVALID_ARGUMENT'], label).toContain(o.code);
    else expect(INPUT_ERRORS, `${label}: ${String(o.error)}`).toContain(o.code);
  }
  return new Map(results);
}

describe('pixel bombs', () => {
  const bombs = allPixelBombs({ jpeg: fixture('jpeg-baseline.jpg'), png: fixture('png-rgb.png') });

  it('the GIF bomb is 35 bytes and the PNG bomb has a valid IHDR', () => {
    expect(gifBomb().length).toBe(35);
    const png = pngBomb();
    expect(png.toString('latin1', 12, 16)).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(20000);
  });

  for (const [name, bytes] of Object.entries(bombs)) {
    it(`${name} -> ERR_MEDIA_TOO_LARGE`, async () => {
      const o = await outcome(bytes);
      expect(o.ok).toBe(false);
      if (!o.ok) expect(o.code).toBe('ERR_MEDIA_TOO_LARGE');
    });
  }

  it('a pixel cap below the declared size rejects before allocation even for small bombs', async () => {
    await expect(processMedia(pngBomb(3000, 3000), { maxPixels: 1_000_000 })).rejects.toMatchObject({
      code: 'ERR_MEDIA_TOO_LARGE',
    });
  });

  it('every bomb costs under 50 MB of peak RSS (measured in a fresh process)', () => {
    // A fresh Node process loads the addon, records its peak RSS (VmHWM: not getrusage's maxrss, which Linux carries
    // over from the parent across fork+exec), runs every bomb through process(), and reports the peak growth.
    // In-process numbers would be masked by this worker's earlier peak.
    const script = `
      const nodeGypBuild = require('node-gyp-build');
      const addon = nodeGypBuild(${JSON.stringify(ROOT)});
      class MediaError extends Error { constructor(code, message) { super(message); this.code = code; } }
      addon.init(MediaError);
      const bombs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
      (async () => {
        await addon.process(Buffer.from(${JSON.stringify(fixture('png-rgba.png').toString('base64'))}, 'base64'), {...${JSON.stringify(DEFAULT_PROCESS_OPTIONS)}, maxDimension: 32});
        const hwm = () => Number(/VmHWM:\\s+(\\d+) kB/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]);
        const before = hwm();
        const codes = {};
        for (const [name, b64] of Object.entries(bombs)) {
          try { await addon.process(Buffer.from(b64, 'base64'), ${JSON.stringify(DEFAULT_PROCESS_OPTIONS)}); codes[name] = 'resolved'; }
          catch (e) { codes[name] = e.code; }
        }
        const growthMb = (hwm() - before) / 1024;
        process.stdout.write(JSON.stringify({ growthMb, codes }));
      })();`;
    const input = JSON.stringify(
      Object.fromEntries(Object.entries(bombs).map(([k, v]) => [k, v.toString('base64')])),
    );
    const out = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, input, encoding: 'utf8' });
    const { growthMb, codes } = JSON.parse(out) as { growthMb: number; codes: Record<string, string> };
    for (const name of Object.keys(bombs)) expect(codes[name], name).toBe('ERR_MEDIA_TOO_LARGE');
    expect(growthMb).toBeLessThan(50);
  });
});

describe('truncated inputs of every format', () => {
  for (const file of SUPPORTED) {
    it(`${file}: cuts are rejected as corrupt; none crashes or yields an invalid file`, async () => {
      const bytes = fixture(file);
      const results = await expectOnlyCleanOutcomes(file, truncations(bytes));
      // Cut inside the header: nothing to decode. Cut anywhere from there to 16 bytes before the end: the pixel data
      // or the format's terminator is gone, so it is corrupt (RLE8 BMP may be refused as unsupported first).
      const expected =
        file === 'bmp-rle8.bmp' ? ['ERR_UNSUPPORTED_MEDIA', 'ERR_CORRUPT_MEDIA'] : ['ERR_CORRUPT_MEDIA'];
      for (const [name, o] of results) {
        const at = Number(name.slice('truncated@'.length));
        if (at === 0) continue;
        const got = o.ok ? `resolved ${o.result.mediaType} [${o.result.changes.join(', ')}]` : o.code;
        if (at <= 16) expect(o.ok, `${file} ${name}: ${got}`).toBe(false);
        else if (at <= bytes.length - 16) expect(expected, `${file} ${name}: ${got}`).toContain(got);
      }
    });
  }
});

describe('byte-flipped inputs of every format', () => {
  for (const [i, file] of SUPPORTED.entries()) {
    it(`${file}: 40 seeded 1..8-byte corruptions never crash, hang or leak a non-media error`, async () => {
      const bytes = fixture(file);
      const variants = [
        ...byteFlips(bytes, { seed: 1000 + i, count: 20, flips: 1, keepPrefix: 4 }),
        ...byteFlips(bytes, { seed: 2000 + i, count: 20, flips: 8, keepPrefix: 4 }),
      ];
      await expectOnlyCleanOutcomes(file, variants);
    });
  }

  it('a flipped magic number is unsupported, not corrupt', async () => {
    const png = Buffer.from(fixture('png-rgb.png'));
    png[1] = 0x00;
    await expect(processMedia(png)).rejects.toMatchObject({ code: 'ERR_UNSUPPORTED_MEDIA' });
  });
});
