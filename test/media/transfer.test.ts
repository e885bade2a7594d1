/**
 * `processMedia(bytes, { transfer: true })`: the call takes over the memory of a whole, detachable, non-shared
 * ArrayBuffer (the caller's is detached before the call returns) and falls back to the usual copy for anything else,
 * leaving the caller's bytes untouched. Hostile callers: buffers detached before and after, pooled Buffers, views,
 * shared and non-detachable memory, abort and memory-limit retries mid-call, worker_threads terminated mid-call.
 * Real addon, real images (made at test time by the library's helpers and sharp).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_MEDIA_MEMORY_LIMIT,
  DEFAULT_PROCESS_OPTIONS,
  mediaMemoryInFlight,
  type ProcessMediaOptions,
  probeMedia,
  processMedia,
  setMediaMemoryLimit,
  sniffMedia,
} from '../../src/media/index.js';
import { markPrivateMedia } from '../../src/tools/private-media.js';
import { toStoredParts } from '../../src/tools/store-parts.js';
import { gradientPng, noisePng } from './pixel-helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/media/', import.meta.url));

/** `bytes` in an ArrayBuffer of its own (as `readFileSync` returns a file): the case `transfer` takes over. */
function own(bytes: Uint8Array): Buffer {
  const b = Buffer.allocUnsafeSlow(bytes.byteLength);
  b.set(bytes);
  return b;
}

/** A photo-like RGB canvas (gradients plus noise), deterministic. */
function photoLike(w: number, h: number): Buffer {
  const px = Buffer.alloc(w * h * 3);
  let seed = 12345;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const n = (seed >> 16) & 31;
      const i = (y * w + x) * 3;
      px[i] = (x * 255) / w + n;
      px[i + 1] = (y * 255) / h + n;
      px[i + 2] = ((x + y) * 127) / (w + h) + n;
    }
  return px;
}

/** Bench-like inputs (smaller): each takes a different decoder path, most of them big enough to discard pages. */
const inputs: Record<string, Buffer> = {};

beforeAll(async () => {
  const raw = (w: number, h: number) => sharp(photoLike(w, h), { raw: { width: w, height: h, channels: 3 } });
  inputs['photo.jpg'] = await raw(3000, 2000).jpeg({ quality: 90 }).toBuffer();
  inputs['progressive.jpg'] = await raw(2400, 1600).jpeg({ quality: 85, progressive: true }).toBuffer();
  inputs['passthrough.jpg'] = await raw(1500, 1000).jpeg({ quality: 95 }).toBuffer();
  inputs['screenshot.png'] = gradientPng(2880, 1800);
  inputs['photo.png'] = noisePng(1800, 1350, 3);
  inputs['alpha.png'] = noisePng(1600, 1200, 4);
  inputs['alpha.webp'] = await sharp(noisePng(2400, 2400, 4))
    .webp({ quality: 80 })
    .toBuffer();
  inputs['anim.gif'] = readFileSync(`${FIXTURES}gif-animated.gif`);
  inputs['doc.pdf'] = readFileSync(`${FIXTURES}pdf-2page.pdf`);
  inputs['small.png'] = readFileSync(`${FIXTURES}png-rgb.png`);
}, 120_000);

afterEach(() => setMediaMemoryLimit(DEFAULT_MEDIA_MEMORY_LIMIT));

describe('transfer: true takes over a whole ArrayBuffer', () => {
  it('detaches the caller buffer before returning and gives output identical to a copying call, on every input', async () => {
    for (const [name, bytes] of Object.entries(inputs)) {
      for (const options of [{}, { maxEncodedBytes: 150_000 }]) {
        const expected = await processMedia(bytes, options);
        const mine = own(bytes);
        const alias = new Uint8Array(mine.buffer); // another view of the same memory
        const pending = processMedia(mine, { ...options, transfer: true });
        expect(mine.byteLength, name).toBe(0);
        expect(alias.byteLength, name).toBe(0);
        const got = await pending;
        expect(Buffer.compare(got.data, expected.data), `${name} ${JSON.stringify(options)}`).toBe(0);
        expect({ ...got, data: undefined }).toEqual({ ...expected, data: undefined });
      }
    }
    expect(mediaMemoryInFlight()).toBe(0);
  }, 600_000); // ~30 s of CPU natively (the 2400x2400 lossy+alpha WebP is most of it), more on wasm: room for a loaded host

  it('a pass-through result is the whole input, not zeroed, as a Buffer over the taken memory', async () => {
    for (const name of ['passthrough.jpg', 'small.png', 'doc.pdf']) {
      const original = inputs[name] as Buffer;
      const expected = await processMedia(original, { keepMetadata: true });
      expect(expected.changes, name).toEqual([]);
      const got = await processMedia(own(original), { keepMetadata: true, transfer: true });
      expect(Buffer.isBuffer(got.data)).toBe(true);
      expect(got.data.equals(original), name).toBe(true);
      expect(got.data.byteLength).toBe(original.byteLength);
    }
    expect((inputs['passthrough.jpg'] as Buffer).byteLength).toBeGreaterThan(512 * 1024); // the discardable size
  });

  it('transfer: false and undefined copy as before', async () => {
    const mine = own(inputs['small.png'] as Buffer);
    await processMedia(mine, { transfer: false });
    await processMedia(mine, { transfer: undefined });
    expect(mine.equals(inputs['small.png'] as Buffer)).toBe(true);
  });

  it('a non-boolean transfer is refused by name before anything is taken', async () => {
    const mine = own(inputs['small.png'] as Buffer);
    for (const bad of [1, 'yes', null, {}]) {
      await expect(
        processMedia(mine, { transfer: bad } as unknown as ProcessMediaOptions),
      ).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
        message: expect.stringMatching(/^transfer must be a boolean, got /),
      });
    }
    await expect(processMedia(mine, { transfer: true, maxDimension: 0 })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
    const aborted = AbortSignal.abort();
    await expect(processMedia(mine, { transfer: true, signal: aborted })).rejects.toMatchObject({
      code: 'ERR_ABORTED',
    });
    expect(mine.equals(inputs['small.png'] as Buffer)).toBe(true);
  });

  it('an input over the size limit is refused and not taken', async () => {
    const mine = own(inputs['photo.png'] as Buffer);
    await expect(
      Promise.resolve().then(() =>
        processMedia(mine, { transfer: true, maxInputBytes: 1000, maxPdfBytes: 1000 }),
      ),
    ).rejects.toMatchObject({ code: 'ERR_MEDIA_TOO_LARGE' });
    expect(mine.byteLength).toBe((inputs['photo.png'] as Buffer).byteLength);
  });
});

describe('transfer: true falls back to a copy, leaving the caller bytes as they were', () => {
  async function expectCopied(bytes: Uint8Array, reference: Buffer): Promise<void> {
    const before = Buffer.from(bytes);
    const expected = await processMedia(reference);
    const got = await processMedia(bytes, { transfer: true });
    expect(bytes.byteLength).toBe(before.byteLength);
    expect(Buffer.compare(bytes, before)).toBe(0);
    expect(Buffer.compare(got.data, expected.data)).toBe(0);
  }

  it('a small Buffer from the shared pool: neither it nor its pool neighbours are touched', async () => {
    const png = inputs['small.png'] as Buffer;
    expect(png.byteLength).toBeLessThan(4096);
    const before = Buffer.from('neighbour before');
    const pooled = Buffer.from(png);
    const after = Buffer.from('neighbour after');
    expect(pooled.buffer).toBe(before.buffer); // really in the pool
    expect(pooled.byteOffset).toBeGreaterThan(0);
    await expectCopied(pooled, png);
    expect(before.toString()).toBe('neighbour before');
    expect(after.toString()).toBe('neighbour after');
    expect(pooled.buffer.byteLength).toBe(8192);
  });

  it('a view of part of a larger buffer (subarray)', async () => {
    const png = inputs['photo.png'] as Buffer;
    const host = Buffer.alloc(png.byteLength + 8192, 7);
    png.copy(host, 4096);
    const view = host.subarray(4096, 4096 + png.byteLength);
    await expectCopied(view, png);
    expect(host.byteLength).toBe(png.byteLength + 8192);
    expect(host[0]).toBe(7);
    expect(host[host.byteLength - 1]).toBe(7);
  });

  it('a view of a whole buffer at offset 0 that does not reach its end', async () => {
    const png = inputs['screenshot.png'] as Buffer;
    const host = new Uint8Array(new ArrayBuffer(png.byteLength + 1));
    host.set(png);
    await expectCopied(host.subarray(0, png.byteLength), png);
    expect(host.byteLength).toBe(png.byteLength + 1);
  });

  it('a SharedArrayBuffer', async () => {
    const png = inputs['screenshot.png'] as Buffer;
    const shared = new Uint8Array(new SharedArrayBuffer(png.byteLength));
    shared.set(png);
    await expectCopied(shared, png);
  });

  it('a WebAssembly.Memory buffer (not detachable)', async () => {
    const png = inputs['screenshot.png'] as Buffer;
    const pages = Math.ceil(png.byteLength / 65536);
    // biome-ignore lint/suspicious/noExplicitAny: the project's TS lib has no WebAssembly types
    const memory = new (globalThis as any).WebAssembly.Memory({ initial: pages }) as { buffer: ArrayBuffer };
    const view = new Uint8Array(memory.buffer, 0, pages * 65536);
    view.fill(0);
    view.set(png);
    // The whole memory: a PNG followed by zero padding (trailing bytes after IEND are ignored by the pipeline).
    const expected = await processMedia(Buffer.from(view));
    const got = await processMedia(view, { transfer: true });
    expect(view.byteLength).toBe(pages * 65536);
    expect(memory.buffer.byteLength).toBe(pages * 65536);
    expect(Buffer.compare(view.subarray(0, png.byteLength), png)).toBe(0);
    expect(Buffer.compare(got.data, expected.data)).toBe(0);
  });

  it('a resizable ArrayBuffer', async () => {
    const png = inputs['screenshot.png'] as Buffer;
    const ab = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer)(
      png.byteLength,
      { maxByteLength: png.byteLength * 2 },
    );
    const view = new Uint8Array(ab);
    view.set(png);
    await expectCopied(view, png);
  });
});

/** The bytes one JPEG-output call on `png` reserves from the process-wide pool (sampled while it runs). */
async function oneCallReservation(png: Buffer): Promise<number> {
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, mediaMemoryInFlight());
  }, 0);
  const pending = processMedia(png, { format: 'jpeg' });
  for (let i = 0; i < 1000 && peak === 0; i++) await new Promise((r) => setImmediate(r));
  await pending;
  clearInterval(sampler);
  expect(peak).toBeGreaterThan(0);
  return peak;
}

describe('hostile callers of a transferred call', () => {
  it('a buffer the caller detached before the call is the empty input, with or without transfer', async () => {
    const mine = own(inputs['small.png'] as Buffer);
    structuredClone(mine.buffer, { transfer: [mine.buffer as ArrayBuffer] });
    expect(mine.byteLength).toBe(0);
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: { code: string }) => e.code,
      );
    // The same typed error on both backends (the WebAssembly one used to trap copying a detached view).
    expect(await codeOf(processMedia(mine))).toBe('ERR_UNSUPPORTED_MEDIA');
    expect(await codeOf(processMedia(mine, { transfer: true }))).toBe('ERR_UNSUPPORTED_MEDIA');
    expect(sniffMedia(mine)).toBeNull();
    expect(probeMedia(mine)).toBeNull();
  });

  it('the same buffer handed to two calls at once: the first takes it, the second sees it detached', async () => {
    const png = inputs['screenshot.png'] as Buffer;
    const expected = await processMedia(png);
    const empty = await processMedia(new Uint8Array(0)).then(
      () => 'resolved',
      (e: { code: string }) => e.code,
    );
    const mine = own(png);
    const [a, b] = await Promise.allSettled([
      processMedia(mine, { transfer: true }),
      processMedia(mine, { transfer: true }),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(Buffer.compare((a as PromiseFulfilledResult<{ data: Buffer }>).value.data, expected.data)).toBe(0);
    expect(b.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason.code).toBe(empty);
  });

  it('the caller cannot reach the bytes after the call: its own transfer or detach gets nothing, the call is unaffected', async () => {
    const png = inputs['photo.png'] as Buffer;
    const expected = await processMedia(png);
    const mine = own(png);
    const pending = processMedia(mine, { transfer: true });
    const stolen = structuredClone(mine.buffer, { transfer: [mine.buffer as ArrayBuffer] });
    expect(stolen.byteLength).toBe(0);
    expect(() => mine.fill(0)).toThrow(TypeError); // no write reaches the bytes either
    expect(Buffer.compare((await pending).data, expected.data)).toBe(0);
  });

  it('abort mid-call rejects at once, the taken buffer stays detached, nothing stays reserved', async () => {
    const png = inputs['photo.png'] as Buffer;
    const expected = await processMedia(png);
    for (const delay of [0, 1, 5, 20]) {
      const ac = new AbortController();
      const mine = own(png);
      const pending = processMedia(mine, { transfer: true, signal: ac.signal });
      setTimeout(() => ac.abort(), delay);
      const r = await pending.then(
        (m) => m,
        (e: { code: string }) => e,
      );
      if ('code' in r) expect(r.code).toBe('ERR_ABORTED');
      else expect(Buffer.compare(r.data, expected.data)).toBe(0); // finished before the abort
      expect(mine.byteLength).toBe(0);
    }
    for (let i = 0; i < 200 && mediaMemoryInFlight() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(mediaMemoryInFlight()).toBe(0);
    const after = await processMedia(own(png), { transfer: true });
    expect(Buffer.compare(after.data, expected.data)).toBe(0);
  });

  it('calls that wait for the memory limit (ERR_MEDIA_BUSY retries) keep their taken bytes and give the same output', async () => {
    const png = inputs['photo.png'] as Buffer;
    const cap = (await oneCallReservation(png)) + 1024 * 1024; // one call fits, two do not
    const expected = await processMedia(png, { format: 'jpeg' });
    setMediaMemoryLimit(cap);
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, mediaMemoryInFlight());
    }, 1);
    try {
      const mine = Array.from({ length: 4 }, () => own(png));
      const outs = await Promise.all(mine.map((b) => processMedia(b, { format: 'jpeg', transfer: true })));
      for (const b of mine) expect(b.byteLength).toBe(0);
      for (const o of outs) expect(Buffer.compare(o.data, expected.data)).toBe(0);
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(cap);
    expect(mediaMemoryInFlight()).toBe(0);
  });

  it('abort while waiting for the memory limit', async () => {
    const png = inputs['photo.png'] as Buffer;
    setMediaMemoryLimit((await oneCallReservation(png)) + 1024 * 1024);
    const first = processMedia(own(png), { transfer: true, format: 'jpeg' });
    const ac = new AbortController();
    const mine = own(png);
    const second = processMedia(mine, { transfer: true, format: 'jpeg', signal: ac.signal });
    ac.abort();
    await expect(second).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    expect(mine.byteLength).toBe(0);
    await expect(first).resolves.toMatchObject({ mediaType: 'image/jpeg' });
  });

  it('worker_threads terminated with transferred calls in flight leave the main thread running', () => {
    const options = JSON.stringify(DEFAULT_PROCESS_OPTIONS);
    const worker = `
      const addon = require('node-gyp-build')(${JSON.stringify(ROOT)});
      class MediaError extends Error { constructor(code, message) { super(message); this.code = code; } }
      addon.init(MediaError);
      const { parentPort, workerData } = require('node:worker_threads');
      const OPTIONS = ${options};
      const take = (b) => {
        const ab = Buffer.allocUnsafeSlow(b.byteLength); ab.set(b);
        return new Uint8Array(structuredClone(ab.buffer, { transfer: [ab.buffer] }));
      };
      for (let i = 0; i < 3; i++) {
        addon.process(take(workerData.png), { ...OPTIONS, format: 'jpeg' }, undefined, true).catch(() => {});
        addon.process(take(workerData.jpg), { ...OPTIONS, maxDimension: 512 }, undefined, true).catch(() => {});
        addon.process(take(workerData.pass), { ...OPTIONS, keepMetadata: true }, undefined, true).catch(() => {});
      }
      parentPort.postMessage('busy');`;
    const main = `
      const { Worker } = require('node:worker_threads');
      const fs = require('node:fs');
      const workerData = JSON.parse(fs.readFileSync(0, 'utf8'));
      for (const k of Object.keys(workerData)) workerData[k] = Buffer.from(workerData[k], 'base64');
      (async () => {
        let seed = 11;
        const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 60);
        for (let round = 0; round < 8; round++) {
          await Promise.all([0, 1].map(() => new Promise((resolve) => {
            const w = new Worker(${JSON.stringify(worker)}, { eval: true, workerData });
            w.once('message', () => setTimeout(() => w.terminate().then(resolve), rnd()));
            w.once('error', (e) => { process.stdout.write('worker error: ' + e.message); resolve(); });
          })));
        }
        process.stdout.write('main alive');
      })();`;
    const data = JSON.stringify({
      png: (inputs['photo.png'] as Buffer).toString('base64'),
      jpg: (inputs['photo.jpg'] as Buffer).toString('base64'),
      pass: (inputs['passthrough.jpg'] as Buffer).toString('base64'),
    });
    const out = execFileSync(process.execPath, ['-e', main], {
      cwd: ROOT,
      input: data,
      encoding: 'utf8',
      timeout: 170_000,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 1 << 20,
    });
    expect(out).toBe('main alive');
  }, 180_000);
});

describe("toStoredParts hands over only the library's own bytes", () => {
  it('bytes marked private are taken; a tool or host buffer is copied and left intact', async () => {
    const png = inputs['screenshot.png'] as Buffer;
    const toolBytes = own(png);
    const decoded = markPrivateMedia(own(png));
    const stored = await toStoredParts([
      { type: 'media', data: toolBytes, mediaType: 'image/png' },
      { type: 'media', data: decoded, mediaType: 'image/png' },
    ]);
    expect(toolBytes.equals(png)).toBe(true);
    expect(decoded.byteLength).toBe(0);
    const images = stored.filter((p) => p.type === 'image');
    expect(images).toHaveLength(2);
    expect(images[0]).toEqual(images[1]);
  });

  it('a dropped private part still names its original size', async () => {
    const bad = markPrivateMedia(own(Buffer.alloc(400_000, 'not an image ')));
    const outcomes: unknown[] = [];
    const stored = await toStoredParts([{ type: 'media', data: bad, mediaType: 'image/png' }], {
      onMedia: (o) => outcomes.push(o),
    });
    expect(bad.byteLength).toBe(0);
    expect(stored[0]).toMatchObject({ type: 'text' });
    expect((stored[0] as { text: string }).text).toContain('its 400000 bytes (declared as image/png)');
    expect(outcomes).toMatchObject([{ type: 'dropped', dropped: { code: 'ERR_UNSUPPORTED_MEDIA' } }]);
  });
});
