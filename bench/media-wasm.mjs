#!/usr/bin/env node
/**
 * `npm run bench:media-wasm` — the WebAssembly fallback vs the native addon: the same C++ core, the same inputs and
 * options, side by side in one process, with the wasm/native ratio per input.
 *
 * Needs the native addon (`npm run build:native`) and `npm run build:wasm` (prebuilds/wasm32/); the backends' modules
 * are bundled from src/ by bench/import-source.mjs (they are internal: dist/ does not export them). Inputs are
 * bench:media's (generated into .bench-tmp/media/ by `node bench/media.mjs --generate` when missing; needs sharp).
 * Both backends are driven through their NativeAddon face (what processMedia calls): native on the libuv threadpool,
 * wasm in its worker_threads pool. Per input: a warm-up each, then BENCH_RUNS runs interleaved (A B B A ...), median
 * wall ms; the outputs must be byte-identical (checked every run). Also: cold start of the wasm backend (compile +
 * instantiate on the main thread; first call including a worker's start), and 4 photos at once (throughput: native
 * threadpool vs 4 wasm workers, both limited by the machine's cores).
 *
 * Env: BENCH_RUNS (default 7).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { importSource } from './import-source.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TMP = join(ROOT, '.bench-tmp', 'media');
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const CASES = [
  { name: 'photo.jpg', label: 'JPEG photo 4032x3024 -> JPEG 2000' },
  { name: 'screenshot.png', label: 'PNG screenshot 2880x1800 -> PNG 2000' },
  { name: 'alpha.webp', label: 'WebP lossy+alpha 3000x3000 -> WebP' },
  { name: 'anim.gif', label: 'GIF 2560x1600, 3 frames -> PNG' },
  { name: 'photo.bmp', label: 'BMP 24-bit 4032x3024 -> PNG/cap' },
  { name: 'small.png', label: 'small PNG 1000x700 (pass-through)' },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(0));

async function main() {
  for (const [what, path, fix] of [
    ['the wasm build', join(ROOT, 'prebuilds', 'wasm32', 'panto-media.wasm'), 'npm run build:wasm'],
  ]) {
    if (!existsSync(path)) {
      console.error(`bench:media-wasm needs ${what}: run \`${fix}\` first`);
      process.exit(1);
    }
  }
  if (CASES.some((c) => !existsSync(join(TMP, c.name)))) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(ROOT, 'bench', 'media.mjs'), '--generate'], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`input generation failed: ${r.stderr}`);
    console.log(`generated inputs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }

  // Both backends behind the addon interface: internal modules (not exported; dist/ is bundled), built from src/.
  const [{ loadNativeOnly, loadWasmOnly }, { resolveProcessOptions }] = await importSource(
    'src/media/native-addon.ts',
    'src/media/policy.ts',
  );
  // The addon interface takes resolved options (it asserts them, as processMedia hands them over).
  const opts = (o) => resolveProcessOptions(o);
  const native = loadNativeOnly(ROOT);
  const t0 = performance.now();
  const wasm = loadWasmOnly(ROOT);
  const loadMs = performance.now() - t0;
  const first = readFileSync(join(TMP, 'small.png'));
  const t1 = performance.now();
  await wasm.process(first, opts({ format: 'webp' }));
  const firstCallMs = performance.now() - t1;

  const wasmFile = join(ROOT, 'prebuilds', 'wasm32', 'panto-media.wasm');
  const info = readFileSync(join(ROOT, 'prebuilds', 'wasm32', 'BUILD-INFO'), 'utf8').split('\n')[0];
  console.log(
    `libpanto media: WebAssembly fallback vs native addon (same core), median of ${RUNS} interleaved runs`,
  );
  console.log(
    `wasm build: ${(statSync(wasmFile).size / 1024).toFixed(0)} KiB .wasm + ` +
      `${(statSync(join(ROOT, 'prebuilds', 'wasm32', 'panto-media.cjs')).size / 1024).toFixed(0)} KiB glue (${info})`,
  );
  console.log(
    `wasm cold start: compile + instantiate ${fmt(loadMs)} ms; first process incl. worker start ${fmt(firstCallMs)} ms`,
  );
  console.log('');
  const rows = [['input', 'native ms', 'wasm ms', 'wasm/native', 'output']];
  const ratios = [];
  for (const c of CASES) {
    const input = readFileSync(join(TMP, c.name));
    const backends = { native, wasm };
    const times = { native: [], wasm: [] };
    let reference;
    let identical = true;
    const once = async (name) => {
      const t = performance.now();
      const r = await backends[name].process(input, opts({}));
      const ms = performance.now() - t;
      if (name === 'native') reference = r.data;
      else if (reference && !r.data.equals(reference)) identical = false;
      return ms;
    };
    await once('native');
    await once('wasm');
    for (let i = 0; i < RUNS; i++) {
      for (const name of i % 2 ? ['wasm', 'native'] : ['native', 'wasm']) times[name].push(await once(name));
    }
    const n = median(times.native);
    const w = median(times.wasm);
    ratios.push(w / n);
    rows.push([
      c.label,
      fmt(n),
      fmt(w),
      `${(w / n).toFixed(2)}x`,
      identical ? 'identical bytes' : 'DIFFERENT',
    ]);
    if (!identical) process.exitCode = 1;
  }
  // Throughput: 4 photos at once (native: libuv threadpool; wasm: up to 4 workers), both on this machine's cores.
  const photo = readFileSync(join(TMP, 'photo.jpg'));
  const batch = async (addon) => {
    const t = performance.now();
    await Promise.all([1, 2, 3, 4].map(() => addon.process(photo, opts({}))));
    return performance.now() - t;
  };
  await batch(native);
  await batch(wasm);
  const bt = { native: [], wasm: [] };
  for (let i = 0; i < Math.max(3, Math.ceil(RUNS / 2)); i++) {
    for (const name of i % 2 ? ['wasm', 'native'] : ['native', 'wasm'])
      bt[name].push(await batch(name === 'native' ? native : wasm));
  }
  const bn = median(bt.native);
  const bw = median(bt.wasm);
  rows.push([
    `4 JPEG photos at once (${availableParallelism()} cores)`,
    fmt(bn),
    fmt(bw),
    `${(bw / bn).toFixed(2)}x`,
    'wall time for all 4',
  ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const r of rows) {
    console.log(
      r.map((cell, i) => (i === 0 || i === 4 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '),
    );
  }
  const geo = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
  console.log('');
  console.log(`geometric mean wasm/native over the ${ratios.length} single inputs: ${geo.toFixed(2)}x`);
  process.exit(process.exitCode ?? 0);
}

await main();
