#!/usr/bin/env node
// Hostile-tool suite for the Lua host (issues 13, 31): every case of test/lua/hostile-cases.mjs runs in its own child
// process (a failure that hangs or exhausts memory cannot take the runner down), once with the VM on the host thread
// and once with `isolation: 'worker'`. Each child is killed after the case's time bound; the child reports the
// result, its wall time, the longest event-loop stall of the host and its RSS growth, which the parent checks. Then
// the whole-host cases: 20 honest calls of 1.1 s each under a 4 s time budget all finish, 50 busy calls keep the
// host's event loop turning, and a worker whose event loop stalls is terminated and replaced.
//
// Usage: npm run test:hostile-lua   (needs the built library: npm run build:ts)
//        node scripts/test-hostile-lua.mjs [--only name] [--isolation thread|worker]

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const dist = path.join(root, 'dist', 'index.js');
const { BASE_BUDGETS, CASES, HOST_STALL_MS } = await import(
  path.join(root, 'test', 'lua', 'hostile-cases.mjs')
);

const DEFAULT_MS = 5000;
const DEFAULT_RSS_MB = 400;
const CHILD_SLACK_MS = 10_000; // node startup + loading, on a loaded 2-core machine

// ---------------------------------------------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------------------------------------------
async function child(kind, name, isolation) {
  const { LuaToolSource } = await import(dist);
  const dir = await mkdtemp(path.join(tmpdir(), 'panto-hostile-'));
  const logs = [];
  let maxStall = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxStall = Math.max(maxStall, now - last - 10);
    last = now;
  }, 10);
  const rss0 = process.memoryUsage().rss;
  let rssPeak = rss0;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 20);
  const honest =
    'return { name = "honest", description = "d", handler = function() return "still serving" end }';
  await writeFile(path.join(dir, 'zz_honest.lua'), honest);
  const out = { name, isolation };
  try {
    if (kind === 'case') {
      const c = CASES.find((x) => x.name === name);
      // A case may set up its own world (a server, a workspace) and say what to check afterwards.
      const setup = c.setup ? await c.setup() : {};
      const caps = c.caps ? `capabilities = { ${c.caps.map((x) => JSON.stringify(x)).join(', ')} }, ` : '';
      const src =
        c.file ?? `return { name = "t", description = "d", ${caps}handler = function(args) ${c.body} end }`;
      await writeFile(path.join(dir, 'a_case.lua'), src);
      const source = await LuaToolSource.fromDir(dir, {
        ...(c.options ?? {}),
        ...(setup.options ?? {}),
        budgets: { ...BASE_BUDGETS, ...(c.budgets ?? {}) },
        isolation,
        log: (e) => logs.push(e),
        worker: { watchdogMs: (c.budgets?.maxBlockingMs ?? BASE_BUDGETS.maxBlockingMs) + 3000 },
      });
      // Let startup settle (module loading and the worker start are not the tool's doing).
      await new Promise((r) => setTimeout(r, 50));
      maxStall = 0;
      last = performance.now();
      out.loadErrors = source.loadErrors.map((e) => e.message);
      const t0 = performance.now();
      if (!c.file) out.result = await source.run('t', setup.args ?? {});
      out.ms = performance.now() - t0;
      await new Promise((r) => setTimeout(r, 30)); // let the stall timer see a blocked loop
      out.caseStall = maxStall;
      out.after = await source.run('honest', {});
      out.maxLogChars = Math.max(0, ...logs.map((e) => e.message.length));
      await source.close();
      out.afterProblems = setup.after ? await setup.after() : [];
    } else if (kind === 'fairness') {
      // 20 honest calls that each need ~1.1 s of Lua time alone, under a 4 s time budget: all must finish.
      await writeFile(
        path.join(dir, 'work.lua'),
        'return { name = "work", description = "d", handler = function(args) local n = 0; ' +
          'for i = 1, args.n do n = n + i % 7 end; return "done" end }',
      );
      const source = await LuaToolSource.fromDir(dir, {
        budgets: { wallClockMs: 4000, instructions: 2e9 },
        isolation,
      });
      out.n = await calibrate(source, 1100);
      const t0 = performance.now();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => source.run('work', { n: out.n }, { toolCallId: `f${i}` })),
      );
      out.ms = performance.now() - t0;
      out.finished = results.filter((r) => r.ok).length;
      out.errors = [...new Set(results.filter((r) => !r.ok).map((r) => r.error))];
      await source.close();
    } else if (kind === 'stall50') {
      // 50 busy calls at once: the host's event loop must keep turning (max delay of a 10 ms timer).
      await writeFile(
        path.join(dir, 'spin.lua'),
        'return { name = "spin", description = "d", handler = function() while true do end end }',
      );
      const source = await LuaToolSource.fromDir(dir, {
        budgets: { wallClockMs: 300 },
        isolation,
        maxConcurrentCalls: 50,
      });
      await new Promise((r) => setTimeout(r, 50));
      maxStall = 0;
      last = performance.now();
      const t0 = performance.now();
      const results = await Promise.all(Array.from({ length: 50 }, () => source.run('spin', {})));
      out.ms = performance.now() - t0;
      out.budgetErrors = results.filter((r) => !r.ok && /time budget exceeded/.test(r.error)).length;
      out.errors = [...new Set(results.map((r) => (r.ok ? 'ok' : r.error)))].filter(
        (e) => !/time budget exceeded/.test(e),
      );
      await source.close();
    } else if (kind === 'watchdog') {
      // Only meaningful with a worker: a stalled worker is terminated and replaced; the host keeps serving.
      await writeFile(
        path.join(dir, 'stall.lua'),
        'return { name = "stall", description = "d", handler = function() ' +
          'return tostring(("a"):rep(100000):find("a*a*a*b")) end }',
      );
      // maxBlockingMs large: the builtin is not stopped by the VM, so only the watchdog can end it.
      const source = await LuaToolSource.fromDir(dir, {
        budgets: { wallClockMs: 600_000, maxBlockingMs: 600_000 },
        isolation: 'worker',
        worker: { watchdogMs: 500 },
      });
      const t0 = performance.now();
      out.result = await source.run('stall', {});
      out.ms = performance.now() - t0;
      out.after = await source.run('honest', {});
      await source.close();
    }
  } catch (err) {
    out.crash = String(err?.stack ?? err);
  }
  clearInterval(timer);
  clearInterval(sampler);
  out.maxStall = maxStall;
  out.rssMb = (Math.max(rssPeak, process.memoryUsage().rss) - rss0) / 1024 / 1024;
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`@@RESULT ${JSON.stringify(out)}\n`);
  process.exit(0);
}

/** Loop count for which one `work` call alone runs about `ms` (median of 3 timings). */
export async function calibrate(source, ms) {
  const probe = 2_000_000;
  const times = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await source.run('work', { n: probe });
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round((probe * ms) / (times[1] ?? 1));
}

// ---------------------------------------------------------------------------------------------------------------
// Parent side
// ---------------------------------------------------------------------------------------------------------------
function runChild(args, limitMs) {
  return new Promise((resolve) => {
    const p = spawn(
      process.execPath,
      ['--max-old-space-size=1024', fileURLToPath(import.meta.url), ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => {
      stdout += d;
    });
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    const killer = setTimeout(() => p.kill('SIGKILL'), limitMs);
    p.on('exit', (code, signal) => {
      clearTimeout(killer);
      const line = stdout.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (!line) {
        resolve({
          crash: `child ${signal ? `killed (${signal}) after ${limitMs} ms` : `exited ${code}`}: ${stderr.slice(-2000)}`,
        });
        return;
      }
      resolve(JSON.parse(line.slice('@@RESULT '.length)));
    });
  });
}

const short = (v) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 200 ? `${s.slice(0, 200)}... (${s.length} chars)` : s;
};

function checkCase(c, r, isolation) {
  const problems = [];
  if (r.crash) return [r.crash];
  const ms = c.ms ?? DEFAULT_MS;
  if (c.file) {
    if (!r.loadErrors.some((m) => c.loadError.test(m))) problems.push(`load errors ${short(r.loadErrors)}`);
  } else if (c.error) {
    if (r.result.ok || !c.error.test(r.result.error)) problems.push(`result ${short(r.result)}`);
  } else if (!r.result.ok || r.result.parts[0]?.text !== c.text) problems.push(`result ${short(r.result)}`);
  if (r.ms > ms) problems.push(`took ${r.ms.toFixed(0)} ms > ${ms}`);
  const rssMb = c.rssMb ?? DEFAULT_RSS_MB;
  if (r.rssMb > rssMb) problems.push(`RSS grew ${r.rssMb.toFixed(0)} MB > ${rssMb}`);
  const stallMs = isolation === 'worker' ? HOST_STALL_MS : (c.stallMs ?? Number.POSITIVE_INFINITY);
  if (r.caseStall > stallMs) problems.push(`event loop stalled ${r.maxStall.toFixed(0)} ms > ${stallMs}`);
  if (!r.after?.ok || r.after.parts[0]?.text !== 'still serving')
    problems.push(`afterwards ${short(r.after)}`);
  if (c.maxLogChars !== undefined && r.maxLogChars > c.maxLogChars)
    problems.push(`log line ${r.maxLogChars} chars`);
  if (c.metaMaxChars !== undefined && JSON.stringify(r.result.meta ?? {}).length > c.metaMaxChars) {
    problems.push(`meta ${JSON.stringify(r.result.meta).length} chars`);
  }
  problems.push(...(r.afterProblems ?? []));
  return problems;
}

async function parent(argv) {
  if (!existsSync(dist)) {
    console.error('test:hostile-lua needs the built library: run `npm run build:ts` first');
    process.exit(2);
  }
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined;
  const isolations = argv.includes('--isolation')
    ? [argv[argv.indexOf('--isolation') + 1]]
    : ['thread', 'worker'];
  const started = performance.now();
  let failed = 0;
  let passed = 0;
  const report = (label, problems, detail) => {
    if (problems.length === 0) {
      passed++;
      console.log(`  ok   ${label}  ${detail}`);
    } else {
      failed++;
      console.log(`  FAIL ${label}  ${detail}\n       ${problems.join('\n       ')}`);
    }
  };
  for (const isolation of isolations) {
    console.log(`\nisolation: ${isolation}`);
    for (const c of CASES) {
      if (only && c.name !== only) continue;
      if (c.posixOnly && process.platform === 'win32') continue;
      const r = await runChild(['--child', 'case', c.name, isolation], (c.ms ?? DEFAULT_MS) + CHILD_SLACK_MS);
      const detail = r.crash
        ? ''
        : `${(r.ms ?? 0).toFixed(0)} ms, stall ${(r.caseStall ?? 0).toFixed(0)} ms, +${r.rssMb.toFixed(0)} MB`;
      report(c.name, checkCase(c, r, isolation), detail);
    }
    if (!only || only === 'fairness') {
      const r = await runChild(['--child', 'fairness', 'fairness', isolation], 60_000 + CHILD_SLACK_MS);
      report(
        'fairness: 20 x 1.1 s under a 4 s budget',
        r.crash ? [r.crash] : r.finished === 20 ? [] : [`${r.finished}/20 finished: ${short(r.errors)}`],
        r.crash ? '' : `${r.finished}/20 finished in ${(r.ms / 1000).toFixed(1)} s`,
      );
    }
    if (!only || only === 'stall50') {
      const r = await runChild(['--child', 'stall50', 'stall50', isolation], 60_000 + CHILD_SLACK_MS);
      const bound = HOST_STALL_MS;
      const problems = r.crash
        ? [r.crash]
        : [
            ...(r.budgetErrors === 50
              ? []
              : [`${r.budgetErrors}/50 ended at the budget; others: ${short(r.errors)}`]),
            ...(r.maxStall <= bound ? [] : [`event loop stalled ${r.maxStall.toFixed(0)} ms > ${bound}`]),
          ];
      report(
        '50 busy calls: event loop keeps turning',
        problems,
        r.crash ? '' : `max stall ${r.maxStall.toFixed(0)} ms`,
      );
    }
    if (isolation === 'worker' && (!only || only === 'watchdog')) {
      const r = await runChild(['--child', 'watchdog', 'watchdog', isolation], 30_000 + CHILD_SLACK_MS);
      const problems = r.crash
        ? [r.crash]
        : [
            ...(r.result.ok === false && /stopped answering/.test(r.result.error)
              ? []
              : [`result ${short(r.result)}`]),
            ...(r.after?.ok ? [] : [`afterwards ${short(r.after)}`]),
            ...(r.maxStall <= HOST_STALL_MS ? [] : [`host stalled ${r.maxStall.toFixed(0)} ms`]),
          ];
      report(
        'watchdog terminates a stalled worker and restarts it',
        problems,
        r.crash ? '' : `${r.ms.toFixed(0)} ms`,
      );
    }
  }
  console.log(
    `\nhostile Lua suite: ${passed} passed, ${failed} failed in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  process.exit(failed === 0 ? 0 : 1);
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') await child(argv[1], argv[2], argv[3]);
else await parent(argv);
