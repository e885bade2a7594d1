// Benchmark for dispatchToolCalls (issue 3). Imports the built library: run `npm run build` (or at least
// `npm run build:ts` plus a built addon) first, then `npm run bench:dispatch`.
//
// 1. Dispatch overhead: 1,000 trivial TS tool calls (schema-validated) through dispatchToolCalls vs calling the
//    tool's invoke directly. Target: <= 20 µs per call beyond the tool's own work.
// 2. A turn of 8 tool calls each returning a 4032x3024 photo-like JPEG: dispatchToolCalls (media processed on the
//    libuv threadpool, in parallel) vs processing the 8 one after another with processMedia + base64.
//    sharp is used here ONLY to create the JPEGs.

import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

const entry = new URL('../dist/index.js', import.meta.url);
if (!existsSync(entry)) {
  console.error(
    'bench:dispatch needs the built library (dist/index.js is missing): run `npm run build` first.',
  );
  process.exit(1);
}
const { defineTool, dispatchToolCalls, processMedia, ToolRegistry } = await import(entry.href);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const fmt = (n, d = 2) => n.toFixed(d);

// ---------------------------------------------------------------------------------------------------------------
// 1. Overhead per call
// ---------------------------------------------------------------------------------------------------------------
const N = 1000;
const ROUNDS = 40;
const trivial = defineTool({
  name: 'add',
  description: 'Adds two integers',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: 'integer' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
  invoke: (args) => String(args.a + args.b),
});
const tools = new ToolRegistry([[trivial]]);
const calls = Array.from({ length: N }, (_, i) => ({
  type: 'tool_call',
  id: `c${i}`,
  name: 'add',
  input: { a: i, b: 1 },
}));
const ctx = {
  signal: new AbortController().signal,
  workspaceRoot: process.cwd(),
  toolCallId: 'x',
  update: () => {},
};

async function direct() {
  const out = new Array(N);
  for (let i = 0; i < N; i++) out[i] = await trivial.invoke(calls[i].input, ctx);
  return out;
}
const oneTurn = () => dispatchToolCalls(calls, { tools });
const oneTurnSequential = () => dispatchToolCalls(calls, { tools, sequential: true });
const oneTurnWithEvents = () => dispatchToolCalls(calls, { tools, onEvent: () => {} });
async function turnPerCall() {
  for (let i = 0; i < N; i++) await dispatchToolCalls([calls[i]], { tools });
}

async function timeIt(fn) {
  const t = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

// Warm up (JIT, Ajv compile of the schema).
for (let i = 0; i < 5; i++) {
  await direct();
  await oneTurn();
  await oneTurnSequential();
  await oneTurnWithEvents();
  await turnPerCall();
}
const results = await oneTurn();
if (results.length !== N || results[N - 1].parts[0].text !== String(N))
  throw new Error('dispatch produced wrong results');

const base = await timeIt(direct);
const rows = [
  ['1 turn of 1,000 calls (concurrency 8)', await timeIt(oneTurn)],
  ['1 turn of 1,000 calls, sequential', await timeIt(oneTurnSequential)],
  ['1 turn of 1,000 calls, with an event listener', await timeIt(oneTurnWithEvents)],
  ['1,000 turns of 1 call', await timeIt(turnPerCall)],
];
console.log(
  `\n# Dispatch overhead — ${N} trivial TS tool calls, median of ${ROUNDS} rounds (Node ${process.version})`,
);
console.log(`baseline: tool.invoke called directly: ${fmt((base * 1000) / N, 3)} µs/call`);
console.log('| case | µs/call | overhead µs/call (vs direct) | target <= 20 µs | ratio vs direct |');
console.log('|---|---|---|---|---|');
for (const [name, ms] of rows) {
  const per = (ms * 1000) / N;
  const over = ((ms - base) * 1000) / N;
  console.log(
    `| ${name} | ${fmt(per)} | ${fmt(over)} | ${over <= 20 ? 'met' : 'MISSED'} | ${fmt(ms / base, 1)}x |`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// 2. A turn with 8 big JPEGs
// ---------------------------------------------------------------------------------------------------------------
const { default: sharp } = await import('sharp');
const W = 4032;
const H = 3024;
const IMAGES = 8;

/** Photo-like pixels: smooth colour fields, soft shapes and sensor-like noise, different per seed. */
function photoPixels(seed) {
  const px = Buffer.alloc(W * H * 3);
  let s = seed * 2654435761;
  const noise = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s >>> 24) / 8 - 16;
  };
  const cx = W * (0.3 + 0.05 * seed);
  const cy = H * 0.45;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = (y * W + x) * 3;
      const d = Math.hypot(x - cx, y - cy) / 900;
      const sky = y < H * 0.55;
      const r = sky ? 90 + (y / H) * 120 : 70 + 40 * Math.sin(x / 37 + seed) + 30 * Math.sin(y / 23);
      const g = sky ? 140 + (y / H) * 80 : 110 + 35 * Math.sin(x / 53) * Math.cos(y / 41);
      const b = sky ? 210 - (y / H) * 60 : 50 + 20 * Math.cos(x / 29 - y / 31);
      const sun = Math.max(0, 1 - d) * 120;
      px[o] = Math.max(0, Math.min(255, r + sun + noise()));
      px[o + 1] = Math.max(0, Math.min(255, g + sun * 0.8 + noise()));
      px[o + 2] = Math.max(0, Math.min(255, b + sun * 0.3 + noise()));
    }
  }
  return px;
}

process.stdout.write(`\ncreating ${IMAGES} photo-like ${W}x${H} JPEGs with sharp (q90)...`);
const jpegs = [];
for (let i = 0; i < IMAGES; i++) {
  jpegs.push(
    await sharp(photoPixels(i + 1), { raw: { width: W, height: H, channels: 3 } })
      .jpeg({ quality: 90 })
      .toBuffer(),
  );
}
const avgMb = jpegs.reduce((n, j) => n + j.length, 0) / IMAGES / 1e6;
console.log(` done (${fmt(avgMb)} MB each)`);

const camera = defineTool({
  name: 'camera',
  description: 'Returns a photo',
  inputSchema: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
  invoke: (args) => [{ type: 'media', data: jpegs[args.i], mediaType: 'image/jpeg' }],
});
const photoTools = new ToolRegistry([[camera]]);
const photoCalls = jpegs.map((_, i) => ({ type: 'tool_call', id: `p${i}`, name: 'camera', input: { i } }));

async function oneAfterAnother() {
  const out = [];
  for (const j of jpegs) {
    const r = await processMedia(j, { mediaTypeHint: 'image/jpeg' });
    out.push({ data: r.data.toString('base64'), width: r.width, height: r.height });
  }
  return out;
}
const turn = () => dispatchToolCalls(photoCalls, { tools: photoTools });

// Warm up once each, and check what was stored.
const check = await turn();
await oneAfterAnother();
const first = check[0].parts[0];
if (first.type !== 'image')
  throw new Error(`expected an image, got ${JSON.stringify(check[0].parts[0]).slice(0, 200)}`);

// CPU time (all threads of this process) next to wall time: on a machine shared with other work, cpu/wall shows
// how many cores the process actually got, which is what bounds the speed-up.
async function measure(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}
const PHOTO_ROUNDS = 5;
const seqRuns = [];
const parRuns = [];
for (let r = 0; r < PHOTO_ROUNDS; r++) {
  seqRuns.push(await measure(oneAfterAnother));
  parRuns.push(await measure(turn));
}
const seqMs = median(seqRuns.map((m) => m.wall));
const parMs = median(parRuns.map((m) => m.wall));
const seqCpu = median(seqRuns.map((m) => m.cpu));
const parCpu = median(parRuns.map((m) => m.cpu));
console.log(
  `\n# 8 tool calls each returning a ${W}x${H} JPEG — median of ${PHOTO_ROUNDS} rounds, ` +
    `${availableParallelism()} cores, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`,
);
console.log(
  `stored: ${first.mediaType} ${first.width}x${first.height}, ${fmt((first.data.length * 0.75) / 1e6)} MB`,
);
const load1 = loadavg()[0] ?? 0;
console.log(
  `load average (1/5/15 min): ${loadavg()
    .map((l) => fmt(l))
    .join(' ')}`,
);
console.log('| case | wall ms | per image ms | CPU ms (all threads) | cores used (CPU/wall) |');
console.log('|---|---|---|---|---|');
console.log(
  `| processMedia + base64, one after another | ${fmt(seqMs, 0)} | ${fmt(seqMs / IMAGES, 1)} | ${fmt(seqCpu, 0)} | ${fmt(seqCpu / seqMs)} |`,
);
console.log(
  `| dispatchToolCalls (one turn, 8 calls) | ${fmt(parMs, 0)} | ${fmt(parMs / IMAGES, 1)} | ${fmt(parCpu, 0)} | ${fmt(parCpu / parMs)} |`,
);
const seqBest = Math.min(...seqRuns.map((m) => m.wall));
const parBest = Math.min(...parRuns.map((m) => m.wall));
console.log(
  `speed-up of dispatchToolCalls over one-after-another: ${fmt(seqMs / parMs)}x (median), ` +
    `${fmt(seqBest / parBest)}x (best: ${fmt(seqBest, 0)} vs ${fmt(parBest, 0)} ms)`,
);
console.log(
  `(one-after-another already keeps ${fmt(seqCpu / seqMs)} cores busy, so ${availableParallelism()} cores allow at most ` +
    `${fmt(availableParallelism() / (seqCpu / seqMs))}x)`,
);
if (load1 > availableParallelism()) {
  console.log(
    `note: the load average (${fmt(load1)}) exceeds the core count: other processes compete for the cores, so the ` +
      'speed-up is bounded by the "cores used" column, not by the threadpool.',
  );
}
