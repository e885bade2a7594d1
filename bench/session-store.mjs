#!/usr/bin/env node
// Session stores: resume time (`store.open(id)`, lazy, then close) against the number of entries since the session's
// latest compaction, for a session of 10k entries with compactions, JSONL file store vs PostgreSQL store, side by side
// in one run. A resume reads the conversation from the latest compaction on: the JSONL store indexes the whole file
// (one byte pass) and parses those lines; the PostgreSQL store finds the latest compaction through its partial index
// and reads those rows only. CPU time of this process (user+sys) beside wall time; the database server's own CPU is
// not in it (wall time includes it).
//
// Usage: npm run build:ts && node bench/session-store.mjs [--entries=10000] [--runs=5] [--quick]
// Needs PANTO_TEST_PG_URL for the PostgreSQL column (npm run test:postgres starts a server and runs this with --quick).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const lib = await import(fileURLToPath(new URL('../dist/index.js', import.meta.url)));
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
);
const total = Number(args.entries ?? 10_000);
const runs = Number(args.runs ?? (args.quick ? 3 : 5));
const sinceList = (args.quick ? [10, 1000] : [10, 100, 1000, 5000]).filter((k) => k < total);
const PROSE = 'The quick brown fox jumps over the lazy dog; naïve café — 日本語. '.repeat(14);

/** JSONL lines of a session of `total` entries, compacted every 1000 entries and last `since` entries before the end. */
function sessionLines(id, since) {
  const lines = [JSON.stringify({ type: 'session', version: 1, id, created: new Date().toISOString() })];
  let parent = null;
  const compactAt = new Set();
  for (let at = total - since; at > 0; at -= 1000) compactAt.add(at);
  for (let i = 0; i < total; i++) {
    const id_ = `e${i}`;
    const timestamp = '2026-01-01T00:00:00.000Z';
    let entry;
    if (compactAt.has(i)) {
      entry = {
        type: 'compaction',
        id: id_,
        parentId: parent,
        timestamp,
        summary: 'summary',
        replacement: [{ role: 'user', content: [{ type: 'text', text: 'summary of what came before' }] }],
        firstKeptEntryId: null,
        tokensBefore: 100_000,
        tokensAfter: 1000,
      };
    } else {
      const message =
        i % 2 === 0
          ? { role: 'user', content: [{ type: 'text', text: `${PROSE}${i}` }] }
          : {
              role: 'assistant',
              content: [{ type: 'text', text: PROSE.slice(0, 300) }],
              stopReason: 'end',
              usage: { inputTokens: 1000, outputTokens: 50 },
            };
      entry = { type: 'message', id: id_, parentId: parent, timestamp, message };
    }
    lines.push(JSON.stringify(entry));
    parent = id_;
  }
  return lines;
}

async function timeResume(store, id) {
  const wall = [];
  const cpu = [];
  let messages = 0;
  await (await store.open(id)).close(); // warm-up (JIT, page cache, connection), not timed
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const log = await store.open(id);
    messages = log.conversation.messages.length;
    await log.close();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { wall: median(wall), cpu: median(cpu), messages };
}

const dir = mkdtempSync(join(tmpdir(), 'panto-bench-store-'));
const stores = [['JSONL', new lib.JsonlSessionStore(dir)]];
if (process.env.PANTO_TEST_PG_URL)
  stores.push(['PostgreSQL', await lib.PostgresSessionStore.connect(process.env.PANTO_TEST_PG_URL)]);
else
  console.log(
    'PostgreSQL column skipped: PANTO_TEST_PG_URL is not set (npm run test:postgres starts a server)',
  );
const { loadavg } = await import('node:os');
console.log(
  `session-store resume: ${total} entries (~1 KB), compacted every 1000 entries; median of ${runs}; node ${process.version}; load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
console.log(
  `${'entries since last compaction'.padEnd(30)}${stores.map(([n]) => `${n} wall / CPU ms`.padStart(26)).join('')}`,
);
try {
  for (const since of sinceList) {
    const row = [];
    for (const [name, store] of stores) {
      const id = `bench-${process.pid}-${name}-${since}`;
      await store.importLines(sessionLines(id, since));
      const r = await timeResume(store, id);
      row.push(`${r.wall.toFixed(1)} / ${r.cpu.toFixed(1)} (${r.messages} msgs)`.padStart(26));
    }
    console.log(`${String(since).padEnd(30)}${row.join('')}`);
  }
} finally {
  for (const [, store] of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
}
