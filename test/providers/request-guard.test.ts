import { describe, expect, it } from 'vitest';
import type { Conversation, ImagePart, Message, StoredPart } from '../../src/conversation.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import type { MediaRef } from '../../src/providers/common/serialize-options.js';
import { defineModel, resolveModel } from '../../src/providers/model/model-catalog.js';
import type { ModelApi, ModelLimits } from '../../src/providers/model/model-info.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { call, fourImages, jpeg, pdf, png, result, scenarios, text } from './scenarios.js';
import { solidPng } from './solid-png.js';
import { surfaces } from './surfaces.js';

/** A screenshot session: each round the model calls `screenshot` and gets one image back. */
function screenshots(images: ImagePart[]): Conversation {
  const messages: Message[] = [{ role: 'user', content: [text('Watch the screen.')] }];
  images.forEach((image, i) => {
    messages.push({ role: 'assistant', content: [call(`s${i}`, 'screenshot', {})], stopReason: 'tool_use' });
    messages.push({ role: 'tool', results: [result(`s${i}`, 'screenshot', [text(`shot ${i}`), image])] });
  });
  return { messages };
}

/** Keys of the images left in an Anthropic body, oldest first. */
function keptKeys(media: MediaRef[]): string[] {
  return media.map((m) => m.key);
}

/** Key of screenshot `i` in `screenshots()` (message 2 + 2i, result 0, part 1). */
function shot(i: number): string {
  return `${2 + 2 * i}:0:1`;
}

/** Resolve a `MediaRef.path` such as `messages[2].content[1].content[0]` inside a body. */
function at(body: unknown, path: string): unknown {
  let node: unknown = body;
  for (const step of path.match(/[^.[\]]+/g) ?? []) {
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}

describe('Anthropic many-image rule (> 20 images → every image <= 2000 px)', () => {
  const model = resolveModel('claude-sonnet-4-5');

  it('drops the oversized OLDEST images first and keeps every newer one', () => {
    const big = solidPng(2400, 100);
    const images = [big, big, big, ...Array.from({ length: 22 }, () => png)];
    const out = toAnthropicMessages(screenshots(images), model);
    expect(keptKeys(out.media)).toEqual(Array.from({ length: 22 }, (_, i) => shot(i + 3)));
    expect(out.warnings).toEqual([
      {
        code: 'request-limit',
        message:
          "3 images replaced by a placeholder: model 'claude-sonnet-4-5' allows at most 2000 px per side when a request holds more than 20 images; this older image was left out",
        parts: [shot(0), shot(1), shot(2)],
      },
    ]);
    const first = out.body.messages[2]?.content[0];
    expect(first).toEqual({
      type: 'tool_result',
      tool_use_id: 's0',
      content: [
        { type: 'text', text: 'shot 0' },
        {
          type: 'text',
          text: "[image omitted: model 'claude-sonnet-4-5' allows at most 2000 px per side when a request holds more than 20 images; this older image was left out]",
        },
      ],
    });
  });

  it('never drops the newest image: when it is the large one, older images go until the rule no longer applies', () => {
    const images = [...Array.from({ length: 24 }, () => png), solidPng(2400, 100)];
    const out = toAnthropicMessages(screenshots(images), model);
    expect(keptKeys(out.media)).toEqual(Array.from({ length: 20 }, (_, i) => shot(i + 5)));
    expect(out.warnings[0]?.parts).toEqual([0, 1, 2, 3, 4].map(shot));
  });

  it('leaves large images alone while the request holds 20 or fewer', () => {
    const images = Array.from({ length: 20 }, () => solidPng(2400, 100));
    const out = toAnthropicMessages(screenshots(images), model);
    expect(out.media).toHaveLength(20);
    expect(out.warnings).toEqual([]);
  });

  it('drops an image over the absolute 8000 px side wherever it is', () => {
    const out = toAnthropicMessages(screenshots([png, solidPng(8001, 1), jpeg]), model);
    expect(keptKeys(out.media)).toEqual([shot(0), shot(2)]);
    expect(out.warnings[0]?.message).toBe(
      "1 image replaced by a placeholder: it exceeds the limit of 8000 px per side for model 'claude-sonnet-4-5'",
    );
  });
});

describe('byte budgets', () => {
  const limited = (api: ModelApi, limits: Partial<ModelLimits>) =>
    defineModel({ id: 'limited', api, input: { image: true, pdf: true }, limits });

  it('drops one image over the per-image byte limit, keeps the rest', () => {
    const out = toOpenAIChat(screenshots([png, jpeg, png]), limited('openai-chat', { maxImageBytes: 200 }));
    expect(keptKeys(out.media)).toEqual([shot(0), shot(2)]);
    expect(out.warnings[0]?.message).toBe(
      "1 image replaced by a placeholder: it exceeds the limit of 200 bytes per image for model 'limited'",
    );
  });

  it('drops the oldest media until the request fits its size limit', () => {
    // ~7 KB of base64 each, so the few hundred bytes of text are noise: room for three and a half images.
    const shots = Array.from({ length: 6 }, () => solidPng(1500, 1500));
    const size = shots[0]?.data.length ?? 0;
    const model = limited('anthropic-messages', { requestBytes: Math.round(3.5 * size) });
    const out = toAnthropicMessages(screenshots(shots), model);
    expect(keptKeys(out.media)).toEqual([shot(3), shot(4), shot(5)]);
    expect(out.warnings[0]?.message).toMatch(/request size limit of \d+ bytes for model 'limited'/);
  });

  it('drops the oldest PDFs beyond the page limit', () => {
    const conversation: Conversation = {
      messages: [
        { role: 'user', content: [pdf] },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }], stopReason: 'end' },
        { role: 'user', content: [pdf] },
      ],
    };
    const out = toAnthropicMessages(conversation, limited('anthropic-messages', { pdfPages: 1 }));
    expect(keptKeys(out.media)).toEqual(['2:0:0']);
    expect(out.body.messages[0]?.content).toEqual([
      {
        type: 'text',
        text: "[document omitted: request limit of 1 PDF pages for model 'limited'; this older document was left out]",
      },
    ]);
  });
});

describe('omitParts: leave named parts out of one request (the retry path)', () => {
  for (const surface of surfaces) {
    it(`${surface.api}: a rejected image is replaced in the request, not in history, and the rest stay`, () => {
      const conversation = scenarios['several-results']?.() as Conversation;
      const first = surface.serialize(conversation, surface.model);
      const rejected = first.media[1] as MediaRef;
      expect(rejected.key).toBe('2:2:1');
      const retry = surface.serialize(conversation, surface.model, {
        omitParts: new Set([rejected.key]),
        omitReason: 'the provider could not process this image',
      });
      expect(retry.media.map((m) => m.key)).toEqual(['2:1:0', '2:2:2']);
      expect(JSON.stringify(retry.body)).toContain(
        '[image omitted: the provider could not process this image]',
      );
      expect(retry.warnings).toEqual([
        {
          code: 'omitted-by-host',
          message: '1 image replaced by a placeholder: the provider could not process this image',
          parts: ['2:2:1'],
        },
      ]);
      const stored = ((conversation.messages[2] as Message & { role: 'tool' }).results[2]?.parts ??
        []) as StoredPart[];
      expect(stored[1]).toBe(jpeg);
    });

    it(`${surface.api}: every MediaRef.path points at the part in the body`, () => {
      const conversation: Conversation = {
        messages: [
          ...(scenarios['user-image']?.().messages ?? []),
          ...(scenarios['several-results']?.().messages ?? []),
        ],
      };
      const out = surface.serialize(conversation, surface.model);
      expect(out.media.map((m) => m.key)).toEqual(['0:0:1', '0:0:2', '2:0:0', '5:1:0', '5:2:1', '5:2:2']);
      const data = [png, pdf, jpeg, png, jpeg, pdf].map((p) => p.data);
      out.media.forEach((ref, i) => {
        expect(JSON.stringify(at(out.body, ref.path))).toContain(data[i]);
      });
    });
  }

  it('takes a predicate too', () => {
    const out = toAnthropicMessages(fourImages(), 'claude-sonnet-4-5', {
      omitParts: (ref, part) =>
        part.type === 'image' && part.mediaType === 'image/jpeg' && ref.messageIndex > 3,
    });
    expect(out.media.map((m) => m.key)).toEqual(['0:0:1', '2:0:1', '4:0:1']);
  });
});
