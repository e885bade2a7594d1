#!/usr/bin/env node
import { existsSync, readdirSync, readFileSync } from 'node:fs';
/**
 * Seeded generative fuzzer of the provider stream parsers (Anthropic Messages, OpenAI Chat, OpenAI Responses,
 * Gemini) and the HTTP transport that feeds them. Imports the built library (`dist/`; run `npm run build:ts` first).
 *
 *   node test/fuzz/fuzz-streams.mjs [--seconds=60] [--seed=S] [--transport=0.03] [--stall=0.005] [--max-findings=5]
 *                                 [--case-seed=N]   (replay the one case a finding printed)
 *
 * Needs no network (the transport cases use a loopback server). Seeds: well-formed streams generated here from the
 * seed (text, thinking, several tool calls, images on Responses/Gemini, usage), plus the recorded streams of the
 * shared wire-fixtures folder when `PANTO_WIRE_FIXTURES` names it. Each case mutates one seed: re-chunking at random
 * byte offsets (inside UTF-8 sequences, CRLF pairs, `data:` prefixes), truncation at any byte, events dropped /
 * duplicated / swapped, bytes flipped, JSON values replaced with hostile ones (huge / negative / fractional indexes,
 * 1e308, -0, strings for numbers, arrays for objects, `__proto__` / `constructor` keys, 10k-deep nesting, 1 MB
 * strings, lone surrogates), keep-alives / comments / `event:` lines / unknown event types inserted, BOMs, `retry:` /
 * `id:` fields, CRLF or CR line ends.
 *
 * Invariants (each case; any broken one is a finding, printed with the seed and a shrunk input; exit 1):
 * 1. Parsing ends (bounded time, `CASE_MS`) with a finished assistant message, or a `PantoError` (a `ProviderError`
 *    included) with a string `code`; never another thrown value (TypeError, RangeError, SyntaxError...).
 *    A case still running after `HANG_MS` (a parser stuck in a loop) is reported by a watchdog thread with its case
 *    seed (replay: `--case-seed=N`), and the process is killed (status 137).
 * 2. The message (finished, or the partial of an error) is well-formed: role `assistant`; content blocks of the known
 *    types (`text`/`thinking` with string text, `tool_call` with string id and name and a plain-object input);
 *    usage counts are non-negative safe integers; and no prototype pollution: `({}).polluted === undefined` and
 *    `Object.prototype`'s own property names (sorted) unchanged after each case.
 * 3. The same bytes chunked two different ways give the same outcome (messages deep-equal, or the same error code).
 * 4. Through the real transport (a sampled fraction `--transport`, on a loopback server, some gzip-encoded): exactly
 *    one terminal event, the last one; `done` iff the direct parse finished, with a deep-equal message; else `error`
 *    with a `PantoError` (same code as the direct parse when it failed with one); no unhandled rejection.
 * 2b. The whole-response parsers (`parse*Response`), on each surface's well-formed response with 1-3 hostile values
 *    or keys (every case): invariants 1 and 2 (a well-formed message or a `PantoError`; no pollution).
 * 5. Memory stays bounded: RSS under `RSS_LIMIT_MB` (checked every case); the peak is printed.
 * 6. A body of keep-alives only (every surface's kinds, mixed, cut at random offsets, sent 4 ms apart; a sampled
 *    fraction `--stall`) ends with a stall once `progressTimeoutMs` passes: cut keep-alives never pass for content.
 */
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { mulberry32 } from './fuzz-common.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const lib = await import(join(ROOT, 'dist', 'index.js')).catch((err) => {
  console.error(`fuzz-streams: cannot import dist/index.js (run \`npm run build:ts\`): ${err.message}`);
  process.exit(2);
});
const { createStreamParser, SseParser, createProvider, PantoError } = lib;
/** The whole-response (non-stream) parsers, per surface. */
const PARSE_RESPONSE = {
  'anthropic-messages': lib.parseAnthropicResponse,
  'openai-chat': lib.parseOpenAIChatResponse,
  'openai-responses': lib.parseOpenAIResponsesResponse,
  gemini: lib.parseGeminiResponse,
};

const APIS = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];
/** Longest a single parse may take before it counts as a hang (generous: 1 MB strings on a loaded 2-core box). */
const CASE_MS = 5000;
const RSS_LIMIT_MB = 1024;
/** Longest one finding's shrink may take. */
const SHRINK_MS = 20_000;
/** A case still running after this long is a hang: the watchdog prints its case seed and kills the process. */
const HANG_MS = 60_000;

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`fuzz-streams: unknown argument ${a}`);
    return [m[1], m[2] ?? 'true'];
  }),
);
const SECONDS = Number(args.seconds ?? 60);
const SEED = args.seed === undefined ? (Date.now() ^ (process.pid << 8)) >>> 0 : Number(args.seed) >>> 0;
const TRANSPORT = Number(args.transport ?? 0.03);
const STALL = Number(args.stall ?? 0.005);
const MAX_FINDINGS = Number(args['max-findings'] ?? 5);
/** `--case-seed=N`: replay the one case a finding printed (its seed), then exit. */
const CASE_SEED = args['case-seed'] === undefined ? undefined : Number(args['case-seed']) >>> 0;

/** The deterministic PRNG of a seed (mulberry32, test/fuzz/fuzz-common.mjs). */
const prng = mulberry32;

// ---------------------------------------------------------------------------------------------------------------
// Seeds: well-formed streams.

const WORDS = ['hello', 'wörld', 'naïve', '日本語', '😀', 'a\nb', 'tab\t', '"q"', '\\', 'crlf\r\n', ' ', 'x'];
const pick = (rnd, xs) => xs[Math.floor(rnd() * xs.length)];
const text = (rnd) => Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(rnd, WORDS)).join('');
const args0 = (rnd) => JSON.stringify({ path: text(rnd), n: Math.floor(rnd() * 100), deep: { a: [1, 'b'] } });
/** A JSON string cut into 1-4 pieces. */
function pieces(rnd, s) {
  const n = 1 + Math.floor(rnd() * 3);
  const cuts = [...new Set(Array.from({ length: n }, () => Math.floor(rnd() * s.length)))].sort(
    (a, b) => a - b,
  );
  const out = [];
  let at = 0;
  for (const c of cuts) {
    out.push(s.slice(at, c));
    at = c;
  }
  out.push(s.slice(at));
  return out;
}
const PNG_B64 = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString(
  'base64',
);

/** Frame `[event, object]` pairs as SSE (`event:` lines on the surfaces that send them). */
function frame(api, events) {
  const named = api === 'anthropic-messages' || api === 'openai-responses';
  return events
    .map(
      ([e, d]) =>
        `${named && e ? `event: ${e}\n` : ''}data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`,
    )
    .join('');
}

function seedStream(api, rnd) {
  const ev = [];
  const calls = Math.floor(rnd() * 3);
  const thinking = rnd() < 0.5;
  if (api === 'anthropic-messages') {
    ev.push([
      'message_start',
      {
        type: 'message_start',
        message: {
          model: 'claude-x',
          usage: {
            input_tokens: 5,
            output_tokens: 0,
            cache_read_input_tokens: 7,
            cache_creation_input_tokens: 3,
          },
        },
      },
    ]);
    let i = 0;
    if (thinking) {
      ev.push([
        'content_block_start',
        { type: 'content_block_start', index: i, content_block: { type: 'thinking', thinking: '' } },
      ]);
      for (const t of pieces(rnd, text(rnd)))
        ev.push([
          'content_block_delta',
          { type: 'content_block_delta', index: i, delta: { type: 'thinking_delta', thinking: t } },
        ]);
      ev.push([
        'content_block_delta',
        { type: 'content_block_delta', index: i, delta: { type: 'signature_delta', signature: 'sig' } },
      ]);
      ev.push(['content_block_stop', { type: 'content_block_stop', index: i++ }]);
    }
    ev.push(['ping', { type: 'ping' }]);
    ev.push([
      'content_block_start',
      { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } },
    ]);
    for (const t of pieces(rnd, text(rnd)))
      ev.push([
        'content_block_delta',
        { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: t } },
      ]);
    ev.push(['content_block_stop', { type: 'content_block_stop', index: i++ }]);
    for (let c = 0; c < calls; c++, i++) {
      ev.push([
        'content_block_start',
        {
          type: 'content_block_start',
          index: i,
          content_block: { type: 'tool_use', id: `toolu_${c}`, name: `tool${c}`, input: {} },
        },
      ]);
      for (const p of pieces(rnd, args0(rnd)))
        ev.push([
          'content_block_delta',
          { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: p } },
        ]);
      ev.push(['content_block_stop', { type: 'content_block_stop', index: i }]);
    }
    ev.push([
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: calls ? 'tool_use' : 'end_turn' },
        usage: { output_tokens: 9 },
      },
    ]);
    ev.push(['message_stop', { type: 'message_stop' }]);
  } else if (api === 'openai-chat') {
    const base = { id: 'c1', object: 'chat.completion.chunk', model: 'gpt-x' };
    const chunk = (delta, finish = null, extra = {}) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
    ev.push(['', chunk({ role: 'assistant', content: '' })]);
    if (thinking) for (const t of pieces(rnd, text(rnd))) ev.push(['', chunk({ reasoning_content: t })]);
    for (const t of pieces(rnd, text(rnd))) ev.push(['', chunk({ content: t })]);
    for (let c = 0; c < calls; c++) {
      ev.push([
        '',
        chunk({
          tool_calls: [
            { index: c, id: `call_${c}`, type: 'function', function: { name: `tool${c}`, arguments: '' } },
          ],
        }),
      ]);
      for (const p of pieces(rnd, args0(rnd)))
        ev.push(['', chunk({ tool_calls: [{ index: c, function: { arguments: p } }] })]);
    }
    ev.push(['', chunk({}, calls ? 'tool_calls' : 'stop')]);
    ev.push([
      '',
      { ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } },
    ]);
    ev.push(['', '[DONE]']);
  } else if (api === 'openai-responses') {
    let seq = 0;
    const e = (type, rest) => [type, { type, sequence_number: seq++, ...rest }];
    ev.push(e('response.created', { response: { id: 'resp_1', model: 'gpt-x', status: 'in_progress' } }));
    let out = 0;
    if (thinking) {
      ev.push(
        e('response.output_item.added', {
          output_index: out,
          item: { type: 'reasoning', id: 'rs_1', summary: [] },
        }),
      );
      ev.push(
        e('response.reasoning_summary_part.added', { item_id: 'rs_1', output_index: out, summary_index: 0 }),
      );
      for (const t of pieces(rnd, text(rnd)))
        ev.push(
          e('response.reasoning_summary_text.delta', {
            item_id: 'rs_1',
            output_index: out,
            summary_index: 0,
            delta: t,
          }),
        );
      ev.push(
        e('response.output_item.done', {
          output_index: out++,
          item: { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' },
        }),
      );
    }
    ev.push(
      e('response.output_item.added', {
        output_index: out,
        item: { type: 'message', id: 'msg_1', role: 'assistant', content: [] },
      }),
    );
    const t0 = text(rnd);
    for (const t of pieces(rnd, t0))
      ev.push(
        e('response.output_text.delta', { item_id: 'msg_1', output_index: out, content_index: 0, delta: t }),
      );
    ev.push(
      e('response.output_item.done', {
        output_index: out++,
        item: {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          content: [{ type: 'output_text', text: t0 }],
        },
      }),
    );
    if (rnd() < 0.5) {
      ev.push(
        e('response.output_item.done', {
          output_index: out++,
          item: { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: PNG_B64 },
        }),
      );
    }
    for (let c = 0; c < calls; c++) {
      const id = `fc_${c}`;
      const a = args0(rnd);
      ev.push(
        e('response.output_item.added', {
          output_index: out,
          item: { type: 'function_call', id, call_id: `call_${c}`, name: `tool${c}`, arguments: '' },
        }),
      );
      for (const p of pieces(rnd, a))
        ev.push(e('response.function_call_arguments.delta', { item_id: id, output_index: out, delta: p }));
      ev.push(e('response.function_call_arguments.done', { item_id: id, output_index: out, arguments: a }));
      ev.push(
        e('response.output_item.done', {
          output_index: out++,
          item: { type: 'function_call', id, call_id: `call_${c}`, name: `tool${c}`, arguments: a },
        }),
      );
    }
    ev.push(
      e('response.completed', {
        response: {
          id: 'resp_1',
          model: 'gpt-x',
          status: 'completed',
          usage: { input_tokens: 5, output_tokens: 9 },
        },
      }),
    );
  } else {
    const parts = [];
    if (thinking) parts.push({ text: text(rnd), thought: true });
    for (const t of pieces(rnd, text(rnd))) parts.push({ text: t });
    if (rnd() < 0.5) parts.push({ inlineData: { mimeType: 'image/png', data: PNG_B64 } });
    for (let c = 0; c < calls; c++)
      parts.push({ functionCall: { name: `tool${c}`, args: JSON.parse(args0(rnd)) } });
    parts.forEach((p, k) => {
      const last = k === parts.length - 1;
      ev.push([
        '',
        {
          candidates: [
            { content: { role: 'model', parts: [p] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) },
          ],
          modelVersion: 'gemini-x',
          responseId: 'r1',
          ...(last
            ? {
                usageMetadata: {
                  promptTokenCount: 5,
                  candidatesTokenCount: 9,
                  totalTokenCount: 14,
                  thoughtsTokenCount: 4,
                  toolUsePromptTokenCount: 2,
                  cachedContentTokenCount: 3,
                },
              }
            : {}),
        },
      ]);
    });
  }
  return frame(api, ev);
}

/** Recorded streams of the shared wire-fixtures folder, when `PANTO_WIRE_FIXTURES` names it. */
function recordedSeeds() {
  const dir = process.env.PANTO_WIRE_FIXTURES;
  if (!dir) return [];
  const streams = join(dir, 'streams');
  if (!existsSync(streams)) throw new Error(`fuzz-streams: PANTO_WIRE_FIXTURES has no streams/ (${streams})`);
  const out = [];
  for (const api of APIS) {
    const sub = join(streams, api);
    if (!existsSync(sub)) continue;
    for (const f of readdirSync(sub)) {
      const raw = readFileSync(join(sub, f), 'utf8');
      if (f.endsWith('.sse')) out.push({ api, name: f, body: raw });
      else if (f.endsWith('.chunks.txt')) {
        const events = [];
        for (const line of raw.split('\n')) {
          if (line.trim() === '') continue;
          let type = '';
          try {
            type = String(JSON.parse(line).type ?? '');
          } catch {}
          if (type === 'response.created' && events.length > 0) break;
          events.push([type, line]);
        }
        if (api === 'openai-chat') events.push(['', '[DONE]']);
        out.push({ api, name: f, body: frame(api, events) });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations.

const HOSTILE_VALUES = [
  () => '1e308',
  () => '-1e308',
  () => '-0',
  () => '-1',
  () => '1.5',
  () => '4294967296',
  () => '9007199254740993',
  () => '"7"',
  () => '[]',
  () => '[1,2]',
  () => '{}',
  () => 'null',
  () => 'true',
  () => '""',
  () => '"\\ud800"',
  () => '"\\udc00x"',
  () => '{"__proto__":{"polluted":1}}',
  () => '{"constructor":{"prototype":{"polluted":1}}}',
  () => `${'['.repeat(10000)}${']'.repeat(10000)}`,
  () => `${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}`,
  () => JSON.stringify('x'.repeat(1 << 20)),
  () => '"\\u0000"',
  () => '{"type":"ping"}',
  () => '{"toString":1}',
  () => '[{"toString":1}]',
  () => '{"valueOf":{},"toString":{}}',
];

/** Split a body into its events (blocks ending in a blank line). */
const blocks = (s) => s.split(/(?<=\n\n)/);

const MUTATIONS = {
  truncate: (s, rnd) => s.slice(0, Math.floor(rnd() * s.length)),
  dropEvent: (s, rnd) => {
    const b = blocks(s);
    b.splice(Math.floor(rnd() * b.length), 1);
    return b.join('');
  },
  duplicateEvent: (s, rnd) => {
    const b = blocks(s);
    const i = Math.floor(rnd() * b.length);
    b.splice(i, 0, b[i]);
    return b.join('');
  },
  swapEvents: (s, rnd) => {
    const b = blocks(s);
    if (b.length < 2) return s;
    const i = Math.floor(rnd() * (b.length - 1));
    [b[i], b[i + 1]] = [b[i + 1], b[i]];
    return b.join('');
  },
  hostileValue: (s, rnd) => {
    // Replace one JSON value (a number, a string, an object or array start) with a hostile one.
    const spots = [
      ...s.matchAll(/:(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\\n]|\\.)*"|\{\}|\[\]|null|true|false)/g),
    ];
    if (spots.length === 0) return s;
    const m = pick(rnd, spots);
    const at = m.index + 1;
    return s.slice(0, at) + pick(rnd, HOSTILE_VALUES)() + s.slice(at + m[1].length);
  },
  hostileKey: (s, rnd) => {
    const spots = [...s.matchAll(/\{"/g)];
    if (spots.length === 0) return s;
    const m = pick(rnd, spots);
    const key = pick(rnd, [
      '"__proto__":{"polluted":1},',
      '"constructor":{"prototype":{"polluted":1}},',
      '"__proto__":[],',
      '"toString":1,',
      '"hasOwnProperty":null,',
    ]);
    return s.slice(0, m.index + 1) + key + s.slice(m.index + 1);
  },
  flipByte: (s, rnd) => {
    const b = Buffer.from(s);
    if (b.length === 0) return s;
    const n = 1 + Math.floor(rnd() * 3);
    for (let k = 0; k < n; k++) b[Math.floor(rnd() * b.length)] ^= 1 << Math.floor(rnd() * 8);
    return b.toString('latin1'); // may no longer be UTF-8
  },
  insertNoise: (s, rnd) => {
    const b = blocks(s);
    const noise = pick(rnd, [
      ': keep-alive\n\n',
      ': OPENROUTER PROCESSING\n\n',
      'event: ping\ndata: {"type": "ping"}\n\n',
      'data: {"type":"keepalive","sequence_number":1}\n\n',
      'event: unknown_event\ndata: {"type":"unknown_event","x":1}\n\n',
      'data: {"type":"surprise"}\n\n',
      'event: message\n\n',
      'retry: 1000\n\n',
      'id: 7\n\n',
      'id: a\0b\ndata: [DONE]\n\n',
      'data: [DONE]\n\n',
      'data\n\n',
      'data:\n\n',
      ':\n\n',
      'event: error\n\n',
      'data: {}\n\n',
      'data: []\n\n',
      'data: 1\n\n',
      'data: "s"\n\n',
      'data: null\n\n',
    ]);
    b.splice(Math.floor(rnd() * (b.length + 1)), 0, noise);
    return b.join('');
  },
  bom: (s) => `\xef\xbb\xbf${s}`,
  lineEnds: (s, rnd) => s.replace(/\n/g, rnd() < 0.5 ? '\r\n' : '\r'),
  fields: (s, rnd) => {
    const b = blocks(s);
    const i = Math.floor(rnd() * b.length);
    b[i] =
      pick(rnd, ['retry: 5\n', 'id: 42\n', 'retry: x\n', 'id\n', 'event\n', 'data:{"a":1}\n', 'data: x\n']) +
      b[i];
    return b.join('');
  },
  unknownType: (s, rnd) => {
    const spots = [...s.matchAll(/"type":"[a-z_.]+"/g)];
    if (spots.length === 0) return s;
    const m = pick(rnd, spots);
    return (
      s.slice(0, m.index) +
      pick(rnd, [
        '"type":"zzz"',
        '"type":1',
        '"type":null',
        '"type":"error"',
        '"type":"message_stop"',
        '"type":"response.completed"',
      ]) +
      s.slice(m.index + m[0].length)
    );
  },
};
const MUTATION_NAMES = Object.keys(MUTATIONS);

/** Apply 1-3 mutations to the UTF-8 bytes of `body` (each mutation works on them as a latin1 string: one char, one byte). */
function mutate(body, rnd) {
  let s = Buffer.from(body).toString('latin1');
  const names = [];
  const n = 1 + Math.floor(rnd() * 3);
  for (let k = 0; k < n; k++) {
    const name = pick(rnd, MUTATION_NAMES);
    names.push(name);
    s = MUTATIONS[name](s, rnd);
  }
  return { bytes: Buffer.from(s, 'latin1'), names };
}

/** Cut offsets for one chunking: random, byte-by-byte near interesting spots, or none. */
function cutsFor(len, rnd) {
  const mode = rnd();
  if (mode < 0.15 || len === 0) return [];
  if (mode < 0.3 && len < 4096) return Array.from({ length: len - 1 }, (_, i) => i + 1);
  const n = 1 + Math.floor(rnd() * Math.min(64, len));
  return [...new Set(Array.from({ length: n }, () => 1 + Math.floor(rnd() * Math.max(1, len - 1))))].sort(
    (a, b) => a - b,
  );
}
const chunksOf = (bytes, cuts) => {
  const out = [];
  let at = 0;
  for (const c of cuts) {
    if (c > at && c < bytes.length) {
      out.push(bytes.subarray(at, c));
      at = c;
    }
  }
  out.push(bytes.subarray(at));
  return out;
};

// ---------------------------------------------------------------------------------------------------------------
// Running one case.

const protoNames = () => Object.getOwnPropertyNames(Object.prototype).sort().join(',');
const PROTO_NAMES = protoNames();

/** Direct parse of `bytes` in `chunks`: `{ok, message}` or `{code}`; `untyped` for a thrown non-PantoError. */
function parseDirect(api, chunks) {
  const parser = createStreamParser(api, () => {});
  const sse = new SseParser((e) => parser.accept(e), { api });
  try {
    for (const c of chunks) sse.push(c);
    sse.end();
  } catch (err) {
    if (!(err instanceof PantoError) || typeof err.code !== 'string') {
      return {
        untyped: `${err?.constructor?.name ?? typeof err}: ${err?.message ?? String(err)}`,
        stack: err?.stack,
      };
    }
    return { code: err.code, message: parser.partial('error', err.message) };
  }
  if (!parser.complete)
    return { code: 'ERR_PROVIDER', incomplete: true, message: parser.partial('error', 'incomplete') };
  return { ok: true, message: parser.result() };
}

/** What is wrong with `m` as an assistant message, or undefined. */
function malformed(m) {
  if (m === null || typeof m !== 'object' || m.role !== 'assistant') return 'not an assistant message';
  if (!Array.isArray(m.content)) return 'content is not an array';
  for (const b of m.content) {
    if (b === null || typeof b !== 'object') return 'a content block is not an object';
    if (b.type === 'text' || b.type === 'thinking') {
      if (typeof b.text !== 'string') return `${b.type} block without string text`;
    } else if (b.type === 'tool_call') {
      if (typeof b.id !== 'string' || typeof b.name !== 'string') return 'tool_call without string id/name';
      if (b.input === null || typeof b.input !== 'object' || Array.isArray(b.input))
        return 'tool_call input is not an object';
    } else return `unknown block type ${String(b.type)}`;
  }
  if (m.usage !== undefined) {
    for (const [k, v] of Object.entries(m.usage))
      if (!Number.isSafeInteger(v) || v < 0) return `usage.${k} is not a non-negative safe integer`;
  }
  if (m.model !== undefined && typeof m.model !== 'string') return 'model is not a string';
  return undefined;
}

function polluted() {
  const probe = {};
  return probe.polluted !== undefined || protoNames() !== PROTO_NAMES;
}

const sameOutcome = (a, b) =>
  a.ok
    ? b.ok && isDeepStrictEqual(a.message, b.message)
    : !b.ok && !b.untyped && a.code === b.code && isDeepStrictEqual(a.message, b.message);

/** A well-formed whole (non-stream) response per surface, with a tool call and every usage field. */
const WHOLE_RESPONSES = {
  'anthropic-messages': {
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [
      { type: 'thinking', thinking: 'hm', signature: 's' },
      { type: 'text', text: 'hi' },
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 5, output_tokens: 9, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 },
  },
  'openai-chat': {
    model: 'gpt-x',
    choices: [
      {
        message: {
          role: 'assistant',
          content: 'hi',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 2 } },
  },
  'openai-responses': {
    model: 'gpt-x',
    status: 'completed',
    output: [
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'hm' }],
        encrypted_content: 'e',
      },
      { type: 'message', content: [{ type: 'output_text', text: 'hi' }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{"path":"a"}' },
    ],
    usage: { input_tokens: 5, output_tokens: 9, input_tokens_details: { cached_tokens: 2 } },
  },
  gemini: {
    modelVersion: 'gemini-x',
    responseId: 'r1',
    candidates: [
      {
        content: {
          role: 'model',
          parts: [{ text: 'hi' }, { functionCall: { id: 'f1', name: 'read', args: { path: 'a' } } }],
        },
        finishReason: 'STOP',
      },
    ],
    usageMetadata: {
      promptTokenCount: 5,
      candidatesTokenCount: 9,
      thoughtsTokenCount: 4,
      toolUsePromptTokenCount: 2,
      cachedContentTokenCount: 3,
    },
  },
};

/**
 * Invariants 1-2 for the whole-response parser of `api` on its response with 1-3 hostile values / keys: a
 * well-formed message or a `PantoError`, no prototype pollution. `{kind, detail, input}` when broken.
 */
function checkWholeResponse(api, r) {
  let text = JSON.stringify(WHOLE_RESPONSES[api]);
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) text = (r() < 0.7 ? MUTATIONS.hostileValue : MUTATIONS.hostileKey)(text, r);
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const input = Buffer.from(text);
  let message;
  try {
    message = PARSE_RESPONSE[api](json);
  } catch (err) {
    if (err instanceof PantoError && typeof err.code === 'string') return undefined;
    return {
      kind: 'whole-response-untyped-error',
      detail: `${err?.constructor?.name ?? typeof err}: ${err?.message ?? String(err)}`,
      stack: err?.stack,
      input,
    };
  }
  if (polluted()) return { kind: 'whole-response-prototype-pollution', input };
  const bad = malformed(message);
  return bad ? { kind: 'whole-response-malformed', detail: bad, input } : undefined;
}

/** The invariant `bytes` breaks under chunkings `cutsA`/`cutsB`, or undefined. */
function check(api, bytes, cutsA, cutsB) {
  const t0 = performance.now();
  const a = parseDirect(api, chunksOf(bytes, cutsA));
  const b = parseDirect(api, chunksOf(bytes, cutsB));
  const ms = performance.now() - t0;
  if (a.untyped || b.untyped)
    return { kind: 'untyped-error', detail: a.untyped ?? b.untyped, stack: a.stack ?? b.stack };
  if (polluted()) return { kind: 'prototype-pollution' };
  const bad = malformed(a.message) ?? malformed(b.message);
  if (bad) return { kind: 'malformed-message', detail: bad };
  if (!sameOutcome(a, b)) {
    return { kind: 'split-mismatch', detail: `${a.ok ? 'done' : a.code} vs ${b.ok ? 'done' : b.code}` };
  }
  if (ms > CASE_MS) return { kind: 'slow', detail: `${Math.round(ms)} ms` };
  return undefined;
}

/** Shrink `bytes` (keeping cuts as whole / every byte) while the same kind of finding persists. */
function shrink(api, bytes, kind) {
  const fails = (b) => {
    const single = Array.from({ length: Math.max(0, b.length - 1) }, (_, i) => i + 1);
    const f = check(api, b, [], b.length < 20000 ? single : [Math.floor(b.length / 2)]);
    return f?.kind === kind;
  };
  if (!fails(bytes)) return bytes;
  let cur = bytes;
  let budget = 3000;
  // Bounded in time as well as in trials: one trial of a 1 MB input can take a while on a loaded machine.
  const until = Date.now() + SHRINK_MS;
  // Whole events first, then ever smaller byte ranges.
  const text = cur.toString('latin1');
  let parts = blocks(text);
  for (let i = 0; i < parts.length && budget-- > 0 && Date.now() < until; ) {
    const trial = Buffer.from(parts.filter((_, k) => k !== i).join(''), 'latin1');
    if (fails(trial)) {
      parts = parts.filter((_, k) => k !== i);
      cur = trial;
    } else i++;
  }
  for (let size = cur.length >> 1; size >= 1 && budget > 0 && Date.now() < until; size >>= 1) {
    for (let at = 0; at + size <= cur.length && budget-- > 0 && Date.now() < until; ) {
      const trial = Buffer.concat([cur.subarray(0, at), cur.subarray(at + size)]);
      if (fails(trial)) cur = trial;
      else at += size;
    }
  }
  return cur;
}

// ---------------------------------------------------------------------------------------------------------------
// Transport cases: a loopback server sends the bytes in the chunking given.

let serveNext = { chunks: [], gzip: false, gapMs: 0 };
const server = createServer((req, res) => {
  req.resume();
  const { chunks, gzip, gapMs } = serveNext;
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.socket?.setNoDelay(true);
  const list = gzip ? chunksOf(gzipSync(Buffer.concat(chunks)), [7, 40, 41]) : chunks;
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i >= list.length) return res.end();
    res.write(list[i++]);
    if (gapMs > 0) setTimeout(next, gapMs);
    else setImmediate(next);
  };
  next();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
const unhandled = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

/** What each surface's servers send to keep a connection alive (`N`: a number). */
const KEEP_ALIVES = [
  ': ping\n\n',
  ': OPENROUTER PROCESSING\n\n',
  'event: ping\ndata: {"type": "ping"}\n\n',
  'data: {"type":"ping"}\n\n',
  'data: {"type":"keepalive","sequence_number":N}\n\n',
  'event: keepalive\ndata: {"type":"keepalive"}\n\n',
  'data: {"type":"response.keep_alive"}\r\n\r\n',
  'event: response.keep_alive\rdata: {}\r\r',
];

/**
 * Invariant 6 (keep-alive stall, a sampled fraction `--stall`): a body of keep-alives only, cut at random offsets and
 * sent a few ms apart, ends with a stall (`keep-alives-only`, or `idle` when a loaded machine delays the reads) once
 * `progressTimeoutMs` passes — never `done` and never another error: cutting keep-alives cannot pass for content.
 */
async function checkKeepAliveStall(api, r) {
  let text = '';
  for (let k = 0; k < 200; k++) text += pick(r, KEEP_ALIVES).replace('N', String(k));
  const bytes = Buffer.from(text);
  const cuts = [...new Set(Array.from({ length: 150 }, () => 1 + Math.floor(r() * (bytes.length - 1))))].sort(
    (a, b) => a - b,
  );
  serveNext = { chunks: chunksOf(bytes, cuts), gzip: false, gapMs: 4 };
  const provider = createProvider({
    api,
    baseUrl,
    apiKey: 'k',
    retry: { maxAttempts: 1 },
    idleTimeoutMs: 10_000,
    progressTimeoutMs: 150,
  });
  const events = [];
  for await (const e of provider.stream({ model: 'm', body: { messages: [] } })) events.push(e);
  const last = events.at(-1);
  const stall = last?.type === 'error' ? last.error.stall : undefined;
  if (stall === 'keep-alives-only' || stall === 'idle') return undefined;
  return {
    kind: 'keep-alive-stall-dodged',
    detail: `${last?.type} ${last?.error?.code ?? ''} ${last?.error?.message ?? ''}`.slice(0, 300),
    input: bytes,
  };
}

async function checkTransport(api, bytes, cuts, gzip, direct) {
  serveNext = { chunks: chunksOf(bytes, cuts), gzip, gapMs: 0 };
  const provider = createProvider({
    api,
    baseUrl,
    apiKey: 'k',
    retry: { maxAttempts: 1 },
    idleTimeoutMs: 10_000,
    progressTimeoutMs: 10_000,
    finishGraceMs: 10_000,
  });
  const events = [];
  const t0 = performance.now();
  try {
    for await (const e of provider.stream({ model: 'm', body: { messages: [] } })) events.push(e);
  } catch (err) {
    return { kind: 'transport-rejected', detail: String(err?.stack ?? err) };
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setImmediate(r));
  if (unhandled.length > 0) return { kind: 'unhandled-rejection', detail: String(unhandled.splice(0)[0]) };
  const terminals = events.filter((e) => e.type === 'done' || e.type === 'error');
  const last = events.at(-1);
  if (terminals.length !== 1 || terminals[0] !== last)
    return { kind: 'terminal-events', detail: `${terminals.length} terminal events` };
  if (polluted()) return { kind: 'prototype-pollution' };
  const bad = malformed(last.message);
  if (bad) return { kind: 'malformed-message', detail: `transport: ${bad}` };
  if (last.type === 'error' && !(last.error instanceof PantoError))
    return { kind: 'untyped-error', detail: `transport: ${last.error}` };
  if (Boolean(direct.ok) !== (last.type === 'done')) {
    return {
      kind: 'transport-mismatch',
      detail:
        `direct ${direct.ok ? 'done' : direct.code}, transport ${last.type} ${last.error?.code ?? ''} ${last.error?.message ?? ''}`.slice(
          0,
          300,
        ),
    };
  }
  if (direct.ok && !isDeepStrictEqual(direct.message, last.message)) {
    return {
      kind: 'transport-mismatch',
      detail: `done messages differ: ${JSON.stringify(direct.message).slice(0, 400)} vs ${JSON.stringify(last.message).slice(0, 400)}`,
    };
  }
  if (!direct.ok && last.error.code !== direct.code)
    return { kind: 'transport-mismatch', detail: `codes ${direct.code} vs ${last.error.code}` };
  if (ms > 3 * CASE_MS) return { kind: 'slow', detail: `transport ${Math.round(ms)} ms` };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------

/** `bytes` as a JS string literal (first 4000 bytes): printable ASCII as is, every other byte escaped. */
function printable(bytes) {
  let out = '';
  for (const byte of bytes.subarray(0, 4000)) {
    if (byte === 0x0a) out += '\\n';
    else if (byte === 0x0d) out += '\\r';
    else if (byte === 0x5c) out += '\\\\';
    else if (byte === 0x27) out += "\\'";
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `'${out}'${bytes.length > 4000 ? ' (cut)' : ''}`;
}

/**
 * Hang watchdog: a worker thread that sees the running case's seed and start time (shared memory) and, when one case
 * runs past `HANG_MS` (a parser stuck in a loop blocks this thread, so only another thread can tell), prints the seed
 * and kills the process (SIGKILL: exit status 137 from a shell).
 */
const watch = new Int32Array(new SharedArrayBuffer(12));
const watchdog = new Worker(
  `const { workerData } = require('node:worker_threads');
   const { writeSync } = require('node:fs');
   const w = workerData.watch;
   setInterval(() => {
     const running = Atomics.load(w, 2);
     const start = Atomics.load(w, 1);
     if (running === 1 && Math.floor(Date.now() / 1000) - start > workerData.hangS) {
       writeSync(2, '\\nFINDING: hang (case seed ' + (Atomics.load(w, 0) >>> 0) + ' ran over ' + workerData.hangS +
         ' s); replay with --case-seed=' + (Atomics.load(w, 0) >>> 0) + '\\n');
       // process.exit here would end this worker only; the blocked main thread cannot run a handler.
       process.kill(process.pid, 'SIGKILL');
     }
   }, 1000);`,
  { eval: true, workerData: { watch, hangS: HANG_MS / 1000 } },
);
watchdog.unref();
const caseStarted = (caseSeed) => {
  Atomics.store(watch, 0, caseSeed | 0);
  Atomics.store(watch, 1, Math.floor(Date.now() / 1000));
  Atomics.store(watch, 2, 1);
};
const caseEnded = () => Atomics.store(watch, 2, 0);

const rnd = prng(SEED);
const recorded = recordedSeeds();
console.log(
  `fuzz-streams: seed=${SEED} seconds=${SECONDS} transport=${TRANSPORT} recorded-seeds=${recorded.length}`,
);
const deadline = Date.now() + SECONDS * 1000;
let cases = 0;
let transportCases = 0;
let stallCases = 0;
let peakRss = 0;
const findings = [];
const seenKinds = new Set();
const perMutation = Object.fromEntries(MUTATION_NAMES.map((n) => [n, 0]));

while ((CASE_SEED !== undefined ? cases === 0 : Date.now() < deadline) && findings.length < MAX_FINDINGS) {
  const caseSeed = CASE_SEED ?? Math.floor(rnd() * 2 ** 32);
  caseStarted(caseSeed);
  const r = prng(caseSeed);
  const fromRecorded = recorded.length > 0 && r() < 0.3;
  const src = fromRecorded ? pick(r, recorded) : { api: pick(r, APIS), name: 'generated', body: '' };
  const api = src.api;
  const body = fromRecorded ? src.body : seedStream(api, r);
  const { bytes, names } = r() < 0.1 ? { bytes: Buffer.from(body), names: [] } : mutate(body, r);
  for (const n of names) perMutation[n]++;
  const cutsA = cutsFor(bytes.length, r);
  const cutsB = cutsFor(bytes.length, r);
  cases++;
  let finding = check(api, bytes, cutsA, cutsB) ?? checkWholeResponse(api, r);
  if (!finding && r() < TRANSPORT) {
    transportCases++;
    const direct = parseDirect(api, [bytes]);
    finding = await checkTransport(api, bytes, cutsA, r() < 0.3, direct);
  }
  if (!finding && r() < STALL) {
    stallCases++;
    finding = await checkKeepAliveStall(api, r);
  }
  caseEnded();
  const rss = process.memoryUsage().rss;
  peakRss = Math.max(peakRss, rss);
  if (!finding && rss > RSS_LIMIT_MB * 1024 * 1024)
    finding = { kind: 'memory', detail: `rss ${Math.round(rss / 2 ** 20)} MB` };
  if (finding) {
    // Digits out of the key: the same bug at another offset or length is one finding.
    const key = `${api}:${finding.kind}:${finding.detail ?? ''}`.replace(/\d+/g, 'N');
    if (seenKinds.has(key)) continue;
    seenKinds.add(key);
    const small =
      finding.input !== undefined
        ? finding.input
        : finding.kind.startsWith('transport') || finding.kind === 'memory' || finding.kind === 'slow'
          ? bytes
          : shrink(api, bytes, finding.kind);
    findings.push({ caseSeed, api, source: src.name, mutations: names, ...finding, input: small });
    console.log(
      `\nFINDING ${findings.length}: ${finding.kind} on ${api} (${src.name}; case seed ${caseSeed}; mutations ${names.join(',') || 'none'})`,
    );
    if (finding.detail) console.log(`  ${finding.detail}`);
    if (finding.stack) console.log(finding.stack.split('\n').slice(0, 6).join('\n'));
    console.log(
      `  input (${(finding.input ?? bytes).length} bytes, shrunk to ${small.length}; non-ASCII bytes as \\xNN): ${printable(small)}`,
    );
  }
}

server.closeAllConnections();
server.close();
console.log(
  `\nfuzz-streams: seed=${SEED} cases=${cases} transport-cases=${transportCases} stall-cases=${stallCases} findings=${findings.length} ` +
    `peak-rss=${Math.round(peakRss / 2 ** 20)} MB`,
);
console.log(`mutations applied: ${JSON.stringify(perMutation)}`);
process.exit(findings.length > 0 ? 1 : 0);
