#!/usr/bin/env node

// Seeded generative fuzzer of the agent loop against a hostile model.
//
// A loopback fake provider (real HTTP, real SSE, one renderer per surface: Anthropic Messages, OpenAI Chat, OpenAI
// Responses, Gemini) serves generated model turns to the real `Agent`, which runs real tools: host JS tools returning
// text, a real PNG, a thrown error, a 2 MB text, a malformed result, one that hangs until its signal aborts, and the
// real Lua `read` tool (fengari) on a temp workspace. Generated turns: 0..200 tool calls; duplicate call ids; ids that
// are empty, 10 KB or hold control characters; unknown names; names differing by case or Unicode; arguments that are
// invalid JSON, arrays, null, 10k-deep, 5 MB, or carry `__proto__`/`constructor` keys; stop reasons that lie
// (tool_use with no calls, end with calls, max_tokens cutting a call); empty turns; thinking parts with signatures in
// odd places; usage that is negative, a string, null or 1e300; stalls; streams broken at the frame level (a frame
// dropped, duplicated, swapped, cut, or its index field made 1e9, -1, null, "0", 2^31 or 1.5). Each case may abort at a random event, steer
// at a random event, and is resumed from its session log.
//
// Invariants (each case; any violation is a finding, printed with the seed, the case number and the case's turns;
// exit status 1):
//  I1 the run settles (never rejects: `prompt` rejects only for misuse) within a bound, and makes at most `maxTurns`
//     model requests (answers appended and `result.turns` too);
//  I2 every assistant message with tool calls is followed by one tool message holding exactly one result per call,
//     in call order, and results never appear elsewhere;
//  I3 the conversation after the run serializes for ALL FOUR surfaces without an error that is not a `PantoError`;
//     each body is JSON, obeys the wire rules of test/providers/wire-rules.ts (ids, names, object inputs, non-blank
//     text, no lone surrogate) and pairs calls with results (same ids in the same order); with PANTO_WIRE_FIXTURES set,
//     each body also validates against the published request schemas (test/conformance/schema-validator.ts);
//  I4 the session log re-loads (`loadSession`, and `SessionLog.open` + a resumed Agent) to the same conversation,
//     and the resumed agent runs one more plain turn under I1-I3;
//  I5 no unhandled rejection or uncaught exception; `Object.prototype` gains no key; the signal given to `prompt`
//     holds no abort listener after the run;
//  I6 memory bounded: RSS stays under --max-rss-mb (default 1500);
//  I8 events keep their documented order: one `agent_start` first and one `agent_end` last per run, as many
//     `turn_start` as `result.turns`; per dispatched turn, per call index at most one `tool_call_start` (before its
//     end), exactly one `tool_call_end`, nothing after it, and as many ends as the turn's tool results;
//  I7 usage stays sane whatever the model reports: every stored answer's token counts and the agent's `usage` totals
//     are non-negative safe integers, its cost a finite non-negative number.
//
// Usage: npm run build:ts && nice -n 10 node test/fuzz/fuzz-agent.mjs [--seconds=60] [--seed=S] [--case=N]
//        [--surface=NAME] [--max-rss-mb=1500]. `--case=N` replays only case N of seed S. Needs no network.

import { getEventListeners } from 'node:events';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { mulberry32 } from './fuzz-common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const lib = await import(path.join(root, 'dist', 'index.js'));
const {
  Agent,
  createProvider,
  defineTool,
  isPantoError,
  loadSession,
  LuaToolSource,
  resolveModel,
  SessionLog,
  toAnthropicMessages,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
  ToolRegistry,
} = lib;

// ---- arguments ----------------------------------------------------------------------------------------------------
const argv = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (m === null) throw new Error(`unknown argument ${a}`);
    return [m[1], m[2] ?? 'true'];
  }),
);
const SECONDS = Number(argv.seconds ?? 60);
const SEED = argv.seed === undefined ? Date.now() % 2 ** 31 : Number(argv.seed);
const ONLY_CASE = argv.case === undefined ? undefined : Number(argv.case);
const MAX_RSS_MB = Number(argv['max-rss-mb'] ?? 1500);
const SURFACES = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];
const ONLY_SURFACE = argv.surface;
/** Wall-clock bound of one run (a healthy case takes well under a second; the machine is shared). */
const RUN_BOUND_MS = 30_000;

// ---- PRNG (mulberry32) --------------------------------------------------------------------------------------------
function rng(seed) {
  const next = mulberry32(seed);
  const r = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)],
  };
  return r;
}

// ---- generation ---------------------------------------------------------------------------------------------------
const NAMES_KNOWN = ['echo', 'image', 'fail', 'huge', 'malformed', 'hang', 'read'];
const NAMES_ODD = [
  'Echo',
  'ECHO',
  'echo\u200b',
  'écho',
  'ｅｃｈｏ',
  'nope',
  '',
  'mcp.fs:read file',
  'a'.repeat(300),
  'read\u0000',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
];

function genId(r, i) {
  switch (r.int(0, 9)) {
    case 0:
      return '';
    case 1:
      return 'x'.repeat(10_240);
    case 2:
      return `id\u0000\u0001\n\t${i}`;
    case 3:
      return 'dup';
    case 4:
      return `call ${i}.read:0`;
    case 5:
      return `\ud800${i}`;
    case 6:
      return '__proto__';
    default:
      return `call_${i}_${r.int(0, 1e6)}`;
  }
}

function deep(n) {
  return `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
}

/** Raw argument text as the model streams it (not necessarily JSON). */
function genArgs(r, name, budget) {
  switch (r.int(0, 15)) {
    case 0:
      return '{"path": "notes.txt"';
    case 1:
      return '[1,2,3]';
    case 2:
      return 'null';
    case 3:
      if (budget.big) return '"x"';
      budget.big = true;
      return deep(10_000);
    case 4:
      if (budget.big) return '{}';
      budget.big = true;
      return JSON.stringify({ blob: 'y'.repeat(5 * 1024 * 1024) });
    case 5:
      return '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 2}}}';
    case 6:
      return '';
    case 7:
      return '{"path": "cat.png"}';
    case 8:
      return '{"path": "report.pdf"}';
    case 9:
      return '{"path": "../../etc/passwd"}';
    case 10:
      return '{"text": "\\ud800 lone"}';
    case 11:
      return '42';
    case 12:
      return '{"a":1,"a":2}';
    default:
      return name === 'read' ? '{"path": "notes.txt"}' : '{"text": "hi"}';
  }
}

function genUsage(r) {
  const v = () => r.pick([0, 5, -1, -1e9, 1e300, 'NaN', null, 1.5, 2 ** 53 + 1, 100]);
  return { input: v(), output: v() };
}

function genTurn(r, budget) {
  const kind = r.int(0, 19);
  if (kind === 0) return { kind: 'empty' };
  if (kind === 1) return { kind: 'stall' };
  if (kind === 2) return { kind: 'garbage' };
  const nCalls = r.chance(0.05) ? r.int(100, 200) : r.chance(0.4) ? 0 : r.int(1, 6);
  const calls = [];
  for (let i = 0; i < nCalls; i++) {
    let name = r.chance(0.7) ? r.pick(NAMES_KNOWN) : r.pick(NAMES_ODD);
    // A 2 MB result per call of a 100+ call turn only measures copying; one per turn is hostile enough.
    if (name === 'huge' && nCalls > 20 && i > 0) name = 'echo';
    const id = r.chance(0.6) ? `call_${i}` : genId(r, i);
    calls.push({ id, name, args: nCalls > 20 ? '{"text":"many"}' : genArgs(r, name, budget) });
  }
  const stop = r.chance(0.6) ? (nCalls > 0 ? 'tool_use' : 'end') : r.pick(['end', 'tool_use', 'max_tokens']);
  return {
    kind: 'reply',
    text: r.chance(0.5) ? r.pick(['ok', ' ', '', 'text \ud800', 'answer']) : undefined,
    thinking: r.chance(0.3)
      ? { text: r.pick(['hmm', '', ' ']), sig: r.pick([undefined, '', 'sig', 'AAAA']) }
      : undefined,
    sigOnText: r.chance(0.2) ? r.pick(['', 'odd']) : undefined,
    calls,
    stop,
    // Frame-level mutations of the rendered stream (see `mangle`), from their own seed.
    mangle: r.chance(0.25) ? r.int(1, 2 ** 30) : undefined,
    // max_tokens mid tool call: the last call's arguments are cut.
    cutLastCall: stop === 'max_tokens' && nCalls > 0 && r.chance(0.7),
    usage: genUsage(r),
  };
}

function genCase(seed, index) {
  const r = rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const surface = ONLY_SURFACE ?? r.pick(SURFACES);
  const maxTurns = r.int(1, 4);
  const budget = { big: false };
  const turns = [];
  for (let i = 0, n = r.int(1, maxTurns + 1); i < n; i++) turns.push(genTurn(r, budget));
  return {
    surface,
    maxTurns,
    turns,
    abortAtEvent: r.chance(0.3) ? r.int(1, 60) : undefined,
    steerAtEvent: r.chance(0.25) ? r.int(1, 60) : undefined,
    concurrency: r.pick([1, 2, 8]),
    // Compaction on: a usage the model inflates, or a small keep, makes the agent compact (a summary request the
    // hostile turns answer too).
    compaction: r.chance(0.3) ? { keepRecentTokens: r.pick([10, 1000]) } : false,
  };
}

/** The case with long strings shortened, for the report. */
function describeCase(c) {
  return JSON.stringify(
    c,
    (_k, v) =>
      typeof v === 'string' && v.length > 80
        ? `<${v.length} chars: ${JSON.stringify(v.slice(0, 40))}...>`
        : v,
    1,
  );
}

// ---- SSE rendering per surface -----------------------------------------------------------------------------------
const sse = (event, data, eol = '\n') =>
  `${event === undefined ? '' : `event: ${event}${eol}`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}${eol}${eol}`;

function pieces(s, n = 3) {
  if (s.length <= 1) return [s];
  const size = Math.max(1, Math.ceil(s.length / n));
  const out = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function renderAnthropic(t, model, n) {
  const out = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: t.usage.input, output_tokens: 0 },
      },
    }),
  ];
  let index = 0;
  if (t.thinking !== undefined) {
    out.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
    );
    out.push(
      sse('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'thinking_delta', thinking: t.thinking.text },
      }),
    );
    if (t.thinking.sig !== undefined)
      out.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature: t.thinking.sig },
        }),
      );
    out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  if (t.text !== undefined) {
    out.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      }),
    );
    out.push(
      sse('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: t.text },
      }),
    );
    if (t.sigOnText !== undefined)
      out.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature: t.sigOnText },
        }),
      );
    out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  t.calls.forEach((c, i) => {
    const last = i === t.calls.length - 1;
    out.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} },
      }),
    );
    const args = last && t.cutLastCall ? c.args.slice(0, Math.floor(c.args.length / 2)) : c.args;
    for (const p of ['', ...pieces(args, 4)])
      out.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: p },
        }),
      );
    if (!(last && t.cutLastCall)) out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  });
  const stop = t.stop === 'end' ? 'end_turn' : t.stop;
  out.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: t.usage.output },
    }),
  );
  out.push(sse('message_stop', { type: 'message_stop' }));
  return out;
}

function renderChat(t, model, n) {
  const chunk = (choices, usage) => ({
    id: `chatcmpl-${n}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices,
    ...(usage === undefined ? {} : { usage }),
  });
  const d = (delta, finish = null) => sse(undefined, chunk([{ index: 0, delta, finish_reason: finish }]));
  const out = [d({ role: 'assistant', content: '' })];
  if (t.thinking !== undefined) out.push(d({ reasoning_content: t.thinking.text }));
  if (t.text !== undefined) out.push(d({ content: t.text }));
  t.calls.forEach((c, i) => {
    const last = i === t.calls.length - 1;
    out.push(
      d({
        tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }],
      }),
    );
    const args = last && t.cutLastCall ? c.args.slice(0, Math.floor(c.args.length / 2)) : c.args;
    for (const p of pieces(args, 4)) out.push(d({ tool_calls: [{ index: i, function: { arguments: p } }] }));
  });
  const finish = t.stop === 'tool_use' ? 'tool_calls' : t.stop === 'max_tokens' ? 'length' : 'stop';
  out.push(d({}, finish));
  out.push(
    sse(
      undefined,
      chunk([], {
        prompt_tokens: t.usage.input,
        completion_tokens: t.usage.output,
        total_tokens: t.usage.input,
      }),
    ),
  );
  out.push(sse(undefined, '[DONE]'));
  return out;
}

function renderResponses(t, model, n) {
  let seq = 0;
  const ev = (e) => sse(e.type, { ...e, sequence_number: seq++ });
  const resp = (status, output, usage) => ({
    id: `resp_${n}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model,
    output,
    ...(usage === undefined
      ? {}
      : { usage: { input_tokens: usage.input, output_tokens: usage.output, total_tokens: usage.input } }),
  });
  const out = [ev({ type: 'response.created', response: resp('in_progress', []) })];
  const output = [];
  let oi = 0;
  if (t.thinking !== undefined) {
    const item = {
      type: 'reasoning',
      id: `rs_${n}`,
      summary: [{ type: 'summary_text', text: t.thinking.text }],
      ...(t.thinking.sig === undefined ? {} : { encrypted_content: t.thinking.sig }),
    };
    out.push(ev({ type: 'response.output_item.added', output_index: oi, item: { ...item, summary: [] } }));
    out.push(
      ev({
        type: 'response.reasoning_summary_text.delta',
        item_id: item.id,
        output_index: oi,
        summary_index: 0,
        delta: t.thinking.text,
      }),
    );
    out.push(ev({ type: 'response.output_item.done', output_index: oi, item }));
    output.push(item);
    oi++;
  }
  if (t.text !== undefined) {
    const id = `msg_${n}`;
    out.push(
      ev({
        type: 'response.output_item.added',
        output_index: oi,
        item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
      }),
    );
    out.push(
      ev({
        type: 'response.output_text.delta',
        item_id: id,
        output_index: oi,
        content_index: 0,
        delta: t.text,
      }),
    );
    const item = {
      type: 'message',
      id,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: t.text, annotations: [] }],
    };
    out.push(ev({ type: 'response.output_item.done', output_index: oi, item }));
    output.push(item);
    oi++;
  }
  t.calls.forEach((c, i) => {
    const last = i === t.calls.length - 1;
    const id = `fc_${n}_${i}`;
    const cut = last && t.cutLastCall;
    const args = cut ? c.args.slice(0, Math.floor(c.args.length / 2)) : c.args;
    out.push(
      ev({
        type: 'response.output_item.added',
        output_index: oi,
        item: {
          type: 'function_call',
          id,
          call_id: c.id,
          name: c.name,
          arguments: '',
          status: 'in_progress',
        },
      }),
    );
    for (const p of pieces(args, 4))
      out.push(
        ev({ type: 'response.function_call_arguments.delta', item_id: id, output_index: oi, delta: p }),
      );
    if (!cut) {
      out.push(
        ev({ type: 'response.function_call_arguments.done', item_id: id, output_index: oi, arguments: args }),
      );
      const item = {
        type: 'function_call',
        id,
        call_id: c.id,
        name: c.name,
        arguments: args,
        status: 'completed',
      };
      out.push(ev({ type: 'response.output_item.done', output_index: oi, item }));
      output.push(item);
    }
    oi++;
  });
  if (t.stop === 'max_tokens') {
    const r = resp('incomplete', output, t.usage);
    r.incomplete_details = { reason: 'max_output_tokens' };
    out.push(ev({ type: 'response.incomplete', response: r }));
  } else {
    out.push(ev({ type: 'response.completed', response: resp('completed', output, t.usage) }));
  }
  return out;
}

function renderGemini(t, model) {
  const frame = (parts, finish, usage) => {
    const cand = { content: { role: 'model', parts }, index: 0 };
    if (finish !== undefined) cand.finishReason = finish;
    const chunk = { candidates: [cand], modelVersion: model };
    if (usage !== undefined)
      chunk.usageMetadata = {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input,
      };
    return sse(undefined, chunk, '\r\n');
  };
  const out = [];
  if (t.thinking !== undefined)
    out.push(
      frame([
        {
          text: t.thinking.text,
          thought: true,
          ...(t.thinking.sig === undefined ? {} : { thoughtSignature: t.thinking.sig }),
        },
      ]),
    );
  if (t.text !== undefined)
    out.push(
      frame([{ text: t.text, ...(t.sigOnText === undefined ? {} : { thoughtSignature: t.sigOnText }) }]),
    );
  // Arguments go into the frame as their raw JSON text (a 10k-deep value is never re-parsed here); text that is not
  // JSON goes in as a string where a Struct belongs.
  const raw = t.calls.map((c) => {
    try {
      JSON.parse(c.args);
      return c.args;
    } catch {
      return JSON.stringify(c.args);
    }
  });
  const parts = t.calls.map((c, i) => ({
    functionCall: { ...(c.id.startsWith('call_') ? {} : { id: c.id }), name: c.name, args: `@@ARGS${i}@@` },
    ...(i === 0 ? { thoughtSignature: `gsig_${i}` } : {}),
  }));
  const finish = t.stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
  let last = frame(parts.length > 0 ? parts : [{ text: '' }], finish, t.usage);
  last = last.replace(/"@@ARGS(\d+)@@"/g, (_m, i) => raw[Number(i)]);
  out.push(last);
  return out;
}

const INDEX_KEYS = new Set(['index', 'output_index', 'content_index', 'summary_index', 'sequence_number']);

/**
 * A stream broken at the frame level, `seed` choosing 1-3 of: a frame dropped, duplicated, swapped with the next, cut
 * there (no terminal frame), or its first index field (`index`, `output_index`, ...) set to 1e9, -1, null, "0", 2^31
 * or 1.5.
 */
function mangle(frames, seed) {
  const r = rng(seed);
  const out = [...frames];
  for (let op = r.int(1, 3); op > 0 && out.length > 0; op--) {
    const k = r.int(0, out.length - 1);
    switch (r.int(0, 4)) {
      case 0:
        out.splice(k, 1);
        break;
      case 1:
        out.splice(k, 0, out[k]);
        break;
      case 2:
        if (k + 1 < out.length) [out[k], out[k + 1]] = [out[k + 1], out[k]];
        break;
      case 3:
        out.length = k;
        break;
      default: {
        const frame = out[k];
        const m = /^((?:event: [^\r\n]*\r?\n)?data: )(.*?)(\r?\n\r?\n)$/s.exec(frame);
        // Frames holding large or deeply nested arguments are left alone (re-serializing them is the fuzzer's cost).
        if (m === null || frame.length > 20_000 || !m[2].startsWith('{')) break;
        const data = JSON.parse(m[2]);
        const stack = [data];
        let done = false;
        while (stack.length > 0 && !done) {
          const v = stack.pop();
          if (typeof v !== 'object' || v === null) continue;
          for (const key of Object.keys(v)) {
            if (INDEX_KEYS.has(key)) {
              v[key] = r.pick([1e9, -1, null, '0', 2 ** 31, 1.5]);
              done = true;
              break;
            }
            stack.push(v[key]);
          }
        }
        out[k] = `${m[1]}${JSON.stringify(data)}${m[3]}`;
      }
    }
  }
  return out;
}

function renderTurn(surface, t, model, n) {
  const r = renderFrames(surface, t, model, n);
  return t.mangle === undefined ? r : { ...r, frames: mangle(r.frames, t.mangle) };
}

function renderFrames(surface, t, model, n) {
  if (t.kind === 'empty') return { status: 200, frames: [] };
  if (t.kind === 'garbage') return { status: 200, frames: ['data: {not json\n\n', 'event: x\n\n'] };
  if (t.kind === 'stall') return { status: 200, frames: [], stall: true };
  switch (surface) {
    case 'anthropic-messages':
      return { status: 200, frames: renderAnthropic(t, model, n) };
    case 'openai-chat':
      return { status: 200, frames: renderChat(t, model, n) };
    case 'openai-responses':
      return { status: 200, frames: renderResponses(t, model, n) };
    case 'gemini':
      return { status: 200, frames: renderGemini(t, model) };
  }
}

const PLAIN = { kind: 'reply', text: 'done', calls: [], stop: 'end', usage: { input: 1, output: 1 } };

/** A request body that declares no tools: compaction's summary request (agent turns here always carry tools). */
function isSummaryRequest(raw) {
  let body;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return false;
  }
  return !(Array.isArray(body?.tools) && body.tools.length > 0);
}

// ---- the loopback server ------------------------------------------------------------------------------------------
async function startServer() {
  const state = { queue: [], requests: 0, n: 0, surface: undefined };
  const open = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      // Compaction's summary requests are not model turns of the run. Told apart by their shape, not their wording:
      // a summary request declares no tools, and every agent of this fuzzer has tools.
      if (!isSummaryRequest(Buffer.concat(chunks))) state.requests++;
      const turn = state.queue.shift() ?? PLAIN;
      const model = /\/models\/([^/:]+):/.exec(req.url ?? '')?.[1] ?? 'm';
      const r = renderTurn(state.surface, turn, model, ++state.n);
      open.add(res);
      res.on('close', () => open.delete(res));
      res.writeHead(r.status, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      for (const f of r.frames) res.write(f);
      if (!r.stall) res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    state,
    baseUrl: (s) => (s.startsWith('openai') ? `${url}/v1` : s === 'gemini' ? `${url}/v1beta` : url),
    close: () =>
      new Promise((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- models, tools ------------------------------------------------------------------------------------------------
const MODELS = {
  'anthropic-messages': resolveModel('claude-sonnet-4-5'),
  'openai-chat': resolveModel('gpt-4.1', { api: 'openai-chat' }),
  'openai-responses': resolveModel('gpt-4.1'),
  gemini: resolveModel('gemini-3-pro-preview'),
};
const SERIALIZERS = {
  'anthropic-messages': toAnthropicMessages,
  'openai-chat': toOpenAIChat,
  'openai-responses': toOpenAIResponses,
  gemini: toGemini,
};

const PNG = await readFile(path.join(root, 'test', 'fixtures', 'media', 'png-rgb.png'));

function hostTools(control) {
  const s = { type: 'object', properties: {} };
  return [
    defineTool({
      name: 'echo',
      description: 'echo',
      inputSchema: s,
      invoke: (a) => JSON.stringify(a).slice(0, 200),
    }),
    defineTool({
      name: 'image',
      description: 'an image',
      inputSchema: s,
      invoke: () => [
        { type: 'text', text: 'a picture' },
        { type: 'media', data: new Uint8Array(PNG) },
      ],
    }),
    defineTool({
      name: 'fail',
      description: 'throws',
      inputSchema: s,
      invoke: () => {
        throw new Error('tool failed on purpose');
      },
    }),
    defineTool({
      name: 'huge',
      description: '2 MB',
      inputSchema: s,
      invoke: () => 'z'.repeat(2 * 1024 * 1024),
    }),
    defineTool({
      name: 'malformed',
      description: 'breaks the result contract',
      inputSchema: s,
      invoke: () =>
        control.r.pick([null, 42, { parts: 'x' }, [{ type: 'audio' }], { parts: [{ type: 'media' }] }]),
    }),
    defineTool({
      name: 'hang',
      description: 'hangs until aborted',
      inputSchema: s,
      invoke: (_a, ctx) =>
        new Promise((_resolve, reject) => {
          control.hung();
          if (ctx.signal.aborted) reject(ctx.signal.reason);
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        }),
    }),
  ];
}

// ---- invariant checks ---------------------------------------------------------------------------------------------
class Finding extends Error {}
const fail = (msg) => {
  throw new Finding(msg);
};

function checkPairing(messages) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool') {
      const prev = messages[i - 1];
      const calls = prev?.role === 'assistant' ? prev.content.filter((b) => b.type === 'tool_call') : [];
      if (calls.length === 0) fail(`I2: tool message at ${i} follows no assistant tool calls`);
      continue;
    }
    if (m.role !== 'assistant') continue;
    const calls = m.content.filter((b) => b.type === 'tool_call');
    if (calls.length === 0) continue;
    const next = messages[i + 1];
    if (next === undefined) fail(`I2: assistant message ${i} with ${calls.length} calls has no tool message`);
    if (next.role !== 'tool') fail(`I2: assistant message ${i} with calls is followed by ${next.role}`);
    const ids = calls.map((c) => c.id);
    const got = next.results.map((r) => r.toolUseId);
    if (!isDeepStrictEqual(ids, got))
      fail(
        `I2: results ${JSON.stringify(got).slice(0, 200)} do not match calls ${JSON.stringify(ids).slice(0, 200)}`,
      );
  }
}

const ID_RE = /^[a-zA-Z0-9_-]+$/;
const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const isObj = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

function* strings(value) {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') yield v;
    else if (Array.isArray(v)) stack.push(...v);
    else if (isObj(v))
      for (const [k, x] of Object.entries(v)) {
        yield k;
        stack.push(x);
      }
  }
}

/** wire-rules.ts `expectWireRules` and `pairs`, as plain checks. */
function checkWire(api, body) {
  const calls = [];
  const results = [];
  const rule = (ok, what) => {
    if (!ok) fail(`I3 ${api}: ${what}`);
  };
  if (api === 'anthropic-messages') {
    for (const m of body.messages)
      for (const b of m.content) {
        if (b.type === 'tool_use') {
          calls.push(b.id);
          rule(ID_RE.test(b.id), `tool_use id ${JSON.stringify(b.id).slice(0, 80)}`);
          rule(b.name.length >= 1 && b.name.length <= 200, `tool_use name length ${b.name.length}`);
          rule(isObj(b.input), `tool_use input ${JSON.stringify(b.input)?.slice(0, 80)}`);
        }
        if (b.type === 'tool_result') {
          results.push(b.tool_use_id);
          rule(ID_RE.test(b.tool_use_id), `tool_use_id ${JSON.stringify(b.tool_use_id).slice(0, 80)}`);
        }
        if (b.type === 'text') rule(/\S/.test(b.text), `blank text block ${JSON.stringify(b.text)}`);
      }
  } else if (api === 'openai-chat') {
    for (const m of body.messages) {
      for (const c of m.tool_calls ?? []) {
        calls.push(c.id);
        rule(c.id.length >= 1, 'empty tool call id');
        rule(typeof c.function.arguments === 'string', 'arguments not a string');
        rule(NAME_RE.test(c.function.name), `name ${JSON.stringify(c.function.name).slice(0, 80)}`);
      }
      if (m.role === 'tool') results.push(m.tool_call_id);
    }
  } else if (api === 'openai-responses') {
    for (const i of body.input) {
      if (i.type === 'function_call' || i.type === 'function_call_output') {
        (i.type === 'function_call' ? calls : results).push(i.call_id);
        rule(i.call_id.length >= 1 && i.call_id.length <= 64, `call_id length ${i.call_id.length}`);
      }
      if (i.type === 'function_call') {
        rule(typeof i.arguments === 'string', 'arguments not a string');
        rule(NAME_RE.test(i.name), `name ${JSON.stringify(i.name).slice(0, 80)}`);
      }
    }
  } else {
    for (const c of body.contents)
      for (const p of c.parts) {
        if (p.functionCall) {
          calls.push(p.functionCall.name);
          rule(NAME_RE.test(p.functionCall.name), `functionCall name ${JSON.stringify(p.functionCall.name)}`);
          rule(isObj(p.functionCall.args), 'functionCall args not a Struct');
        }
        if (p.functionResponse) {
          results.push(p.functionResponse.name);
          rule(NAME_RE.test(p.functionResponse.name), `functionResponse name ${p.functionResponse.name}`);
        }
      }
  }
  for (const s of strings(body)) rule(s.isWellFormed(), 'a lone surrogate');
  rule(
    isDeepStrictEqual(calls, results),
    `calls ${calls.length} and results ${results.length} not paired in order`,
  );
}

function checkSerializes(messages, tools) {
  for (const api of SURFACES) {
    let body;
    try {
      body = SERIALIZERS[api](messages, MODELS[api], { tools }).body;
    } catch (err) {
      if (isPantoError(err)) continue;
      fail(`I3 ${api}: serializer threw an untyped ${err?.name}: ${err?.message}`);
    }
    if (typeof JSON.stringify(body) !== 'string') fail(`I3 ${api}: the body is not JSON`);
    checkWire(api, body);
    for (const v of VALIDATORS?.[api] ?? []) {
      const errors = v.check(body);
      if (errors.length > 0) fail(`I3 ${api}: not valid for ${path.basename(v.file)}: ${errors.join('; ')}`);
    }
  }
}

function checkRun(result, c, requests, label) {
  if (result.turns > c.maxTurns) fail(`I1 ${label}: ${result.turns} turns > maxTurns ${c.maxTurns}`);
  const answers = result.messages.filter((m) => m.role === 'assistant').length;
  if (answers > c.maxTurns) fail(`I1 ${label}: ${answers} answers > maxTurns ${c.maxTurns}`);
  // The transport may retry a failed request (retry maxAttempts 2 here): at most two HTTP requests per turn.
  if (requests > 2 * c.maxTurns) fail(`I1 ${label}: ${requests} requests for maxTurns ${c.maxTurns}`);
  if (result.error !== undefined && !isPantoError(result.error))
    fail(`I1 ${label}: result.error is not a PantoError: ${result.error}`);
}

const TOOL_EVENTS = new Set([
  'tool_call_start',
  'tool_call_update',
  'tool_media_processed',
  'tool_media_dropped',
]);

function checkEvents(events, result, label) {
  const bad = (what) => fail(`I8 ${label}: ${what}`);
  if (events[0]?.type !== 'agent_start') bad(`first event ${events[0]?.type}`);
  if (events.at(-1)?.type !== 'agent_end') bad(`last event ${events.at(-1)?.type}`);
  if (events.filter((e) => e.type === 'agent_start' || e.type === 'agent_end').length !== 2)
    bad('agent_start/agent_end not exactly once each');
  const starts = events.filter((e) => e.type === 'turn_start').length;
  if (starts !== result.turns) bad(`${starts} turn_start for ${result.turns} turns`);
  let seg = [];
  for (const e of events) {
    if (e.type === 'turn_start') seg = [];
    if (TOOL_EVENTS.has(e.type) || e.type === 'tool_call_end') seg.push(e);
    if (e.type !== 'turn_end' || seg.length === 0) continue;
    const ended = new Set();
    const started = new Set();
    for (const t of seg) {
      if (ended.has(t.index)) bad(`${t.type} after tool_call_end of call ${t.index}`);
      if (t.type === 'tool_call_start') {
        if (started.has(t.index)) bad(`two tool_call_start for call ${t.index}`);
        started.add(t.index);
      }
      if (t.type === 'tool_call_end') ended.add(t.index);
    }
    const results = e.toolResults?.results.length ?? 0;
    if (ended.size !== results) bad(`${ended.size} tool_call_end for ${results} results`);
    seg = [];
  }
}

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

function checkUsage(agent, label) {
  for (const m of agent.messages) {
    if (m.role !== 'assistant' || m.usage === undefined) continue;
    for (const [k, v] of Object.entries(m.usage))
      if (!isCount(v)) fail(`I7 ${label}: a stored answer's usage.${k} is ${v}`);
  }
  const u = agent.usage;
  for (const k of [
    'requests',
    'inputTokens',
    'outputTokens',
    'cacheReadTokens',
    'cacheWriteTokens',
    'unpricedRequests',
  ])
    if (!isCount(u[k])) fail(`I7 ${label}: usage total ${k} is ${u[k]}`);
  if (!(Number.isFinite(u.cost) && u.cost >= 0)) fail(`I7 ${label}: usage total cost is ${u.cost}`);
}

const canon = (messages) => JSON.stringify(messages);

/** Thrown when the run's `--seconds` ran out during a case: not a finding, the case is left unfinished. */
class OutOfTime extends Error {}

/** How long to wait for an aborted run to settle before its session folder is removed anyway. */
const ABORT_WAIT_MS = 5_000;

/**
 * The value `promise` settles with, within `RUN_BOUND_MS` (I1) — or within the time left of `--seconds`, when that
 * is less (then `OutOfTime`, not a finding). On either timeout `stop()` aborts the run, and the run is given
 * `ABORT_WAIT_MS` to settle, so that its session folder is not removed while it still writes there.
 */
async function settle(promise, label, stop) {
  let timer;
  const left = ONLY_CASE === undefined ? RUN_DEADLINE - Date.now() : Number.POSITIVE_INFINITY;
  const limit = Math.max(0, Math.min(RUN_BOUND_MS, left));
  const bound = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), limit);
  });
  const outcome = promise.then(
    (v) => ({ v }),
    (e) => ({ e }),
  );
  try {
    const out = await Promise.race([outcome, bound]);
    if (out === 'timeout') {
      stop();
      let wait;
      await Promise.race([outcome, new Promise((resolve) => (wait = setTimeout(resolve, ABORT_WAIT_MS)))]);
      clearTimeout(wait);
      if (limit < RUN_BOUND_MS) throw new OutOfTime(`${label}: --seconds ran out`);
      fail(`I1 ${label}: did not settle in ${RUN_BOUND_MS} ms`);
    }
    if ('e' in out) fail(`I1 ${label}: rejected: ${out.e?.code ?? ''} ${out.e?.stack ?? out.e}`);
    return out.v;
  } finally {
    clearTimeout(timer);
  }
}

// ---- published request schemas (optional) ------------------------------------------------------------------------
/**
 * With `PANTO_WIRE_FIXTURES` set (the folder of the published request schemas): the validators of
 * test/conformance (schema-validator.ts, schema-additions.ts, wire-fixtures.ts), transpiled with the repo's
 * TypeScript into a temp folder, per surface. Undefined without the variable.
 */
async function schemaValidators() {
  if (process.env.PANTO_WIRE_FIXTURES === undefined) return undefined;
  const ts = (await import('typescript')).default;
  const { createRequire } = await import('node:module');
  const { pathToFileURL } = await import('node:url');
  const require = createRequire(path.join(root, 'package.json'));
  const ajvUrl = pathToFileURL(require.resolve('ajv/dist/2020.js')).href;
  const dir = await mkdtemp(path.join(tmpdir(), 'panto-fuzz-schemas-'));
  await writeFile(path.join(dir, 'package.json'), '{"type":"module"}');
  for (const name of ['schema-validator', 'schema-additions', 'wire-fixtures']) {
    const src = await readFile(path.join(root, 'test', 'conformance', `${name}.ts`), 'utf8');
    const js = ts.transpileModule(src, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: false,
      },
    }).outputText;
    // ajv is CommonJS: its default export is the Ajv2020 class.
    const fixed = js.replace(
      /import \{ Ajv2020 \} from 'ajv\/dist\/2020\.js';/,
      `import ajv2020 from '${ajvUrl}'; const { Ajv2020 } = ajv2020;`,
    );
    await writeFile(path.join(dir, `${name}.js`), fixed);
  }
  const { compileValidator } = await import(pathToFileURL(path.join(dir, 'schema-validator.js')).href);
  const { applySchemaAdditions } = await import(pathToFileURL(path.join(dir, 'schema-additions.js')).href);
  const { readJson, schemaFiles } = await import(pathToFileURL(path.join(dir, 'wire-fixtures.js')).href);
  await rm(dir, { recursive: true, force: true });
  const family = {
    'anthropic-messages': 'anthropic',
    'openai-chat': 'openai',
    'openai-responses': 'openai',
    gemini: 'gemini',
  };
  const rootName = {
    'anthropic-messages': 'CreateMessageParams',
    'openai-chat': 'CreateChatCompletionRequest',
    'openai-responses': 'CreateResponse',
    gemini: 'GenerateContentRequest',
  };
  const out = {};
  for (const api of SURFACES) {
    out[api] = schemaFiles(family[api]).map((file) => {
      const doc = readJson(file);
      applySchemaAdditions(family[api], doc);
      return compileValidator(file, doc, rootName[api], {
        closeUnknownKeys: family[api] === 'openai',
        proto3Bytes: family[api] === 'gemini',
      });
    });
  }
  return out;
}

const VALIDATORS = await schemaValidators();

// ---- one case -----------------------------------------------------------------------------------------------------
async function runCase(env, c, index) {
  const { server, ws } = env;
  const r = rng(SEED + index);
  const model = MODELS[c.surface];
  server.state.surface = c.surface;
  server.state.queue = [...c.turns];
  server.state.requests = 0;
  const dir = await mkdtemp(path.join(tmpdir(), 'panto-fuzz-agent-'));
  const file = path.join(dir, 'session.jsonl');
  let agent;
  const control = {
    r,
    hung: () => {
      // A tool that hangs until aborted: abort soon (the run must then end).
      setTimeout(() => agent?.abort(new Error('fuzz: abort a hung tool')), r.int(0, 20));
    },
  };
  const tools = new ToolRegistry([ws.tools, hostTools(control)]);
  const provider = () =>
    createProvider({
      api: c.surface,
      baseUrl: server.baseUrl(c.surface),
      apiKey: 'k',
      retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 2 },
      idleTimeoutMs: 400,
    });
  try {
    const session = await SessionLog.create(file, { model: model.id });
    agent = new Agent({
      provider: provider(),
      model,
      tools,
      session,
      maxTurns: c.maxTurns,
      maxStreamRetries: 0,
      toolConcurrency: c.concurrency,
      compaction: c.compaction,
      workspaceRoot: ws.root,
    });
    let events = 0;
    const seen = [];
    const ctl = new AbortController();
    agent.subscribe((e) => {
      seen.push(e);
      events++;
      if (events === c.abortAtEvent) ctl.abort(new Error('fuzz: abort'));
      if (events === c.steerAtEvent) agent.steer('change of plan');
    });
    // A stall turn ends by the provider's idle timeout; a `hang` tool call by the abort it schedules.
    const result = await settle(agent.prompt('go', { signal: ctl.signal }), 'prompt', () =>
      ctl.abort(new Error('fuzz: out of time')),
    );
    checkRun(result, c, server.state.requests, 'prompt');
    checkEvents(seen, result, 'prompt');
    const lingering = getEventListeners(ctl.signal, 'abort').length;
    if (lingering > 0) fail(`I5: the run left ${lingering} abort listener(s) on the signal it was given`);
    const messages = agent.messages;
    checkPairing(messages);
    checkSerializes(messages, tools.list());
    checkUsage(agent, 'prompt');
    session.close();

    // I4: the log re-loads to the same conversation, and a resumed agent runs on.
    const loaded = await loadSession(file);
    if (canon(loaded.conversation.messages) !== canon(messages))
      fail('I4: loadSession gives another conversation than the agent holds');
    const reopened = await SessionLog.open(file);
    const resumed = new Agent({
      provider: provider(),
      model,
      tools,
      session: reopened,
      maxTurns: 1,
      maxStreamRetries: 0,
      compaction: c.compaction,
      workspaceRoot: ws.root,
    });
    if (canon(resumed.messages) !== canon(messages))
      fail('I4: the resumed agent starts from another conversation');
    server.state.queue = [PLAIN];
    server.state.requests = 0;
    const seenAgain = [];
    resumed.subscribe((e) => seenAgain.push(e));
    const again = await settle(resumed.prompt('and now?'), 'resumed prompt', () => resumed.abort());
    checkRun(again, { maxTurns: 1 }, server.state.requests, 'resumed prompt');
    checkEvents(seenAgain, again, 'resumed prompt');
    checkPairing(resumed.messages);
    checkSerializes(resumed.messages, tools.list());
    checkUsage(resumed, 'resumed prompt');
    reopened.close();
    const reloaded = await loadSession(file);
    if (canon(reloaded.conversation.messages) !== canon(resumed.messages))
      fail('I4: after the resumed run, loadSession gives another conversation');
  } finally {
    agent?.session?.closed === false && agent.session.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- main ---------------------------------------------------------------------------------------------------------
const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(`unhandledRejection: ${e?.stack ?? e}`));
process.on('uncaughtException', (e) => unhandled.push(`uncaughtException: ${e?.stack ?? e}`));

const wsRoot = await mkdtemp(path.join(tmpdir(), 'panto-fuzz-ws-'));
await copyFile(path.join(root, 'test', 'fixtures', 'media', 'png-rgb.png'), path.join(wsRoot, 'cat.png'));
await copyFile(
  path.join(root, 'test', 'fixtures', 'media', 'pdf-2page.pdf'),
  path.join(wsRoot, 'report.pdf'),
);
await writeFile(path.join(wsRoot, 'notes.txt'), 'line one\nline two\n');
const luaTools = await LuaToolSource.fromDir(LuaToolSource.builtinDir(), { workspaceRoot: wsRoot });
const env = { server: await startServer(), ws: { root: wsRoot, tools: luaTools } };

console.log(
  `fuzz-agent: seed=${SEED} seconds=${SECONDS} schemas=${VALIDATORS === undefined ? 'off' : 'on'}${ONLY_CASE === undefined ? '' : ` case=${ONLY_CASE}`}`,
);
const protoKeys = Object.getOwnPropertyNames(Object.prototype).sort();
const t0 = Date.now();
const RUN_DEADLINE = t0 + SECONDS * 1000;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);
const findings = [];
const seen = new Set();
let cases = 0;
for (let i = ONLY_CASE ?? 0; ; i++) {
  if (ONLY_CASE !== undefined ? i > ONLY_CASE : Date.now() - t0 > SECONDS * 1000) break;
  const c = genCase(SEED, i);
  cases++;
  if (argv.print) console.log(describeCase(c));
  let problem;
  const started = Date.now();
  try {
    await runCase(env, c, i);
    if (argv.verbose) console.log(`case ${i} ${c.surface} ok ${Date.now() - started} ms`);
  } catch (err) {
    if (err instanceof OutOfTime) {
      cases--;
      break;
    }
    problem = err instanceof Finding ? err.message : `fuzzer error: ${err?.stack ?? err}`;
    if (argv.verbose) console.log(`case ${i} ${c.surface} FAILED ${Date.now() - started} ms`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  if (unhandled.length > 0) problem = `I5: ${unhandled.splice(0).join('\n')}`;
  const keys = Object.getOwnPropertyNames(Object.prototype).sort();
  if (!isDeepStrictEqual(keys, protoKeys) || {}.polluted !== undefined)
    problem = 'I5: Object.prototype polluted';
  const rss = process.memoryUsage().rss;
  peakRss = Math.max(peakRss, rss);
  if (rss > MAX_RSS_MB * 1024 * 1024) problem = `I6: RSS ${Math.round(rss / 2 ** 20)} MB > ${MAX_RSS_MB} MB`;
  if (problem !== undefined) {
    const key = problem.replace(/\d+/g, 'N').slice(0, 120);
    if (!seen.has(key)) {
      seen.add(key);
      findings.push({ i, problem, c });
      console.log(
        `\nFINDING (seed=${SEED} case=${i}, surface ${c.surface}): ${problem}\ncase: ${describeCase(c)}`,
      );
    }
  }
}
clearInterval(sampler);
await env.server.close();
await rm(wsRoot, { recursive: true, force: true });
console.log(
  `\nfuzz-agent: seed=${SEED} cases=${cases} findings=${findings.length} distinct, peak RSS ${Math.round(peakRss / 2 ** 20)} MB, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
process.exit(findings.length > 0 ? 1 : 0);
