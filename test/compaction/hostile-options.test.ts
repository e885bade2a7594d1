/**
 * Estimate options out of range (findings of test/fuzz/fuzz-sessions.mjs): a JavaScript caller's unknown
 * `imageTokenRule`, a `charsPerToken` of 0, a negative `fixedImageChars`, a `NaN` `keepRecentTokens` gave `NaN`,
 * negative or infinite estimates (and a cut of everything, or never one) — now `ERR_INVALID_ARGUMENT`.
 */
import { describe, expect, it } from 'vitest';
import {
  compact,
  estimateDocumentTokens,
  estimateImageTokens,
  estimateTokens,
  findCutPoint,
} from '../../src/compaction/index.js';
import type { Message } from '../../src/conversation.js';
import { pngBase64 } from '../session/helpers/media.js';

const image = {
  type: 'image' as const,
  mediaType: 'image/png' as const,
  data: pngBase64(4, 3, 1),
  width: 4,
  height: 3,
};
const messages: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'a'.repeat(400) }, image] },
  { role: 'assistant', content: [{ type: 'text', text: 'b'.repeat(400) }] },
  { role: 'user', content: [{ type: 'text', text: 'c'.repeat(400) }] },
];
const summarize = async () => 'summary';

const bad: Array<[string, Record<string, unknown>]> = [
  ['an unknown imageTokenRule', { imageTokenRule: 'openai' }],
  ['imageTokenRule __proto__', { imageTokenRule: '__proto__' }],
  ['charsPerToken 0', { charsPerToken: 0 }],
  ['charsPerToken -1', { charsPerToken: -1 }],
  ['charsPerToken NaN', { charsPerToken: Number.NaN }],
  ['fixedImageChars -4800', { fixedImageChars: -4800 }],
  ['fixedImageChars NaN', { fixedImageChars: Number.NaN }],
  ['fixedImageChars 1e308 (an estimate of Infinity)', { fixedImageChars: 1e308 }],
  ['patchMultiplier -1', { imageTokenRule: 'openai-patch', patchMultiplier: -1 }],
];

describe('estimate options out of range are ERR_INVALID_ARGUMENT', () => {
  it.each(bad)('%s', async (_name, options) => {
    const code = { code: 'ERR_INVALID_ARGUMENT' };
    expect(() => estimateTokens(messages, options)).toThrow(expect.objectContaining(code));
    expect(() => estimateImageTokens(image, options)).toThrow(expect.objectContaining(code));
    expect(() => estimateDocumentTokens({ data: 'JVBERi0=', pages: 2 }, options)).toThrow(
      expect.objectContaining(code),
    );
    expect(() => findCutPoint(messages, 10, options)).toThrow(expect.objectContaining(code));
    await expect(
      compact({ messages }, summarize, { keepRecentTokens: 10, ...options }),
    ).rejects.toMatchObject(code);
  });

  it('keepRecentTokens NaN is refused (it cut everything), Infinity keeps everything', async () => {
    expect(() => findCutPoint(messages, Number.NaN)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    await expect(compact({ messages }, summarize, { keepRecentTokens: Number.NaN })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
    expect(findCutPoint(messages, Number.POSITIVE_INFINITY)).toBe(0);
  });

  it('options in range still give finite estimates >= 0', () => {
    for (const options of [
      {},
      { charsPerToken: 1e-3 },
      { fixedImageChars: 0 },
      { imageTokenRule: 'gemini' as const },
    ]) {
      const t = estimateTokens(messages, options);
      expect(Number.isFinite(t) && t >= 0).toBe(true);
    }
  });
});
