#!/usr/bin/env node
// Session log benchmark: load throughput of loadSession vs a bare `readline` + JSON.parse loop over the same file
// (the peer pattern: what pi and most JSONL readers do), and peak RSS relative to the file size.
//
// Rows (each vs readline+JSON.parse, which must parse every line to find anything):
//   loadSession (lazy)         the default. The file is searched (from its end) for `"compaction"` first, which picks the
//                              path once: when it is there, index the file and parse the current conversation only
//                              (the compaction and what follows it); when not (a never-compacted session, whose
//                              conversation is every message anyway), one pass parses every line, as eager
//   SessionLog.open (resume)   the same for appending: lock, probe, index + conversation or one pass, tail repair
//   SessionLog.open eager      `{ eager: true }`: lock, one pass parsing every line, tail repair
//   loadSession + .entries     the lazy load, then every entry materialised (the lines the conversation did not parse)
//   loadSession eager          `{ eager: true }`: every line parsed and checked while loading
//   openSessionIndex           the index alone (header, ids, parents, types, offsets; no entry parsed)
//   floor                      read + batch decode + JSON.parse + keep, no checks: the least an eager loader does
//
// Targets (the loadSession (lazy) row): never-compacted 200 MB text session >= 1.0x readline, peak RSS <= 2.5x the
// file; compacted text session >= 3.0x, peak RSS <= 1.2x; image-heavy session >= 1.0x, peak RSS <= 1.5x.
//
// Usage: npm run build:ts && npm run bench:session [-- --mb=300 --text-mb=200 --runs=5 --gb]
//   --gb  also loads a 1 GB image-heavy session (beyond V8's ~512 MB string limit) and reports peak RSS / file size.
//   --only=text|images  run one of the two sessions
//   --ascii  also runs an ASCII-only variant of the text-heavy session (clearly labelled; not the row)
// Each measurement runs in a fresh child process so peak RSS belongs to one loader only. The text-heavy session is
// measured twice: compacted once keeping the last ~5% (resuming parses only those lines; readline still has to parse
// every line to find the current conversation — its row does not even resolve it, so it is flattered), and never
// compacted (the conversation is every line, so the lazy load parses what readline parses: it takes the one-pass path).
// Throughput is reported per wall second and per CPU second (user+sys of all threads, incl. GC threads), both counted
// from the start of the load (not node's start or the imports); the CPU figure is the steadier one on a busy machine.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

// The built public entry (dist/ is bundled: no per-module files to import a part of the library from).
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const MB = 1024 * 1024;

/**
 * Read `path` in 4 MiB chunks and hand each chunk's complete lines to `onLines(buf, end)`: the lines are
 * `buf[0, end)`, each ending in a newline except the file's last one. A line longer than a chunk grows the buffer.
 */
async function forEachLineBlock(path, onLines) {
  const { open } = await import('node:fs/promises');
  const fh = await open(path, 'r');
  let buf = Buffer.allocUnsafe(4 * MB);
  let have = 0;
  let pos = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, have, buf.length - have, pos);
    pos += bytesRead;
    const end = have + bytesRead;
    const last = bytesRead === 0 ? end - 1 : buf.lastIndexOf(0x0a, end - 1);
    onLines(buf, last + 1);
    if (bytesRead === 0) break;
    const rest = end - (last + 1);
    if (rest === buf.length) {
      const grown = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(grown);
      buf = grown;
    } else buf.copy(buf, 0, last + 1, end);
    have = rest;
  }
  await fh.close();
}

/**
 * The least any eager loader does: read 4 MiB chunks, decode the complete lines 48 KiB at a time, JSON.parse each line
 * (a slice of its batch) and keep the value; no checks, no tree, no conversation. Its ratio to readline bounds what
 * loadSession can reach on this machine and content.
 */
async function floorLoad(path) {
  const batch = 48 * 1024;
  const keep = [];
  await forEachLineBlock(path, (buf, stop) => {
    let s = 0;
    while (s < stop) {
      let e = stop;
      if (e - s > batch) {
        e = buf.lastIndexOf(0x0a, s + batch - 1) + 1;
        if (e <= s) e = buf.indexOf(0x0a, s) + 1;
      }
      const text = buf.toString('utf8', s, e);
      let p = 0;
      for (;;) {
        const nl = text.indexOf('\n', p);
        if (nl === -1) break;
        if (nl > p) keep.push(JSON.parse(text.slice(p, nl)));
        p = nl + 1;
      }
      if (p < text.length) keep.push(JSON.parse(text.slice(p)));
      s = e;
    }
  });
  return keep;
}

async function child(mode, path) {
  const size = statSync(path).size;
  // Main-thread GC pauses (scavenges and mark-compact finalisation), summed: the GC share of the wall time.
  let gcMs = 0;
  const { PerformanceObserver } = await import('node:perf_hooks');
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  /** Heap in use after a full GC; 0 without --expose-gc. */
  const heapAfterGc = () => {
    if (!globalThis.gc) return 0;
    globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  // The library is imported before the clock starts, as readline is (a static import of this file): the rows compare
  // loading, not module loading (`npm run bench:import` measures that).
  const lib = ['none', 'floor', 'readFile', 'readline'].includes(mode) ? undefined : await import(DIST);
  const heapBefore = heapAfterGc();
  // CPU from here on, as the wall clock: node's start and the imports are not the load's.
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let entries;
  let keep;
  if (mode === 'none') {
    entries = 0; // node's own footprint: nothing loaded
  } else if (mode === 'floor') {
    keep = await floorLoad(path);
    entries = keep.length;
  } else if (mode === 'loadSession') {
    keep = await lib.loadSession(path);
    entries = keep.conversation.messages.length;
  } else if (mode === 'resume') {
    keep = await lib.SessionLog.open(path);
    entries = keep.conversation.messages.length;
    keep.close();
  } else if (mode === 'resumeEager') {
    keep = await lib.SessionLog.open(path, { eager: true });
    entries = keep.entries.length + 1; // + header
    keep.close();
  } else if (mode === 'lazyEntries') {
    keep = await lib.loadSession(path);
    entries = keep.entries.length + 1; // + header
  } else if (mode === 'eager') {
    keep = await lib.loadSession(path, { eager: true });
    entries = keep.entries.length + 1; // + header
  } else if (mode === 'openIndex') {
    keep = await lib.openSessionIndex(path);
    entries = keep.size + 1; // + header
  } else if (mode === 'readFile') {
    keep = readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));
    entries = keep.length;
  } else {
    const rl = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
    keep = [];
    for await (const line of rl) if (line !== '') keep.push(JSON.parse(line));
    entries = keep.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const usage = process.resourceUsage();
  // Deliver the last GC entries (after a long synchronous stretch they arrive a few ticks later).
  await new Promise((resolve) => setTimeout(resolve, 100));
  gcObserver.disconnect();
  // With --expose-gc (a separate run, not timed): the heap the loaded result holds.
  const heapKept = heapAfterGc() - heapBefore;
  process.stdout.write(
    JSON.stringify({
      entries,
      mbPerSec: size / MB / seconds,
      mbPerCpuSec: size / MB / cpuSeconds,
      maxRss: usage.maxRSS * 1024,
      gcShare: gcMs / 1000 / seconds,
      heapKept,
      kept: keep === undefined ? 0 : 1, // `keep` stays reachable until the heap was measured
    }),
  );
}

function header() {
  return `${JSON.stringify({ type: 'session', version: 1, id: 'bench', created: new Date().toISOString() })}\n`;
}

/** Alternating tool calls and tool results with a ~3 MB base64 image each (lines written directly, as SessionLog does). */
function writeImageSession(path, bytes) {
  // A PNG's signature and IHDR (1568x1000, as the part claims) before random bytes: the loader checks a stored
  // image's header against its fields (media/stored-media.ts), never its whole payload.
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(1568, 8);
  ihdr.writeUInt32BE(1000, 12);
  ihdr.set([8, 2, 0, 0, 0], 16);
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), ihdr]);
  const data = Buffer.concat([png, randomBytes(2_400_000 - png.length)]).toString('base64');
  const fd = openSync(path, 'w');
  let size = writeSync(fd, header());
  let i = 0;
  let parentId = null;
  while (size < bytes) {
    const id = `e${i}`;
    const message =
      i % 2 === 0
        ? {
            role: 'assistant',
            content: [{ type: 'tool_call', id: `c${i}`, name: 'screenshot', input: { n: i } }],
          }
        : {
            role: 'tool',
            results: [
              {
                type: 'tool_result',
                toolUseId: `c${i - 1}`,
                toolName: 'screenshot',
                parts: [
                  { type: 'text', text: `screenshot ${i}` },
                  { type: 'image', mediaType: 'image/png', data, width: 1568, height: 1000 },
                ],
                isError: false,
                meta: { n: i },
              },
            ],
          };
    size += writeSync(
      fd,
      `${JSON.stringify({ type: 'message', id, parentId, timestamp: new Date().toISOString(), message })}\n`,
    );
    parentId = id;
    i++;
  }
  closeSync(fd);
}

const PROSE = 'The quick brown fox jumps over the lazy dog; naïve café — 日本語. ';
/** The ASCII-only variant (`--ascii`): same entries and sizes, every string one byte per character in V8. */
const ASCII_PROSE = 'The quick brown fox jumps over the lazy dog; naive cafe -- Nihongo. ';

/** Many small text entries (~1 KB): user turns, assistant tool calls, text tool results. */
function writeTextSession(path, bytes, sentence = PROSE) {
  const fd = openSync(path, 'w');
  let size = writeSync(fd, header());
  const prose = sentence.repeat(14);
  let batch = [];
  let i = 0;
  let parentId = null;
  while (size < bytes) {
    const id = `e${i}`;
    const message =
      i % 3 === 0
        ? { role: 'user', content: [{ type: 'text', text: `${prose}${i}` }] }
        : i % 3 === 1
          ? {
              role: 'assistant',
              content: [
                { type: 'text', text: prose.slice(0, 200) },
                { type: 'tool_call', id: `c${i}`, name: 'grep', input: { pattern: `p${i}` } },
              ],
              stopReason: 'tool_use',
            }
          : {
              role: 'tool',
              results: [
                {
                  type: 'tool_result',
                  toolUseId: `c${i - 1}`,
                  toolName: 'grep',
                  parts: [{ type: 'text', text: prose }],
                  isError: false,
                },
              ],
            };
    const line = `${JSON.stringify({ type: 'message', id, parentId, timestamp: new Date().toISOString(), message })}\n`;
    batch.push(line);
    size += Buffer.byteLength(line);
    if (batch.length === 1000) {
      writeSync(fd, batch.join(''));
      batch = [];
    }
    parentId = id;
    i++;
  }
  writeSync(fd, batch.join(''));
  closeSync(fd);
  return i;
}

/**
 * Append to a text session of `count` entries a compaction that keeps the last ~5% (from a user turn), then a few
 * more turns: the shape of a long session that was compacted once.
 */
function appendCompaction(path, count) {
  let kept = Math.floor(count * 0.95);
  kept -= kept % 3;
  const timestamp = new Date().toISOString();
  const say = (text) => ({ role: 'user', content: [{ type: 'text', text }] });
  const lines = [
    {
      type: 'compaction',
      id: 'compaction-1',
      parentId: `e${count - 1}`,
      timestamp,
      summary: 'Summary of the session so far.',
      replacement: [say('Summary of the session so far.')],
      firstKeptEntryId: `e${kept}`,
      tokensBefore: 1_000_000,
      tokensAfter: 50_000,
    },
    { type: 'message', id: 'after-1', parentId: 'compaction-1', timestamp, message: say('Continue.') },
  ];
  const fd = openSync(path, 'a');
  writeSync(fd, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  closeSync(fd);
}

function runChild(mode, path, nodeArgs = []) {
  const r = spawnSync(
    process.execPath,
    [...nodeArgs, fileURLToPath(import.meta.url), `--child=${mode}`, path],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  if (r.status !== 0) {
    const code = /ERR_[A-Z_]+/.exec(r.stderr ?? '')?.[0];
    return { error: code ?? (r.stderr || `exit ${r.status}`).trim().split('\n').slice(0, 3).join(' | ') };
  }
  return JSON.parse(r.stdout);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const ROWS = {
  loadSession: 'loadSession (lazy)',
  resume: 'SessionLog.open (resume)',
  resumeEager: 'SessionLog.open eager',
  lazyEntries: 'loadSession + .entries',
  eager: 'loadSession eager',
  openIndex: 'openSessionIndex only',
  floor: 'floor (parse+keep only)',
  readline: 'readline+JSON.parse',
};

/**
 * The given modes beside readline+JSON.parse on the same file, interleaved run by run (fresh process each). `target`:
 * `speed` / `rss` for the loadSession (lazy) row, `heap` to print the heap an eager load holds.
 */
function compare(label, path, runs, modes, target) {
  const size = statSync(path).size;
  const all = [...modes, 'readline'];
  const wall = Object.fromEntries(all.map((m) => [m, []]));
  const cpu = Object.fromEntries(all.map((m) => [m, []]));
  const gc = Object.fromEntries(all.map((m) => [m, []]));
  const rss = Object.fromEntries(all.map((m) => [m, 0]));
  for (let r = 0; r < runs; r++) {
    for (const mode of all) {
      const out = runChild(mode, path);
      if (out.error) throw new Error(`${mode}: ${out.error}`);
      wall[mode].push(out.mbPerSec);
      cpu[mode].push(out.mbPerCpuSec);
      gc[mode].push(out.gcShare);
      rss[mode] = Math.max(rss[mode], out.maxRss);
    }
  }
  const ratio = (m, mode) => (median(m[mode]) / median(m.readline)).toFixed(2);
  console.log(`\n${label}: ${(size / MB).toFixed(0)} MB, median of ${runs} runs (fresh process each)`);
  for (const mode of all) {
    console.log(
      `  ${ROWS[mode].padEnd(26)} ${median(wall[mode]).toFixed(0).padStart(6)} MB/s wall ${median(cpu[mode]).toFixed(0).padStart(6)} MB/s CPU` +
        `   peak RSS ${(rss[mode] / size).toFixed(2)}x file   GC ${(100 * median(gc[mode])).toFixed(0).padStart(2)}% of wall` +
        (mode === 'readline' ? '' : `   ${ratio(wall, mode)}x wall ${ratio(cpu, mode)}x CPU of readline`),
    );
  }
  if (target.speed !== undefined && modes.includes('loadSession')) {
    console.log(
      `  loadSession (lazy) / readline: ${ratio(wall, 'loadSession')}x wall, ${ratio(cpu, 'loadSession')}x CPU (target >= ${target.speed.toFixed(2)}x)` +
        (target.rss === undefined
          ? ''
          : `; peak RSS ${(rss.loadSession / size).toFixed(2)}x file (target <= ${target.rss.toFixed(2)}x)`),
    );
  }
  if (target.heap) {
    // The V8 heap an eagerly loaded session holds after a full GC (separate, untimed run with --expose-gc): a floor
    // under peak RSS for any loader that returns every entry parsed.
    const held = runChild('eager', path, ['--expose-gc']);
    const node = runChild('none', path);
    if (!held.error && !node.error)
      console.log(
        `  heap held by an eagerly loaded session ${(held.heapKept / size).toFixed(2)}x file; node's own RSS ${(node.maxRss / size).toFixed(2)}x file`,
      );
  }
}

async function main() {
  const args = Object.fromEntries(
    process.argv.slice(2).map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k, v ?? 'true'];
    }),
  );
  if (args.child) return child(args.child, process.argv.at(-1));
  if (!existsSync(DIST)) {
    console.error(`bench:session needs the built library (${DIST}); run \`npm run build:ts\` first.`);
    process.exit(1);
  }
  const imageMb = Number(args.mb ?? 300);
  const textMb = Number(args['text-mb'] ?? 200);
  const runs = Number(args.runs ?? process.env.BENCH_RUNS ?? 5);
  const dir = mkdtempSync(join(tmpdir(), 'panto-bench-session-'));
  try {
    console.log(`node ${process.version}; session files in ${dir}`);
    if (args.only !== 'text') {
      const images = join(dir, 'images.jsonl');
      writeImageSession(images, imageMb * MB);
      compare(
        'image-heavy session (~3.2 MB base64 image per tool result)',
        images,
        runs,
        ['loadSession', 'eager'],
        { speed: 1.0, rss: 1.5 },
      );
      rmSync(images);
    }
    const text = join(dir, 'text.jsonl');
    if (args.only !== 'images') {
      const count = writeTextSession(text, textMb * MB);
      const modes = ['loadSession', 'resume', 'lazyEntries', 'eager', 'resumeEager', 'openIndex'];
      appendCompaction(text, count);
      compare(
        'text-heavy session (~1 KB entries), compacted once keeping the last ~5%: resuming parses those lines only',
        text,
        runs,
        modes,
        { speed: 3.0, rss: 1.2 },
      );
      writeTextSession(text, textMb * MB);
      compare(
        'text-heavy session (~1 KB entries), never compacted: the conversation is every line, as readline parses',
        text,
        runs,
        [...modes, 'floor'],
        { speed: 1.0, rss: 2.5, heap: true },
      );
      rmSync(text);
    }

    if (args.ascii) {
      // Not the measurement (that is the row above, with non-ASCII prose): the same shape with ASCII-only
      // text, where V8 keeps every string at one byte per character.
      const ascii = join(dir, 'ascii.jsonl');
      writeTextSession(ascii, textMb * MB, ASCII_PROSE);
      compare(
        'ASCII-only variant of the text-heavy session (--ascii), never compacted',
        ascii,
        runs,
        ['loadSession', 'eager', 'floor'],
        { speed: 1.0, rss: 2.5 },
      );
      rmSync(ascii);
    }

    if (args.gb) {
      const big = join(dir, 'big.jsonl');
      writeImageSession(big, 1024 * MB);
      const size = statSync(big).size;
      console.log(
        `\n1 GB image-heavy session: ${(size / MB).toFixed(0)} MB (whole file > V8's ~512 MB max string)`,
      );
      const heapMb = Math.ceil((size / MB) * 1.5);
      for (const [label, mode, nodeArgs] of [
        ['loadSession (default heap)', 'loadSession', []],
        [`loadSession (--max-old-space-size=${heapMb})`, 'loadSession', [`--max-old-space-size=${heapMb}`]],
        [`loadSession eager (--max-old-space-size=${heapMb})`, 'eager', [`--max-old-space-size=${heapMb}`]],
        ['readline+JSON.parse (default heap)', 'readline', []],
        ['readFileSync+split (whole-file string)', 'readFile', []],
      ]) {
        const out = runChild(mode, big, nodeArgs);
        if (out.error) console.log(`  ${label.padEnd(44)} FAILED: ${out.error}`);
        else
          console.log(
            `  ${label.padEnd(44)} ${out.mbPerSec.toFixed(0).padStart(5)} MB/s  peak RSS ${(out.maxRss / MB).toFixed(0)} MB = ${(out.maxRss / size).toFixed(2)}x file (bound 2.00x)`,
          );
      }
    } else {
      console.log('\n(1 GB peak-RSS case skipped; add --gb)');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
