// The hostile-tool cases run by scripts/test-hostile-lua.mjs (each in its own child process, in-thread and with
// worker isolation). A case is a tool handler body (or a whole tool file, `file`), the budgets it runs under, what
// the call must resolve to (`error`: a regex the tool error must match; `text`: the exact result text) and bounds:
// wall time (`ms`), resident memory growth (`rssMb`) and the longest event-loop stall of the host (`stallMs`, measured
// with a 10 ms timer; only checked in-thread, where the VM shares the loop; with worker isolation the host loop must
// stay under HOST_STALL_MS always). After the case, the same source must still serve an honest call.
// The stall bounds are several times the ~10-50 ms an idle machine shows (bench:lua prints the real numbers): CI
// shares its cores. Cases about memory or caps get a long time budget, so that the budget under test decides.

const MiB = 1024 * 1024;

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
];
