/**
 * The heavy hostile session files (too big for the unit run): each case runs in its own child process, bounded in
 * wall time (a timeout kills it) and in memory (its peak RSS is checked against a bound stated with the case).
 * Run after `npm run build:ts`: `npm run test:hostile-sessions`. Exits 1 when a check fails.
 * - One 64 MiB text on one line (escapes, 2-, 3- and 4-byte UTF-8): loads on the one-pass and the index path, the
 *   text read back is the text written (SHA-256 and length).
 * - A million short texts (1000 lines of 1000 parts): loads, every part there.
 * - A 6 MB line of `],` (more closes than opens): ERR_SESSION_CORRUPT naming line 2, on every path.
 * - One line of 160k text parts (24 MB): loads on every path.
 * - A tool input nested a million levels (issue: it used to load, then `panto session` and every resumed turn died
 *   of stack overflow): ERR_SESSION_FORMAT naming the line on every path, and `panto session` (plain and `--json`)
 *   exits with that error, not a stack trace.
 * - 64 MiB of `m` and of `\"compactions\"` (what makes the compaction probe's search slowest) before the end, the
 *   marker itself before them: the probe finds it, and the text loads on both paths.
 * Prints each case's wall time and peak RSS.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const HEADER = JSON.stringify({ type: 'session', version: 1, id: 'h', created: '2026-01-01T00:00:00Z' });
const MB = 1024 * 1024;
const sha = (s) => createHash('sha256').update(s).digest('hex');

/** Write `path` from an iterator of strings (never one big string in this process). */
function writeFile(path, pieces) {
  const fd = openSync(path, 'w');
  for (const p of pieces) writeSync(fd, p);
  closeSync(fd);
}

const UNIT = 'abcdefghijklmnopqrstuvwxyz0123456789 ÿ日本\\"\n😀';
const LITERAL = JSON.stringify(UNIT).slice(1, -1);
const REPS = Math.ceil((64 * MB) / Buffer.byteLength(LITERAL));

const CASES = {
  '64 MiB single text': {
    seconds: 60,
    rssMb: 900,
    *write() {
      yield `${HEADER}\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"`;
      const block = LITERAL.repeat(1024);
      for (let left = REPS; left > 0; left -= 1024) yield left >= 1024 ? block : LITERAL.repeat(left);
      yield '"}]}}\n';
      // A custom "compaction" string value: the probe picks the index path for the second load.
    },
    async check(lib, path, fail) {
      const want = createHash('sha256');
      for (let left = REPS; left > 0; left -= 1024) want.update(UNIT.repeat(Math.min(left, 1024)));
      const wantHash = want.digest('hex');
      for (const eager of [false, true]) {
        const text = (await lib.loadSession(path, { eager })).conversation.messages[0].content[0].text;
        if (text.length !== UNIT.length * REPS) fail(`length ${text.length} !== ${UNIT.length * REPS}`);
        if (sha(text) !== wantHash) fail('the text read back is not the text written');
      }
      const index = await lib.openSessionIndex(path);
      const [entry] = await index.entries(['a']);
      if (sha(entry.message.content[0].text) !== wantHash) fail('the index reads another text');
    },
  },
  '1e6 short texts': {
    seconds: 120,
    rssMb: 1200,
    *write() {
      yield `${HEADER}\n`;
      for (let l = 0; l < 1000; l++) {
        const parts = Array.from(
          { length: 1000 },
          (_, i) => `{"type":"text","text":"t${(l * 1000 + i) % 97}"}`,
        );
        const parent = l === 0 ? 'null' : `"m${l - 1}"`;
        yield `{"type":"message","id":"m${l}","parentId":${parent},"timestamp":"t","message":{"role":"user","content":[${parts.join(',')}]}}\n`;
      }
    },
    async check(lib, path, fail) {
      const s = await lib.loadSession(path);
      const parts = s.conversation.messages.reduce((n, m) => n + m.content.length, 0);
      if (parts !== 1_000_000) fail(`${parts} parts loaded`);
      if (s.conversation.messages[999].content[999].text !== `t${999_999 % 97}`)
        fail('the last part differs');
    },
  },
  '6 MB line of "],"': {
    seconds: 30,
    rssMb: 400,
    *write() {
      yield `${HEADER}\n${'],'.repeat(3_000_000)}\n`;
    },
    async check(lib, path, fail) {
      for (const [name, load] of everyPath(lib, path)) {
        const err = await load().then(
          () => undefined,
          (e) => e,
        );
        if (err?.code !== 'ERR_SESSION_CORRUPT' || !err.message.includes(`${path}:2:`))
          fail(`${name}: ${err?.code ?? 'loaded'} ${String(err?.message).slice(0, 120)}`);
      }
    },
  },
  '160k text parts on one line': {
    seconds: 60,
    rssMb: 800,
    *write() {
      const part = JSON.stringify({ type: 'text', text: `${'é'.repeat(60)} part` });
      yield `${HEADER}\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[`;
      for (let i = 0; i < 160; i++) yield `${i ? ',' : ''}${Array(1000).fill(part).join(',')}`;
      yield ']}}\n{"type":"custom","id":"b","parentId":"a","timestamp":"t","customType":"n","data":"compaction"}\n';
    },
    async check(lib, path, fail) {
      for (const [name, load] of everyPath(lib, path)) {
        const s = await load();
        if (s.content !== 160_000) fail(`${name}: ${s.content} parts`);
      }
    },
  },
  "the probe's worst bytes: 64 MiB of `m` and of the marker's core": {
    seconds: 60,
    rssMb: 900,
    *write() {
      // The marker sits before the flood: the probe (from the end) searches all of it first.
      yield `${HEADER}\n{"type":"custom","id":"a","parentId":null,"timestamp":"t","customType":"n","data":"compaction"}\n`;
      yield '{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"';
      for (let i = 0; i < 32; i++) yield 'm'.repeat(MB);
      for (let i = 0; i < 32; i++) yield '\\"compactions\\" '.repeat(MB / 16);
      yield '"}]}}\n';
    },
    async check(lib, path, fail) {
      const want = 32 * MB + 14 * 2 * MB;
      for (const eager of [false, true]) {
        const text = (await lib.loadSession(path, { eager })).conversation.messages[0]?.content[0]?.text;
        if (text?.length !== want) fail(`eager ${eager}: text of ${text?.length} characters, not ${want}`);
      }
    },
  },
  'a tool input nested 1e6 levels': {
    seconds: 60,
    rssMb: 500,
    *write() {
      yield `${HEADER}\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}\n`;
      yield '{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"n","input":{"x":';
      yield '['.repeat(1_000_000);
      yield ']'.repeat(1_000_000);
      yield '}}],"stopReason":"tool_use"}}\n';
    },
    async check(lib, path, fail) {
      for (const [name, load] of everyPath(lib, path)) {
        const err = await load().then(
          () => undefined,
          (e) => e,
        );
        if (err?.code !== 'ERR_SESSION_FORMAT' || !/:3: .*nested deeper than/.test(err.message))
          fail(`${name}: ${err?.code ?? 'loaded'} ${String(err?.message).slice(0, 160)}`);
      }
      for (const args of [[], ['--json'], ['--entries']]) {
        const r = spawnSync(process.execPath, [CLI, 'session', path, ...args], {
          encoding: 'utf8',
          timeout: 30_000,
        });
        if (
          r.status === 0 ||
          /Maximum call stack|RangeError| {4}at /.test(r.stderr) ||
          !/ERR_SESSION_FORMAT|nested deeper/.test(r.stderr)
        )
          fail(`panto session ${args.join(' ')}: exit ${r.status}, ${r.stderr.slice(0, 200)}`);
      }
    },
  },
};

/** Every loading path, each reduced to the count of parts in the conversation's first message. */
function everyPath(lib, path) {
  const count = (s) => ({ content: s.conversation.messages[0]?.content?.length, entries: s.entries.length });
  return [
    ['loadSession', async () => count(await lib.loadSession(path))],
    ['loadSession eager', async () => count(await lib.loadSession(path, { eager: true }))],
    [
      'openSessionIndex',
      async () => {
        const ix = await lib.openSessionIndex(path);
        const c = await ix.conversation();
        return { content: c.messages[0]?.content?.length, entries: ix.readAll().length };
      },
    ],
  ];
}

async function child(name, path) {
  const lib = await import(DIST);
  const failures = [];
  const t0 = performance.now();
  await CASES[name].check(lib, path, (what) => failures.push(what));
  process.stdout.write(
    JSON.stringify({ failures, ms: performance.now() - t0, rssMb: process.resourceUsage().maxRSS / 1024 }),
  );
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'panto-hostile-sessions-'));
  let failed = 0;
  try {
    for (const [name, c] of Object.entries(CASES)) {
      const path = join(dir, 'case.jsonl');
      writeFile(path, c.write());
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', name, path], {
        encoding: 'utf8',
        timeout: c.seconds * 1000,
        maxBuffer: 1 << 20,
      });
      let out;
      try {
        out = JSON.parse(r.stdout);
      } catch {
        out = {
          failures: [`no result (exit ${r.status}, signal ${r.signal}): ${String(r.stderr).slice(0, 300)}`],
        };
      }
      if (out.rssMb > c.rssMb) out.failures.push(`peak RSS ${out.rssMb.toFixed(0)} MB over ${c.rssMb} MB`);
      const ok = out.failures.length === 0;
      if (!ok) failed++;
      console.log(
        `${ok ? 'ok  ' : 'FAIL'} ${name}: ${out.ms?.toFixed(0) ?? '?'} ms, peak RSS ${out.rssMb?.toFixed(0) ?? '?'} MB` +
          ` (bounds ${c.seconds} s, ${c.rssMb} MB)`,
      );
      for (const f of out.failures) console.log(`     ${f}`);
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const total = Object.keys(CASES).length;
  console.log(`hostile sessions: ${total - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();
