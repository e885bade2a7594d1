// Shared helpers of the scripts/fuzz-*.mjs fuzzers: a seeded PRNG, argument parsing, an owned temp directory and a
// deadline-bounded list shrinker. No dependencies beyond Node; nothing here reads the clock except `shrinkList`
// (its deadline) or draws from Math.random.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * mulberry32: a function returning the next number in [0, 1) of the sequence for `seed` (an integer; taken mod 2^32).
 * The same seed always gives the same sequence, on every platform.
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The PRNG of case `index` of run `seed`: a `mulberry32` stream independent of every other case's, so one case replays
 * alone (`--seed=S --case=N`) whatever ran before it.
 */
export function caseRng(seed, index) {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ index, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return mulberry32(h ^ (h >>> 16));
}

/**
 * A seeded generator over `mulberry32(seed)`: `next()` in [0, 1), `int(n)` an integer in [0, n), `pick(xs)` an element
 * of a non-empty array, `chance(p)` true with probability `p`.
 */
export function seededRng(seed) {
  const next = mulberry32(seed);
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)], chance: (p) => next() < p };
}

/**
 * Parses `--name[=value]` arguments (`argv` without node and the script) into `{ camelCasedName: value }`, a bare
 * `--flag` giving `'true'`. An argument of another shape, or a name not in `known` (kebab-case, when given), prints
 * `usage` to stderr and exits the process with code 2.
 */
export function parseArgs(argv, usage, known) {
  const out = {};
  for (const a of argv) {
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(a);
    if (!m || (known !== undefined && !known.includes(m[1]))) {
      console.error(`unknown argument ${a}\n${usage}`);
      process.exit(2);
    }
    out[m[1].replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase())] = m[2] ?? 'true';
  }
  return out;
}

/**
 * Creates a fresh directory under the OS temp dir (`prefix` + random suffix) and returns its path. It is removed
 * (recursively) when the process exits, and on SIGINT / SIGTERM, after which the process exits with 130 / 143.
 * Call it from the main thread only (workers share the directory by path).
 */
export function ownedTempRoot(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const clean = () => rmSync(dir, { recursive: true, force: true });
  process.on('exit', clean);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ]) {
    process.once(signal, () => {
      clean();
      process.exit(code);
    });
  }
  return dir;
}

/**
 * Shrinks `items` (an array) by removing one element at a time, from the end, for as long as
 * `await stillFails(candidate)` is true for the shorter array; repeats passes until one removes nothing. Stops early
 * once `Date.now() >= deadline` (default: no deadline). Calls `onBeat()` after every `stillFails` call (a fuzzer's
 * heartbeat to its watchdog). Returns `{ items, complete }`: the smallest failing array found (never longer than
 * `items`; `items` itself when nothing could be removed) and whether shrinking finished before the deadline.
 */
export async function shrinkList(items, stillFails, { deadline = Number.POSITIVE_INFINITY, onBeat } = {}) {
  let cur = [...items];
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = cur.length - 1; i >= 0 && cur.length > 1; i--) {
      if (Date.now() >= deadline) return { items: cur, complete: false };
      const candidate = [...cur.slice(0, i), ...cur.slice(i + 1)];
      const fails = await stillFails(candidate);
      onBeat?.();
      if (fails) {
        cur = candidate;
        changed = true;
      }
    }
  }
  return { items: cur, complete: true };
}
