#!/usr/bin/env node
// Seeded generative fuzzer of the Lua tool host (LuaToolSource on real fengari, in-thread and in its worker).
//
// Usage: npm run build:ts && nice -n 10 node test/fuzz/fuzz-lua.mjs [--seconds=60] [--seed=S] [--case=N]
//          [--isolation=thread|worker|mixed] [--no-shrink] [--verbose]
//   --from=N start at case N (to replay the cases leading up to a finding on one long-lived host).
//   --seed   the run's seed (default: from the clock; always printed). Case N of seed S is the same on every run and
//            every machine, so `--seed=S --case=N` replays exactly one case (what a finding prints).
//   Shrinking a finding stops after min(60, --seconds) s with the smallest case so far, so a run takes at most about
//   --seconds + min(60, --seconds) + one case. All temp files live under one root (os.tmpdir()/panto-fuzz-lua-*), removed on exit
//   and on SIGINT/SIGTERM; the child host exits when its stdin closes (the runner died).
//   exit 0: no invariant broken; 1: at least one finding (each printed with its seed, case number and the shrunk
//   Lua source); 2: bad usage or the library is not built.
//
// A case is 1-3 Lua programs run AT ONCE on one source. Each program is a list of statements drawn from a grammar of
// snippets: calls to every host function a tool can reach (panto.sniff, json_encode, json_decode, log, progress,
// json.encode/decode/array/null, read_file (and ranges), stat, list_dir, write_file, make_dir, host functions that
// answer at once, later, throw or return bytes, require of lib modules; print, load, the coroutine wrappers (also resuming a
// coroutine another call left in the shared `panto` table), the guarded string
// functions, os.date) with hostile arguments (nil, booleans, integers near 2^31/2^53/2^63, NaN, inf, -0, huge strings,
// NULs, invalid UTF-8, cyclic/deep/sparse/mixed tables, tables whose metamethods raise, yield, loop or recurse,
// functions, coroutines), wrapped in pcall/xpcall/coroutine.wrap/resume/gsub callbacks/sort comparators; pattern
// bombs, string.format/rep/concat/load near the caps; errors with values of every type; and return values of every
// shape (cyclic, deep, NaN, huge, sparse, mixed, media attachments with lying bytes). A program runs either through
// `load` in a long-lived `eval` tool (the same source and VM serve many cases) or as the handler of a fresh tool
// file. Small budgets (BUDGETS below) keep each case short.
//
// Invariants (each broken one is a finding):
//   I1 one result: `source.run` resolves (never rejects) exactly once per call to `{ok:true, parts}` (parts non-empty;
//      text parts are strings within maxTextBytes + a note; media parts carry a Uint8Array) or `{ok:false, error}` (a
//      non-empty string within maxTextBytes + a note); `meta` survives a JSON round trip unchanged, its keys are
//      within maxTextBytes, its strings within maxTextBytes + a note, its JSON within memoryBytes; no progress
//      update arrives after the result.
//   I2 no host fault: no result error is an "internal error in the Lua host", no uncaught exception or unhandled
//      rejection in the host process.
//   I3 time: every call resolves within (wallClockMs + maxBlockingMs) x programs + SLACK_MS; the runner kills a
//      host process that stays silent past that bound plus CHILD_GRACE_MS (a hang is a finding).
//   I4 memory: the host's RSS grows by at most RSS_GROWTH_MB during a case; the host process survives (no OOM).
//   I5 reuse: after every case a trivial tool on the same source (and the `eval` tool, when the case used it)
//      still answers correctly; media parts go through the real media pipeline (`toStoredParts`) without a rejection.
//   I6 no prototype pollution: the own property names of Object/Array/Function/String.prototype and of globalThis are
//      the same after every case as before the first.
// CI: `node test/fuzz/fuzz-lua.mjs --seed=$RANDOM` (60 s, needs `npm run build:ts`, no network).

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { caseRng } from './fuzz-common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const dist = path.join(root, 'dist', 'index.js');

const MiB = 1024 * 1024;
/** Small budgets: every case ends quickly. */
export const BUDGETS = {
  wallClockMs: 1000,
  maxBlockingMs: 250,
  memoryBytes: 48 * MiB,
  instructions: 20_000_000,
  maxTextBytes: 4096,
  maxStringBytes: 8 * MiB,
  maxPatternSubjectBytes: 256 * 1024,
  maxAttachmentBytes: 2 * MiB,
  maxReadBytes: 4 * MiB,
};
const SLACK_MS = 6000; // a loaded 2-core machine; worker start-up
const CHILD_GRACE_MS = 8000;
const RSS_GROWTH_MB = 600;
const TEXT_NOTE = 300; // room for a "[... truncated ...]" note
/**
 * `meta` has no cap of its own: it is bounded by the per-string cap and by the memory budget of the Lua table it
 * comes from, so its JSON must not outgrow memoryBytes (a 1e6-integer array is ~7 MB).
 */
const META_MAX_BYTES = BUDGETS.memoryBytes;

// ---------------------------------------------------------------------------------------------------------------
// The grammar (each case draws from its own PRNG: caseRng, test/fuzz/fuzz-common.mjs)
// ---------------------------------------------------------------------------------------------------------------

class Gen {
  constructor(rng) {
    this.r = rng;
    this.n = 0;
  }
  int(n) {
    return Math.floor(this.r() * n);
  }
  chance(p) {
    return this.r() < p;
  }
  pick(list) {
    return list[this.int(list.length)];
  }
  fresh() {
    return `v${this.n++}`;
  }

  number() {
    return this.pick([
      '0',
      '-0.0',
      '1',
      '-1',
      '0/0',
      '1/0',
      '-1/0',
      '2^31',
      '2^31-1',
      '-2^31',
      '2147483647',
      '2147483648',
      'math.maxinteger',
      'math.mininteger',
      'math.maxinteger + 1',
      '2^53',
      '2^53 + 1',
      '9007199254740993',
      '2^63',
      '-2^63',
      '1e308',
      '1e309',
      '5e-324',
      '0.5',
      '3.7',
      'math.huge',
      'math.pi',
      '1e15',
    ]);
  }

  string() {
    const sizes = [
      '10',
      '1000',
      '1e5',
      '256 * 1024 + 1',
      '1024 * 1024',
      '8 * 1024 * 1024',
      '8 * 1024 * 1024 + 1',
    ];
    return this.pick([
      '""',
      '"a"',
      '"hello"',
      '"a\\0b"',
      '"\\0"',
      '"\\xff\\xfe\\xfd"',
      '"\\xc3\\x28"',
      '"\\xed\\xa0\\x80"',
      '"%s%d%q"',
      '"../../etc/passwd"',
      '"/etc/passwd"',
      '".env"',
      '"sub/../.env"',
      '"a.txt"',
      '"sub"',
      '"link"',
      '"."',
      '".."',
      '"\\x89PNG\\r\\n\\26\\n"',
      '"%PDF-1.4\\n"',
      '"\\xff\\xd8\\xff\\xe0"',
      '"GIF89a"',
      '"RIFF\\0\\0\\0\\0WEBPVP8 "',
      '"{\\"a\\":[1,2,{\\"b\\":null}]}"',
      '"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["',
      '("["):rep(100000)',
      '("{\\"a\\":"):rep(1000) .. "1" .. ("}"):rep(1000)',
      '"__proto__"',
      '"{\\"__proto__\\":{\\"polluted\\":1},\\"constructor\\":{\\"prototype\\":{\\"x\\":1}}}"',
      '"1e400"',
      '"-0"',
      'utf8.char(0x10FFFF, 0xD800 & 0x7FF, 0)',
      `("x"):rep(${this.pick(sizes)})`,
      `("\\0\\xff"):rep(${this.pick(sizes)})`,
      'string.char(0, 255, 128, 10, 13)',
      'tostring(0/0)',
    ]);
  }

  /** A function value; `hostile` ones raise, yield, loop, recurse or allocate. */
  func(depth) {
    return this.pick([
      'function() end',
      'function(...) return ... end',
      'function() error("fn raises") end',
      'function() error({ code = 7 }) end',
      'function() error(setmetatable({}, { __tostring = function() error("ts raises") end })) end',
      'function() error() end',
      'function() while true do end end',
      'function() return coroutine.yield(1) end',
      'function() local function r() return 1 + r() end return r() end',
      'function() local s = "x"; while true do s = s .. s end end',
      `function() return ${depth < 2 ? this.value(depth + 1) : '1'} end`,
      'print',
      'panto.log',
      'error',
      'coroutine.yield',
      'tostring',
    ]);
  }

  metatable(depth) {
    const events = [
      '__index',
      '__newindex',
      '__tostring',
      '__eq',
      '__len',
      '__pairs',
      '__gc',
      '__close',
      '__call',
      '__concat',
      '__lt',
      '__le',
      '__add',
      '__unm',
      '__name',
      '__metatable',
      '__mode',
    ];
    const parts = [];
    const k = 1 + this.int(4);
    for (let i = 0; i < k; i++) {
      const ev = this.pick(events);
      let v;
      if (ev === '__name') v = this.pick(['"json.array"', '"x"', '1', `("n"):rep(1e5)`]);
      else if (ev === '__metatable') v = this.pick(['false', '"locked"', '{}']);
      else if (ev === '__mode') v = this.pick(['"k"', '"v"', '"kv"']);
      else if (ev === '__index' && this.chance(0.3)) v = '{ text = "from index", data = "x" }';
      else v = this.func(depth + 1);
      parts.push(`${ev} = ${v}`);
    }
    return `{ ${parts.join(', ')} }`;
  }

  table(depth) {
    const d = depth + 1;
    switch (this.int(16)) {
      case 0:
        return '{}';
      case 1:
        return `{ ${this.value(d)}, ${this.value(d)}, ${this.value(d)} }`;
      case 2:
        return `{ [1] = ${this.value(d)}, [${this.pick(['1000', '2^31', '1e9', '-1', '0', '1.5'])}] = ${this.value(d)} }`;
      case 3:
        return `{ ${this.value(d)}, a = ${this.value(d)}, [true] = 1 }`;
      case 4:
        return '(function() local t = {}; t.self = t; t[1] = t; return t end)()';
      case 5:
        return `(function() local t = {}; for i = 1, ${this.pick(['63', '64', '65', '200', '10000'])} do t = { t } end; return t end)()`;
      case 6:
        return `(function() local t = {}; for i = 1, ${this.pick(['1000', '100000', '1000000'])} do t[i] = i end; return t end)()`;
      case 7:
        return 'panto.json.array({})';
      case 8:
        return `panto.json.array({ [1] = 1, [${this.pick(['3', '100', '1e6'])}] = 2 })`;
      case 9:
        return '{ [1] = "one", ["1"] = "string one" }';
      case 10:
        return `{ [${this.pick(['0/0 == 0/0 and 1 or 2', '1/0', '2^53', '-0.0', '"__proto__"', '"constructor"'])}] = ${this.value(d)} }`;
      case 11:
      case 12:
      case 13:
        return `setmetatable({ ${depth < 2 ? this.value(d) : '1'} }, ${this.metatable(d)})`;
      case 14:
        return '{ __proto__ = { polluted = true }, constructor = { prototype = { polluted = true } } }';
      default:
        return `{ text = ${this.value(d)}, attachments = ${this.value(d)}, meta = ${this.value(d)} }`;
    }
  }

  value(depth = 0) {
    if (depth > 3) return this.pick(['nil', '1', '"s"', 'true']);
    switch (this.int(12)) {
      case 0:
        return 'nil';
      case 1:
        return this.pick(['true', 'false']);
      case 2:
      case 3:
        return this.number();
      case 4:
      case 5:
        return this.string();
      case 6:
      case 7:
      case 8:
        return this.table(depth);
      case 9:
        return this.func(depth);
      case 10:
        return this.pick([
          'coroutine.create(function() end)',
          'coroutine.create(function() coroutine.yield() end)',
          'coroutine.running()',
          'panto.json.null',
          'panto.json',
          'panto',
          '_G',
          'string',
          'args',
        ]);
      default:
        return this.pick(['args', 'args.src', 'ctx']);
    }
  }

  path() {
    return this.chance(0.8) ? this.string() : this.value(1);
  }

  args(k) {
    return Array.from({ length: k }, () => this.value(1)).join(', ');
  }

  /** A call of a host function or a risky library function. */
  call() {
    switch (this.int(32)) {
      case 0:
        return `panto.sniff(${this.args(this.int(3))})`;
      case 1:
      case 2:
        return `panto.json_encode(${this.args(1 + this.int(2))})`;
      case 3:
      case 4:
        return `panto.json_decode(${this.chance(0.7) ? this.string() : this.args(1)})`;
      case 5:
        return `panto.log(${this.args(this.int(4))})`;
      case 6:
        return `panto.progress(${this.args(1 + this.int(2))})`;
      case 7:
        return `panto.json.encode(${this.args(1)})`;
      case 8:
        return `panto.json.decode(${this.string()})`;
      case 9:
        return `panto.json.array(${this.args(this.int(2))})`;
      case 10:
        return `panto.read_file(${this.path()})`;
      case 11:
        return `panto.stat(${this.path()})`;
      case 12:
        return `panto.list_dir(${this.chance(0.2) ? '' : this.path()})`;
      case 13:
        return `print(${this.args(this.int(4))})`;
      case 14:
        return `load(${this.pick([
          '"return 1"',
          '"\\27Lua\\x53\\0"',
          '"return ..."',
          '"syntax error here"',
          '("x = 1 "):rep(1e5)',
          'string.rep("(", 300) .. "1" .. string.rep(")", 300)',
          '"return " .. ("{"):rep(300) .. ("}"):rep(300)',
          'function() return nil end',
          'function() return "return 1" end',
          'function() return 1 end',
        ])}, ${this.pick(['nil', '"=weird"', '"@/etc/passwd"', '"\\0name"', '("n"):rep(1e5)', '{}'])}, ${this.pick(['nil', '"t"', '"b"', '"bt"', '1'])}, ${this.pick(['nil', '{}', '_G', 'setmetatable({}, { __index = function() error("env") end })', '1'])})`;
      case 15:
        return this.pick([
          'string.find(string.rep("a", 1e5), ("a-"):rep(30) .. "b")',
          'string.find(string.rep("a", 256 * 1024), ("a-"):rep(30) .. "b")',
          'string.match(("("):rep(1e4), "%b()")',
          'string.gsub(("ab"):rep(1e4), "%f[%w]%w+", ("r"):rep(1e5))',
          'string.gsub(("x"):rep(1e4), "x", ("%0"):rep(1000))',
          'string.rep("ab", 2^31)',
          'string.rep("", 2^31 - 1)',
          'string.rep("x", 8 * 1024 * 1024, ",")',
          'string.rep("x", -1)',
          'string.rep("x", 1e308)',
          'string.rep("x", 0/0)',
          'string.format("%99999d", 1)',
          'string.format("%099d", 1)',
          'string.format("%.99f", 1e308)',
          'string.format("%q", 0/0)',
          'string.format("%q", ("\\0"):rep(1e6))',
          'string.format("%s", setmetatable({}, { __tostring = function() return ("z"):rep(1e6) end }))',
          'string.format("%s", setmetatable({}, { __tostring = function() return {} end }))',
          'string.format("%d", 2^63)',
          'string.format("%c", 2^40)',
          'string.format(("%s"):rep(1000), 1)',
          'table.concat((function() local t = {}; for i = 1, 2e5 do t[i] = "abcdefgh" end; return t end)())',
          'table.concat({ 1, {}, 3 })',
          'table.concat({}, "x", 1, 2^31)',
          'table.unpack({}, 1, 1e7)',
          'table.unpack({}, 1, 2^31)',
          'table.insert({}, 2^31, 1)',
          'table.move({ 1, 2, 3 }, 1, 2^31, 2)',
          'select(-1)',
          'select(2^31, 1)',
          'string.pack("i16", 2^63)',
          'string.pack("s1", ("x"):rep(300))',
          'string.unpack("z", "abc", 10)',
          'string.byte(("x"):rep(1e6), 1, -1)',
          'string.char(table.unpack((function() local t = {}; for i = 1, 1e5 do t[i] = 65 end; return t end)()))',
          'utf8.char(2^31)',
          'utf8.len("\\xff", 1, 2^31)',
          'utf8.codepoint(("\\xe4\\xbd\\xa0"):rep(1e5), 1, -1)',
          'tostring(setmetatable({}, { __tostring = function() return 1 end }))',
          'tostring(setmetatable({}, { __name = ("n"):rep(1e6) }))',
          'math.floor(0/0)',
          'math.tointeger(2^53)',
          'math.random(0)',
          'math.random(2^31, 2^31 + 1)',
          'math.fmod(1, 0)',
          '1 // 0',
          '1 % 0',
          'math.mininteger // -1',
          'os.date("!%Y-%m-%dT%H:%M:%S", 2^53)',
          'os.date("*t", 1e300)',
          'os.date(("%c"):rep(1e4))',
          'os.date("%Ez")',
          'os.time({ year = 1e9, month = 1, day = 1 })',
          'os.time({ year = 0/0, month = 1, day = 1 })',
          'os.time({})',
          'os.difftime(1/0, 0/0)',
          'tonumber("0x" .. ("f"):rep(1000))',
          'tonumber("1", 36.5)',
          'tonumber(("9"):rep(1e5))',
          'next({}, "nokey")',
          'rawlen(1)',
          'rawequal()',
          'setmetatable("x", {})',
          'getmetatable("").__index',
          'ipairs(nil)',
        ]);
      case 16:
      case 17:
        return `coroutine.wrap(${this.func(0)})(${this.args(this.int(2))})`;
      case 18:
        return `coroutine.resume(coroutine.create(${this.func(0)}), ${this.args(1)})`;
      case 19:
        return `string.gsub("abc", ".", ${this.callbackFn()})`;
      case 20:
        return `table.sort({ 3, 1, 2, 5, 4, 9, 8 }, ${this.chance(0.5) ? this.callbackFn(true) : this.func(0)})`;
      case 21:
        return `tostring(${this.value(0)})`;
      case 22:
        return `#(${this.value(0)})`;
      case 23:
        return `(${this.value(0)}) .. (${this.value(0)})`;
      case 24:
        return `(${this.value(0)}) == (${this.value(0)})`;
      case 26:
        return `panto.write_file(${this.path()}, ${this.args(1)}${this.chance(0.3) ? `, ${this.pick(['{ append = true }', '{ append = 1 }', '{ bad = true }', this.value(1)])}` : ''})`;
      case 27:
        return `panto.make_dir(${this.path()})`;
      case 28:
        return `panto.${this.pick(['echo', 'later', 'boom', 'bytes'])}(${this.args(this.chance(0.9) ? 1 : this.int(3))})`;
      case 29:
        return `require(${this.pick(['"m"', '"missing"', '"../x"', '"m.sub"', '1', 'nil', '("m"):rep(300)', this.value(1)])})`;
      case 30:
        return `panto.read_file(${this.path()}, ${this.pick(['{ offset = 2 }', '{ length = 3 }', '{ offset = -1 }', '{ offset = 1e300 }', '{ length = 0 }', this.value(1)])})`;
      default:
        return `(function() for k, v in pairs(${this.value(0)}) do end end)()`;
    }
  }

  /** A callback that does a host call (gsub/sort callbacks cannot yield) or something hostile. */
  callbackFn(comparator = false) {
    const body = this.pick([
      `local r = ${this.call()}`,
      'local r = panto.read_file("a.txt")',
      'coroutine.yield()',
      'while true do end',
      'error("in callback")',
    ]);
    return comparator ? `function(a, b) ${body}; return a < b end` : `function(c) ${body}; return c end`;
  }

  /** A statement: a (wrapped) call, an error, a loop, a coroutine dance. */
  statement() {
    const c = this.call();
    switch (this.int(16)) {
      case 0:
      case 1:
      case 2:
        return `pcall(function() return ${c} end)`;
      case 3:
        return `xpcall(function() return ${c} end, ${this.pick(['debug and debug.traceback or tostring', 'function(e) error(e) end', 'function(e) while true do end end', 'function(e) return e end', 'print', 'function(e) return panto.read_file("a.txt") end'])})`;
      case 4:
        return `local ${this.fresh()} = ${c}`;
      case 5:
        return `do local co = coroutine.wrap(function() local _ = ${c}; coroutine.yield(1); return ${c} end); pcall(co); pcall(co); pcall(co) end`;
      case 6:
        return `pcall(string.gsub, "abcd", "%w", ${this.callbackFn()})`;
      case 7:
        return `pcall(table.sort, { 5, 4, 3, 2, 1 }, ${this.callbackFn(true)})`;
      case 8:
        return `if ${this.chance(0.5) ? 'true' : 'false'} then error(${this.value(0)}, ${this.pick(['0', '1', '2', '3'])}) end`;
      case 9:
        return `for i = 1, ${this.pick(['3', '100', '10000'])} do pcall(function() return ${c} end) end`;
      case 10:
        return `do local t = setmetatable({}, { __gc = ${this.func(0)}, __close = ${this.func(0)} }); t = nil end`;
      case 11:
        return `do local ok, e = pcall(error, ${this.value(0)}); panto.log(ok, e) end`;
      case 12:
        // Leave a coroutine or function where another call (concurrent or later) of the same tool finds it: the
        // panto table is shared by all calls of a tool file.
        return `pcall(function() panto.shared = ${this.pick(['coroutine.create', 'coroutine.wrap'])}(function() for i = 1, 3 do local _ = ${c}; coroutine.yield(i) end end) end)`;
      case 13:
        return 'pcall(function() local s = panto.shared; if type(s) == "thread" then return coroutine.resume(s) elseif s then return s() end end)';
      default:
        return `pcall(function() return ${c} end)`;
    }
  }

  attachment() {
    const data = this.pick([
      '"\\x89PNG\\r\\n\\26\\n" .. ("\\0"):rep(100)',
      '"\\x89PNG\\r\\n\\26\\n\\0\\0\\0\\rIHDR\\x7f\\xff\\xff\\xff\\x7f\\xff\\xff\\xff\\8\\6\\0\\0\\0"',
      '"\\xff\\xd8\\xff\\xe0" .. ("\\xff"):rep(1000)',
      '"\\xff\\xd8\\xff\\xc0\\0\\17\\8\\xff\\xff\\xff\\xff\\3\\1\\34\\0\\2\\17\\1\\3\\17\\1"',
      '"GIF89a\\xff\\xff\\xff\\xff\\0\\0\\0"',
      '"RIFF\\xff\\xff\\xff\\xffWEBPVP8X" .. ("\\xff"):rep(20)',
      '"%PDF-1.4\\n" .. ("garbage"):rep(100)',
      '"%PDF-"',
      '"not media at all"',
      '""',
      '("\\0"):rep(2 * 1024 * 1024 + 1)',
      'panto.read_file("lie.png")',
      'panto.read_file("a.txt")',
      '1',
      '{}',
    ]);
    const mt = this.pick([
      'nil',
      '"image/png"',
      '"image/jpeg"',
      '"application/pdf"',
      '"image/gif"',
      '"image/webp"',
      '"text/plain"',
      '"image/svg+xml"',
      '("m"):rep(1000)',
      '1',
      '{}',
    ]);
    const name = this.pick(['nil', '"x.png"', '"../../x"', '("n"):rep(5000)', '"\\0"', '1']);
    return `{ data = ${data}, media_type = ${mt}, name = ${name} }`;
  }

  returnStatement() {
    switch (this.int(12)) {
      case 0:
        return `return ${this.value(0)}`;
      case 1:
        return `return nil, ${this.value(0)}`;
      case 2:
        return `return ${this.value(0)}, ${this.value(0)}`;
      case 3:
        return `return { text = ${this.chance(0.6) ? this.string() : this.value(0)} }`;
      case 4:
      case 5:
        return `return { text = "media", attachments = { ${Array.from({ length: 1 + this.int(3) }, () => this.attachment()).join(', ')} } }`;
      case 6:
        return `return { text = "meta", meta = ${this.value(0)} }`;
      case 7:
        return `return { text = "meta", meta = { a = ${this.value(1)}, b = { ${this.value(1)} }, [${this.pick(['1', '"1"', '2^53', '1.5', 'true', '("k"):rep(1e5)', '("\\xff"):rep(5000)'])}] = 1 } }`;
      case 8:
        return `error(${this.value(0)})`;
      case 9:
        return `return ${this.call()}`;
      case 10:
        return `return coroutine.running()`;
      default:
        return 'return "ok"';
    }
  }

  /** One program: statements and a return. */
  program() {
    const k = this.int(4);
    const stmts = Array.from({ length: k }, () => this.statement());
    stmts.push(this.returnStatement());
    return stmts;
  }
}

/** Case `index` of run `seed`: 1-3 programs run at once, how they run, and where. */
export function generateCase(seed, index, isolationMode) {
  const g = new Gen(caseRng(seed, index));
  const programs = Array.from({ length: g.chance(0.8) ? 1 : 2 + g.int(2) }, () => g.program());
  const mode = g.chance(0.7) ? 'eval' : 'file';
  const isolation = isolationMode === 'mixed' ? (g.chance(0.8) ? 'thread' : 'worker') : isolationMode;
  return { seed, index, mode, isolation, programs };
}

// ---------------------------------------------------------------------------------------------------------------
// Child side: runs cases sent as JSON lines on stdin, answers one line each.
// ---------------------------------------------------------------------------------------------------------------
/** What the fuzz tools declare: reading, writing in the workspace and the host functions below (no exec/fetch). */
const CAPS =
  '{ "read_file", "stat", "list_dir", "write_file", "make_dir", "echo", "later", "boom", "bytes" }';
const GRANT = ['read_file', 'stat', 'list_dir', 'write_file', 'make_dir'];
/** Host functions: echo (answers at once), later (a promise), boom (throws), bytes (a Uint8Array of n bytes). */
const HOST_FUNCTIONS = {
  echo: (a) => a,
  later: (a) => new Promise((r) => setImmediate(() => r(a))),
  boom: () => {
    throw new Error('boom');
  },
  bytes: (a) => new Uint8Array(Math.max(0, Math.min(1e6, Number(a?.n ?? a) || 0))).fill(0xff),
};
const MODULE = 'local M = { loads = 0 }; function M.read() return panto.read_file("a.txt") end; return M';

const EVAL_TOOL = `return { name = "eval", description = "runs a fuzz program", capabilities = ${CAPS},
  parameters = { type = "object", properties = { src = { type = "string" } } },
  handler = function(args, ctx)
    local f, e = load(args.src, "=case")
    if not f then return nil, "compile: " .. tostring(e) end
    return f(args, ctx)
  end }`;
const HONEST_TOOL =
  'return { name = "honest", description = "d", handler = function() return "still serving" end }';

function fileTool(body) {
  return `return { name = "case", description = "fuzz case", capabilities = ${CAPS},
  handler = function(args, ctx)
${body}
end }`;
}

function snapshotPrototypes() {
  const objs = {
    Object: Object.prototype,
    Array: Array.prototype,
    Function: Function.prototype,
    String: String.prototype,
    globalThis,
  };
  return Object.fromEntries(Object.entries(objs).map(([k, o]) => [k, Reflect.ownKeys(o).map(String).sort()]));
}

async function child(tempRoot) {
  const { LuaToolSource, toStoredParts } = await import(dist);
  const workspace = await mkdtemp(path.join(tempRoot, 'ws-'));
  await writeFile(path.join(workspace, 'a.txt'), 'hello\n');
  await writeFile(path.join(workspace, '.env'), 'SECRET=1\n');
  await writeFile(
    path.join(workspace, 'lie.png'),
    Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(64, 0xff)]),
  );
  await mkdir(path.join(workspace, 'sub'));
  await writeFile(path.join(workspace, 'sub', 'b.txt'), 'b');
  await symlink('/etc/passwd', path.join(workspace, 'link')).catch(() => {});
  const toolDir = await mkdtemp(path.join(tempRoot, 'tools-'));
  await writeFile(path.join(toolDir, 'eval.lua'), EVAL_TOOL);
  await mkdir(path.join(toolDir, 'lib', 'm'), { recursive: true });
  await writeFile(path.join(toolDir, 'lib', 'm.lua'), MODULE);
  await writeFile(path.join(toolDir, 'lib', 'm', 'sub.lua'), 'return require("m")');
  await writeFile(path.join(toolDir, 'honest.lua'), HONEST_TOOL);
  const faults = [];
  process.on('uncaughtException', (err) => faults.push(`uncaught exception: ${err?.stack ?? err}`));
  process.on('unhandledRejection', (err) => faults.push(`unhandled rejection: ${err?.stack ?? err}`));
  const protos = snapshotPrototypes();
  const evalSources = new Map();
  // Host-side faults the runtime logs (with their JS stack): attached to the case's problems.
  const hostLog = (e) => {
    if (/failed in the host/.test(e.message)) faults.push(`host log: ${e.message}\n${e.traceback ?? ''}`);
  };
  const openEval = async (isolation) => {
    let s = evalSources.get(isolation);
    if (!s) {
      s = await LuaToolSource.fromDir(toolDir, {
        budgets: BUDGETS,
        isolation,
        capabilities: GRANT,
        hostFunctions: HOST_FUNCTIONS,
        workspaceRoot: workspace,
        log: hostLog,
        worker: { watchdogMs: BUDGETS.maxBlockingMs + 3000 },
      });
      evalSources.set(isolation, s);
    }
    return s;
  };

  const runCase = async (c) => {
    const problems = [];
    const notes = [];
    const rss0 = process.memoryUsage().rss;
    let rssPeak = rss0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 25);
    let source;
    let fresh = null;
    try {
      if (c.mode === 'eval') source = await openEval(c.isolation);
      else {
        const dir = await mkdtemp(path.join(tempRoot, 'case-'));
        await writeFile(path.join(dir, 'case.lua'), fileTool(c.programs[0].join('\n')));
        await writeFile(path.join(dir, 'honest.lua'), HONEST_TOOL);
        source = await LuaToolSource.fromDir(dir, {
          budgets: BUDGETS,
          isolation: c.isolation,
          capabilities: GRANT,
          hostFunctions: HOST_FUNCTIONS,
          workspaceRoot: workspace,
          log: hostLog,
          worker: { watchdogMs: BUDGETS.maxBlockingMs + 3000 },
        });
        fresh = { source, dir };
        if (source.loadErrors.length > 0)
          problems.push(`I5 case tool did not load: ${source.loadErrors[0].message}`);
      }
      const bound = (BUDGETS.wallClockMs + BUDGETS.maxBlockingMs) * c.programs.length + SLACK_MS;
      const t0 = performance.now();
      const results = await Promise.all(
        c.programs.map(async (prog, i) => {
          let settled = false;
          let late = 0;
          const update = () => {
            if (settled) late++;
          };
          let r;
          try {
            r =
              c.mode === 'eval'
                ? await source.run(
                    'eval',
                    { src: `local args, ctx = ...\n${prog.join('\n')}` },
                    { update, toolCallId: `c${c.index}-${i}` },
                  )
                : await source.run('case', {}, { update, toolCallId: `c${c.index}-${i}` });
          } catch (err) {
            problems.push(`I1 run rejected: ${err?.stack ?? err}`);
            return null;
          } finally {
            settled = true;
          }
          const ms = performance.now() - t0;
          if (ms > bound) problems.push(`I3 program ${i} took ${ms.toFixed(0)} ms > ${bound}`);
          await new Promise((res) => setImmediate(res));
          if (late > 0) problems.push(`I1 ${late} progress update(s) after the result of program ${i}`);
          checkResult(r, i, problems, notes);
          return r;
        }),
      );
      for (const r of results) {
        if (r?.ok && r.parts.some((p) => p.type === 'media')) {
          try {
            await toStoredParts(r.parts);
          } catch (err) {
            problems.push(`I5 toStoredParts rejected: ${err?.stack ?? err}`);
          }
        }
      }
      const after = await source.run('honest', {});
      if (!after.ok || after.parts[0]?.text !== 'still serving')
        problems.push(`I5 honest tool afterwards: ${short(after)}`);
      if (c.mode === 'eval') {
        const again = await source.run('eval', { src: 'return "again"' });
        if (!again.ok || again.parts[0]?.text !== 'again')
          problems.push(`I5 eval tool afterwards: ${short(again)}`);
      }
    } catch (err) {
      problems.push(`I1 host threw: ${err?.stack ?? err}`);
    } finally {
      clearInterval(sampler);
    }
    if (problems.some((p) => p.startsWith('I5')) && c.mode === 'eval') {
      await evalSources.get(c.isolation)?.close();
      evalSources.delete(c.isolation);
    }
    if (fresh) {
      await fresh.source.close();
      await rm(fresh.dir, { recursive: true, force: true });
    }
    const grown = (Math.max(rssPeak, process.memoryUsage().rss) - rss0) / MiB;
    if (grown > RSS_GROWTH_MB) problems.push(`I4 RSS grew ${grown.toFixed(0)} MB > ${RSS_GROWTH_MB}`);
    const now = snapshotPrototypes();
    if (!isDeepStrictEqual(now, protos)) problems.push(`I6 prototype pollution: ${short(now)}`);
    problems.push(...faults.splice(0).map((f) => `I2 ${f}`));
    return { problems, notes, rssMb: Math.round(process.memoryUsage().rss / MiB) };
  };

  let buffer = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', async (chunk) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line === 'quit') {
        for (const s of evalSources.values()) await s.close();
        await rm(workspace, { recursive: true, force: true });
        await rm(toolDir, { recursive: true, force: true });
        process.exit(0);
      }
      const c = JSON.parse(line);
      const out = await runCase(c);
      process.stdout.write(`@@DONE ${c.index} ${JSON.stringify(out)}\n`);
    }
  });
  // The parent is gone (or closed the pipe): leave now, even while a worker or a timer would keep the loop alive.
  process.stdin.on('end', () => {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(toolDir, { recursive: true, force: true });
    process.exit(0);
  });
  process.stdout.write('@@READY\n');
}

function checkResult(r, i, problems, notes) {
  if (r === null) return;
  const maxText = BUDGETS.maxTextBytes + TEXT_NOTE;
  if (typeof r !== 'object' || typeof r.ok !== 'boolean') {
    problems.push(`I1 program ${i}: not a CallResult: ${short(r)}`);
    return;
  }
  if (r.ok) {
    if (!Array.isArray(r.parts) || r.parts.length === 0) problems.push(`I1 program ${i}: ok without parts`);
    for (const p of r.parts ?? []) {
      if (p.type === 'text') {
        if (typeof p.text !== 'string') problems.push(`I1 program ${i}: text part without a string`);
        else if (Buffer.byteLength(p.text) > maxText)
          problems.push(`I1 program ${i}: text of ${Buffer.byteLength(p.text)} bytes`);
      } else if (p.type === 'media') {
        if (!(p.data instanceof Uint8Array)) problems.push(`I1 program ${i}: media part without bytes`);
      } else problems.push(`I1 program ${i}: unknown part ${short(p)}`);
    }
    if (r.meta !== undefined) {
      let round;
      try {
        round = JSON.parse(JSON.stringify(r.meta));
      } catch (err) {
        problems.push(`I1 program ${i}: meta is not JSON: ${err.message}`);
      }
      if (round !== undefined && !isDeepStrictEqual(round, r.meta))
        problems.push(`I1 program ${i}: meta changes in a JSON round trip: ${short(r.meta)}`);
      const over = metaOverCap(r.meta);
      if (over !== null) problems.push(`I1 program ${i}: meta ${over}`);
    }
  } else {
    if (typeof r.error !== 'string' || r.error.length === 0)
      problems.push(`I1 program ${i}: error is not a non-empty string: ${short(r.error)}`);
    else {
      if (Buffer.byteLength(r.error) > maxText)
        problems.push(`I1 program ${i}: error of ${Buffer.byteLength(r.error)} bytes`);
      if (/internal error in the Lua host/.test(r.error)) problems.push(`I2 program ${i}: ${short(r.error)}`);
      if (/a Lua library function failed/.test(r.error)) notes.push(r.error.slice(0, 160));
    }
  }
}

/**
 * Where `meta` breaks the text cap: a key longer than maxTextBytes, a string longer than maxTextBytes + a note, or
 * more than META_MAX_BYTES of JSON in all; null when it keeps it.
 */
function metaOverCap(meta) {
  const stack = [meta];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (Buffer.byteLength(v) > BUDGETS.maxTextBytes + TEXT_NOTE)
        return `has a string of ${Buffer.byteLength(v)} bytes`;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (Buffer.byteLength(k) > BUDGETS.maxTextBytes) return `has a key of ${Buffer.byteLength(k)} bytes`;
        stack.push(x);
      }
    }
  }
  const total = Buffer.byteLength(JSON.stringify(meta) ?? '');
  return total > META_MAX_BYTES ? `is ${total} bytes of JSON` : null;
}

const short = (v) => {
  let s;
  try {
    s = typeof v === 'string' ? v : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return s === undefined ? String(v) : s.length > 300 ? `${s.slice(0, 300)}... (${s.length} chars)` : s;
};

// ---------------------------------------------------------------------------------------------------------------
// Parent side: feeds cases to a child host, restarts it after a crash or hang, shrinks findings.
// ---------------------------------------------------------------------------------------------------------------
class Host {
  /** `tempRoot`: the directory the child makes its workspace, tool and case directories in (the parent removes it). */
  constructor(tempRoot) {
    this.tempRoot = tempRoot;
    this.proc = null;
    this.waiting = null;
    this.peakRssMb = 0;
  }
  async start() {
    const p = spawn(
      process.execPath,
      ['--max-old-space-size=1024', fileURLToPath(import.meta.url), '--child', this.tempRoot],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.proc = p;
    this.stderr = '';
    let out = '';
    p.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    p.stdout.on('data', (d) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (this.waiting) this.waiting.line(line);
      }
    });
    p.on('exit', (code, signal) => {
      this.proc = null;
      if (this.waiting) this.waiting.exit(code, signal);
    });
    const ready = await this.#expect(/^@@READY/, 60_000);
    if (!ready.ok) throw new Error(`fuzz host did not start: ${ready.why}\n${this.stderr}`);
  }
  #expect(re, ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        resolve({ ok: false, why: `silent for ${ms} ms (hang)` });
      }, ms);
      this.waiting = {
        line: (l) => {
          if (!re.test(l)) return;
          clearTimeout(timer);
          this.waiting = null;
          resolve({ ok: true, line: l });
        },
        exit: (code, signal) => {
          clearTimeout(timer);
          this.waiting = null;
          resolve({
            ok: false,
            why: `host process died (${signal ?? `exit ${code}`}): ${this.stderr.slice(-1500)}`,
          });
        },
      };
    });
  }
  /** Run one case; returns its problems (a dead or hung host is a problem, and the host is restarted). */
  async run(c) {
    if (!this.proc) await this.start();
    const bound =
      (BUDGETS.wallClockMs + BUDGETS.maxBlockingMs) * c.programs.length +
      SLACK_MS +
      CHILD_GRACE_MS +
      (c.isolation === 'worker' || c.mode === 'file' ? 5000 : 0);
    this.proc.stdin.write(`${JSON.stringify(c)}\n`);
    const r = await this.#expect(new RegExp(`^@@DONE ${c.index} `), bound);
    if (!r.ok) {
      this.kill();
      return { problems: [`I3/I4 ${r.why}`], notes: [] };
    }
    const out = JSON.parse(r.line.slice(`@@DONE ${c.index} `.length));
    this.peakRssMb = Math.max(this.peakRssMb, out.rssMb);
    return out;
  }
  kill() {
    if (this.proc) {
      this.proc.kill('SIGKILL');
      this.proc = null;
    }
  }
  stop() {
    if (this.proc) this.proc.stdin.write('quit\n');
  }
}

/** The invariant of a problem line (`I3`, ...), to tell whether a shrunk case still fails the same way. */
const kinds = (problems) => new Set(problems.map((p) => p.split(' ')[0]));

/**
 * Remove statements (and programs) while the case still breaks an invariant of the same kind. Stops at `deadline`
 * (a performance.now() time) with the smallest case found so far, so a hang finding (each candidate up to ~20 s)
 * cannot stretch a bounded run; `timedOut` says whether it stopped early.
 */
async function shrink(host, c, problems, deadline) {
  const want = kinds(problems);
  let timedOut = false;
  const stillFails = async (cand) => {
    if (performance.now() > deadline) {
      timedOut = true;
      return null;
    }
    const r = await host.run({ ...cand, index: c.index });
    return r.problems.length > 0 && [...kinds(r.problems)].some((k) => want.has(k)) ? r : null;
  };
  let best = c;
  let bestProblems = problems;
  for (let pi = 0; !timedOut && best.programs.length > 1 && pi < best.programs.length; ) {
    const cand = { ...best, programs: best.programs.filter((_, j) => j !== pi) };
    const r = await stillFails(cand);
    if (r) {
      best = cand;
      bestProblems = r.problems;
    } else pi++;
  }
  for (let pi = 0; !timedOut && pi < best.programs.length; pi++) {
    for (let si = 0; !timedOut && si < best.programs[pi].length; ) {
      const prog = best.programs[pi];
      const reduced =
        si === prog.length - 1 ? [...prog.slice(0, si), 'return "ok"'] : prog.filter((_, j) => j !== si);
      if (reduced.join('\n') === prog.join('\n')) {
        si++;
        continue;
      }
      const cand = { ...best, programs: best.programs.map((p, j) => (j === pi ? reduced : p)) };
      const r = await stillFails(cand);
      if (r) {
        best = cand;
        bestProblems = r.problems;
      } else si++;
    }
  }
  return { c: best, problems: bestProblems, timedOut };
}

async function parent(argv) {
  if (!existsSync(dist)) {
    console.error('fuzz-lua needs the built library: run `npm run build:ts` first');
    process.exit(2);
  }
  const opt = (name, dflt) => {
    const a = argv.find((x) => x.startsWith(`--${name}=`));
    return a === undefined ? dflt : a.slice(name.length + 3);
  };
  const seconds = Number(opt('seconds', '60'));
  const seed = Number(opt('seed', String(Date.now() % 2 ** 31))) >>> 0;
  const only = opt('case', undefined);
  const isolationMode = opt('isolation', 'mixed');
  const doShrink = !argv.includes('--no-shrink');
  const verbose = argv.includes('--verbose');
  if (!Number.isFinite(seconds) || seconds <= 0 || !['thread', 'worker', 'mixed'].includes(isolationMode)) {
    console.error(
      'usage: fuzz-lua.mjs [--seconds=60] [--seed=S] [--case=N] [--isolation=thread|worker|mixed]',
    );
    process.exit(2);
  }
  console.log(
    `fuzz-lua: seed ${seed}, ${only === undefined ? `${seconds} s` : `case ${only}`}, isolation ${isolationMode}`,
  );
  // One temp root for everything the child makes: removed on exit, on SIGINT/SIGTERM, and after a SIGKILLed child.
  const tempRoot = mkdtempSync(path.join(tmpdir(), 'panto-fuzz-lua-'));
  const host = new Host(tempRoot);
  process.on('exit', () => {
    host.kill();
    rmSync(tempRoot, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(sig === 'SIGINT' ? 130 : 143));
  const shrinkSeconds = Math.min(60, seconds);
  const started = performance.now();
  const findings = [];
  const notes = new Map();
  let cases = 0;
  let programs = 0;
  const deadline = started + seconds * 1000;
  for (let index = only === undefined ? Number(opt('from', '0')) : Number(only); ; index++) {
    if (only === undefined && performance.now() > deadline) break;
    const c = generateCase(seed, index, isolationMode);
    if (verbose)
      console.log(
        `case ${index} (${c.mode}, ${c.isolation}):\n${c.programs.map((p) => p.join('\n')).join('\n----\n')}`,
      );
    const r = await host.run(c);
    cases++;
    programs += c.programs.length;
    for (const n of r.notes) notes.set(n, (notes.get(n) ?? 0) + 1);
    if (r.problems.length > 0) {
      const shrunk = doShrink
        ? await shrink(host, c, r.problems, performance.now() + shrinkSeconds * 1000)
        : { c, problems: r.problems };
      findings.push({ index, ...shrunk });
      console.log(
        `\nFINDING seed ${seed} case ${index} (${c.mode}, ${c.isolation}); replay: node test/fuzz/fuzz-lua.mjs --seed=${seed} --case=${index}`,
      );
      console.log(`  ${shrunk.problems.join('\n  ')}`);
      if (shrunk.timedOut)
        console.log(`  (shrinking stopped after ${shrinkSeconds} s; the case below is partly shrunk)`);
      console.log(
        `  shrunk (${shrunk.c.mode}, ${shrunk.c.isolation}):\n${shrunk.c.programs.map((p) => `    ${p.join('\n    ')}`).join('\n    ----\n')}`,
      );
    }
    if (only !== undefined) break;
  }
  host.stop();
  const secs = ((performance.now() - started) / 1000).toFixed(0);
  console.log(
    `\nfuzz-lua: ${cases} cases (${programs} programs) in ${secs} s, seed ${seed}, ${findings.length} finding(s), host peak RSS ${host.peakRssMb} MB`,
  );
  if (notes.size > 0) {
    console.log('library functions that failed inside fengari (typed Lua errors, not findings):');
    for (const [n, k] of notes) console.log(`  ${k} x ${n}`);
  }
  process.exit(findings.length === 0 ? 0 : 1);
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') await child(argv[1] ?? tmpdir());
else await parent(argv);
