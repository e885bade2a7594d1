// The hostile-tool cases run by scripts/test-hostile-lua.mjs (each in its own child process, in-thread and with
// worker isolation). A case is a tool handler body (or a whole tool file, `file`), the budgets it runs under, what
// the call must resolve to (`error`: a regex the tool error must match; `text`: the exact result text) and bounds:
// wall time (`ms`), resident memory growth (`rssMb`) and the longest event-loop stall of the host (`stallMs`, measured
// with a 10 ms timer; only checked in-thread, where the VM shares the loop; with worker isolation the host loop must
// stay under HOST_STALL_MS always). After the case, the same source must still serve an honest call.
// The stall bounds are several times the ~10-50 ms an idle machine shows (bench:lua prints the real numbers): CI
// shares its cores. Cases about memory or caps get a long time budget, so that the budget under test decides.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const MiB = 1024 * 1024;

/**
 * Processes still running (not zombies) whose command line holds `marker`, after a short grace: what an exec case
 * left behind. Linux /proc; elsewhere nothing is found.
 */
async function leftovers(marker) {
  await new Promise((r) => setTimeout(r, 300));
  if (!existsSync('/proc/self/stat')) return [];
  const found = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const state = /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
      if (cmd.includes(marker) && state !== 'Z') found.push(`${pid} ${cmd.trim()}`);
    } catch {
      // gone meanwhile
    }
  }
  if (found.length > 0) {
    for (const line of found) {
      try {
        process.kill(Number(line.split(' ')[0]), 'SIGKILL');
      } catch {}
    }
    return [`${found.length} processes left running, e.g. ${found[0]}`];
  }
  return [];
}

/** A loopback HTTP server for a fetch case (allowed by `privateHosts`); closed by `after`. */
async function serve(handler) {
  const server = createServer(handler);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    options: { capabilities: ['fetch'], fetch: { privateHosts: ['127.0.0.1'] } },
    args: { base },
    after: async () => {
      server.closeAllConnections();
      server.close();
      return [];
    },
  };
}

/** Budgets used unless a case says otherwise: short, so every case ends quickly. */
export const BASE_BUDGETS = { wallClockMs: 2000, maxBlockingMs: 300, memoryBytes: 64 * MiB };

/** The longest the HOST's event loop may stall in worker mode, whatever the tool does. */
export const HOST_STALL_MS = 250;

export const CASES = [
  // --- PANIC from metatables: every read of a Lua value by the host is raw -----------------------------------------
  {
    name: 'result-index-raises',
    body: 'return setmetatable({}, { __index = function() error("boom") end })',
    error: /result table has neither 'text' nor 'attachments'/,
  },
  {
    name: 'result-index-loops',
    body: 'return setmetatable({ text = "ok" }, { __index = function() while true do end end, __pairs = function() while true do end end })',
    text: 'ok',
  },
  {
    name: 'attachment-index-raises',
    body: 'return { attachments = { setmetatable({}, { __index = function() error("x") end }) } }',
    error: /attachments\[1\] has no 'data' string/,
  },
  {
    name: 'error-object-tostring-raises',
    body: 'error(setmetatable({ code = 7 }, { __tostring = function() error("nested") end }))',
    error: /^error object: \{"code":7\}$/,
  },
  {
    name: 'file-returns-raising-metatable',
    file: 'return setmetatable({}, { __index = function() error("boom") end })',
    loadError: /'name' must be a string/,
  },
  {
    name: 'file-returns-looping-metatable',
    file: 'return setmetatable({}, { __index = function() while true do end end })',
    loadError: /'name' must be a string/,
  },
  // --- Single library functions that ran unbounded -----------------------------------------------------------------
  {
    name: 'pattern-unanchored',
    body: 'return tostring(("a"):rep(100000):find("a*a*a*b"))',
    error: /maxBlockingMs|time budget exceeded/,
  },
  {
    name: 'pattern-anchored',
    body: 'return tostring(("a"):rep(28):find("^" .. ("a?"):rep(28) .. ("a"):rep(28) .. "$"))',
    error: /maxBlockingMs|time budget exceeded/,
  },
  {
    name: 'table-move',
    body: 'table.move({}, 1, 1e7, 2); return "moved"',
    error: /maxBlockingMs|time budget/,
  },
  {
    name: 'string-pack-huge',
    body: 'return #string.pack("c2000000000", "")',
    error: /memory budget exceeded/,
  },
  {
    name: 'format-q-16mb',
    body: 'local s = ("\\n"):rep(16 * 1024 * 1024); return #string.format("%q", s)',
    budgets: { memoryBytes: 512 * MiB, maxBlockingMs: 300 },
    error: /maxBlockingMs|memory budget|time budget/,
    rssMb: 700,
  },
  {
    name: 'concat-huge-separator',
    body: 'local t = {}; for i = 1, 100 do t[i] = "x" end; return #table.concat(t, ("y"):rep(8 * 1024 * 1024))',
    error: /memory budget exceeded|maxBlockingMs/,
  },
  {
    name: 'load-16mb-chunk',
    body: 'local src = ("x=1 "):rep(4 * 1024 * 1024); local f = load(src); return "loaded " .. tostring(f ~= nil)',
    budgets: { memoryBytes: 256 * MiB, maxBlockingMs: 300 },
    error: /maxBlockingMs|time budget|memory budget/,
    rssMb: 700,
  },
  {
    name: 'rep-64mib',
    body: 'return #("x"):rep(64 * 1024 * 1024) .. ""',
    budgets: { memoryBytes: 32 * MiB },
    error: /memory budget exceeded/,
  },
  {
    name: 'error-50mb-message',
    body: 'local t = {}; for i = 1, 50 do t[i] = ("x"):rep(1024 * 1024) end; error(table.concat(t))',
    budgets: { memoryBytes: 512 * MiB, wallClockMs: 30_000, maxBlockingMs: 20_000, maxTextBytes: 4096 },
    error: /^x{100}[\s\S]*\[message truncated: 524288\d\d bytes, the cap is 4096\] \(a_case\.lua:1\)$/,
    ms: 40_000,
    rssMb: 900,
  },
  // --- Memory ------------------------------------------------------------------------------------------------------
  {
    name: 'string-doubling',
    body: 'local s = "x"; while true do s = s .. s end',
    error: /memory budget exceeded/,
  },
  {
    name: 'table-growth',
    body: 'local t = {}; local i = 0; while true do i = i + 1; t[i] = { i } end',
    budgets: { memoryBytes: 16 * MiB, wallClockMs: 30_000 },
    ms: 40_000,
    error: /memory budget exceeded/,
  },
  {
    name: 'big-concat-loop',
    body: 'local parts = {}; for i = 1, 1e9 do parts[#parts + 1] = ("z"):rep(1024) end',
    budgets: { memoryBytes: 16 * MiB, wallClockMs: 30_000 },
    ms: 40_000,
    error: /memory budget exceeded/,
  },
  {
    name: 'memory-pcall-cannot-swallow',
    body: 'while true do pcall(function() local s = "x"; while true do s = s .. s end end) end',
    budgets: { wallClockMs: 30_000, maxBlockingMs: 20_000 },
    error: /memory budget exceeded/,
    ms: 40_000,
  },
  // --- Time: loops are sliced (the event loop keeps turning) and stop at the budget --------------------------------
  {
    name: 'busy-loop',
    body: 'while true do end',
    error: /time budget exceeded \(2000 ms\)/,
    ms: 6000,
    stallMs: 100,
  },
  {
    name: 'sort-comparator-spins',
    body: 'local t = {3, 2, 1}; table.sort(t, function(a, b) while true do end end)',
    error: /maxBlockingMs|time budget/,
  },
  // --- Caps on everything that leaves Lua --------------------------------------------------------------------------
  {
    name: 'return-nil-50mb',
    body: 'local t = {}; for i = 1, 50 do t[i] = ("e"):rep(1024 * 1024) end; return nil, table.concat(t)',
    budgets: { memoryBytes: 512 * MiB, wallClockMs: 30_000, maxBlockingMs: 20_000, maxTextBytes: 1000 },
    error: /^e{900}[\s\S]*\[message truncated: 52428800 bytes, the cap is 1000\]$/,
    ms: 40_000,
    rssMb: 900,
  },
  {
    name: 'log-50mb',
    body: 'local t = {}; for i = 1, 50 do t[i] = ("l"):rep(1024 * 1024) end; panto.log(table.concat(t)); return "logged"',
    budgets: { memoryBytes: 512 * MiB, wallClockMs: 30_000, maxBlockingMs: 20_000, maxTextBytes: 1000 },
    text: 'logged',
    maxLogChars: 1200,
    ms: 40_000,
    rssMb: 900,
  },
  {
    name: 'meta-50mb-string',
    body: 'local t = {}; for i = 1, 50 do t[i] = ("m"):rep(1024 * 1024) end; return { text = "ok", meta = { blob = table.concat(t) } }',
    budgets: { memoryBytes: 512 * MiB, wallClockMs: 30_000, maxBlockingMs: 20_000, maxTextBytes: 1000 },
    text: 'ok',
    metaMaxChars: 1200,
    ms: 40_000,
    rssMb: 900,
  },
  // --- Host functions (issue 31) -----------------------------------------------------------------------------------
  {
    name: 'host-fn-throws',
    caps: ['boom'],
    options: {
      hostFunctions: {
        boom: () => {
          throw new Error('kaput');
        },
      },
    },
    body: 'local r, err = panto.boom({}); return tostring(r) .. " " .. err',
    text: 'nil kaput',
  },
  {
    name: 'host-fn-never-settles',
    caps: ['hang'],
    options: { hostFunctions: { hang: () => new Promise(() => {}) } },
    body: 'return tostring(panto.hang({}))',
    error: /^time budget exceeded \(2000 ms, waiting for a host call\)$/,
  },
  {
    name: 'host-fn-100mb-bytes',
    caps: ['big'],
    // The buffer is made once, before the call: the host function itself must not be what stalls the host.
    setup: async () => {
      const buf = Buffer.alloc(100 * MiB, 1);
      return { options: { hostFunctions: { big: () => buf } } };
    },
    body: 'local r, err = panto.big({}); return tostring(r) .. " " .. err',
    text: 'nil the result of panto.big is over the 67108864-byte cap of a host value',
    rssMb: 700,
  },
  {
    name: 'host-fn-100mb-string',
    caps: ['big'],
    setup: async () => {
      const str = 'x'.repeat(100 * MiB);
      return { options: { hostFunctions: { big: () => str } } };
    },
    body: 'local r, err = panto.big({}); return tostring(r) .. " " .. err',
    text: 'nil the result of panto.big is over the 67108864-byte cap of a host value',
    rssMb: 700,
  },
  {
    name: 'host-fn-cyclic',
    caps: ['cyc'],
    options: {
      hostFunctions: {
        cyc: () => {
          const o = { list: [] };
          o.list.push({ back: o });
          return o;
        },
      },
    },
    body: 'local r, err = panto.cyc({}); return tostring(r) .. " " .. err',
    text: 'nil the result of panto.cyc.list[1].back refers back to itself (a cycle)',
  },
  {
    // 2^40 paths through 40 shared objects: counted per path, so the cap stops it, not the host's patience.
    name: 'host-fn-shared-subtrees',
    caps: ['dag'],
    options: {
      hostFunctions: {
        dag: () => {
          let node = { leaf: 'x'.repeat(100) };
          for (let i = 0; i < 40; i++) node = { a: node, b: node };
          return node;
        },
      },
    },
    body: 'local r, err = panto.dag({}); return tostring(r) .. " " .. err',
    text: 'nil the result of panto.dag is over the 67108864-byte cap of a host value',
  },
  // --- exec (issue 31): the whole process group ends; output is capped --------------------------------------------
  {
    name: 'exec-fork-bomb',
    posixOnly: true,
    caps: ['exec'],
    options: { capabilities: ['exec'] },
    // A bounded fork bomb (2^8 sleepers plus their shells): a real exponential tree that cannot take the machine down.
    body: `local r, err = panto.exec({ "sh", "-c", "f() { if [ $1 -lt 8 ]; then (f $(($1 + 1)) &); (f $(($1 + 1)) &); fi; sleep 30.4711; }; f 0" }, { timeout_ms = 1500 })
      if not r then return nil, err end
      return tostring(r.timed_out) .. " " .. tostring(r.signal)`,
    text: 'true SIGKILL',
    setup: async () => ({ after: () => leftovers('30.4711') }),
    ms: 10_000,
  },
  {
    name: 'exec-ignores-sigterm',
    posixOnly: true,
    caps: ['exec'],
    options: { capabilities: ['exec'] },
    body: `local r = assert(panto.exec({ "sh", "-c", "trap '' TERM; sleep 30.4712; echo survived" }, { timeout_ms = 500 }))
      return tostring(r.timed_out) .. " [" .. r.stdout .. "]"`,
    text: 'true []',
    setup: async () => ({ after: () => leftovers('30.4712') }),
  },
  {
    name: 'exec-output-flood',
    posixOnly: true,
    caps: ['exec'],
    options: { capabilities: ['exec'] },
    body: `local r = assert(panto.exec({ "yes", "flood" }, { timeout_ms = 1500 }))
      return tostring(r.timed_out) .. " " .. tostring(r.truncated) .. " " .. tostring(#r.stdout < 1100000)`,
    text: 'true true true',
    rssMb: 300,
  },
  {
    name: 'exec-grandchild-outlives-parent',
    posixOnly: true,
    caps: ['exec'],
    options: { capabilities: ['exec'] },
    body: `local r = assert(panto.exec({ "sh", "-c", "(sleep 30.4713 &); sleep 30.4713 & echo started" }))
      return r.stdout`,
    text: 'started\n',
    setup: async () => ({ after: () => leftovers('30.4713') }),
  },
  {
    // A grandchild that left the group (setsid) and holds stdout: the call still ends (pipes drained for 2 s).
    name: 'exec-setsid-grandchild-holds-pipe',
    posixOnly: true,
    caps: ['exec'],
    options: { capabilities: ['exec'] },
    body: `local r = assert(panto.exec({ "sh", "-c", "setsid sleep 4.4714 & echo started" }))
      return r.stdout`,
    text: 'started\n',
    budgets: { wallClockMs: 10_000 },
    ms: 4000,
    setup: async () => ({
      after: async () => {
        await leftovers('4.4714'); // it escaped the group on purpose: cleaned up, not a failure
        return [];
      },
    }),
  },
  // --- write_file (issue 31) --------------------------------------------------------------------------------------
  {
    name: 'write-over-cap',
    caps: ['write_file'],
    options: { capabilities: ['write_file'] },
    budgets: { maxWriteBytes: MiB },
    body: 'local ok, err = panto.write_file("big.bin", ("x"):rep(1024 * 1024 + 1)); return tostring(ok) .. " " .. err',
    text: 'nil big.bin: 1048577 bytes, over the write cap of 1048576 bytes',
  },
  // --- fetch (issue 31) -------------------------------------------------------------------------------------------
  {
    name: 'fetch-endless-body',
    caps: ['fetch'],
    body: `local r = assert(panto.fetch(args.base .. "/endless"))
      return tostring(r.truncated) .. " " .. #r.body`,
    text: 'true 10485760',
    setup: () =>
      serve((_req, res) => {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 97);
        const pump = () => {
          while (res.write(chunk)) {}
        };
        res.on('drain', pump);
        pump();
      }),
    rssMb: 300,
  },
  {
    name: 'fetch-trickling-body',
    caps: ['fetch'],
    body: 'local r, err = panto.fetch(args.base .. "/", { timeout_ms = 1000 }); return tostring(r) .. " " .. err',
    text: 'nil fetch: timed out after 1000 ms',
    setup: () =>
      serve((_req, res) => {
        res.writeHead(200);
        const timer = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(timer));
      }),
  },
  {
    name: 'fetch-redirect-to-metadata',
    caps: ['fetch'],
    body: 'local r, err = panto.fetch(args.base .. "/"); return tostring(r) .. " " .. err',
    text: 'nil fetch: 169.254.169.254 resolves to 169.254.169.254, a loopback, private, link-local or reserved address (refused; the host can allow it)',
    setup: () =>
      serve((_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam' }).end();
      }),
  },
];
