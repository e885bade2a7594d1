#!/usr/bin/env node
/**
 * Runs the seeded generative fuzzers of the JavaScript input paths one after another (the native decoders have their
 * own libFuzzer campaign in `scripts/fuzz-native.sh`, run by `scripts/ci-native.sh`):
 *   streams   provider SSE parsers + transport on loopback      test/fuzz/fuzz-streams.mjs
 *   agent     the agent loop against a hostile model (4 surfaces) test/fuzz/fuzz-agent.mjs
 *   sessions  session files + compaction                        test/fuzz/fuzz-sessions.mjs
 *   lua       the Lua tool host (real fengari, thread + worker)  test/fuzz/fuzz-lua.mjs
 *   mcp       our MCP stdio server and HTTP client               test/fuzz/fuzz-mcp.mjs
 *
 * Usage: npm run fuzz [-- --seconds=60 --seed=1 --only=streams,lua]
 * Contract: each fuzzer gets `--seconds` (default 60) and `--seed` (default 1, or PANTO_FUZZ_SEED) and runs in its own
 * child under a hard wall bound of seconds + 300 s (a fuzzer that overruns it — a hang its own watchdog missed —
 * fails the run). `PANTO_WIRE_FIXTURES` (default `../shared/reference/wire-fixtures` when it exists) lets the stream
 * and agent fuzzers also use the recorded streams and published schemas. Needs the built `dist/` and no network.
 * Exit 0 when every fuzzer exited 0; 1 otherwise, after running them all (each prints its own seed and findings).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ALL = ['streams', 'agent', 'sessions', 'lua', 'mcp'];

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m) {
      console.error(
        `usage: node test/fuzz/fuzz-all.mjs [--seconds=N] [--seed=S] [--only=${ALL.join(',')}] (got ${a})`,
      );
      process.exit(2);
    }
    return [m[1], m[2]];
  }),
);
const seconds = Number(args.seconds ?? 60);
const seed = String(args.seed ?? process.env.PANTO_FUZZ_SEED ?? 1);
const only = args.only ? args.only.split(',') : ALL;
if (!Number.isInteger(seconds) || seconds < 1 || only.some((n) => !ALL.includes(n))) {
  console.error(`fuzz-all: --seconds must be a positive integer and --only a subset of ${ALL.join(',')}`);
  process.exit(2);
}
if (!existsSync(join(ROOT, 'dist', 'index.js'))) {
  console.error('fuzz-all: dist/ is missing; run `npm run build:ts` first');
  process.exit(2);
}

const env = { ...process.env };
const fixtures = resolve(ROOT, '..', 'shared', 'reference', 'wire-fixtures');
if (!env.PANTO_WIRE_FIXTURES && existsSync(fixtures)) env.PANTO_WIRE_FIXTURES = fixtures;

const failed = [];
for (const name of only) {
  const started = Date.now();
  console.log(`\n== fuzz-${name}: --seconds=${seconds} --seed=${seed}`);
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'test', 'fuzz', `fuzz-${name}.mjs`), `--seconds=${seconds}`, `--seed=${seed}`],
    { cwd: ROOT, env, stdio: 'inherit', timeout: (seconds + 300) * 1000, killSignal: 'SIGKILL' },
  );
  const took = ((Date.now() - started) / 1000).toFixed(0);
  if (r.error?.code === 'ETIMEDOUT') {
    console.log(`== fuzz-${name}: killed after ${took} s (over its bound of ${seconds + 300} s)`);
    failed.push(name);
  } else if (r.status !== 0) {
    console.log(`== fuzz-${name}: exit ${r.status ?? r.signal} after ${took} s`);
    failed.push(name);
  } else {
    console.log(`== fuzz-${name}: clean after ${took} s`);
  }
}
if (failed.length > 0) {
  console.log(`\nfuzz-all: findings or failures in ${failed.join(', ')} (seed ${seed})`);
  process.exit(1);
}
console.log(`\nfuzz-all: ${only.length} fuzzers clean (seed ${seed}, ${seconds} s each)`);
