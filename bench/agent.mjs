// Benchmark for the Agent turn loop and the streaming parsers (issue 7). Imports the built library: run
// `npm run build` (or `npm run build:ts` plus a built addon) first, then `npm run bench:agent`.
//
// 1. Per-turn overhead of the loop against a loopback server: 200 turns where the model calls a trivial tool (then
//    answers), through Agent (OpenAI Chat and Anthropic surfaces, with and without a session log). The server records
//    every request body; the baseline replays exactly those bodies with plain fetch and reads the same SSE responses
//    to the end. Overhead per turn = (agent time - bare HTTP time) / turns: serialization, JSON, SSE parsing, message
//    assembly, events, tool dispatch, session appends. The conversation grows every turn, so later turns serialize
//    more; the first and last 50 turns are reported separately. Per-turn figures are the median over the runs of each
//    turn's time (robust to a stray GC or a busy machine), averaged over the turns.
// 2. Streaming parse throughput (MB/s of SSE): our byte-level SSE parser + per-surface stream parser (assembling the
//    final message) vs a bare line split + JSON.parse of every data line (no assembly), and vs the Anthropic SDK's
//    own SSE decoder (`Stream.fromSSEResponse`, events only, no assembly), on the same bytes fed in 64 KiB chunks.

import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const entry = new URL('../dist/index.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('bench:agent needs the built library (dist/index.js is missing): run `npm run build` first.');
  process.exit(1);
}
const {
  Agent,
  createProvider,
  createStreamParser,
  defineTool,
  resolveModel,
  SessionLog,
  SseParser,
  StaticToolSource,
} = await import(entry.href);
const { Stream } = await import('@anthropic-ai/sdk/streaming');

const TURNS = 200;
const fmt = (n, d = 1) => n.toFixed(d);

// ---- loopback server: scripted SSE answers ------------------------------------------------------------------------

const sse = (event, data) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

function chatBody(turn, last) {
  const base = { id: `c${turn}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1' };
  const chunks = [
    sse(null, {
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    }),
  ];
  const text = last ? 'All done, the tool ran every time.' : `Turn ${turn}: calling the tool again.`;
  for (const piece of text.match(/.{1,8}/g)) {
    chunks.push(
      sse(null, { ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }),
    );
  }
  if (!last) {
    const args = JSON.stringify({ n: turn, note: 'benchmark call' });
    chunks.push(
      sse(null, {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: `call_${turn}`, type: 'function', function: { name: 'noop', arguments: '' } },
              ],
            },
            finish_reason: null,
          },
        ],
      }),
    );
    for (const piece of args.match(/.{1,10}/g)) {
      chunks.push(
        sse(null, {
          ...base,
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] },
              finish_reason: null,
            },
          ],
        }),
      );
    }
  }
  chunks.push(
    sse(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: last ? 'stop' : 'tool_calls' }] }),
  );
  chunks.push(
    sse(null, {
      ...base,
      choices: [],
      usage: { prompt_tokens: 100 + turn, completion_tokens: 20, total_tokens: 120 + turn },
    }),
  );
  chunks.push('data: [DONE]\n\n');
  return chunks.join('');
}

function anthropicBody(turn, last) {
  const out = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id: `m${turn}`,
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-sonnet-4-5',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100 + turn, output_tokens: 1 },
      },
    }),
    sse('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    }),
  ];
  const text = last ? 'All done, the tool ran every time.' : `Turn ${turn}: calling the tool again.`;
  for (const piece of text.match(/.{1,8}/g)) {
    out.push(
      sse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: piece },
      }),
    );
  }
  out.push(sse('content_block_stop', { type: 'content_block_stop', index: 0 }));
  if (!last) {
    out.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: `toolu_${turn}`, name: 'noop', input: {} },
      }),
    );
    for (const piece of JSON.stringify({ n: turn, note: 'benchmark call' }).match(/.{1,10}/g)) {
      out.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      );
    }
    out.push(sse('content_block_stop', { type: 'content_block_stop', index: 1 }));
  }
  out.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: last ? 'end_turn' : 'tool_use', stop_sequence: null },
      usage: { output_tokens: 20 },
    }),
  );
  out.push(sse('message_stop', { type: 'message_stop' }));
  return out.join('');
}

/** A server that answers request i with `bodyFor(i)`; records request bodies (raw strings) when `record` is set. */
async function startServer() {
  const state = { count: 0, recorded: [], record: false, bodyFor: () => '' };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (state.record) state.recorded.push({ url: req.url, body: Buffer.concat(chunks).toString('utf8') });
      const body = state.bodyFor(state.count++);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${server.address().port}`;
  state.close = () => new Promise((r) => server.close(r));
  return state;
}

// ---- 1. loop overhead ---------------------------------------------------------------------------------------------

const noop = defineTool({
  name: 'noop',
  description: 'does nothing',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' }, note: { type: 'string' } } },
  invoke: () => 'ok',
});

async function runAgent(server, api, withSession) {
  const bodyOf = api === 'openai-chat' ? chatBody : anthropicBody;
  server.count = 0;
  server.bodyFor = (i) => bodyOf(i, i === TURNS - 1);
  const base = api === 'openai-chat' ? `${server.url}/v1` : server.url;
  const model =
    api === 'openai-chat'
      ? resolveModel('gpt-4.1', { api: 'openai-chat' })
      : resolveModel('claude-sonnet-4-5');
  const dir = withSession ? await mkdtemp(path.join(tmpdir(), 'panto-bench-')) : undefined;
  const session = dir ? await SessionLog.create(path.join(dir, 's.jsonl')) : undefined;
  const turnTimes = [];
  let t = performance.now();
  const agent = new Agent({
    provider: createProvider({ api, baseUrl: base, apiKey: 'bench' }),
    model,
    tools: new StaticToolSource([noop]),
    maxTurns: TURNS + 1,
    compaction: false,
    ...(session ? { session } : {}),
    onEvent: (e) => {
      if (e.type === 'turn_end') {
        const now = performance.now();
        turnTimes.push(now - t);
        t = now;
      }
    },
  });
  const t0 = performance.now();
  const result = await agent.prompt('Call the noop tool until you are told to stop.');
  const total = performance.now() - t0;
  if (result.stopReason !== 'end' || result.turns !== TURNS)
    throw new Error(`unexpected run: ${result.stopReason} after ${result.turns} turns`);
  session?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  return { total, turnTimes };
}

async function replayBare(server, recorded, api) {
  const bodyOf = api === 'openai-chat' ? chatBody : anthropicBody;
  server.count = 0;
  server.bodyFor = (i) => bodyOf(i, i === TURNS - 1);
  const times = [];
  const t0 = performance.now();
  for (const r of recorded) {
    const s = performance.now();
    const res = await fetch(server.url + r.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: r.body,
    });
    const reader = res.body.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
    times.push(performance.now() - s);
  }
  return { total: performance.now() - t0, turnTimes: times };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const REPS = 7;

async function benchLoop(api, withSession) {
  const server = await startServer();
  // Warm-up (JIT, sockets), then record the bodies of one run; measured runs alternate agent / bare replay.
  await runAgent(server, api, withSession);
  server.recorded = [];
  server.record = true;
  await runAgent(server, api, withSession);
  server.record = false;
  const recorded = server.recorded;
  await replayBare(server, recorded, api);
  const agentRuns = [];
  const bareRuns = [];
  for (let i = 0; i < REPS; i++) {
    agentRuns.push(await runAgent(server, api, withSession));
    bareRuns.push(await replayBare(server, recorded, api));
  }
  await server.close();
  const agent = median(agentRuns.map((r) => r.total));
  const bare = median(bareRuns.map((r) => r.total));
  // Per-turn medians over the runs, for the first and the last 50 turns.
  const perTurnMedian = (runs, from, to) =>
    mean(runs[0].turnTimes.slice(from, to).map((_, k) => median(runs.map((r) => r.turnTimes[from + k]))));
  const agentTurn = perTurnMedian(agentRuns, 0, TURNS);
  const bareTurn = perTurnMedian(bareRuns, 0, TURNS);
  const first = perTurnMedian(agentRuns, 0, 50) - perTurnMedian(bareRuns, 0, 50);
  const last = perTurnMedian(agentRuns, TURNS - 50, TURNS) - perTurnMedian(bareRuns, TURNS - 50, TURNS);
  const reqKB = recorded.at(-1).body.length / 1024;
  return {
    api,
    withSession,
    agent,
    bare,
    agentTurn,
    bareTurn,
    perTurn: agentTurn - bareTurn,
    first,
    last,
    reqKB,
  };
}

// BENCH_ONLY=loop|parse runs one part; BENCH_RUNS sets the number of measured rounds of part 2 (default 9).
const ONLY = process.env.BENCH_ONLY ?? '';
const PARSE_ROUNDS = Number(process.env.BENCH_RUNS ?? 9);

if (ONLY !== 'parse') {
  // Process-wide warm-up (JIT of the whole path, undici's pool) so the first row is not penalised.
  await benchLoop('openai-chat', false);
  await benchLoop('anthropic-messages', true);
  console.log(
    `# Agent loop overhead: ${TURNS} turns (trivial tool each turn), loopback HTTP, median of ${REPS} runs, Node ${process.version}`,
  );
  console.log(
    'surface            session  run ms (agent / bare)  turn µs (agent / bare)  ratio  overhead/turn µs  first-50 µs  last-50 µs  last body KB',
  );
  for (const api of ['openai-chat', 'anthropic-messages']) {
    for (const withSession of [false, true]) {
      const r = await benchLoop(api, withSession);
      console.log(
        `${api.padEnd(18)} ${String(withSession).padEnd(8)} ${`${fmt(r.agent, 0)} / ${fmt(r.bare, 0)}`.padStart(21)}  ${`${fmt(r.agentTurn * 1000, 0)} / ${fmt(r.bareTurn * 1000, 0)}`.padStart(22)}  ${fmt(r.agentTurn / r.bareTurn, 2).padStart(5)}  ${fmt(r.perTurn * 1000, 0).padStart(16)}  ${fmt(r.first * 1000, 0).padStart(11)}  ${fmt(r.last * 1000, 0).padStart(10)}  ${fmt(r.reqKB).padStart(12)}`,
      );
    }
  }
}

// ---- 2. streaming parse throughput --------------------------------------------------------------------------------

const enc = new TextEncoder();

function bigAnthropicStream(targetBytes) {
  const parts = [anthropicBody(0, true).split('event: content_block_stop')[0]];
  let size = parts[0].length;
  let i = 0;
  while (size < targetBytes) {
    const piece = sse('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: `token ${i++} of a long answer, ` },
    });
    parts.push(piece);
    size += piece.length;
  }
  parts.push(sse('content_block_stop', { type: 'content_block_stop', index: 0 }));
  parts.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: i },
    }),
  );
  parts.push(sse('message_stop', { type: 'message_stop' }));
  return enc.encode(parts.join(''));
}

function bigChatStream(targetBytes) {
  const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1' };
  const parts = [];
  let size = 0;
  let i = 0;
  while (size < targetBytes) {
    const piece = sse(null, {
      ...base,
      choices: [{ index: 0, delta: { content: `token ${i++} of a long answer, ` }, finish_reason: null }],
    });
    parts.push(piece);
    size += piece.length;
  }
  parts.push(sse(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  parts.push('data: [DONE]\n\n');
  return enc.encode(parts.join(''));
}

function bigResponsesStream(targetBytes) {
  const response = { id: 'resp_1', object: 'response', model: 'gpt-5', status: 'in_progress', output: [] };
  const parts = [
    sse('response.created', { type: 'response.created', sequence_number: 0, response }),
    sse('response.output_item.added', {
      type: 'response.output_item.added',
      sequence_number: 1,
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    }),
  ];
  let size = parts[0].length + parts[1].length;
  let i = 0;
  while (size < targetBytes) {
    const piece = sse('response.output_text.delta', {
      type: 'response.output_text.delta',
      sequence_number: i + 2,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: `token ${i++} of a long answer, `,
      logprobs: [],
    });
    parts.push(piece);
    size += piece.length;
  }
  parts.push(
    sse('response.output_item.done', {
      type: 'response.output_item.done',
      sequence_number: i + 2,
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [] },
    }),
  );
  parts.push(
    sse('response.completed', {
      type: 'response.completed',
      sequence_number: i + 3,
      response: {
        ...response,
        status: 'completed',
        usage: { input_tokens: 10, output_tokens: i, total_tokens: 10 + i },
      },
    }),
  );
  return enc.encode(parts.join(''));
}

function bigGeminiStream(targetBytes) {
  const parts = [];
  let size = 0;
  let i = 0;
  while (size < targetBytes) {
    const piece = sse(null, {
      candidates: [
        { content: { parts: [{ text: `token ${i++} of a long answer, ` }], role: 'model' }, index: 0 },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: i, totalTokenCount: 10 + i },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    });
    parts.push(piece);
    size += piece.length;
  }
  parts.push(
    sse(null, {
      candidates: [{ content: { parts: [{ text: '.' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: i, totalTokenCount: 10 + i },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    }),
  );
  return enc.encode(parts.join(''));
}

function chunksOf(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function oursParse(api, chunks) {
  let deltas = 0;
  const parser = createStreamParser(api, (e) => {
    if (e.type === 'text_delta') deltas++;
  });
  const sseParser = new SseParser((e) => parser.accept(e));
  for (const c of chunks) sseParser.push(c);
  sseParser.end();
  const message = parser.result();
  if (message.content[0].text.length === 0) throw new Error('no text');
  return deltas;
}

function bareParse(chunks) {
  const decoder = new TextDecoder();
  let rest = '';
  let n = 0;
  for (const c of chunks) {
    const lines = (rest + decoder.decode(c, { stream: true })).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      if (line.startsWith('data: ') && line !== 'data: [DONE]') {
        JSON.parse(line.slice(6));
        n++;
      }
    }
  }
  return n;
}

async function sdkParse(chunks) {
  const body = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  let n = 0;
  for await (const _ of Stream.fromSSEResponse(new Response(body), new AbortController())) n++;
  return n;
}

async function measure(fn, bytes, rounds = 9) {
  await fn();
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)];
  return bytes / 1e6 / (ms / 1000);
}

if (ONLY !== 'loop') {
  console.log(
    `\n# Streaming parse throughput (median of ${PARSE_ROUNDS}, 64 KiB chunks), MB/s of SSE; target ours/bare >= 0.90x (issue 16)`,
  );
  console.log(
    'stream                      MB   ours (SSE+assemble)  bare split+JSON.parse  ours/bare   by CPU  Anthropic SDK Stream  ours/SDK',
  );
  let worst = Number.POSITIVE_INFINITY;
  let worstCpu = Number.POSITIVE_INFINITY;
  // Each stream is built just before its row (not all up front), so every row runs on a heap of the same size.
  for (const [label, api, build] of [
    ['anthropic text deltas', 'anthropic-messages', bigAnthropicStream],
    ['openai-chat text deltas', 'openai-chat', bigChatStream],
    ['openai-responses deltas', 'openai-responses', bigResponsesStream],
    ['gemini text parts', 'gemini', bigGeminiStream],
  ]) {
    const bytes = build(32e6);
    const chunks = chunksOf(bytes, 64 * 1024);
    // Alternate the two sides round by round so load changes hit both alike.
    await oursParse(api, chunks);
    await bareParse(chunks);
    const oursTimes = [];
    const bareTimes = [];
    const oursCpu = [];
    const bareCpu = [];
    const cpuMs = (u) => (u.user + u.system) / 1000;
    for (let r = 0; r < PARSE_ROUNDS; r++) {
      let c0 = process.cpuUsage();
      let t0 = performance.now();
      oursParse(api, chunks);
      oursTimes.push(performance.now() - t0);
      oursCpu.push(cpuMs(process.cpuUsage(c0)));
      c0 = process.cpuUsage();
      t0 = performance.now();
      bareParse(chunks);
      bareTimes.push(performance.now() - t0);
      bareCpu.push(cpuMs(process.cpuUsage(c0)));
    }
    const mbps = (ms) => bytes.length / 1e6 / (ms / 1000);
    const ours = mbps(median(oursTimes));
    const bare = mbps(median(bareTimes));
    const cpuRatio = median(bareCpu) / median(oursCpu);
    const sdk =
      api === 'anthropic-messages' && ONLY !== 'parse'
        ? await measure(() => sdkParse(chunks), bytes.length, 3)
        : undefined;
    worst = Math.min(worst, ours / bare);
    worstCpu = Math.min(worstCpu, cpuRatio);
    console.log(
      `${label.padEnd(24)} ${fmt(bytes.length / 1e6).padStart(5)}  ${fmt(ours).padStart(19)}  ${fmt(bare).padStart(21)}  ${fmt(ours / bare, 2).padStart(8)}x  ${fmt(cpuRatio, 2).padStart(8)}x  ${sdk === undefined ? '-'.padStart(20) : fmt(sdk).padStart(20)}  ${sdk === undefined ? '-'.padStart(8) : fmt(ours / sdk, 2).padStart(8)}`,
    );
  }
  console.log(
    `worst ours/bare ${fmt(worst, 2)}x wall, ${fmt(worstCpu, 2)}x by CPU time (speed = 1 / CPU time of a round; target >= 0.90x)`,
  );
}
