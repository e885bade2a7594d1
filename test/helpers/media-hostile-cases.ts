/**
 * The hostile-input classes of issue 12 at bomb scale, and a runner that processes one case in a FRESH child process
 * with a time bound (the child is killed) and a resident-memory bound (the child stops itself), reporting wall time
 * and peak RSS. Used by the hostile suite (test/media/hostile-media.hostile.ts, `npm run test:hostile-media`) and the
 * "hostile" table of `npm run bench:media` (libpanto and sharp side by side on the same bytes).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PROCESS_OPTIONS } from '../../src/media/policy.js';
import { bmpBomb, gifBomb, jpegWithDimensions, webpBomb } from './media-bombs.js';
import {
  gifWithoutClearCode,
  jpegRedundantScans,
  jpegScanBomb,
  png16RgbaLarge,
  pngPaletteOutOfRange,
  pngZlibOverrunLarge,
  webpAnimatedCanvas,
} from './media-hostile.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The VP8L payload of a 1x1 red lossless WebP (encoded by sharp). */
async function redVp8l(): Promise<Buffer> {
  const sharp = (await import('sharp')).default;
  const webp = await sharp({ create: { width: 1, height: 1, channels: 4, background: '#ff0000' } })
    .webp({ lossless: true })
    .toBuffer();
  return webp.subarray(20, 20 + webp.readUInt32LE(16));
}

export interface HostileCase {
  name: string;
  /** Builds the input (deterministic). */
  build: () => Buffer | Promise<Buffer>;
  /** Copies processed at once in the same process (N parallel bombs). Default 1. */
  parallel?: number;
  /** Acceptable outcomes of libpanto: error codes, or 'ok' for a processed image. */
  expect: string[];
  /** Wall-time bound for the whole case (ms, the child is killed past it). */
  maxMs: number;
  /** Bound on the child's peak RSS growth over its baseline after loading the library (MB). */
  maxRssMb: number;
  /** A full-scale successful decode (tens of seconds under sanitizers): skipped in the sanitizer run. */
  heavy?: boolean;
}

/** A real baseline JPEG, re-headed by the bomb builder. */
const jpegFixture = (): Buffer => readFileSync(join(ROOT, 'test', 'fixtures', 'media', 'jpeg-baseline.jpg'));

/** Every class of the issue, at the sizes it was reproduced with. */
export const HOSTILE_CASES: HostileCase[] = [
  {
    name: 'JPEG progressive scan bomb 10000x10000 (253 consistent scans)',
    build: () => jpegScanBomb(10000, 10000),
    expect: ['ERR_CORRUPT_MEDIA'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: '4 JPEG scan bombs in parallel',
    build: () => jpegScanBomb(10000, 10000),
    parallel: 4,
    expect: ['ERR_CORRUPT_MEDIA'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: 'JPEG redundant progression 10000x10000 (200 repeated scans)',
    build: () => jpegRedundantScans(10000, 10000, 200),
    expect: ['ERR_CORRUPT_MEDIA'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: 'JPEG header 60000x60000',
    build: () => jpegWithDimensions(jpegFixture(), 60000, 60000),
    expect: ['ERR_MEDIA_TOO_LARGE'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: 'PNG 16-bit RGBA 10000x10000',
    build: () => png16RgbaLarge(10000, 10000),
    expect: ['ok'],
    maxMs: 60000,
    maxRssMb: 128, // streamed + shrunk on load: measured 49 MB (sharp 162)
    heavy: true,
  },
  {
    name: 'PNG 16-bit RGBA 6000x6000',
    build: () => png16RgbaLarge(6000, 6000),
    expect: ['ok'],
    maxMs: 40000,
    maxRssMb: 128, // measured 49 MB (sharp 90)
    heavy: true,
  },
  {
    name: 'PNG zlib stream 4x the image, 8000x8000 RGB',
    build: () => pngZlibOverrunLarge(8000, 8000, 4),
    expect: ['ERR_CORRUPT_MEDIA'],
    maxMs: 20000,
    maxRssMb: 64, // stopped at the first byte past the image: measured 15 MB (sharp 49)
  },
  {
    name: 'PNG palette, indices past PLTE',
    build: () => pngPaletteOutOfRange(2, 64),
    expect: ['ok'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: 'GIF 35 bytes 10000x10000',
    build: () => gifBomb(10000, 10000),
    expect: ['ERR_MEDIA_TOO_LARGE', 'ok'],
    maxMs: 20000,
    maxRssMb: 1100,
  },
  {
    name: 'GIF 35 bytes 9000x9000',
    build: () => gifBomb(9000, 9000),
    expect: ['ok'],
    maxMs: 20000,
    maxRssMb: 1100,
    heavy: true,
  },
  {
    name: '4 GIFs 35 bytes 9000x9000 in parallel',
    build: () => gifBomb(9000, 9000),
    parallel: 4,
    expect: ['ok'],
    maxMs: 60000,
    maxRssMb: 1100,
    heavy: true,
  },
  {
    name: 'GIF without initial clear code',
    build: () => gifWithoutClearCode(),
    expect: ['ok'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: 'WebP animated, 10000x10000 canvas',
    build: async () => webpAnimatedCanvas(await redVp8l(), 10000, 10000, 3),
    expect: ['ok'],
    maxMs: 20000,
    maxRssMb: 1100,
    heavy: true,
  },
  {
    name: 'WebP VP8L header 16384x16384',
    build: () => webpBomb(),
    expect: ['ERR_MEDIA_TOO_LARGE'],
    maxMs: 3000,
    maxRssMb: 64,
  },
  {
    name: 'BMP header 20000x20000',
    build: () => bmpBomb(),
    expect: ['ERR_MEDIA_TOO_LARGE'],
    maxMs: 3000,
    maxRssMb: 64,
  },
];

export type HostileLibrary = 'libpanto' | 'sharp';

export interface HostileRun {
  /** One entry per parallel copy: an error code / message, or `ok <type> <w>x<h>`. */
  outcomes: string[];
  ms: number;
  /** Peak RSS growth over the baseline after loading the library (MB). */
  peakRssMb: number;
  baselineRssMb: number;
  /** Set when the child was stopped: 'time' (killed at the bound) or 'rss' (stopped itself at the bound). */
  stopped?: 'time' | 'rss';
  /** A crash or unexpected exit (signal / status and the last stderr lines). */
  crash?: string;
}

/**
 * The child: loads ONE library, records its baseline RSS, processes the file `parallel` times at once under the
 * default policy, samples RSS every 5 ms (stops itself past the bound) and prints a JSON HostileRun.
 * libpanto: the raw addon (PANTO_HOSTILE_ADDON or build/Release) with the resolved default options; a call the
 * memory pool cannot fit yet (ERR_MEDIA_BUSY) is retried as processMedia does.
 * sharp: cache off, rotate + fit inside 2000 px without enlargement, PNG out (the libpanto policy for these inputs).
 */
const CHILD = `
const fs = require('node:fs');
const [file, lib, parallel, rssLimitMb, optionsJson, root] = process.argv.slice(1);
const status = (k) => Number(new RegExp(k + ':\\\\s+(\\\\d+) kB').exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
let run;
if (lib === 'sharp') {
  const sharp = require(require.resolve('sharp', { paths: [root] }));
  sharp.cache(false);
  run = async (b) => {
    const { data, info } = await sharp(b).rotate().resize(2000, 2000, { fit: 'inside', withoutEnlargement: true })
      .png().toBuffer({ resolveWithObject: true });
    return 'ok image/' + info.format + ' ' + info.width + 'x' + info.height;
  };
} else {
  const path = process.env.PANTO_HOSTILE_ADDON;
  const addon = path ? require(path) : require(require.resolve('node-gyp-build', { paths: [root] }))(root);
  class MediaError extends Error { constructor(code, message) { super(message); this.code = code; } }
  addon.init(MediaError);
  const options = JSON.parse(optionsJson);
  run = async (b) => {
    for (;;) {
      try {
        const r = await addon.process(b, options);
        return 'ok ' + r.mediaType + ' ' + r.width + 'x' + r.height;
      } catch (e) {
        if (e.code !== 'ERR_MEDIA_BUSY') throw e;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
}
const bytes = fs.readFileSync(file);
const base = status('VmRSS');
const limit = Number(rssLimitMb);
const sampler = setInterval(() => {
  if (status('VmRSS') - base > limit) {
    process.stdout.write(JSON.stringify({ outcomes: [], ms: 0, peakRssMb: status('VmHWM') - base, baselineRssMb: base, stopped: 'rss' }));
    process.exit(0);
  }
}, 5);
const t0 = performance.now();
Promise.all(Array.from({ length: Number(parallel) }, () => run(Buffer.from(bytes)).catch((e) => e.code || String(e.message).slice(0, 80))))
  .then((outcomes) => {
    const ms = performance.now() - t0;
    clearInterval(sampler);
    process.stdout.write(JSON.stringify({ outcomes, ms, peakRssMb: status('VmHWM') - base, baselineRssMb: base }));
  });
`;

/** Processes `bytes` in a fresh child with `lib`; never throws for the child's fate (see HostileRun). */
export function runHostile(
  bytes: Buffer,
  lib: HostileLibrary,
  bounds: { maxMs: number; maxRssMb: number; parallel?: number },
): HostileRun {
  const dir = mkdtempSync(join(tmpdir(), 'panto-hostile-'));
  try {
    const file = join(dir, 'input.bin');
    writeFileSync(file, bytes);
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (lib === 'libpanto' && process.env.PANTO_HOSTILE_PRELOAD)
      env.LD_PRELOAD = process.env.PANTO_HOSTILE_PRELOAD;
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        CHILD,
        file,
        lib,
        String(bounds.parallel ?? 1),
        String(bounds.maxRssMb),
        JSON.stringify(DEFAULT_PROCESS_OPTIONS),
        ROOT,
      ],
      { encoding: 'utf8', timeout: bounds.maxMs + 5000, killSignal: 'SIGKILL', env, maxBuffer: 1 << 20 },
    );
    const empty = { outcomes: [], ms: bounds.maxMs, peakRssMb: Number.NaN, baselineRssMb: Number.NaN };
    if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT')
      return { ...empty, stopped: 'time' };
    if (r.status !== 0 || r.signal) {
      const tail = (r.stderr ?? '').trim().split('\n').slice(-4).join(' | ');
      return { ...empty, crash: `exit ${r.status ?? r.signal}: ${tail}` };
    }
    const run = JSON.parse(r.stdout) as HostileRun;
    if (!run.stopped && run.ms > bounds.maxMs) run.stopped = 'time';
    return run;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
