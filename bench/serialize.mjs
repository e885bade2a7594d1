// Serializer overhead: a 200-message conversation holding 50 images of ~1 MB of base64 each, serialized for each
// surface and JSON.stringify-ed, against JSON.stringify of an equivalent prebuilt body (the baseline every request
// pays anyway). Target: ratio <= 1.1x (issue 16). Imports the built library: run `npm run build:ts` first.
//
//   npm run bench:serialize            (ITERATIONS=15 by default)

import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import {
  defineModel,
  toAnthropicMessages,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
} from '../dist/providers/index.js';

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

const { images, ...conversation } = buildConversation();
const mediaBytes = conversation.messages
  .flatMap((m) => (m.role === 'tool' ? m.results.flatMap((r) => r.parts) : []))
  .reduce((n, p) => n + (p.type === 'image' ? p.data.length : 0), 0);
console.log(
  `conversation: ${conversation.messages.length} messages, ${images} images, ${(mediaBytes / 1e6).toFixed(1)} MB of base64; ${ITERATIONS} iterations (median)`,
);
console.log(
  'surface              serialize+stringify   prebuilt stringify   serialize only   ratio  paired   (ratio = median/median; paired = median of per-iteration ratios)',
);

let worst = 0;
for (const [api, serialize] of surfaces) {
  const model = benchModel(api);
  const first = serialize(conversation, model, options);
  if (first.media.length !== images)
    throw new Error(`${api}: expected ${images} images, got ${first.media.length}`);
  const prebuilt = structuredClone(first.body);
  const oursTimes = [];
  const baseTimes = [];
  const serializeTimes = [];
  let length = 0;
  const pairRatios = [];
  const timeBase = () => {
    const t = process.hrtime.bigint();
    length = JSON.stringify(prebuilt).length;
    baseTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
  };
  const timeOurs = () => {
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
    // Alternate which side runs first, so a GC owed by one side does not always land on the other.
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
  const ratio = median(oursTimes) / median(baseTimes);
  worst = Math.max(worst, ratio);
  console.log(
    `${api.padEnd(20)} ${median(oursTimes).toFixed(2).padStart(12)} ms ${median(baseTimes).toFixed(2).padStart(16)} ms ${median(serializeTimes).toFixed(3).padStart(13)} ms ${ratio.toFixed(2).padStart(7)}x ${median(pairRatios).toFixed(2).padStart(8)}x   (${(length / 1e6).toFixed(1)} MB JSON)`,
  );
}
console.log(`worst ratio ${worst.toFixed(2)}x (target <= 1.1x)`);
