// Uploads vs inline (issue 37 §3): a 60-turn agent session that takes 40 screenshots (2880x1800 PNG, screen-like
// content, stored as the media pipeline stores them for the model) and reads 3 PDFs, serialized every turn for
// Anthropic Messages and OpenAI Responses — inline (every request re-sends every picture) and with uploads (each
// picture uploaded once, referenced after). Prints bytes on the wire per turn and in total (request bodies, plus the
// upload bytes on the uploads side) and the serialize + JSON.stringify CPU time per turn.
// Imports the built library: run `npm run build:ts` first.
//
//   npm run bench:uploads            (TURNS=60 SHOTS=40 PDFS=3)
//
// Both sides go through the same request guard: inline, Anthropic's limits (32 MiB requests, > 20 images -> 2000 px)
// force the guard to send old screenshots smaller or leave them out; the table says how many.

import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { deflateSync } from 'node:zlib';
import {
  mediaPolicyFor,
  mediaSha256,
  processMedia,
  resolveModel,
  toAnthropicMessages,
  toOpenAIResponses,
} from '../dist/index.js';

const serializeRequest = (messages, model, options) =>
  model.api === 'anthropic-messages'
    ? toAnthropicMessages(messages, model, options)
    : toOpenAIResponses(messages, model, options);

const TURNS = Number(process.env.TURNS ?? 60);
const SHOTS = Number(process.env.SHOTS ?? 40);
const PDFS = Number(process.env.PDFS ?? 3);

function crcTable() {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}
const CRC = crcTable();
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 2880x1800 RGB PNG that compresses like a screenshot: flat panels, window bars, rows of "text" runs. */
function screenshot(seed) {
  const w = 2880;
  const h = 1800;
  let s = seed * 2654435761;
  const rnd = () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32;
  };
  const stride = w * 3 + 1;
  const raw = Buffer.alloc(stride * h);
  const fill = (row, x0, x1, c) => {
    for (let x = Math.max(0, x0); x < Math.min(w, x1); x++) {
      const o = row + 1 + x * 3;
      raw[o] = c[0];
      raw[o + 1] = c[1];
      raw[o + 2] = c[2];
    }
  };
  const bg = [230 + Math.floor(rnd() * 20), 232, 236];
  const panels = Array.from({ length: 6 }, () => ({
    x: Math.floor(rnd() * w * 0.7),
    y: Math.floor(rnd() * h * 0.7),
    pw: 300 + Math.floor(rnd() * 900),
    ph: 200 + Math.floor(rnd() * 600),
    c: [Math.floor(rnd() * 255), Math.floor(rnd() * 255), Math.floor(rnd() * 255)],
  }));
  for (let y = 0; y < h; y++) {
    const row = y * stride;
    fill(row, 0, w, bg);
    for (const p of panels) if (y >= p.y && y < p.y + p.ph) fill(row, p.x, p.x + p.pw, p.c);
    // A picture in the page (a thumbnail, an avatar strip): noisy colour.
    if (y >= 200 && y < 560) {
      for (let x = 2200; x < 2700; x++) {
        const o = row + 1 + x * 3;
        raw[o] = (x + y + Math.floor(rnd() * 40)) & 255;
        raw[o + 1] = (x * 2 + Math.floor(rnd() * 40)) & 255;
        raw[o + 2] = (y * 2 + Math.floor(rnd() * 40)) & 255;
      }
    }
    // Rows of "text": dark runs of word length, the same glyph rows for a line of text.
    if (y % 24 > 2 && y % 24 < 14) {
      let line = Math.floor(y / 24) * 7919 + seed;
      const r = () => {
        line = (line * 1103515245 + 12345) >>> 0;
        return line / 2 ** 32;
      };
      for (let x = 40 + Math.floor(r() * 200); x < w - 100; ) {
        const word = 20 + Math.floor(r() * 90);
        // Anti-aliased glyphs: grey levels vary pixel by pixel, as rendered text does.
        for (let gx = x; gx < Math.min(w, x + word); gx++) {
          if (rnd() < 0.45) {
            const v = Math.floor(rnd() * 200);
            fill(row, gx, gx + 1, [v, v, v + 20]);
          }
        }
        x += word + 12 + Math.floor(r() * 30);
        if (r() < 0.02) break;
      }
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(w, 0);
  header.writeUInt32BE(h, 4);
  header[8] = 8;
  header[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 6 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PDF = readFileSync(new URL('../test/fixtures/media/pdf-2page.pdf', import.meta.url));

/** The session: turn t's tool result holds the screenshots/PDFs that fall on t (spread evenly), or text. */
async function session(model, pngs) {
  const policy = mediaPolicyFor(model);
  const stored = [];
  for (const png of pngs) {
    const r = await processMedia(png, policy);
    stored.push({
      type: 'image',
      mediaType: r.mediaType,
      data: r.data.toString('base64'),
      width: r.width,
      height: r.height,
    });
  }
  const docs = Array.from({ length: PDFS }, (_, i) => ({
    type: 'document',
    mediaType: 'application/pdf',
    data: Buffer.concat([PDF, Buffer.from(`\n%panto bench ${i}\n`)]).toString('base64'),
    name: `report-${i}.pdf`,
  }));
  const media = [...stored, ...docs];
  const at = new Map();
  media.forEach((m, i) => {
    const turn = Math.floor((i * TURNS) / media.length);
    at.set(turn, [...(at.get(turn) ?? []), m]);
  });
  return { at, shotBytes: stored.reduce((n, p) => n + (p.data.length * 3) / 4, 0) };
}

function run(model, at) {
  const messages = [
    { role: 'user', content: [{ type: 'text', text: 'Walk through the app and check each screen.' }] },
  ];
  const uploaded = new Map();
  const rows = [];
  let ids = 0;
  for (let t = 0; t < TURNS; t++) {
    const parts = at.get(t) ?? [];
    const id = `call_${t}`;
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_call', id, name: 'screenshot', input: { step: t } }],
      stopReason: 'tool_use',
    });
    messages.push({
      role: 'tool',
      results: [
        { toolUseId: id, toolName: 'screenshot', parts: [{ type: 'text', text: `step ${t}` }, ...parts] },
      ],
    });
    // Inline: today's request.
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    // The body the guard gives without re-encoded copies (the agent would make the wanted copies and send those).
    const inline = serializeRequest(messages, model, {});
    const inlineBytes = Buffer.byteLength(JSON.stringify(inline.body));
    const inlineCpu = cpuMs(process.cpuUsage(c0));
    const inlineWall = performance.now() - w0;
    // Uploads: the new parts are uploaded once, then referenced.
    let uploadBytes = 0;
    for (const p of parts) {
      const sha = mediaSha256(p);
      if (!uploaded.has(sha)) {
        uploaded.set(sha, { id: `file_011CNha8iCJcU1wXNR6q${String(ids++).padStart(4, '0')}` });
        uploadBytes += (p.data.length * 3) / 4;
      }
    }
    const c1 = process.cpuUsage();
    const w1 = performance.now();
    const withFiles = serializeRequest(messages, model, { files: uploaded });
    const refBytes = Buffer.byteLength(JSON.stringify(withFiles.body));
    const refCpu = cpuMs(process.cpuUsage(c1));
    const refWall = performance.now() - w1;
    rows.push({
      t,
      inlineBytes,
      refBytes,
      uploadBytes,
      inlineCpu,
      refCpu,
      inlineWall,
      refWall,
      inlineLeftOut: countPlaceholders(inline.body),
      inlineDegradeWanted: inline.wanted?.degrade?.length ?? 0,
      refInline: withFiles.media.filter((m) => m.file === undefined).length,
    });
  }
  return rows;
}

function countPlaceholders(body) {
  const s = JSON.stringify(body);
  return (s.match(/\[(image|document) omitted/g) ?? []).length;
}

function cpuMs(u) {
  return (u.user + u.system) / 1000;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;

console.log(
  `uploads vs inline: ${TURNS} turns, ${SHOTS} screenshots 2880x1800 PNG, ${PDFS} PDFs; node ${process.version}; ` +
    `${cpus().length} cores; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
const g0 = performance.now();
const pngs = Array.from({ length: SHOTS }, (_, i) => screenshot(i + 1));
console.log(
  `screenshots generated in ${((performance.now() - g0) / 1000).toFixed(1)} s: ${mb(pngs.reduce((n, p) => n + p.length, 0) / SHOTS)} each as PNG`,
);
for (const id of ['claude-sonnet-4-5', 'gpt-5']) {
  const model = resolveModel(id);
  const { at, shotBytes } = await session(model, pngs);
  const rows = run(model, at);
  const sum = (k) => rows.reduce((n, r) => n + r[k], 0);
  const last = rows[rows.length - 1];
  const inlineTotal = sum('inlineBytes');
  const refTotal = sum('refBytes') + sum('uploadBytes');
  console.log(
    `\n${model.api} (${id}): stored screenshot ${mb(shotBytes / SHOTS)} each after the model's policy`,
  );
  console.log('turn   inline body   uploads body + uploaded   inline left out / copies wanted');
  for (const r of rows.filter((r) => r.t % 10 === 9 || r.t === 0)) {
    console.log(
      `${String(r.t + 1).padStart(4)}   ${mb(r.inlineBytes).padStart(11)}   ${mb(r.refBytes).padStart(12)} + ${mb(r.uploadBytes).padStart(9)}   ${r.inlineLeftOut} / ${r.inlineDegradeWanted}`,
    );
  }
  console.log(
    `total bytes sent: inline ${mb(inlineTotal)}, uploads ${mb(refTotal)} (bodies ${mb(sum('refBytes'))} + uploads ${mb(sum('uploadBytes'))}): ${(inlineTotal / refTotal).toFixed(1)}x less`,
  );
  console.log(
    `last request body: inline ${mb(last.inlineBytes)}, uploads ${mb(last.refBytes)}: ${(last.inlineBytes / last.refBytes).toFixed(0)}x smaller; parts still inline with uploads: ${sum('refInline')}`,
  );
  console.log(
    `serialize + stringify per turn (median): CPU inline ${median(rows.map((r) => r.inlineCpu)).toFixed(2)} ms, uploads ${median(rows.map((r) => r.refCpu)).toFixed(2)} ms; wall inline ${median(rows.map((r) => r.inlineWall)).toFixed(2)} ms, uploads ${median(rows.map((r) => r.refWall)).toFixed(2)} ms`,
  );
}
