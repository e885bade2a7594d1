import { describe, expect, it } from 'vitest';
import {
  anthropicImageTokens,
  estimateImageTokens,
  estimateTokens,
  geminiImageTokens,
  openaiPatchImageTokens,
  openaiTileImageTokens,
} from '../../src/compaction/index.js';
import type { ImageTokenRule, Message } from '../../src/conversation.js';
import { pdfBase64, pngBase64 } from '../session/helpers/media.js';

const image = (width: number, height: number) =>
  ({ type: 'image', mediaType: 'image/png', data: pngBase64(8, 8), width, height }) as const;

describe('text estimates', () => {
  it('counts ~4 characters per token across every message kind', () => {
    const messages: Message[] = [
      { role: 'system', content: 'x'.repeat(400) },
      { role: 'user', content: [{ type: 'text', text: 'y'.repeat(40) }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'z'.repeat(8) },
          { type: 'thinking', text: 't'.repeat(4) },
          { type: 'tool_call', id: 'c', name: 'read', input: { path: 'a' } }, // "read" + {"path":"a"} = 4 + 12
        ],
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'c',
            toolName: 'read',
            parts: [{ type: 'text', text: 'w'.repeat(80) }],
            isError: false,
            meta: { huge: 'm'.repeat(100_000) }, // never sent to a model: not counted
          },
        ],
      },
    ];
    expect(estimateTokens(messages[0] as Message)).toBe(100);
    expect(estimateTokens(messages[1] as Message)).toBe(10);
    expect(estimateTokens(messages[2] as Message)).toBe(7);
    expect(estimateTokens(messages[3] as Message)).toBe(1 + 20);
    expect(estimateTokens(messages)).toBe(100 + 10 + 7 + 21);
    expect(estimateTokens([])).toBe(0);
  });
});

describe('image estimates for known dimensions', () => {
  it('follows Anthropic: ceil(w/28)*ceil(h/28) after fitting 1568 px and ~1.15 MP', () => {
    expect(anthropicImageTokens(200, 200)).toBe(64);
    expect(anthropicImageTokens(1000, 1000)).toBe(36 * 36);
    // 1568x1176 would be 1.84 MP: scaled to ~1.15 MP (1238x928) first.
    expect(anthropicImageTokens(4000, 3000)).toBe(Math.ceil(1238 / 28) * Math.ceil(928 / 28));
    expect(anthropicImageTokens(8000, 100)).toBe(56 * 1); // long edge 1568, short edge 19
  });

  it('follows the OpenAI tile rule (85 + 170 per 512 px tile after fit-2048 and short side 768)', () => {
    expect(openaiTileImageTokens(1024, 1024)).toBe(765); // 768x768 -> 4 tiles
    expect(openaiTileImageTokens(2048, 4096)).toBe(1105); // 768x1536 -> 6 tiles
    expect(openaiTileImageTokens(100, 100)).toBe(255); // one tile
  });

  it('follows the OpenAI patch rule (32 px patches, capped at 1536)', () => {
    expect(openaiPatchImageTokens(1024, 1024)).toBe(1024);
    expect(openaiPatchImageTokens(4000, 4000)).toBeLessThanOrEqual(1536);
    expect(openaiPatchImageTokens(4000, 4000)).toBeGreaterThan(1400);
    expect(openaiPatchImageTokens(320, 320, 1.62)).toBe(162);
  });

  it('follows Gemini: 258 when both sides <= 384, else 258 per 768 px tile', () => {
    expect(geminiImageTokens(384, 300)).toBe(258);
    expect(geminiImageTokens(1000, 1000)).toBe(4 * 258);
    expect(geminiImageTokens(768, 385)).toBe(258);
  });

  it('Gemini counts a picture after its scale-down to fit 3072x3072: at most 16 tiles, whatever the header claims', () => {
    expect(geminiImageTokens(3072, 3072)).toBe(16 * 258);
    expect(geminiImageTokens(6144, 3072)).toBe(4 * 2 * 258);
    // A header bomb (2^31-1 px sides) once counted ~2e15 tokens and made the agent compact on every turn.
    expect(geminiImageTokens(2 ** 31 - 1, 2 ** 31 - 1)).toBe(16 * 258);
    expect(estimateImageTokens(image(2 ** 31 - 1, 1), { imageTokenRule: 'gemini' })).toBe(4 * 258);
    // Every rule is bounded by what the provider's own scale-down leaves.
    for (const rule of ['anthropic', 'openai-tile', 'openai-patch', 'gemini'] as const) {
      expect(estimateImageTokens(image(2 ** 31 - 1, 2 ** 31 - 1), { imageTokenRule: rule })).toBeLessThan(
        5000,
      );
    }
  });

  it('uses a fixed 4800-character (1200-token) estimate by default, configurable', () => {
    expect(estimateImageTokens(image(4000, 3000))).toBe(1200);
    expect(estimateImageTokens(image(4000, 3000), { fixedImageChars: 2000 })).toBe(500);
  });

  it('takes the rule from any object with an imageTokenRule field (e.g. a provider ModelInfo)', () => {
    const model: { id: string; contextWindow: number; imageTokenRule: ImageTokenRule } = {
      id: 'some-model',
      contextWindow: 200_000,
      imageTokenRule: 'anthropic',
    };
    const message: Message = { role: 'user', content: [image(1000, 1000)] };
    expect(estimateTokens(message, model)).toBe(1296);
    expect(estimateTokens(message, { imageTokenRule: 'gemini' })).toBe(1032);
    expect(estimateTokens(message, { imageTokenRule: 'openai-tile' })).toBe(765);
  });

  it('counts user images and tool-result images alike', () => {
    const user: Message = { role: 'user', content: [image(1000, 1000), image(200, 200)] };
    const tool: Message = {
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'c',
          toolName: 'shot',
          parts: [image(1000, 1000), image(200, 200)],
          isError: false,
        },
      ],
    };
    const opts = { imageTokenRule: 'anthropic' } as const;
    expect(estimateTokens(user, opts)).toBe(1296 + 64);
    expect(estimateTokens(tool, opts)).toBe(Math.ceil(4 / 4) + 1296 + 64);
    expect(estimateTokens(user)).toBe(2400);
  });
});

describe('document estimates', () => {
  it('counts PDFs by page when pages are known', () => {
    const doc = { type: 'document', mediaType: 'application/pdf', data: pdfBase64(), pages: 10 } as const;
    const message: Message = { role: 'user', content: [doc] };
    expect(estimateTokens(message, { imageTokenRule: 'gemini' })).toBe(2580);
    expect(estimateTokens(message, { imageTokenRule: 'anthropic' })).toBe(15_000);
    expect(estimateTokens(message)).toBe(12_000);
  });

  it('guesses pages from the size when unknown, so a big PDF never counts as one page', () => {
    const big = { type: 'document', mediaType: 'application/pdf', data: 'A'.repeat(4_000_000) } as const;
    const small = { type: 'document', mediaType: 'application/pdf', data: pdfBase64() } as const;
    expect(estimateTokens({ role: 'user', content: [small] }, { imageTokenRule: 'gemini' })).toBe(258);
    expect(estimateTokens({ role: 'user', content: [big] }, { imageTokenRule: 'gemini' })).toBe(30 * 258);
  });
});
