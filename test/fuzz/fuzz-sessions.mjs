#!/usr/bin/env node
// Seeded generative fuzzer for session files (src/session/) and compaction (src/compaction/).
//
// Usage: npm run build:ts && node test/fuzz/fuzz-sessions.mjs [--seconds=60] [--seed=S] [--area=all|session|compaction]
//        [--verbose] [--cases=N]
// --cases=N stops after N generated cases even when time is left (a run that is a function of the seed alone). The
// last lines print a SHA-256 of the case descriptions in order: two runs of one seed with the same count of cases
// print the same digest.
// Needs the built library (dist/); no network. Prints the seed first; the same seed and the same code give the same
// cases in the same order (seed sessions get stable ids and timestamps; only how many cases fit in --seconds varies). Exits 0 when no invariant broke, 1 when one did (each finding is printed with its
// minimal input, shrunk by dropping lines and bytes while the same invariant still breaks), 2 on a usage error.
//
// Contract — invariants checked on every generated case:
// Session files (seeds: small sessions written by SessionLog itself — text, tool calls and results, images,
// thinking, custom and model_change entries, several compactions, branches — then mutated: lines dropped,
// duplicated, swapped, moved; truncation at any byte; flipped bytes; CRLF; 10k-deep JSON lines; repeated keys;
// id collisions; parent cycles, self-parents, forward and missing parents; `__proto__`/`constructor`/`toString` as
// ids and keys; compactions whose firstKeptEntryId is missing, later, or themselves; huge numbers; wrong types in
// every field; headers repeated or missing; header-only files; non-UTF-8 bytes; NUL bytes):
//  S1 `loadSession` lazy, `loadSession {eager:true}`, `openSessionIndex` (+ `conversation()`, `readAll()`,
//     `entry(leafId)`), `SessionLog.open` lazy and eager (on a copy) each return or throw a `PantoError` whose code is
//     ERR_SESSION_FORMAT or ERR_SESSION_CORRUPT — never another error, a hang (worker watchdog), a stack overflow.
//  S2 no call adds a property to Object.prototype (prototype pollution).
//  S3 lazy (with its `entries` read) and eager give the same header/leaf/model/conversation/entries or the same
//     error code; `openSessionIndex` and both `SessionLog.open`s agree with eager the same way.
//  S4 a conversation that loads is accepted by `toAnthropicMessages`, `toOpenAIChat`, `toOpenAIResponses` and
//     `toGemini` (each returns, or throws a PantoError).
//  S5 after `SessionLog.open` (lazy and eager) + `appendMessage(m)` + close, `loadSession` (lazy and eager) gives the
//     old conversation followed by `m`; after `branch(id)` to an entry of the file + an append, lazy and eager
//     reloads agree and end at the appended message. `openSessionIndex(...).verify()` passes when `readAll` did, and
//     `entries(ids)` gives what `readAll` gives for those ids.
//  S6 a session that loads (eager, entries read) can be written back: `JSON.stringify` and `structuredClone` of its
//     entries and conversation never throw (the loader refuses lines nested deeper than it allows, ERR_SESSION_FORMAT).
// Compaction (generated conversations: tool calls with and without results, results without calls, images and
// documents, huge and empty texts, many tiny messages, summaries of previous compactions):
//  C1 `estimateTokens` returns a finite integer in [0, 2^53 - 1] for every message (options include
//     charsPerToken 5e-324 and patchMultiplier 1e308; image sides and page counts include 1e308), or throws a
//     PantoError for options out of range.
//  C2 `findCutPoint` returns an integer in [0, n]; a cut > 0 never has a tool call before it whose result is at or
//     after it, and never starts at a tool-results message.
//  C3 `compact` with an in-process summarizer stub resolves (null, or a result whose conversation is
//     `replacement` + the kept messages, whose cut obeys C2 and whose tokensBefore/After are integers in
//     [0, 2^53 - 1]) or throws a PantoError; it calls the summarizer at
//     most maxRounds * 4 times.
// Shrinking a finding stops after SHRINK_MS (the partly shrunk input is reported) and posts a heartbeat after every
// try, so it is never mistaken for a hang. Peak RSS is printed at the end. The temp dir is removed on exit and on
// SIGINT/SIGTERM.

import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ownedTempRoot, parseArgs, seededRng, shrinkList } from './fuzz-common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', '..', 'dist', 'index.js');

// ---------------------------------------------------------------------------------------------------------------
// Deterministic PRNG (mulberry32, test/fuzz/fuzz-common.mjs) and helpers
// ---------------------------------------------------------------------------------------------------------------
const prng = seededRng;
/** Longest a finding's shrinking may take (the watchdog's hang limit is 30 s without a message). */
const SHRINK_MS = 20_000;
const STABLE_TIME = '2026-01-01T00:00:00.000Z';
/**
 * `bytes` (a session file SessionLog wrote) with stable values instead of the random and clock-dependent ones: entry
 * ids become 000000000001, 000000000002, ... in order of first appearance (every occurrence replaced), the header id
 * 16 zeros, every `timestamp` and the header's `created` STABLE_TIME. Makes seed files a function of the seed.
 */
function stabilize(bytes) {
  let text = bytes.toString('utf8');
  const ids = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const v = JSON.parse(line);
    if (typeof v.id === 'string' && !ids.includes(v.id)) ids.push(v.id);
  }
  ids.forEach((id, i) => {
    const stable = i === 0 ? '0'.repeat(16) : i.toString(16).padStart(12, '0');
    text = text.replaceAll(`"${id}"`, `"${stable}"`);
  });
  text = text.replace(/"(timestamp|created)":"[^"]*"/g, `"$1":"${STABLE_TIME}"`);
  return Buffer.from(text, 'utf8');
}

const PNG_1x1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const PDF_TINY = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
).toString('base64');
const HOSTILE_IDS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '', '0', 'a1'];
const HUGE_NUMBERS = [1e308, -1e308, 2 ** 53 + 2, -0, 1.7976931348623157e308, 2 ** 53, 1e-320];
/** Image sides and page counts beyond any real file (the session format accepts them as positive integers). */
const HUGE_SIZES = [1e308, 1e200, 1.7976931348623157e308, 2 ** 53, 2 ** 31, 2 ** 31 - 1];

/**
 * Deep equality of JSON-like values (plus `undefined`), with an explicit stack: session values may nest 10k+ levels
 * (util.isDeepStrictEqual recurses and overflows the stack on them).
 */
function isDeepStrictEqual(a, b) {
  const stack = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop();
    if (Object.is(x, y)) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y) || Object.getPrototypeOf(x) !== Object.getPrototypeOf(y))
      return false;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!Object.hasOwn(y, k)) return false;
      stack.push([x[k], y[k]]);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Worker: runs cases, reports each one before it starts (the main thread's watchdog names a hung case)
// ---------------------------------------------------------------------------------------------------------------
async function worker({ seed, seconds, area, verbose, compactionCase, dir, maxCases }) {
  const lib = await import(dist);
  const { loadSession, openSessionIndex, SessionLog, isPantoError, compact, estimateTokens, findCutPoint } =
    lib;
  const serializers = [
    ['toAnthropicMessages', lib.toAnthropicMessages, 'claude-sonnet-4-5'],
    ['toOpenAIChat', lib.toOpenAIChat, 'gpt-4o'],
    ['toOpenAIResponses', lib.toOpenAIResponses, 'gpt-4o'],
    ['toGemini', lib.toGemini, 'gemini-2.5-pro'],
  ];
  const rnd = prng(seed);
  const protoKeys = () => Object.getOwnPropertyNames(Object.prototype).join(',');
  const protoBefore = protoKeys();
  let fileNo = 0;
  const tmp = (ext = 'jsonl') => path.join(dir, `f${fileNo++}.${ext}`);
  const SESSION_CODES = new Set(['ERR_SESSION_FORMAT', 'ERR_SESSION_CORRUPT']);

  // ---- seeds ------------------------------------------------------------------------------------------------
  const summarize = async (req) => `summary of ${req.messages.length} messages, round ${req.round.index}`;
  async function makeSeed(r) {
    const file = tmp();
    const log = await SessionLog.create(file, { model: 'claude-sonnet-4-5', workspace: '/w' });
    const ids = [];
    let call = 0;
    const steps = 4 + r.int(10);
    log.appendMessage({ role: 'system', content: 'You are a test.' });
    for (let s = 0; s < steps; s++) {
      const k = r.int(9);
      if (k <= 1) {
        const content = [
          { type: 'text', text: `user ${s} ${r.pick(['ü', '日本', '🙂', '"', '\\', '\n', ''])}` },
        ];
        if (r.chance(0.3))
          content.push({ type: 'image', mediaType: 'image/png', data: PNG_1x1, width: 1, height: 1 });
        if (r.chance(0.1))
          content.push({
            type: 'document',
            mediaType: 'application/pdf',
            data: PDF_TINY,
            name: 'd.pdf',
            pages: 1,
          });
        ids.push(log.appendMessage({ role: 'user', content }).id);
      } else if (k <= 3) {
        const id = `call_${call++}`;
        ids.push(
          log.appendMessage({
            role: 'assistant',
            content: [
              ...(r.chance(0.4) ? [{ type: 'thinking', text: 'hmm', signature: 'sig' }] : []),
              { type: 'text', text: 'calling' },
              { type: 'tool_call', id, name: 'read', input: { path: 'x', n: [1, null, true] } },
            ],
            stopReason: 'tool_use',
            usage: { inputTokens: 10, outputTokens: 2 },
          }).id,
        );
        if (r.chance(0.85)) {
          const parts = [{ type: 'text', text: 'result' }];
          if (r.chance(0.4))
            parts.push({ type: 'image', mediaType: 'image/png', data: PNG_1x1, width: 1, height: 1 });
          ids.push(
            log.appendMessage({
              role: 'tool',
              results: [
                {
                  type: 'tool_result',
                  toolUseId: id,
                  toolName: 'read',
                  parts,
                  isError: r.chance(0.2),
                  meta: { p: 1 },
                },
              ],
            }).id,
          );
        }
      } else if (k === 4) {
        ids.push(
          log.appendMessage({
            role: 'assistant',
            content: [{ type: 'text', text: `answer ${s}` }],
            stopReason: 'end',
          }).id,
        );
      } else if (k === 5) {
        ids.push(log.appendCustom(r.pick(['label', 'ui_state']), { s, deep: { a: [s] } }).id);
      } else if (k === 6) {
        ids.push(
          log.appendModelChange({ model: r.pick(['gpt-4o', 'claude-opus-4-1']), api: 'openai-chat' }).id,
        );
      } else if (k === 7 && ids.length > 2) {
        log.branch(r.pick(ids));
      } else {
        const result = await compact(log.conversation, summarize, { keepRecentTokens: r.int(40) });
        if (result) ids.push(log.appendCompaction(result.compaction).id);
      }
    }
    log.close();
    const bytes = stabilize(readFileSync(file));
    rmSync(file, { force: true });
    return bytes;
  }

  // ---- mutations ----------------------------------------------------------------------------------------------
  const splitLines = (buf) => {
    const s = buf.toString('latin1');
    const parts = s.split('\n');
    const last = parts.pop();
    return { lines: parts, tail: last };
  };
  const joinLines = (lines, tail = '') =>
    Buffer.from(lines.join('\n') + (lines.length ? '\n' : '') + tail, 'latin1');
  const asJson = (line) => {
    try {
      return JSON.parse(Buffer.from(line, 'latin1').toString('utf8'));
    } catch {
      return undefined;
    }
  };
  const fromJson = (v) => Buffer.from(JSON.stringify(v), 'utf8').toString('latin1');
  const wrongValues = () => [
    null,
    0,
    -1,
    1.5,
    true,
    '',
    'x',
    [],
    {},
    [null],
    { type: 'text' },
    rnd.pick(HUGE_NUMBERS),
  ];
  const leafIds = (lines) =>
    lines
      .map(asJson)
      .filter((v) => v && typeof v.id === 'string')
      .map((v) => v.id);

  const MUTATIONS = {
    drop(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length) lines.splice(rnd.int(lines.length), 1);
      return joinLines(lines, tail);
    },
    duplicate(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length) lines.splice(rnd.int(lines.length + 1), 0, rnd.pick(lines));
      return joinLines(lines, tail);
    },
    swap(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length > 1) {
        const i = rnd.int(lines.length);
        const j = rnd.int(lines.length);
        [lines[i], lines[j]] = [lines[j], lines[i]];
      }
      return joinLines(lines, tail);
    },
    move(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length > 1) {
        const [l] = lines.splice(rnd.int(lines.length), 1);
        lines.splice(rnd.int(lines.length + 1), 0, l);
      }
      return joinLines(lines, tail);
    },
    truncate: (b) => b.subarray(0, rnd.int(b.length + 1)),
    flip(b) {
      const c = Buffer.from(b);
      for (let n = 1 + rnd.int(3); n > 0 && c.length; n--) c[rnd.int(c.length)] ^= 1 << rnd.int(8);
      return c;
    },
    setByte(b) {
      const c = Buffer.from(b);
      if (c.length)
        c[rnd.int(c.length)] = rnd.pick([0x00, 0x0d, 0x0a, 0x22, 0x5c, 0x7b, 0x7d, 0x80, 0xc3, 0xff, 0xfe]);
      return c;
    },
    crlf: (b) => Buffer.from(b.toString('latin1').replace(/\n/g, rnd.chance(0.8) ? '\r\n' : '\r'), 'latin1'),
    crlfOne(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length) lines[rnd.int(lines.length)] += '\r';
      return joinLines(lines, tail);
    },
    deepLine(b) {
      const { lines, tail } = splitLines(b);
      const depth = 10_000;
      const deep = rnd.chance(0.5)
        ? '['.repeat(depth) + ']'.repeat(depth)
        : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const ids = leafIds(lines);
      const id = `deep${rnd.int(5)}`;
      const parent = ids.length ? JSON.stringify(rnd.pick(ids)) : 'null';
      const line = rnd.pick([
        deep,
        `{"type":"custom","id":"${id}","parentId":${parent},"timestamp":"t","customType":"x","data":${deep}}`,
        `{"type":"message","id":"${id}","parentId":${parent},"timestamp":"t","message":${deep}}`,
        `{"type":"message","id":"${id}","parentId":${parent},"timestamp":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"n","input":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}]}}`,
      ]);
      lines.splice(rnd.int(lines.length + 1), 0, line);
      return joinLines(lines, tail);
    },
    repeatKey(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length < 2) return b;
      const i = 1 + rnd.int(lines.length - 1);
      const key = rnd.pick(['type', 'id', 'parentId', 'message', 'firstKeptEntryId', 'replacement']);
      const value = rnd.pick([
        '"custom"',
        '"message"',
        '"compaction"',
        '"model_change"',
        'null',
        '"x"',
        '1',
        '[]',
      ]);
      const l = lines[i];
      lines[i] = rnd.chance(0.5)
        ? `${l.slice(0, -1)},"${key}":${value}}`
        : `{"${key}":${value},${l.slice(1)}`;
      return joinLines(lines, tail);
    },
    field(b) {
      // One field of one entry (or the header) set to a hostile value of any type.
      const { lines, tail } = splitLines(b);
      if (!lines.length) return b;
      const i = rnd.int(lines.length);
      const v = asJson(lines[i]);
      if (!v || typeof v !== 'object') return b;
      const ids = leafIds(lines);
      const paths = [];
      const walk = (o, p, d) => {
        if (d > 6 || o === null || typeof o !== 'object') return;
        for (const k of Object.keys(o)) {
          paths.push([...p, k]);
          walk(o[k], [...p, k], d + 1);
        }
      };
      walk(v, [], 0);
      if (!paths.length) return b;
      const p = rnd.pick(paths);
      let o = v;
      for (const k of p.slice(0, -1)) o = o[k];
      const choices = [
        ...wrongValues(),
        ...HOSTILE_IDS,
        ...(ids.length ? [rnd.pick(ids), rnd.pick(ids)] : []),
      ];
      if (rnd.chance(0.1)) delete o[p[p.length - 1]];
      else o[p[p.length - 1]] = rnd.pick(choices);
      lines[i] = fromJson(v);
      return joinLines(lines, tail);
    },
    hostileKey(b) {
      const { lines, tail } = splitLines(b);
      if (lines.length < 2) return b;
      const i = 1 + rnd.int(lines.length - 1);
      const key = rnd.pick(['__proto__', 'constructor', 'toString', 'prototype']);
      const l = lines[i];
      const inner = rnd.pick([`"${key}":{"polluted":1}`, `"${key}":"x"`, `"${key}":null`]);
      lines[i] = rnd.chance(0.5)
        ? `${l.slice(0, -1)},${inner}}`
        : l.replace('"message":{', `"message":{${inner},`);
      return joinLines(lines, tail);
    },
    relink(b) {
      // An id or parentId rewired: collisions, cycles, self-parents, forward and missing parents, hostile ids.
      const { lines, tail } = splitLines(b);
      if (lines.length < 2) return b;
      const i = 1 + rnd.int(lines.length - 1);
      const v = asJson(lines[i]);
      if (!v || typeof v !== 'object') return b;
      const ids = leafIds(lines);
      const later = leafIds(lines.slice(i + 1));
      const what = rnd.int(6);
      if (what === 0) v.id = rnd.pick(ids);
      else if (what === 1) v.parentId = v.id;
      else if (what === 2 && later.length) v.parentId = rnd.pick(later);
      else if (what === 3) v.parentId = rnd.pick(['missing', ...HOSTILE_IDS]);
      else if (what === 4) v.id = rnd.pick(HOSTILE_IDS);
      else if (v.type === 'compaction' || rnd.chance(0.3))
        v.firstKeptEntryId = rnd.pick([v.id, 'missing', null, ...ids, ...later, ...HOSTILE_IDS]);
      else v.parentId = rnd.pick(ids);
      lines[i] = fromJson(v);
      return joinLines(lines, tail);
    },
    header(b) {
      const { lines, tail } = splitLines(b);
      if (!lines.length) return b;
      const what = rnd.int(4);
      if (what === 0) lines.splice(1 + rnd.int(lines.length), 0, lines[0]);
      else if (what === 1) lines.shift();
      else if (what === 2) return joinLines([lines[0]], rnd.chance(0.5) ? '' : lines[0]);
      else lines.unshift(Buffer.from('\ufeff', 'utf8').toString('latin1') + lines.shift());
      return joinLines(lines, tail);
    },
    nonUtf8(b) {
      const { lines, tail } = splitLines(b);
      if (!lines.length) return b;
      const i = rnd.int(lines.length);
      const l = lines[i];
      const at = l.indexOf('"text":"');
      const bad = rnd.pick([
        '\x80',
        '\xc3',
        '\xff\xfe',
        '\xed\xa0\x80',
        '\xf4\x90\x80\x80',
        '\x00',
        '\x00\x00',
      ]);
      lines[i] = at >= 0 ? l.slice(0, at + 8) + bad + l.slice(at + 8) : l + bad;
      return joinLines(lines, tail);
    },
    nul(b) {
      const c = Buffer.from(b);
      const n = 1 + rnd.int(64);
      const at = rnd.int(c.length + 1);
      return Buffer.concat([c.subarray(0, at), Buffer.alloc(n), c.subarray(at)]);
    },
    emptyLines(b) {
      const { lines, tail } = splitLines(b);
      lines.splice(rnd.int(lines.length + 1), 0, ...new Array(1 + rnd.int(3)).fill(''));
      return joinLines(lines, tail);
    },
  };
  const mutationNames = Object.keys(MUTATIONS);

  // ---- checks -------------------------------------------------------------------------------------------------
  const problems = [];
  const counts = {};
  /** Runs `fn`, returns {ok} | {code} and records a problem for anything untyped or an unexpected code. */
  /** Runs `fn`; an error other than a PantoError with one of `codes` is a problem of `invariant` (S1 or S5). */
  async function guarded(where, fn, codes = SESSION_CODES, invariant = 'S1') {
    try {
      return { ok: await fn() };
    } catch (err) {
      if (isPantoError(err) && codes.has(err.code)) return { code: err.code, message: err.message };
      problems.push(
        `${invariant} ${where}: ${isPantoError(err) ? `unexpected code ${err.code}` : 'untyped error'}: ${err?.name}: ${String(err?.message).slice(0, 300)}`,
      );
      return { code: `!${err?.name}` };
    }
  }
  const summary = (s) => ({
    header: s.header,
    leafId: s.leafId,
    model: s.model,
    conversation: s.conversation.messages ?? s.conversation,
    entries: s.entries,
  });
  const headerless = (s) => s.warnings.some((w) => w.kind === 'no_header');
  const comparable = (o) => {
    if (!o.ok) return { code: o.code };
    const c = { ...o.ok };
    if (c.noHeader) c.header = 'new';
    delete c.noHeader;
    return c;
  };

  /**
   * S5 on a branch: open `file`, branch to one of `entries` (picked from their count: the same file picks the same
   * one), append a message; the lazy and eager reloads must agree and end at it.
   */
  async function branchAndAppend(file, entries) {
    if (entries.length === 0) return;
    const target = entries[prng(entries.length).int(entries.length)];
    const branched = await guarded(
      'open+branch+append',
      async () => {
        const log = await SessionLog.open(file);
        try {
          log.branch(target.id);
          return log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'on a branch' }] });
        } finally {
          log.close();
        }
      },
      new Set(),
      'S5',
    );
    if (!branched.ok) return;
    const appended = branched.ok;
    const lazy = await guarded(
      'reload after branch+append (lazy)',
      () => loadSession(file),
      SESSION_CODES,
      'S5',
    );
    const eager = await guarded(
      'reload after branch+append (eager)',
      () => loadSession(file, { eager: true }),
      SESSION_CODES,
      'S5',
    );
    if (!lazy.ok || !eager.ok) {
      problems.push(`S5 reload after branch+append failed: ${lazy.code ?? 'ok'} / ${eager.code ?? 'ok'}`);
      return;
    }
    if (!isDeepStrictEqual(lazy.ok.conversation.messages, eager.ok.conversation.messages))
      problems.push('S5 after branch+append, lazy and eager give different conversations');
    if (
      eager.ok.leafId !== appended.id ||
      eager.ok.conversation.messages.at(-1)?.content?.[0]?.text !== 'on a branch'
    )
      problems.push('S5 after branch+append, the conversation does not end at the appended message');
  }

  /** S6: what a load returned can be serialized again (JSON and structured clone), nothing nested past the limit. */
  function checkWritable(loaded) {
    for (const [what, fn] of [
      ['JSON.stringify', (v) => JSON.stringify(v)],
      ['structuredClone', (v) => structuredClone(v)],
    ]) {
      try {
        fn({ entries: loaded.entries, conversation: loaded.conversation });
      } catch (err) {
        problems.push(
          `S6 ${what} of a loaded session threw ${err?.name}: ${String(err?.message).slice(0, 200)}`,
        );
      }
    }
  }

  async function checkFile(bytes) {
    problems.length = 0;
    const file = tmp();
    writeFileSync(file, bytes);
    const eager = await guarded('loadSession eager', async () => {
      const s = await loadSession(file, { eager: true });
      checkWritable(s);
      return { ...summary(s), noHeader: headerless(s) };
    });
    const lazy = await guarded('loadSession lazy', async () => {
      const s = await loadSession(file);
      return { ...summary(s), entries: s.entries, noHeader: headerless(s) };
    });
    const index = await guarded('openSessionIndex', async () => {
      const ix = await openSessionIndex(file);
      const conversation = await ix.conversation();
      const entries = ix.readAll();
      if (ix.leafId !== null) await ix.entry(ix.leafId);
      // Every line checked as an eager load checks it: readAll succeeded, so verify must too.
      await ix.verify();
      const some = entries.filter((_, k) => k % 3 === 0);
      if (!isDeepStrictEqual(await ix.entries(some.map((e) => e.id)), some))
        problems.push('S3 openSessionIndex: entries(ids) differs from readAll');
      return {
        header: ix.header,
        leafId: ix.leafId,
        model: ix.model,
        conversation: conversation.messages,
        entries,
        noHeader: ix.warnings.some((w) => w.kind === 'no_header'),
      };
    });
    const opened = [];
    for (const eagerOpen of [false, true]) {
      const copy = tmp();
      copyFileSync(file, copy);
      const o = await guarded(`SessionLog.open eager=${eagerOpen}`, async () => {
        const log = await SessionLog.open(copy, { eager: eagerOpen });
        try {
          const s = {
            header: log.header,
            leafId: log.leafId,
            model: log.model,
            conversation: [...log.conversation.messages],
            entries: [...log.entries],
            noHeader: log.warnings.some((w) => w.kind === 'no_header'),
          };
          const before = [...log.conversation.messages];
          const m = { role: 'user', content: [{ type: 'text', text: `appended ${eagerOpen}` }] };
          log.appendMessage(m);
          log.close();
          for (const e of [false, true]) {
            const again = await guarded(
              `reload after append (open eager=${eagerOpen}, load eager=${e})`,
              () => loadSession(copy, { eager: e }),
              SESSION_CODES,
              'S5',
            );
            if (again.ok && !isDeepStrictEqual(again.ok.conversation.messages, [...before, m]))
              problems.push(
                `S5 reload after append (open eager=${eagerOpen}, load eager=${e}) is not the old conversation + the appended message`,
              );
            if (again.code)
              problems.push(
                `S5 reload after append (open eager=${eagerOpen}, load eager=${e}) failed: ${again.code} ${again.message ?? ''}`,
              );
          }
          if (eagerOpen) await branchAndAppend(copy, s.entries);
          return s;
        } finally {
          log.close();
        }
      });
      opened.push(o);
      rmSync(copy, { force: true });
      rmSync(`${copy}.lock`, { force: true });
    }
    const reference = comparable(eager);
    const lineOf = (o) => Number(/:(\d+): /.exec(o.message ?? '')?.[1] ?? Number.NaN);
    for (const [name, o] of [
      ['lazy', lazy],
      ['index', index],
      ['open lazy', opened[0]],
      ['open eager', opened[1]],
    ]) {
      const c = comparable(o);
      // Several damaged lines: eager reports the first in file order, a lazy path the first it reads; both are
      // damaged, so the codes may differ. Only a lazy report of an earlier line than eager's is a disagreement.
      if (c.code && reference.code && c.code !== reference.code && lineOf(o) > lineOf(eager)) {
        counts.severalDamagedLines = (counts.severalDamagedLines ?? 0) + 1;
        if (verbose && counts.severalDamagedLines <= 3)
          parentPort.postMessage({
            type: 'log',
            text: `several damaged lines: ${name} ${o.code} (${o.message}) vs eager ${eager.code} (${eager.message})`,
          });
        continue;
      }
      if (!isDeepStrictEqual(c, reference)) {
        const what =
          c.code || reference.code
            ? `${c.code ?? 'ok'} vs eager ${reference.code ?? 'ok'}`
            : Object.keys(c)
                .filter((k) => !isDeepStrictEqual(c[k], reference[k]))
                .join(',');
        problems.push(`S3 ${name} differs from eager: ${what}`);
      }
    }
    if (eager.ok) {
      for (const [name, fn, model] of serializers) {
        try {
          fn({ messages: eager.ok.conversation }, model);
        } catch (err) {
          if (!isPantoError(err))
            problems.push(`S4 ${name} threw untyped: ${err?.name}: ${String(err?.message).slice(0, 200)}`);
        }
      }
    }
    if (protoKeys() !== protoBefore || {}.polluted !== undefined)
      problems.push('S2 Object.prototype was changed');
    rmSync(file, { force: true });
    return [
      ...new Set(
        problems.map((p) =>
          p.replace(/\/\S*panto-fuzz-sessions-\S*?\/f\d+\.jsonl/g, 'FILE').replace(/:\d+:/g, ':N:'),
        ),
      ),
    ];
  }

  /**
   * Shrinks `bytes` by dropping lines while `checkFile` still reports `signature`, for at most SHRINK_MS; posts a
   * heartbeat after every try. Returns the smallest failing file found and whether shrinking finished.
   */
  async function shrink(bytes, signature) {
    const join = (lines) => Buffer.from(lines.join('\n'), 'latin1');
    const { items, complete } = await shrinkList(
      bytes.toString('latin1').split('\n'),
      async (lines) => (await checkFile(join(lines))).includes(signature),
      { deadline: Date.now() + SHRINK_MS, onBeat: () => parentPort.postMessage({ type: 'beat' }) },
    );
    return { small: join(items), complete };
  }

  // ---- compaction -----------------------------------------------------------------------------------------
  function genConversation(r) {
    const messages = [];
    const n = r.chance(0.05) ? 2000 + r.int(3000) : r.int(40);
    const calls = [];
    const size = (n) => (r.chance(0.1) ? r.pick(HUGE_SIZES) : 1 + r.int(n));
    const bigText = () =>
      r.chance(0.02)
        ? 'x'.repeat(1 + r.int(2_000_000))
        : r.pick(['', 'a', 'hello world', '日本語🙂'.repeat(r.int(50))]);
    for (let i = 0; i < n; i++) {
      const k = r.int(10);
      if (k === 0) messages.push({ role: 'system', content: bigText() });
      else if (k <= 2) {
        const content = [{ type: 'text', text: bigText() }];
        if (r.chance(0.3))
          content.push({
            type: 'image',
            mediaType: 'image/png',
            data: PNG_1x1,
            width: size(10000),
            height: size(10000),
          });
        if (r.chance(0.1))
          content.push({
            type: 'document',
            mediaType: 'application/pdf',
            data: PDF_TINY,
            pages: size(500),
          });
        if (r.chance(0.1)) content.push({ type: 'text', text: `${lib.SUMMARY_PREFIX}earlier summary` });
        messages.push({ role: 'user', content });
      } else if (k <= 5) {
        const content = [];
        for (let c = r.int(4); c > 0; c--) {
          const id = r.chance(0.1) ? r.pick(HOSTILE_IDS) : `c${r.int(60)}`;
          calls.push(id);
          content.push({
            type: 'tool_call',
            id,
            name: 'read',
            input: r.chance(0.5) ? {} : { text: bigText() },
          });
        }
        if (r.chance(0.5)) content.unshift({ type: 'text', text: bigText() });
        if (r.chance(0.2)) content.unshift({ type: 'thinking', text: bigText(), signature: 's' });
        messages.push({
          role: 'assistant',
          content,
          stopReason: content.some((b) => b.type === 'tool_call') ? 'tool_use' : 'end',
        });
      } else {
        const results = [];
        for (let c = 1 + r.int(3); c > 0; c--) {
          const id = calls.length && r.chance(0.8) ? r.pick(calls) : `orphan${r.int(9)}`;
          const parts = r.chance(0.3) ? [] : [{ type: 'text', text: bigText() }];
          if (r.chance(0.3))
            parts.push({
              type: 'image',
              mediaType: 'image/jpeg',
              data: PNG_1x1,
              width: size(9000),
              height: size(9000),
            });
          results.push({
            type: 'tool_result',
            toolUseId: id,
            toolName: 'read',
            parts,
            isError: r.chance(0.2),
          });
        }
        messages.push({ role: 'tool', results });
      }
    }
    return messages;
  }
  /** An independent statement of C2: problem text or null. */
  function cutProblem(messages, cut) {
    if (!Number.isInteger(cut) || cut < 0 || cut > messages.length) return `cut ${cut} out of range`;
    if (cut === 0) return null;
    if (messages[cut]?.role === 'tool') return `cut ${cut} starts at a tool-results message`;
    const after = new Set();
    for (const m of messages.slice(cut))
      if (m.role === 'tool') for (const res of m.results) after.add(res.toolUseId);
    for (const m of messages.slice(0, cut))
      if (m.role === 'assistant')
        for (const b of m.content)
          if (b.type === 'tool_call' && after.has(b.id)) {
            // A call before the cut whose result is after it; allowed only if the call's id is also answered before the cut
            // (a repeated id) and again after, which C2 cannot tell apart: report only when no result precedes the cut.
            const answeredBefore = messages
              .slice(0, cut)
              .some((x) => x.role === 'tool' && x.results.some((res) => res.toolUseId === b.id));
            if (!answeredBefore) return `cut ${cut} separates call ${b.id} from its result`;
          }
    return null;
  }
  async function checkCompaction(r) {
    const messages = genConversation(r);
    return checkConversation(r, messages);
  }
  /** C1-C3 on `messages`, with options drawn from `r` (sometimes out of range: then a PantoError is expected). */
  async function checkConversation(r, messages, sane = false) {
    const cproblems = [];
    const options = sane
      ? { imageTokenRule: 'anthropic' }
      : {
          imageTokenRule: r.pick([
            undefined,
            'anthropic',
            'openai-tile',
            'openai-patch',
            'gemini',
            'fixed',
            ...(r.chance(0.05) ? ['openai', '__proto__'] : []),
          ]),
        };
    if (options.imageTokenRule === undefined) delete options.imageTokenRule;
    if (!sane && r.chance(0.1))
      options.charsPerToken = r.pick([1, 2.5, 0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e-3, 5e-324]);
    if (!sane && r.chance(0.1)) options.fixedImageChars = r.pick([0, 1, -4800, Number.NaN, 1e308]);
    if (!sane && r.chance(0.05)) options.patchMultiplier = r.pick([0, -1, Number.NaN, 2, 1e308]);
    const typed = (where, err) => {
      if (!isPantoError(err))
        cproblems.push(`C ${where}: untyped ${err?.name}: ${String(err?.message).slice(0, 200)}`);
    };
    try {
      for (const m of messages) {
        const t = estimateTokens(m, options);
        if (!Number.isInteger(t) || t < 0 || t > Number.MAX_SAFE_INTEGER)
          cproblems.push(`C1 estimateTokens gave ${t} for a ${m.role} message`);
      }
    } catch (err) {
      typed('estimateTokens', err);
    }
    const keep = sane
      ? r.pick([1000, 20_000])
      : r.pick([0, 1, 10, 100, 1000, 100_000, -5, 1e308, Number.NaN, Number.POSITIVE_INFINITY]);
    try {
      const cut = findCutPoint(messages, keep, options);
      const p = cutProblem(messages, cut);
      if (p) cproblems.push(`C2 findCutPoint: ${p}`);
    } catch (err) {
      typed('findCutPoint', err);
    }
    let calls = 0;
    const maxRounds = sane ? 8 : r.pick([1, 2, 8]);
    const overflowing = !sane && r.chance(0.2);
    const summaryInput = sane
      ? { maxSummaryInputTokens: 100_000 }
      : r.chance(0.5)
        ? { maxSummaryInputTokens: r.pick([1, 50, 1000, 100_000]) }
        : {};
    // A round's transcript: at most the budget in characters, plus the previous summary and a line of notes.
    const cpt = options.charsPerToken ?? 4;
    const maxText =
      summaryInput.maxSummaryInputTokens === undefined
        ? Number.POSITIVE_INFINITY
        : summaryInput.maxSummaryInputTokens * cpt + 2000;
    if (compactionCase !== undefined)
      parentPort.postMessage({
        type: 'log',
        text: `options ${JSON.stringify({ ...options, keep, maxRounds, overflowing, ...summaryInput }, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))}`,
      });
    try {
      const result = await compact(
        { messages },
        async (req) => {
          calls++;
          if (typeof req.text !== 'string') throw new Error('summarizer got no text');
          if (req.text.length > maxText)
            cproblems.push(
              `C3 compact: a round's transcript has ${req.text.length} characters, over the budget's ${maxText}`,
            );
          if (overflowing && r.chance(0.5))
            throw Object.assign(new Error('context overflow'), { overflow: true });
          return r.pick(['short summary', 's'.repeat(1 + r.int(1000)), '日本']);
        },
        {
          keepRecentTokens: keep,
          maxRounds,
          ...summaryInput,
          ...(overflowing ? { isOverflow: (e) => e?.overflow === true } : {}),
          ...options,
        },
      );
      if (result) {
        const { compaction, conversation } = result;
        const p = cutProblem(messages, compaction.firstKeptIndex);
        if (p) cproblems.push(`C3 compact: ${p}`);
        if (
          !isDeepStrictEqual(conversation.messages, [
            ...compaction.replacement,
            ...messages.slice(compaction.firstKeptIndex),
          ])
        )
          cproblems.push('C3 compact: conversation is not replacement + kept messages');
        for (const k of ['tokensBefore', 'tokensAfter']) {
          const t = compaction[k];
          if (!Number.isInteger(t) || t < 0 || t > Number.MAX_SAFE_INTEGER)
            cproblems.push(`C3 compact: ${k} is ${t} (SessionLog.appendCompaction refuses it)`);
        }
      }
    } catch (err) {
      if (!(err instanceof Error && err.message === 'context overflow')) typed('compact', err);
    }
    if (calls > maxRounds * 4)
      cproblems.push(`C3 compact called the summarizer ${calls} times (maxRounds ${maxRounds})`);
    return {
      problems: cproblems.map(
        (p) =>
          `${p} (options ${JSON.stringify({ ...options, keep }, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))})`,
      ),
      messages: messages.length,
    };
  }

  // ---- main loop ------------------------------------------------------------------------------------------
  const seeds = [];
  const findings = new Map();
  const deadline = Date.now() + seconds * 1000;
  let cases = 0;
  const doSession = area !== 'compaction';
  const doCompaction = area !== 'session';
  /** Fixed hostile conversations (the heavy ones of the task), each checked once per run, with options from `seed`. */
  const text = (t) => ({ type: 'text', text: t });
  const call = (id) => ({
    role: 'assistant',
    content: [{ type: 'tool_call', id, name: 'read', input: {} }],
    stopReason: 'tool_use',
  });
  const result = (id, parts = [text('ok')]) => ({
    role: 'tool',
    results: [{ type: 'tool_result', toolUseId: id, toolName: 'read', parts, isError: false }],
  });
  const image = { type: 'image', mediaType: 'image/png', data: PNG_1x1, width: 4000, height: 3000 };
  const FIXED = {
    'one 50 MB text message': () => [
      { role: 'user', content: [text('x'.repeat(50 * 2 ** 20))] },
      { role: 'assistant', content: [text('ok')] },
      ...Array.from({ length: 20 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: [text('m'.repeat(2000))],
      })),
    ],
    '100k tiny messages': () =>
      Array.from({ length: 100_000 }, (_, i) =>
        i % 2 ? { role: 'assistant', content: [text('b')] } : { role: 'user', content: [text('a')] },
      ),
    'only tool results': () => Array.from({ length: 500 }, (_, i) => result(`r${i}`)),
    'tool results without their calls': () =>
      Array.from({ length: 500 }, (_, i) =>
        i % 2 ? result(`missing${i}`) : { role: 'user', content: [text('u'.repeat(100))] },
      ),
    'images only': () => Array.from({ length: 300 }, () => ({ role: 'user', content: [image, image] })),
    'a 10 MB compaction summary': () => [
      { role: 'user', content: [text(`${lib.SUMMARY_PREFIX}${'s'.repeat(10 * 2 ** 20)}`)] },
      ...Array.from({ length: 50 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: [text('m'.repeat(1000))],
      })),
    ],
    'a cut inside a call and its result': () => [
      { role: 'user', content: [text('q'.repeat(4000))] },
      {
        role: 'assistant',
        content: [
          text('t'),
          { type: 'tool_call', id: 'a', name: 'read', input: {} },
          { type: 'tool_call', id: 'b', name: 'read', input: {} },
        ],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'a',
            toolName: 'read',
            parts: [text('r'.repeat(40_000))],
            isError: false,
          },
        ],
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'b',
            toolName: 'read',
            parts: [text('r'.repeat(40_000))],
            isError: false,
          },
        ],
      },
      { role: 'user', content: [text('end')] },
    ],
    'one call answered after 1000 messages': () => [
      call('late'),
      ...Array.from({ length: 1000 }, () => ({ role: 'user', content: [text('x'.repeat(100))] })),
      result('late'),
    ],
  };
  try {
    if (compactionCase !== undefined) {
      // One compaction case, as a finding names it (--compaction-case=S).
      parentPort.postMessage({
        type: 'case',
        text: `compaction case checkCompaction(prng(${compactionCase}))`,
      });
      const r = prng(compactionCase);
      const messages = genConversation(r);
      parentPort.postMessage({
        type: 'log',
        text: `${messages.length} messages: ${JSON.stringify(messages, (_, v) => (typeof v === 'string' && v.length > 60 ? `<${v.length} chars>` : v)).slice(0, 4000)}`,
      });
      if (process.env.FUZZ_DUMP) writeFileSync(process.env.FUZZ_DUMP, JSON.stringify(messages));
      const { problems: cp } = await checkConversation(r, messages);
      cases = 1;
      for (const p of cp) findings.set(p, `compaction case seed ${compactionCase}`);
      parentPort.postMessage({
        type: 'done',
        cases,
        counts,
        findings: [...findings],
        rss: process.memoryUsage().rss,
      });
      return;
    }
    if (doCompaction) {
      for (const [name, make] of Object.entries(FIXED)) {
        parentPort.postMessage({ type: 'case', text: `fixed compaction case: ${name}` });
        const { problems: cp } = await checkConversation(prng(seed), make());
        const { problems: cs } = await checkConversation(prng(seed), make(), true);
        cp.push(...cs);
        if (verbose) parentPort.postMessage({ type: 'log', text: `fixed case "${name}" checked` });
        counts.fixed = (counts.fixed ?? 0) + 1;
        cases++;
        for (const p of cp) if (!findings.has(p)) findings.set(p, `fixed compaction case "${name}"`);
      }
    }
    if (doSession) for (let i = 0; i < 8; i++) seeds.push(await makeSeed(prng(seed + i)));
    while (Date.now() < deadline && cases < maxCases) {
      cases++;
      if (doCompaction && (!doSession || cases % 5 === 0)) {
        const caseSeed = rnd.int(2 ** 31);
        parentPort.postMessage({
          type: 'case',
          text: `compaction case ${cases} (checkCompaction(prng(${caseSeed})))`,
        });
        const { problems: cp } = await checkCompaction(prng(caseSeed));
        counts.compaction = (counts.compaction ?? 0) + 1;
        for (const p of cp) {
          const key = p.replace(/-?\d[\d.e+]*|NaN|Infinity/g, 'N');
          if (!findings.has(key))
            findings.set(key, `${p}; compaction case seed ${caseSeed} (checkCompaction(prng(${caseSeed})))`);
        }
        continue;
      }
      let bytes = rnd.pick(seeds);
      const applied = [];
      for (let n = 1 + rnd.int(3); n > 0; n--) {
        const name = rnd.pick(mutationNames);
        applied.push(name);
        bytes = MUTATIONS[name](bytes);
      }
      for (const a of applied) counts[a] = (counts[a] ?? 0) + 1;
      parentPort.postMessage({
        type: 'case',
        text: `session case ${cases} (${applied.join('+')}); the file (latin1, JSON-quoted):\n${JSON.stringify(bytes.toString('latin1'))}`,
      });
      const found = await checkFile(bytes);
      for (const p of found) {
        if (findings.has(p)) continue;
        parentPort.postMessage({
          type: 'log',
          text: `shrinking a finding (at most ${SHRINK_MS / 1000} s): ${p}`,
        });
        const { small, complete } = await shrink(bytes, p);
        findings.set(
          p,
          `mutations ${applied.join('+')}; ${complete ? 'minimal' : 'partly shrunk (deadline)'} file (latin1, JSON-quoted):\n${JSON.stringify(small.toString('latin1')).slice(0, 6000)}`,
        );
      }
      if (verbose && cases % 200 === 0) parentPort.postMessage({ type: 'log', text: `${cases} cases` });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  parentPort.postMessage({
    type: 'done',
    cases,
    counts,
    findings: [...findings],
    rss: process.memoryUsage().rss,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Main thread: arguments, the worker, a watchdog for hangs
// ---------------------------------------------------------------------------------------------------------------
async function main() {
  const usage =
    'usage: fuzz-sessions.mjs [--seconds=N>0] [--seed=integer] [--area=all|session|compaction] [--verbose] [--cases=N] [--compaction-case=S]';
  const args = parseArgs(process.argv.slice(2), usage, [
    'seconds',
    'seed',
    'area',
    'verbose',
    'cases',
    'compaction-case',
  ]);
  const maxCases = args.cases === undefined ? Number.POSITIVE_INFINITY : Number(args.cases);
  const seconds = Number(args.seconds ?? 60);
  const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
  const area = args.area ?? 'all';
  if (
    !Number.isFinite(seconds) ||
    seconds <= 0 ||
    !Number.isInteger(seed) ||
    !(maxCases >= 1) ||
    !['all', 'session', 'compaction'].includes(area)
  ) {
    console.error(usage);
    process.exit(2);
  }
  console.log(`fuzz-sessions: seed ${seed}, ${seconds} s, area ${area} (repeat with --seed=${seed})`);
  const HANG_MS = 30_000;
  // The worker's files; made here and removed on exit, so a hung or crashed worker leaves nothing behind.
  const dir = ownedTempRoot('panto-fuzz-sessions-');
  const w = new Worker(fileURLToPath(import.meta.url), {
    workerData: {
      seed,
      seconds,
      area,
      verbose: args.verbose === 'true',
      compactionCase: args.compactionCase === undefined ? undefined : Number(args.compactionCase),
      dir,
      maxCases,
    },
    resourceLimits: { maxOldGenerationSizeMb: 1024 },
  });
  let current = '(starting)';
  const caseDigest = createHash('sha256');
  let lastBeat = Date.now();
  let peakRss = process.memoryUsage().rss;
  const result = await new Promise((resolve) => {
    const watchdog = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      if (Date.now() - lastBeat > HANG_MS) {
        clearInterval(watchdog);
        void w.terminate();
        resolve({ hang: current });
      }
    }, 250);
    w.on('message', (m) => {
      lastBeat = Date.now();
      if (m.type === 'case') {
        current = m.text;
        caseDigest.update(`${m.text}\n`);
      } else if (m.type === 'log') console.log(m.text);
      else if (m.type === 'done') {
        clearInterval(watchdog);
        resolve(m);
      }
    });
    w.on('error', (err) => {
      clearInterval(watchdog);
      resolve({ crash: `${err?.name}: ${err?.message}`, current });
    });
  });
  peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
  if (result.hang) {
    console.log(`FINDING hang: no progress for ${HANG_MS / 1000} s in ${result.hang}`);
    process.exit(1);
  }
  if (result.crash) {
    console.log(`FINDING worker crashed: ${result.crash}\nin ${result.current}`);
    process.exit(1);
  }
  console.log(`cases: ${result.cases}; mutations applied: ${JSON.stringify(result.counts)}`);
  console.log(`peak RSS: ${Math.round(peakRss / 2 ** 20)} MiB`);
  console.log(`case list sha256 (${result.cases} cases): ${caseDigest.digest('hex')}`);
  for (const [problem, input] of result.findings) console.log(`\nFINDING ${problem}\n  ${input}`);
  if (result.findings.length > 0) {
    console.log(`\n${result.findings.length} finding(s); seed ${seed}`);
    process.exit(1);
  }
  console.log('no invariant broken');
  await w.terminate();
}

if (isMainThread) await main();
else await worker(workerData);
