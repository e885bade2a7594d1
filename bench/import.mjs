// Cost of `import 'libpanto'` (the built public entry, dist/index.js): time and RSS growth of the import in a fresh
// process, side by side with peers loaded the same way — the provider SDKs a host would otherwise use (`openai`,
// `@anthropic-ai/sdk`, devDependencies), `sharp` (the media peer), and the packages libpanto now loads only when a
// feature is first used (the MCP SDK with zod, fengari, Ajv: what every import paid before). Also the `panto --help`
// process (CLI startup) and which third-party packages the entry loads. Imports the built library: run
// `npm run build:ts` first.
//
//   npm run bench:import            (BENCH_RUNS=7 by default; BENCH_ONLY=libpanto,openai to pick rows;
//                                    BENCH_DIST=<dir> to measure another build's dist/, e.g. a before/after)
//
// Every measurement is its own `node` process; the rows alternate within each run so machine load hits all alike.
// "import ms" is `performance.now()` around `await import(...)`; "+RSS" is `process.memoryUsage().rss` after minus
// before the import (the interpreter's own ~40 MB excluded); "process" is the child's wall time from spawn to exit.
// Medians of the runs; ratios are libpanto's value over the peer's.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** BENCH_DIST=<another build's dist> measures that build instead (e.g. the previous commit's, for a before/after). */
const dist = path.resolve(process.env.BENCH_DIST ?? path.join(repo, 'dist'));
const entry = pathToFileURL(path.join(dist, 'index.js')).href;
const cli = path.join(dist, 'cli', 'main.js');
if (!existsSync(fileURLToPath(entry))) throw new Error("dist is missing: run 'npm run build:ts' first");

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ONLY = process.env.BENCH_ONLY?.split(',');

/** The packages whose import libpanto defers to first use (the pre-change entry imported all of them). */
const DEFERRED = [
  '@modelcontextprotocol/sdk/client/index.js',
  '@modelcontextprotocol/sdk/client/stdio.js',
  '@modelcontextprotocol/sdk/client/streamableHttp.js',
  '@modelcontextprotocol/sdk/server/index.js',
  '@modelcontextprotocol/sdk/server/stdio.js',
  '@modelcontextprotocol/sdk/server/streamableHttp.js',
  'fengari',
  'ajv',
  'ajv/dist/2020.js',
];

/** Rows: a label and the specifiers the child imports (none: bare node). */
const ROWS = [
  { name: 'bare node', specs: [] },
  { name: 'libpanto', specs: [entry] },
  // The media entry (`libpanto/media`): what a host that only makes images model-ready loads.
  { name: 'libpanto/media', specs: [pathToFileURL(path.join(dist, 'media', 'index.js')).href] },
  { name: 'openai', specs: ['openai'] },
  { name: '@anthropic-ai/sdk', specs: ['@anthropic-ai/sdk'] },
  { name: 'sharp', specs: ['sharp'] },
  { name: 'deferred deps', specs: DEFERRED },
].filter((r) => !ONLY || r.name === 'bare node' || ONLY.includes(r.name));

const CHILD = `
const specs = JSON.parse(process.env.IMPORT_SPECS);
performance.now();
process.memoryUsage();
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
for (const s of specs) await import(s);
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ ms, rss: process.memoryUsage().rss - rss0, total: process.memoryUsage().rss }));
`;

function runImport(specs) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], {
    cwd: repo,
    env: { ...process.env, IMPORT_SPECS: JSON.stringify(specs) },
    encoding: 'utf8',
  });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`import of ${specs.join(', ')} failed: ${r.stderr}`);
  return { ...JSON.parse(r.stdout), wall };
}

/** `panto --help` as a whole process: wall time, and peak RSS from an --import probe that reports at exit. */
const PROBE = `data:text/javascript,${encodeURIComponent(
  "process.on('exit', () => process.stderr.write('\\n@@' + process.resourceUsage().maxRSS * 1024));",
)}`;
function runCli() {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', PROBE, cli, '--help'], { cwd: repo, encoding: 'utf8' });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`panto --help failed: ${r.stderr}`);
  return { wall, peak: Number(/@@(\d+)/.exec(r.stderr)?.[1]) };
}

/**
 * Third-party packages (and node:http) the entry loads; runs in a child (`bench/import.mjs --list <entry>`), with the
 * load recorder test/lazy-imports.test.ts uses (test/fixtures/import/record-loads.mjs: ESM resolves and require.cache).
 */
async function listLoaded(target) {
  const { packageOf, recordLoads } = await import(
    pathToFileURL(path.join(repo, 'test', 'fixtures', 'import', 'record-loads.mjs')).href
  );
  const urls = recordLoads();
  await import(target);
  const found = new Set();
  for (const url of urls()) {
    const name = packageOf(url);
    if (name) found.add(name);
    if (url === 'node:http') found.add(url);
  }
  return [...found].sort();
}

if (process.argv[2] === '--list') {
  process.stdout.write(JSON.stringify(await listLoaded(process.argv[3])));
  process.exit(0);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mb = (b) => (b / 1048576).toFixed(1);

const samples = new Map(ROWS.map((r) => [r.name, []]));
const cliRuns = [];
for (let run = 0; run < RUNS; run++) {
  const order = run % 2 === 0 ? ROWS : [...ROWS].reverse();
  for (const row of order) samples.get(row.name).push(runImport(row.specs));
  cliRuns.push(runCli());
}

console.log(
  `# Import cost of the public entry vs peers, fresh process each, median of ${RUNS}, Node ${process.version}`,
);
console.log(
  '| import | import ms | +RSS MB | RSS after MB | process ms | libpanto ms ratio | libpanto +RSS ratio |',
);
console.log('|---|---|---|---|---|---|---|');
const stat = (name) => {
  const s = samples.get(name);
  return {
    ms: median(s.map((x) => x.ms)),
    rss: median(s.map((x) => x.rss)),
    total: median(s.map((x) => x.total)),
    wall: median(s.map((x) => x.wall)),
  };
};
const ours = samples.has('libpanto') ? stat('libpanto') : undefined;
for (const row of ROWS) {
  const s = stat(row.name);
  const ratio = (a, b) =>
    ours && !row.name.startsWith('libpanto') && row.specs.length > 0 ? `${(a / b).toFixed(2)}×` : '';
  console.log(
    `| ${row.name} | ${s.ms.toFixed(0)} | ${mb(s.rss)} | ${mb(s.total)} | ${s.wall.toFixed(0)} | ${ratio(ours?.ms, s.ms)} | ${ratio(ours?.rss, s.rss)} |`,
  );
}
console.log(
  `\n\`panto --help\` (whole process): ${median(cliRuns.map((r) => r.wall)).toFixed(0)} ms, peak RSS ${mb(median(cliRuns.map((r) => r.peak)))} MB`,
);

const listed = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--list', entry], {
  cwd: repo,
  encoding: 'utf8',
});
if (listed.status !== 0) throw new Error(`listing failed: ${listed.stderr}`);
const packages = JSON.parse(listed.stdout);
console.log(
  `Third-party packages (and node:http) loaded by the entry: ${packages.length ? packages.join(', ') : 'none'}`,
);
