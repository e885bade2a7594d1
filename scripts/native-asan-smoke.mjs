#!/usr/bin/env node
/**
 * Drives a sanitizer-built addon (ASan + UBSan, built by scripts/ci-native.sh through cmake-js) through its whole
 * Node-API surface: every fixture with several option sets, truncations, seeded byte flips and pixel bombs, many calls
 * in flight at once on the libuv threadpool. Checks only that each call returns or rejects with a media error code;
 * memory errors and UB abort the process (the sanitizers do that), which is the point.
 *
 * Usage: LD_PRELOAD=<asan runtime> ASAN_OPTIONS=detect_leaks=0 node scripts/native-asan-smoke.mjs <addon.node>
 * Exit 0 when every call behaved; 1 with a list of the offending cases otherwise.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'media');
const addonPath = process.argv[2];
if (!addonPath) {
  console.error('usage: node scripts/native-asan-smoke.mjs <addon.node>');
  process.exit(2);
}

class MediaError extends Error {
  constructor(code, message, mediaType) {
    super(message);
    this.code = code;
    this.mediaType = mediaType;
  }
}
// A relative path is taken against the current directory (require would look it up as a package name).
const addon = createRequire(import.meta.url)(resolve(addonPath));
addon.init(MediaError);

const OK_CODES = new Set(['ERR_CORRUPT_MEDIA', 'ERR_UNSUPPORTED_MEDIA', 'ERR_MEDIA_TOO_LARGE']);
// The addon takes resolved options only: the defaults come from their one home, src/media/policy.ts, through the
// built media entry (`npm run build:ts`; importing it loads no addon, the entry loads it on first use).
const mediaJs = join(ROOT, 'dist', 'media', 'index.js');
if (!existsSync(mediaJs)) {
  console.error(`native-asan-smoke: ${mediaJs} is missing; run \`npm run build:ts\` first`);
  process.exit(2);
}
const { DEFAULT_PROCESS_OPTIONS: DEFAULTS } = await import(pathToFileURL(mediaJs).href);
const OPTION_SETS = [
  {},
  { maxDimension: 16 },
  { format: 'jpeg' },
  { maxEncodedBytes: 300 },
  { keepMetadata: true },
].map((o) => ({ ...DEFAULTS, ...o }));

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The 35-byte GIF declaring 20000x20000 (same bytes as test/helpers/media-bombs.ts gifBomb()). */
function gifBomb() {
  const b = Buffer.alloc(35);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(20000, 6);
  b.writeUInt16LE(20000, 8);
  b.set([0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2c, 0, 0, 0, 0], 10);
  b.writeUInt16LE(20000, 24);
  b.writeUInt16LE(20000, 26);
  b.set([0, 2, 2, 0x44, 0x01, 0, 0x3b], 28);
  return b;
}

const cases = [];
for (const file of readdirSync(FIXTURES).filter((f) => !f.endsWith('.md'))) {
  const bytes = readFileSync(join(FIXTURES, file));
  for (const [i, options] of OPTION_SETS.entries())
    cases.push({ name: `${file} options#${i}`, bytes, options });
  const step = Math.max(1, Math.floor(bytes.length / 50));
  for (let cut = 1; cut < bytes.length; cut += step) {
    cases.push({ name: `${file} truncated@${cut}`, bytes: bytes.subarray(0, cut), options: DEFAULTS });
  }
  const rand = rng(bytes.length);
  for (let i = 0; i < 30; i++) {
    const copy = Buffer.from(bytes);
    for (let k = 0; k < 1 + (i % 8); k++) {
      const at = 4 + Math.floor(rand() * (copy.length - 4));
      copy[at] ^= 1 + Math.floor(rand() * 255);
    }
    cases.push({
      name: `${file} flipped#${i}`,
      bytes: copy,
      options: i % 2 ? { ...DEFAULTS, maxDimension: 24 } : DEFAULTS,
    });
  }
}
cases.push({
  name: 'gif bomb 20000x20000',
  bytes: gifBomb(),
  options: DEFAULTS,
  expect: 'ERR_MEDIA_TOO_LARGE',
});

const failures = [];
let resolved = 0;
let rejected = 0;
async function one(c) {
  try {
    addon.sniff(c.bytes);
    try {
      addon.probe(c.bytes);
    } catch (e) {
      if (!OK_CODES.has(e.code)) failures.push(`${c.name}: probe threw ${e.code ?? e}`);
    }
    try {
      addon.decodeToRgba(c.bytes, 4_000_000);
    } catch (e) {
      if (!OK_CODES.has(e.code)) failures.push(`${c.name}: decodeToRgba threw ${e.code ?? e}`);
    }
    let r;
    for (;;) {
      try {
        r = await addon.process(c.bytes, c.options);
        break;
      } catch (e) {
        if (e.code !== 'ERR_MEDIA_BUSY') throw e; // the process-wide memory pool is full: retry as processMedia does
        await new Promise((res) => setTimeout(res, 10));
      }
    }
    resolved++;
    if (c.expect) failures.push(`${c.name}: resolved, expected ${c.expect}`);
    if (!(r.data instanceof Buffer) || r.data.length === 0) failures.push(`${c.name}: empty output`);
  } catch (e) {
    rejected++;
    if (!OK_CODES.has(e.code) || (c.expect && e.code !== c.expect))
      failures.push(`${c.name}: ${e.code ?? e}`);
  }
}

const t0 = Date.now();
const IN_FLIGHT = 16;
for (let i = 0; i < cases.length; i += IN_FLIGHT) await Promise.all(cases.slice(i, i + IN_FLIGHT).map(one));
const secs = ((Date.now() - t0) / 1000).toFixed(1);
console.log(
  `native-asan-smoke: ${cases.length} cases in ${secs} s: ${resolved} processed, ${rejected} rejected, ${failures.length} bad`,
);
if (failures.length) {
  console.log(failures.slice(0, 50).join('\n'));
  process.exit(1);
}
