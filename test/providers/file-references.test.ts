/**
 * The request builders with uploaded files (`SerializeOptions.files`: hash → provider file) and re-encoded copies
 * (`SerializeOptions.degraded`): where each surface references a file, what it still sends inline, what it wants
 * uploaded or re-encoded, and that the request guard sends older images smaller before it leaves any out. Copies are
 * made by the real pipeline (processMedia).
 */

import { describe, expect, it } from 'vitest';
import type { Conversation, ImagePart, Message, StoredPart } from '../../src/conversation.js';
import { processMedia } from '../../src/media/process-media.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import { type DegradeWish, type FileRef, mediaSha256 } from '../../src/providers/common/media-files.js';
import { toGemini } from '../../src/providers/gemini/gemini.js';
import { defineModel, resolveModel } from '../../src/providers/model/model-catalog.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';
import { noiseBytes } from '../helpers/media-noise.js';
import { pngFile } from '../helpers/png-file.js';
import { call, jpeg, pdf, png, result, text } from './scenarios.js';
import { solidPng } from './solid-png.js';

/** An RGB PNG of noise (incompressible: ~3 bytes per pixel), `width` x `height`. */
function noisyPng(width: number, height: number, seed: number): ImagePart {
  const row = width * 3 + 1;
  const rows = Buffer.alloc(row * height);
  const noise = noiseBytes(width * 3 * height, seed);
  for (let y = 0; y < height; y++) rows.set(noise.subarray(y * width * 3, (y + 1) * width * 3), y * row + 1);
  const data = pngFile(width, height, 2, rows, 1).toString('base64');
  return { type: 'image', mediaType: 'image/png', data, width, height };
}

/** A user image, then a tool call whose result holds the same PNG, a JPEG and a PDF. */
function mixed(): Conversation {
  return {
    messages: [
      { role: 'user', content: [text('Look'), png] },
      { role: 'assistant', content: [call('c1', 'read', {})], stopReason: 'tool_use' },
      { role: 'tool', results: [result('c1', 'read', [text('got'), png, jpeg, pdf])] },
    ],
  };
}

const ids = new Map<string, FileRef>([
  [mediaSha256(png), { id: 'file_png', uri: 'https://files.example/png' }],
  [mediaSha256(jpeg), { id: 'file_jpeg', uri: 'https://files.example/jpeg' }],
  [mediaSha256(pdf), { id: 'file_pdf', uri: 'https://files.example/pdf' }],
]);

describe('mediaSha256', () => {
  it('hashes the stored bytes, not the part object: equal bytes are one file', () => {
    const copy: ImagePart = { ...png };
    expect(mediaSha256(copy)).toBe(mediaSha256(png));
    expect(mediaSha256(png)).toMatch(/^[0-9a-f]{64}$/);
    expect(mediaSha256(jpeg)).not.toBe(mediaSha256(png));
  });
});

describe('Anthropic: source.type file in user turns and tool results', () => {
  const model = resolveModel('claude-sonnet-4-5');

  it('references every uploaded part by file_id, keeps the document title, and asks for the beta header', () => {
    const out = toAnthropicMessages(mixed(), model, { files: ids });
    expect(out.body.messages[0]?.content[1]).toEqual({
      type: 'image',
      source: { type: 'file', file_id: 'file_png' },
    });
    const toolResult = out.body.messages[2]?.content[0] as { content: unknown[] };
    expect(toolResult.content).toEqual([
      { type: 'text', text: 'got' },
      { type: 'image', source: { type: 'file', file_id: 'file_png' } },
      { type: 'image', source: { type: 'file', file_id: 'file_jpeg' } },
      {
        type: 'document',
        source: { type: 'file', file_id: 'file_pdf' },
        ...(pdf.name ? { title: pdf.name } : {}),
      },
    ]);
    expect(out.headers).toEqual({ 'anthropic-beta': 'files-api-2025-04-14' });
    expect(out.media.map((m) => m.file)).toEqual(['file_png', 'file_png', 'file_jpeg', 'file_pdf']);
    expect(out.wanted).toBeUndefined();
    expect(JSON.stringify(out.body)).not.toContain(png.data.slice(0, 40));
  });

  it('without the map nothing changes: base64 inline, no header, nothing wanted', () => {
    const out = toAnthropicMessages(mixed(), model);
    expect(out.headers).toBeUndefined();
    expect(out.wanted).toBeUndefined();
    expect(out.media.every((m) => m.file === undefined)).toBe(true);
  });

  it('a part with no entry is inline and wanted (once per hash); a null entry is inline and not wanted', () => {
    const partial = new Map<string, FileRef | null>([
      [mediaSha256(png), { id: 'file_png' }],
      [mediaSha256(jpeg), null],
    ]);
    const out = toAnthropicMessages(mixed(), model, { files: partial });
    expect(out.wanted?.uploads.map((u) => u.sha256)).toEqual([mediaSha256(pdf)]);
    const toolResult = out.body.messages[2]?.content[0] as { content: Array<{ source?: { type: string } }> };
    expect(toolResult.content.map((b) => b.source?.type)).toEqual([undefined, 'file', 'base64', 'base64']);
    // Two references to the same PNG: one file.
    const none = toAnthropicMessages(mixed(), model, { files: new Map() });
    expect(none.wanted?.uploads.map((u) => u.sha256)).toEqual([
      mediaSha256(png),
      mediaSha256(jpeg),
      mediaSha256(pdf),
    ]);
    expect(none.headers).toBeUndefined();
  });
});

describe('OpenAI Responses: file_id on input_image / input_file', () => {
  it('user images keep their required detail; tool outputs reference by id; PDFs have no inline data', () => {
    const out = toOpenAIResponses(mixed(), resolveModel('gpt-5'), { files: ids, imageDetail: 'high' });
    expect(out.body.input[0]).toEqual({
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'Look' },
        { type: 'input_image', file_id: 'file_png', detail: 'high' },
      ],
    });
    const output = out.body.input.find((i) => i.type === 'function_call_output') as { output: unknown[] };
    expect(output.output).toEqual([
      { type: 'input_text', text: 'got' },
      { type: 'input_image', file_id: 'file_png', detail: 'high' },
      { type: 'input_image', file_id: 'file_jpeg', detail: 'high' },
      { type: 'input_file', file_id: 'file_pdf' },
    ]);
    expect(out.headers).toBeUndefined();
  });
});

describe('Gemini: fileData where the API takes it', () => {
  it('Gemini 3: user parts are fileData; inside functionResponse.parts the bytes stay inline', () => {
    const out = toGemini(mixed(), resolveModel('gemini-3-pro-preview'), { files: ids });
    expect(out.body.contents[0]?.parts[1]).toEqual({
      fileData: { mimeType: 'image/png', fileUri: 'https://files.example/png' },
    });
    const response = out.body.contents[2]?.parts[0] as {
      functionResponse: { parts: Array<{ inlineData?: unknown }> };
    };
    expect(response.functionResponse.parts.every((p) => p.inlineData !== undefined)).toBe(true);
    // Nothing wanted for the function response's media: they can never be referenced there.
    expect(
      toGemini(mixed(), resolveModel('gemini-3-pro-preview'), { files: new Map() }).wanted?.uploads,
    ).toEqual([{ sha256: mediaSha256(png), part: png }]);
  });

  it('Gemini 2.5: the media after the function responses are fileData parts too', () => {
    const out = toGemini(mixed(), resolveModel('gemini-2.5-flash'), { files: ids });
    const after = out.body.contents[3]?.parts ?? [];
    expect(after.slice(1)).toEqual([
      { fileData: { mimeType: 'image/png', fileUri: 'https://files.example/png' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://files.example/jpeg' } },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://files.example/pdf' } },
    ]);
    expect(out.media.map((m) => m.file)).toEqual(['file_png', 'file_png', 'file_jpeg', 'file_pdf']);
  });
});

describe('OpenAI Chat Completions: PDFs by file_id, images always inline', () => {
  const model = resolveModel('gpt-4.1', { api: 'openai-chat' });

  it('wants the PDF uploaded, never an image (an image_url takes no file id)', () => {
    const out = toOpenAIChat(mixed(), model, { files: new Map() });
    expect(out.wanted?.uploads.map((w) => w.sha256)).toEqual([mediaSha256(pdf)]);
    expect(JSON.stringify(out.body)).toContain(png.data.slice(0, 40));
    // Without the map nothing is wanted: uploads are off.
    expect(toOpenAIChat(mixed(), model).wanted).toBeUndefined();
  });

  it('sends an uploaded PDF as file.file_id; the images stay data URLs even with ids for them', () => {
    const out = toOpenAIChat(mixed(), model, { files: ids });
    const body = JSON.stringify(out.body);
    expect(body).not.toContain(pdf.data.slice(0, 40));
    expect(body).toContain(png.data.slice(0, 40));
    expect(body).toContain(jpeg.data.slice(0, 40));
    expect(body).not.toContain('file_png');
    const attachments = out.body.messages.at(-1) as { role: string; content: unknown[] };
    expect(attachments.role).toBe('user');
    expect(attachments.content).toContainEqual({ type: 'file', file: { file_id: 'file_pdf' } });
    expect(out.media.map((m) => [m.type, m.file])).toEqual([
      ['image', undefined],
      ['image', undefined],
      ['image', undefined],
      ['document', 'file_pdf'],
    ]);
    expect(out.wanted).toBeUndefined();
  });

  it('a PDF in a user turn is referenced too; a failed upload (null) goes inline', () => {
    const conversation: Conversation = { messages: [{ role: 'user', content: [text('Read'), pdf] }] };
    const ref = toOpenAIChat(conversation, model, { files: ids });
    expect(ref.body.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Read' },
        { type: 'file', file: { file_id: 'file_pdf' } },
      ],
    });
    const failed = toOpenAIChat(conversation, model, { files: new Map([[mediaSha256(pdf), null]]) });
    expect(JSON.stringify(failed.body)).toContain(pdf.data.slice(0, 40));
    expect(failed.wanted).toBeUndefined();
  });
});

/** A screenshot session: each round the model calls `screenshot` and gets one image back. */
function screenshots(images: ImagePart[]): Conversation {
  const messages: Message[] = [{ role: 'user', content: [text('Watch the screen.')] }];
  images.forEach((image, i) => {
    messages.push({ role: 'assistant', content: [call(`s${i}`, 'screenshot', {})], stopReason: 'tool_use' });
    messages.push({ role: 'tool', results: [result(`s${i}`, 'screenshot', [text(`shot ${i}`), image])] });
  });
  return { messages };
}

const shot = (i: number) => `${2 + 2 * i}:0:1`;

/** The copies a plan wants, made by the real pipeline. */
async function makeCopies(wishes: readonly DegradeWish[]): Promise<Map<string, ImagePart>> {
  const out = new Map<string, ImagePart>();
  for (const w of wishes) {
    const r = await processMedia(Buffer.from(w.part.data, 'base64'), {
      maxDimension: w.target.maxSide,
      maxEncodedBytes: w.target.maxBytes,
    });
    out.set(w.key, {
      type: 'image',
      mediaType: r.mediaType as ImagePart['mediaType'],
      data: Buffer.from(r.data).toString('base64'),
      width: r.width,
      height: r.height,
    });
  }
  return out;
}

describe('degrade before drop', () => {
  it('the many-image rule: oversized images are sent re-encoded to 2000 px, none left out', async () => {
    const model = resolveModel('claude-sonnet-4-5');
    const big = solidPng(2400, 100, 90);
    const images = [big, big, big, ...Array.from({ length: 22 }, () => png)];
    const first = toAnthropicMessages(screenshots(images), model);
    // Without copies, as before: the oldest oversized images are left out; one copy is wanted for them all.
    expect(first.media).toHaveLength(22);
    expect(first.wanted?.degrade).toHaveLength(1);
    expect(first.wanted?.degrade[0]?.target).toEqual({ maxSide: 2000, maxBytes: 3932160 });
    const copies = await makeCopies(first.wanted?.degrade ?? []);
    const second = toAnthropicMessages(screenshots(images), model, { degraded: copies });
    expect(second.media).toHaveLength(25);
    expect(second.wanted).toBeUndefined();
    expect(second.warnings).toEqual([
      {
        code: 'media-degraded',
        message:
          "3 older images were sent smaller (re-encoded to at most 2000 px and 3840 KiB; the stored conversation is unchanged): model 'claude-sonnet-4-5' allows at most 2000 px per side when a request holds more than 20 images",
        parts: [shot(0), shot(1), shot(2)],
      },
    ]);
    const sent = second.body.messages[2]?.content[0] as { content: Array<{ source?: { data?: string } }> };
    const copy = [...copies.values()][0] as ImagePart;
    expect(sent.content[1]?.source?.data).toBe(copy.data);
    expect(Math.max(copy.width, copy.height)).toBe(2000);
  });

  it('the request size: the OLDEST images go smaller first, only as many as needed, and none is left out', async () => {
    const shots = Array.from({ length: 6 }, (_, i) => noisyPng(600, 500, 17 + i));
    const size = shots[0]?.data.length ?? 0;
    const model = defineModel({
      id: 'limited',
      api: 'anthropic-messages',
      input: { image: true, pdf: true },
      limits: { requestBytes: Math.round(3.5 * size) },
    });
    const first = toAnthropicMessages(screenshots(shots), model);
    const wanted = first.wanted?.degrade ?? [];
    expect(wanted.length).toBeGreaterThan(0);
    expect(wanted.length).toBeLessThan(6);
    // Oldest first: the wanted copies are those of the first images.
    expect(wanted.map((w) => w.part)).toEqual(shots.slice(0, wanted.length));
    const second = toAnthropicMessages(screenshots(shots), model, { degraded: await makeCopies(wanted) });
    expect(second.media).toHaveLength(6);
    expect(second.warnings.map((w) => w.code)).toEqual(['media-degraded']);
    expect(JSON.stringify(second.body).length).toBeLessThanOrEqual(model.limits.requestBytes);
  });

  it('a copy that failed (null) is left out as before', () => {
    const model = resolveModel('claude-sonnet-4-5');
    const big = solidPng(2400, 100, 90);
    const images = [big, ...Array.from({ length: 22 }, () => png)];
    const first = toAnthropicMessages(screenshots(images), model);
    const failed = new Map((first.wanted?.degrade ?? []).map((w) => [w.key, null]));
    const second = toAnthropicMessages(screenshots(images), model, { degraded: failed });
    expect(second.media.map((m) => m.key)).not.toContain(shot(0));
    expect(second.wanted).toBeUndefined();
    expect(second.warnings[0]?.code).toBe('request-limit');
  });

  it('a referenced image costs no request bytes: nothing is shed when the files are uploaded', () => {
    const shots = Array.from({ length: 6 }, (_, i) => solidPng(1500, 1500, 40 + i * 30));
    const size = shots[0]?.data.length ?? 0;
    const model = defineModel({
      id: 'limited',
      api: 'anthropic-messages',
      input: { image: true, pdf: true },
      limits: { requestBytes: Math.round(3.5 * size) },
    });
    const files = new Map<string, FileRef>(shots.map((s, i) => [mediaSha256(s), { id: `file_${i}` }]));
    const out = toAnthropicMessages(screenshots(shots), model, { files });
    expect(out.warnings).toEqual([]);
    expect(out.media.map((m) => m.file)).toEqual(shots.map((_, i) => `file_${i}`));
    // assumeUploaded plans the same way before the uploads are done (and wants them).
    const planned = toAnthropicMessages(screenshots(shots), model, {
      files: new Map(),
      assumeUploaded: true,
    });
    expect(planned.warnings).toEqual([]);
    expect(planned.wanted?.uploads).toHaveLength(6);
    expect(planned.wanted?.degrade).toEqual([]);
  });
});

describe('parts of unknown shape still serialize with files given', () => {
  it('a malformed part becomes a placeholder; no hash is taken of it', () => {
    const bad = { type: 'image', mediaType: 'image/png', data: 42 } as unknown as StoredPart;
    const out = toAnthropicMessages(
      { messages: [{ role: 'user', content: [bad, png] }] },
      resolveModel('claude-sonnet-4-5'),
      { files: ids },
    );
    expect(out.body.messages[0]?.content[0]).toMatchObject({ type: 'text' });
    expect(out.body.messages[0]?.content[1]).toEqual({
      type: 'image',
      source: { type: 'file', file_id: 'file_png' },
    });
  });
});
