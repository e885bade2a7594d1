#!/usr/bin/env node
// `panto session export|import` stream: a session of ~200 MiB of entries (tool results with ~100 KB images,
// compactions, a branch) goes JSONL file -> PostgreSQL -> file -> folder store -> file through the built CLI, each step
// a child process whose peak RSS, CPU time (user+sys) and wall time are measured. Bounded memory, shown two ways: the
// steps run with the JS heap capped at --heap-mib (32 MiB old space, 1 MiB semi-spaces: a step that held the session,
// or even a few pages of it, dies out of memory) and each peak RSS must stay below 60% of the file's size; with
// --default-heap they run again with Node's default heap, peaks reported. Every exported file must be the original
// byte for byte. Run by scripts/test-postgres.sh (needs PANTO_TEST_PG_URL).
//
// Usage: npm run build:ts && node scripts/test-session-stream.mjs [--mib=200] [--heap-mib=32] [--default-heap]

import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { SessionLog } = await import(join(root, 'dist/index.js'));
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
);
const mib = Number(args.mib ?? 200);
const heapMib = Number(args['heap-mib'] ?? 32);
const capped = [`--max-old-space-size=${heapMib}`, '--max-semi-space-size=1'];
const url = process.env.PANTO_TEST_PG_URL;
if (!url) {
  console.log(
    'test-session-stream: PANTO_TEST_PG_URL is not set; skipped (npm run test:postgres starts a server)',
  );
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'panto-stream-'));
const ids = [];
const report = join(dir, 'usage.json');
const preload = join(dir, 'report-usage.mjs');
writeFileSync(
  preload,
  `import { writeFileSync } from 'node:fs';
process.on('exit', () => {
  const u = process.resourceUsage();
  writeFileSync(${JSON.stringify(report)}, JSON.stringify({ maxRss: u.maxRSS * 1024, cpu: (u.userCPUTime + u.systemCPUTime) / 1e6 }));
});\n`,
);
const MiB = 2 ** 20;

/** A session file of about `size` MiB: turns with an image tool result, a compaction every 200 turns, one branch. */
async function writeSession(file, id, size) {
  const log = await SessionLog.create(file, { id, model: 'm0' });
  // A real 1x1 PNG with ~75 KB of random bytes after its end (incompressible, as photos are).
  const tiny = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
  const png = Buffer.concat([Buffer.from(tiny, 'base64'), randomBytes(75_000)]).toString('base64');
  let turns = 0;
  let branchFrom;
  while (statSync(file).size < size * MiB) {
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: `turn ${turns}` }] });
    log.appendMessage({
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: `t${turns}`,
          toolName: 'shot',
          isError: false,
          parts: [
            { type: 'text', text: `screenshot ${turns} 日本 "q"` },
            { type: 'image', mediaType: 'image/png', data: png, width: 1, height: 1 },
          ],
        },
      ],
    });
    turns++;
    if (turns === 50) branchFrom = log.leafId;
    if (turns % 200 === 0) {
      const n = log.conversation.messages.length;
      log.appendCompaction({
        summary: `up to turn ${turns}`,
        replacement: [{ role: 'user', content: [{ type: 'text', text: `summary up to ${turns}` }] }],
        firstKeptIndex: n - 4,
        messageCountBefore: n,
        tokensBefore: 100_000,
        tokensAfter: 1000,
      });
    }
    if (turns === 300) log.branch(branchFrom);
  }
  const entries = log.size;
  log.close();
  return entries;
}

/** One CLI run in a child process (Node flags `flags`): its peak RSS and CPU time (user+sys), and wall time. */
function panto(flags, ...cliArgs) {
  const started = process.hrtime.bigint();
  execFileSync(
    process.execPath,
    [...flags, '--import', preload, join(root, 'dist/cli/main.js'), ...cliArgs],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  return { ...JSON.parse(readFileSync(report, 'utf8')), wall };
}

function sha(path) {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

/** The four steps on session file `file` (session `id`): each step's usage, and whether each export is the original. */
async function roundTrip(file, id, flags) {
  const folder = join(dir, 'store');
  const fromPg = join(dir, 'from-pg.jsonl');
  const fromFolder = join(dir, 'from-folder.jsonl');
  const steps = {
    'import  -> postgres': panto(flags, 'session', 'import', file, '--store', url),
    'export  postgres ->': panto(flags, 'session', 'export', id, '--out', fromPg, '--store', url),
    'import  -> folder  ': panto(flags, 'session', 'import', fromPg, '--store', folder),
    'export  folder ->  ': panto(flags, 'session', 'export', id, '--out', fromFolder, '--store', folder),
  };
  const original = await sha(file);
  const identical = {
    'file -> postgres -> file': (await sha(fromPg)) === original,
    'file -> postgres -> file -> folder store -> file': (await sha(fromFolder)) === original,
  };
  for (const f of [fromPg, fromFolder]) rmSync(f);
  rmSync(folder, { recursive: true, force: true });
  await deleteSessions();
  return { steps, identical };
}

/** Remove the sessions of this run from the database. */
async function deleteSessions() {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DELETE FROM panto_sessions WHERE id = ANY($1)', [ids]);
  } finally {
    await client.end();
  }
}

let failed = false;
try {
  const id = `stream-${process.pid}-${Date.now().toString(36)}`;
  ids.push(id);
  const file = join(dir, 'session.jsonl');
  const entries = await writeSession(file, id, mib);
  const bytes = statSync(file).size;
  console.log(`session of ${(bytes / MiB).toFixed(0)} MiB, ${entries} entries:`);
  const runs = [[`heap capped at ${heapMib} MiB`, capped]];
  if (args['default-heap']) runs.push(["Node's default heap", []]);
  for (const [name, flags] of runs) {
    console.log(`  ${name}:`);
    const r = await roundTrip(file, id, flags);
    for (const [step, u] of Object.entries(r.steps)) {
      const ok = flags.length === 0 || u.maxRss < bytes * 0.6;
      if (!ok) failed = true;
      console.log(
        `    ${step}  peak RSS ${(u.maxRss / MiB).toFixed(0).padStart(4)} MiB  cpu ${u.cpu.toFixed(2).padStart(6)} s  wall ${u.wall.toFixed(2).padStart(6)} s${ok ? '' : '  <-- not below 60% of the file size'}`,
      );
    }
    for (const [what, ok] of Object.entries(r.identical)) {
      if (!ok) failed = true;
      console.log(`    ${what}: ${ok ? 'identical to the original file' : 'DIFFERS from the original file'}`);
    }
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await deleteSessions().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
if (failed) {
  console.error('test-session-stream: FAILED');
  process.exit(1);
}
console.log('test-session-stream: ok');
