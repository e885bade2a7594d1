// Serializer overhead: a 200-message conversation holding 50 images of ~1 MB of base64 each, serialized for each
// surface and JSON.stringify-ed, against JSON.stringify of an equivalent prebuilt body (the baseline every request
// pays anyway). Target: ratio <= 1.1x (issue 16). Imports the built library: run `npm run build:ts` first.
//
//   npm run bench:serialize            (ITERATIONS=15 by default; BENCH_ONLY=gemini,openai-chat to pick surfaces)
//
// Each surface runs in its own fresh process (started with --expose-gc), one after the other. Measured in one
// process, the surface that ran last was the slow one whichever it was (Gemini at 1.37x as the fourth, 0.93-0.99x as
// the first or second; Anthropic 1.15x as the fourth): the heap by then held the garbage of three 50 MB bodies, and
// a major GC owed by earlier work landed inside whichever timed call happened to allocate past the limit. So every
// timed call also starts from a collected heap (gc() before it, untimed): the GC a call causes itself — the 50 MB
// output string, the body objects — is still inside its time; only debt left by earlier calls is not. The two sides
// alternate which runs first, and the table gives the median of each side and the median of the per-iteration ratios.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';
import {
  defineModel,
  toAnthropicMessages,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
} from '../dist/index.js';

const ITERATIONS = Number(process.env.ITERATIONS ?? process.env.BENCH_RUNS ?? 15);
const IMAGES = 50;
const MESSAGES = 200;

/** A real greyscale PNG of random noise (incompressible: ~750 KB raw, ~1 MB of base64). */
function noisePng(width, height) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  const rows = [];
  for (let y = 0; y < height; y++) rows.push(Buffer.concat([Buffer.from([0]), randomBytes(width)]));
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { type: 'image', mediaType: 'image/png', data: png.toString('base64'), width, height };
}

function buildConversation() {
  const messages = [
    { role: 'user', content: [{ type: 'text', text: 'Take screenshots and describe them.' }] },
  ];
  let images = 0;
  for (let round = 0; messages.length + 2 <= MESSAGES - 1; round++) {
    const id = `call_${round}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Round ${round}: taking a look.` },
        { type: 'tool_call', id, name: 'screenshot', input: { region: 'full', round } },
      ],
      stopReason: 'tool_use',
    });
    const parts = [{ type: 'text', text: `Screenshot ${round}, 1000x750.` }];
    if (images < IMAGES && round % 2 === 0) {
      parts.push(noisePng(1000, 750));
      images++;
    }
    messages.push({
      role: 'tool',
      results: [{ type: 'tool_result', toolUseId: id, toolName: 'screenshot', parts, isError: false }],
    });
  }
  messages.push({ role: 'user', content: [{ type: 'text', text: 'Summarise everything.' }] });
  return { messages, images };
}

const options = {
  system: 'You are a careful assistant.',
  tools: [
    {
      name: 'screenshot',
      description: 'Take a screenshot.',
      inputSchema: { type: 'object', properties: { region: { type: 'string' }, round: { type: 'integer' } } },
    },
  ],
  maxTokens: 4096,
};

/** A model that takes the whole request (the guard must not drop images in a speed comparison). */
function benchModel(api) {
  return defineModel({
    id: `bench-${api}`,
    api,
    input: { image: true, pdf: true },
    multimodalToolResults: true,
    limits: {
      imagesPerRequest: 1000,
      requestBytes: 2 ** 30,
      totalImageBytes: 2 ** 30,
      maxImageBytes: 2 ** 30,
    },
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const surfaces = [
  ['anthropic-messages', toAnthropicMessages],
  ['openai-chat', toOpenAIChat],
  ['openai-responses', toOpenAIResponses],
  ['gemini', toGemini],
];

const ONLY = process.env.BENCH_ONLY?.split(',').filter(Boolean);
const header =
  'surface              serialize+stringify   prebuilt stringify   serialize only   ratio  paired   (ratio = median/median; paired = median of per-iteration ratios)';

/** Child: measure one surface and print one JSON line. */
function measure(api) {
  const serialize = surfaces.find(([name]) => name === api)?.[1];
  if (!serialize) throw new Error(`unknown surface ${api}`);
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new Error('the measuring child needs --expose-gc');
  const { images, ...conversation } = buildConversation();
  const mediaBytes = conversation.messages
    .flatMap((m) => (m.role === 'tool' ? m.results.flatMap((r) => r.parts) : []))
    .reduce((n, p) => n + (p.type === 'image' ? p.data.length : 0), 0);
  const model = benchModel(api);
  const first = serialize(conversation, model, options);
  if (first.media.length !== images)
    throw new Error(`${api}: expected ${images} images, got ${first.media.length}`);
  const prebuilt = structuredClone(first.body);
  const oursTimes = [];
  const baseTimes = [];
  const serializeTimes = [];
  const pairRatios = [];
  let length = 0;
  const timeBase = () => {
    gc();
    const t = process.hrtime.bigint();
    length = JSON.stringify(prebuilt).length;
    baseTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
  };
  const timeOurs = () => {
    gc();
    const t = process.hrtime.bigint();
    const { body } = serialize(conversation, model, options);
    const mid = process.hrtime.bigint();
    const ours = JSON.stringify(body).length;
    const end = process.hrtime.bigint();
    serializeTimes.push(Number(mid - t) / 1e6);
    oursTimes.push(Number(end - t) / 1e6);
    return ours;
  };
  for (let i = 0; i < ITERATIONS; i++) {
    // Alternate which side runs first.
    let ours;
    if (i % 2 === 0) {
      timeBase();
      ours = timeOurs();
    } else {
      ours = timeOurs();
      timeBase();
    }
    pairRatios.push((oursTimes.at(-1) ?? 0) / (baseTimes.at(-1) ?? 1));
    if (ours !== length) throw new Error(`${api}: body differs from the prebuilt one`);
  }
  console.log(
    JSON.stringify({
      api,
      messages: conversation.messages.length,
      images,
      mediaBytes,
      ours: median(oursTimes),
      base: median(baseTimes),
      serialize: median(serializeTimes),
      paired: median(pairRatios),
      length,
    }),
  );
}

if (process.argv[2] === '--child') {
  measure(process.argv[3]);
} else {
  let worst = 0;
  let printedHeader = false;
  for (const [api] of surfaces) {
    if (ONLY && !ONLY.includes(api)) continue;
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', api], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 20,
    });
    if (r.status !== 0) throw new Error(`${api}: measuring child failed (status ${r.status})`);
    const m = JSON.parse(r.stdout.trim().split('\n').at(-1));
    if (!printedHeader) {
      console.log(
        `conversation: ${m.messages} messages, ${m.images} images, ${(m.mediaBytes / 1e6).toFixed(1)} MB of base64; ${ITERATIONS} iterations (median), one fresh process per surface`,
      );
      console.log(header);
      printedHeader = true;
    }
    const ratio = m.ours / m.base;
    worst = Math.max(worst, ratio, m.paired);
    console.log(
      `${api.padEnd(20)} ${m.ours.toFixed(2).padStart(12)} ms ${m.base.toFixed(2).padStart(16)} ms ${m.serialize.toFixed(3).padStart(13)} ms ${ratio.toFixed(2).padStart(7)}x ${m.paired.toFixed(2).padStart(8)}x   (${(m.length / 1e6).toFixed(1)} MB JSON)`,
    );
  }
  console.log(`worst ratio ${worst.toFixed(2)}x (target <= 1.1x; worst of both columns)`);
}
