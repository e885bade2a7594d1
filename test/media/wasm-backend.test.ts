import { readdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { NativeAddon } from '../../src/media/addon-types.js';
import { mediaBackend } from '../../src/media/index.js';
import { MediaError } from '../../src/media/media-error.js';
import { DEFAULT_MEDIA_MEMORY_LIMIT, resolveProcessOptions } from '../../src/media/policy.js';
import { createWasmAddon } from '../../src/media/wasm-addon.js';
import { byteFlips, truncations } from '../helpers/media-corruption.js';
import { pngFile } from '../helpers/png-file.js';
import { fixture, gradientPng, noisePng } from './pixel-helpers.js';
import { ABSENT_NOTE, nativeAndWasm, repo, wasmFiles, wasmRequired } from './wasm-build.js';

describe('WebAssembly build presence', () => {
  it(wasmFiles ? 'prebuilds/wasm32 is built' : ABSENT_NOTE, (ctx) => {
    if (!wasmFiles && !wasmRequired) ctx.skip();
    expect(wasmFiles, `PANTO_REQUIRE_WASM=1 but ${ABSENT_NOTE}`).toBeDefined();
  });

  it('the public media API in this process runs on the backend PANTO_MEDIA_BACKEND names', () => {
    const wanted = process.env.PANTO_MEDIA_BACKEND;
    if (wanted !== 'wasm' && wanted !== 'native') return; // auto: covered by wasm-selection.test.ts
    expect(mediaBackend()).toBe(wanted);
  });
});

const { native, wasm } = nativeAndWasm();
const FIXTURES = readdirSync(path.join(repo, 'test', 'fixtures', 'media')).filter((f) => !f.endsWith('.md'));

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

async function settle(fn: () => unknown): Promise<Settled> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Both backends settled the same way: equal results (byte-identical data) or equal MediaErrors. */
function expectSame(a: Settled, b: Settled, label: string): void {
  expect(
    a.ok,
    `${label}: native ${a.ok ? 'resolved' : 'rejected'}, wasm ${b.ok ? 'resolved' : 'rejected'}`,
  ).toBe(b.ok);
  if (a.ok && b.ok) {
    expect(b.value, label).toEqual(a.value);
    return;
  }
  if (!a.ok && !b.ok) {
    expect(b.error, label).toBeInstanceOf(MediaError);
    const shape = (e: unknown) => {
      const m = e as MediaError;
      return { name: m.name, code: m.code, message: m.message, mediaType: m.mediaType };
    };
    expect(shape(b.error), label).toEqual(shape(a.error));
  }
}

const OPTION_SETS = [
  {},
  { maxDimension: 32 },
  { format: 'jpeg', jpegQuality: 55 },
  { format: 'webp' },
  { format: 'png', keepMetadata: true },
  { mediaTypeHint: 'image/gif', maxEncodedBytes: 2000 },
  { maxPixels: 1000 },
  { maxInputBytes: 100 },
  { maxPdfBytes: 100 },
].map((o) => resolveProcessOptions(o));
const DEFAULTS = resolveProcessOptions({});
const opts = (o: object) => resolveProcessOptions(o);

describe.runIf(wasmFiles && native)('the wasm backend gives the native addon’s results', () => {
  const n = native as NativeAddon;
  const w = wasm as NativeAddon;

  it('sniff and probe: every fixture, its truncations, and junk', async () => {
    const inputs: Array<[string, Buffer]> = [
      ['empty', Buffer.alloc(0)],
      ['junk', Buffer.from('hello world')],
    ];
    for (const f of FIXTURES) {
      inputs.push([f, fixture(f)]);
      for (const v of truncations(fixture(f))) inputs.push([`${f} ${v.name}`, v.bytes]);
    }
    for (const [label, bytes] of inputs) {
      expect(w.sniff(bytes), `sniff ${label}`).toBe(n.sniff(bytes));
      expectSame(await settle(() => n.probe(bytes)), await settle(() => w.probe(bytes)), `probe ${label}`);
    }
  });

  it(`process: every fixture under ${OPTION_SETS.length} option sets -> identical bytes, fields and errors`, async () => {
    for (const f of FIXTURES) {
      const bytes = fixture(f);
      for (const opts of OPTION_SETS) {
        const label = `${f} ${JSON.stringify(opts)}`;
        const [a, b] = await Promise.all([
          settle(() => n.process(bytes, opts)),
          settle(() => w.process(bytes, opts)),
        ]);
        expectSame(a, b, label);
      }
    }
  });

  it('process: truncated and byte-flipped inputs fail (or succeed) exactly alike', async () => {
    for (const f of [
      'jpeg-progressive.jpg',
      'png-interlaced.png',
      'webp-lossy-alpha.webp',
      'gif-animated.gif',
    ]) {
      const variants = [
        ...truncations(fixture(f)),
        ...byteFlips(fixture(f), { seed: 7, count: 12, flips: 4, keepPrefix: 16 }),
      ];
      for (const v of variants) {
        expectSame(
          await settle(() => n.process(v.bytes, DEFAULTS)),
          await settle(() => w.process(v.bytes, DEFAULTS)),
          `${f} ${v.name}`,
        );
      }
    }
  });

  it('JPEG encode and DCT-scaled decode: native (SIMD) and wasm (C only) give identical bytes', async () => {
    const big = noisePng(1400, 900, 3, 11);
    const [a, b] = await Promise.all([
      n.process(big, opts({ format: 'jpeg' })),
      w.process(big, opts({ format: 'jpeg' })),
    ]);
    expect(Buffer.compare(b.data, a.data)).toBe(0);
    const down = gradientPng(3000, 2000);
    const [c, d] = await Promise.all([n.process(down, DEFAULTS), w.process(down, DEFAULTS)]);
    expect(d).toEqual(c);
    // The libjpeg-turbo decoder at every scale it is used at (1400 -> 1000: 8/8, 700: 4/8, 300: 2/8, 150: 1/8), then
    // resize.
    const jpeg = a.data;
    for (const maxDimension of [1000, 700, 300, 150]) {
      const [e, f] = await Promise.all([
        n.process(jpeg, opts({ maxDimension, format: 'png' })),
        w.process(jpeg, opts({ maxDimension, format: 'png' })),
      ]);
      expect(f, `maxDimension ${maxDimension}`).toEqual(e);
    }
  }, 300_000);

  it('lossy WebP decoded at its target size into YUV planes and re-encoded: identical bytes, also through the ladder', async () => {
    const webp = (await n.process(noisePng(1400, 900, 3, 5), opts({ format: 'webp' }))).data;
    for (const o of [opts({ maxDimension: 1000 }), opts({ maxDimension: 1000, maxEncodedBytes: 20_000 })]) {
      const [a, b] = await Promise.all([n.process(webp, o), w.process(webp, o)]);
      expect(b, JSON.stringify(o)).toEqual(a);
    }
    const capped = await n.process(webp, opts({ maxDimension: 1000, maxEncodedBytes: 20_000 }));
    expect(capped.changes).toContain('quality-reduced');
  }, 300_000);

  it('decodeToRgba: same pixels and same cap errors', async () => {
    for (const f of [
      'png-16bit-rgba.png',
      'jpeg-cmyk.jpg',
      'webp-lossless-alpha.webp',
      'bmp-4bit-palette.bmp',
    ]) {
      expect(w.decodeToRgba(fixture(f)), f).toEqual(n.decodeToRgba(fixture(f)));
    }
    const png = fixture('png-rgb.png');
    for (const cap of [3071, 0, 1.5, Number.NaN]) {
      expectSame(
        await settle(() => n.decodeToRgba(png, cap)),
        await settle(() => w.decodeToRgba(png, cap)),
        `cap ${cap}`,
      );
    }
  });

  it('argument checks throw the same MediaError synchronously', async () => {
    const png = fixture('png-rgb.png');
    const bad: unknown[][] = [
      [null],
      ['png'],
      [new Uint16Array(4)],
      [png],
      [png, 'options'],
      [png, {}],
      [png, [1, 2]],
      [png, { ...DEFAULTS, maxDimension: 0 }],
      [png, { ...DEFAULTS, maxDimension: 65536 }],
      [png, { ...DEFAULTS, maxDimension: 1.5 }],
      [png, { ...DEFAULTS, jpegQuality: '80' }],
      [png, { ...DEFAULTS, maxPixels: 2 ** 53 }],
      [png, { ...DEFAULTS, maxPixels: Number.NaN }],
      [png, { ...DEFAULTS, maxEncodedBytes: Number.POSITIVE_INFINITY }],
      [png, { ...DEFAULTS, keepMetadata: 1 }],
      [png, { ...DEFAULTS, keepMetadata: undefined }],
      [png, { ...DEFAULTS, mediaTypeHint: 5 }],
      [png, { ...DEFAULTS, format: 'gif' }],
      [png, { ...DEFAULTS, format: undefined }],
      [png, DEFAULTS, 'token'],
      [png, DEFAULTS, {}],
      [png, { ...DEFAULTS, maxInputBytes: 10, maxPdfBytes: 20 }],
      [fixture('pdf-2page.pdf'), { ...DEFAULTS, maxInputBytes: 10, maxPdfBytes: 20 }],
    ];
    for (const args of bad) {
      const call = (addon: NativeAddon) => () => (addon.process as (...a: unknown[]) => unknown)(...args);
      const a = await settle(() => {
        call(n)(); // a synchronous throw, not a rejected promise
        return 'returned';
      });
      const b = await settle(() => {
        call(w)();
        return 'returned';
      });
      expect(a.ok, JSON.stringify(args)).toBe(false);
      expectSame(
        a,
        b,
        `process(${String(args[1] !== undefined ? JSON.stringify(args[1]) : typeof args[0])})`,
      );
    }
    for (const v of [undefined, 'x', [1, 2]]) {
      expectSame(
        await settle(() => n.sniff(v as unknown as Uint8Array)),
        await settle(() => w.sniff(v as unknown as Uint8Array)),
        `sniff(${String(v)})`,
      );
      expectSame(
        await settle(() => n.probe(v as unknown as Uint8Array)),
        await settle(() => w.probe(v as unknown as Uint8Array)),
        `probe(${String(v)})`,
      );
    }
  });
});

describe.runIf(wasmFiles)('the wasm backend keeps processMedia asynchronous', () => {
  it('pixel work runs in a worker thread: the event loop stays idle while a large image is processed', async () => {
    const addon = createWasmAddon(wasmFiles as NonNullable<typeof wasmFiles>);
    const big = pngFile(4000, 3000, 2, Buffer.alloc((4000 * 3 + 1) * 3000)); // 12 MP, cheap to make
    // The main thread's event-loop utilization over the whole call: work done on this thread (synchronously or in a
    // callback) is active time; waiting for a worker is idle time. Unlike counting loop turns, this does not depend
    // on how the threads are scheduled (under load the worker may finish before this thread's next turn).
    const before = performance.eventLoopUtilization();
    const r = await addon.process(big, opts({ format: 'jpeg' }));
    const { active, idle } = performance.eventLoopUtilization(before);
    expect([r.width, r.height]).toEqual([2000, 1500]);
    expect(idle).toBeGreaterThan(active);
  });

  it('concurrent calls all complete, each with its own result; the input may be reused at once', async () => {
    const addon = wasm as NativeAddon;
    const inputs = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) => noisePng(300 + seed * 10, 200, 3, seed));
    const results = await Promise.all(inputs.map((b) => addon.process(b, opts({ maxDimension: 100 }))));
    const sequential: unknown[] = [];
    for (const b of inputs) sequential.push(await addon.process(b, opts({ maxDimension: 100 })));
    expect(results).toEqual(sequential);
    // The input is copied when the call is made: scribbling over it afterwards changes nothing.
    const input = fixture('png-rgba.png');
    const expected = await addon.process(input, opts({ format: 'webp' }));
    const pending = addon.process(input, opts({ format: 'webp' }));
    input.fill(0);
    expect(Buffer.compare((await pending).data, expected.data)).toBe(0);
  });
});

describe.runIf(wasmFiles && native)(
  'the wasm backend’s abort tokens and memory pool behave like the native ones',
  () => {
    const n = native as NativeAddon;
    const w = wasm as NativeAddon;

    it('an aborted token: ERR_ABORTED for work that decodes, a pass-through still passes; bad tokens alike', async () => {
      const inputs: Array<[string, Buffer, ReturnType<typeof opts>]> = [
        ['resize', gradientPng(600, 400), opts({ maxDimension: 100 })],
        ['re-encode', fixture('gif-still.gif'), DEFAULTS],
        ['pass-through', fixture('png-rgb.png'), DEFAULTS],
        ['pdf', fixture('pdf-2page.pdf'), DEFAULTS],
      ];
      for (const [label, bytes, o] of inputs) {
        const tn = n.abortToken();
        const tw = w.abortToken();
        n.abort(tn);
        w.abort(tw);
        expectSame(
          await settle(() => n.process(bytes, o, tn)),
          await settle(() => w.process(bytes, o, tw)),
          label,
        );
      }
      for (const v of [undefined, 'x', {}, 5]) {
        expectSame(await settle(() => n.abort(v)), await settle(() => w.abort(v)), `abort(${String(v)})`);
      }
    });

    it('aborting a running call stops it with ERR_ABORTED; its memory goes back to the pool', async () => {
      const big = pngFile(4000, 3000, 2, Buffer.alloc((4000 * 3 + 1) * 3000));
      const token = w.abortToken();
      const p = settle(() => w.process(big, opts({ format: 'webp' }), token));
      while (w.memoryInFlight() === 0) await new Promise((r) => setTimeout(r, 2));
      w.abort(token);
      const r = await p;
      expect(r.ok).toBe(false);
      expect((r as { error: MediaError }).error.code).toBe('ERR_ABORTED');
      expect(w.memoryInFlight()).toBe(0);
    });

    it('the memory cap: same refusal when the estimate alone is over it, ERR_MEDIA_BUSY next to a call in flight', async () => {
      const big = gradientPng(3000, 2000);
      try {
        // Default cap: the core's own.
        expect(w.setMemoryCap(8 * 1024 * 1024)).toBe(DEFAULT_MEDIA_MEMORY_LIMIT);
        expect(n.setMemoryCap(8 * 1024 * 1024)).toBe(DEFAULT_MEDIA_MEMORY_LIMIT);
        expectSame(
          await settle(() => n.process(big, DEFAULTS)),
          await settle(() => w.process(big, DEFAULTS)),
          'over the cap',
        );
        for (const v of [0, 1.5, Number.NaN, '1', undefined]) {
          expectSame(
            await settle(() => n.setMemoryCap(v as number)),
            await settle(() => w.setMemoryCap(v as number)),
            `setMemoryCap(${String(v)})`,
          );
        }
        // Room for one such call: a second one started while the first holds the pool is told to come back later.
        for (const addon of [n, w]) {
          addon.setMemoryCap(DEFAULT_MEDIA_MEMORY_LIMIT);
          const first = addon.process(big, opts({ format: 'webp' }));
          while (addon.memoryInFlight() === 0) await new Promise((r) => setTimeout(r, 2));
          addon.setMemoryCap(addon.memoryInFlight() + 1024 * 1024);
          const second = await settle(() => addon.process(big, opts({ format: 'webp' })));
          expect(second.ok).toBe(false);
          expect((second as { error: MediaError }).error.code).toBe('ERR_MEDIA_BUSY');
          await first;
          expect(addon.memoryInFlight()).toBe(0);
        }
      } finally {
        n.setMemoryCap(DEFAULT_MEDIA_MEMORY_LIMIT);
        w.setMemoryCap(DEFAULT_MEDIA_MEMORY_LIMIT);
      }
    });
  },
);
