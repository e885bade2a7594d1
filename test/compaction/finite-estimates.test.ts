/**
 * Estimates stay finite (review of the fuzz-sessions round): options at the edge of their accepted range
 * (`charsPerToken: 5e-324`, `patchMultiplier: 1e308`) and absurd stored image sides / page counts gave `Infinity` (or
 * `NaN`), `compact` then reported `tokensBefore: Infinity` and `SessionLog.appendCompaction` refused the record after
 * the summarizer had been paid. Every estimate and sum is now capped at 2^53 - 1. Also: `defineModel` refuses an
 * unknown `imageTokenRule` up front instead of every later estimate throwing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compact,
  estimateDocumentTokens,
  estimateImageTokens,
  estimateTokens,
  findCutPoint,
} from '../../src/compaction/index.js';
import type { Message } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { defineModel } from '../../src/providers/model/model-catalog.js';
import { SessionLog } from '../../src/session/index.js';
import { PNG_SIGNATURE, pngChunk } from '../helpers/png-file.js';
import { pdfBase64, pngBase64 } from '../session/helpers/media.js';

const MAX = Number.MAX_SAFE_INTEGER;
const RULES = ['fixed', 'anthropic', 'openai-tile', 'openai-patch', 'gemini'] as const;
const dir = mkdtempSync(join(tmpdir(), 'panto-finite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function expectEstimate(n: number): void {
  expect(Number.isInteger(n)).toBe(true);
  expect(n).toBeGreaterThanOrEqual(0);
  expect(n).toBeLessThanOrEqual(MAX);
}

const hugeImage = {
  type: 'image' as const,
  mediaType: 'image/png' as const,
  data: pngBase64(4, 3, 1),
  width: 1e308,
  height: 1e308,
};

describe('estimates are finite integers <= 2^53 - 1', () => {
  it('gemini with 1e308 x 1e308 (the reviewer’s case) and every rule with huge, infinite or tiny sides', () => {
    expect(
      estimateImageTokens({ width: 1e308, height: 1e308 }, { imageTokenRule: 'gemini' }),
    ).toBeLessThanOrEqual(MAX);
    for (const imageTokenRule of RULES) {
      for (const [width, height] of [
        [1e308, 1e308],
        [1e308, 1],
        [1, 1e200],
        [Number.POSITIVE_INFINITY, 10],
        [Number.MIN_VALUE, 1e308],
        [2 ** 31 - 1, 2 ** 31 - 1],
      ] as const) {
        expectEstimate(estimateImageTokens({ width, height }, { imageTokenRule, patchMultiplier: 1e308 }));
        expectEstimate(estimateImageTokens({ width, height }, { imageTokenRule, charsPerToken: 5e-324 }));
      }
    }
  });

  it('charsPerToken 5e-324, patchMultiplier 1e308 and 1e308 pages', () => {
    const text: Message = { role: 'user', content: [{ type: 'text', text: 'hello' }] };
    expect(estimateTokens(text, { charsPerToken: 5e-324 })).toBe(MAX);
    expect(
      estimateImageTokens(
        { width: 4000, height: 4000 },
        { imageTokenRule: 'openai-patch', patchMultiplier: 1e308 },
      ),
    ).toBe(MAX);
    const pdf = { data: pdfBase64(), pages: 1e308 };
    for (const imageTokenRule of RULES) expect(estimateDocumentTokens(pdf, { imageTokenRule })).toBe(MAX);
    expect(estimateDocumentTokens({ data: pdfBase64() }, { charsPerToken: 5e-324 })).toBe(MAX);
  });

  it('sums of capped estimates stay capped (estimateTokens and findCutPoint)', () => {
    const messages: Message[] = [
      { role: 'user', content: [hugeImage, hugeImage, { type: 'text', text: 'x' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      { role: 'user', content: [{ type: 'text', text: 'y' }] },
    ];
    const options = { imageTokenRule: 'gemini' as const, charsPerToken: 5e-324 };
    expect(estimateTokens(messages, options)).toBe(MAX);
    expect(findCutPoint(messages, MAX, options)).toBe(2);
  });

  it('compact with a stored image whose header claims 2^31-1 px sides under gemini: the record is accepted by appendCompaction', async () => {
    // A session holds only parts whose header says what they claim; the largest side a PNG header can state.
    const side = 2 ** 31 - 1;
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(side, 0);
    ihdr.writeUInt32BE(side, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const headerBomb = {
      type: 'image' as const,
      mediaType: 'image/png' as const,
      data: Buffer.concat([
        PNG_SIGNATURE,
        pngChunk('IHDR', ihdr),
        pngChunk('IEND', new Uint8Array(0)),
      ]).toString('base64'),
      width: side,
      height: side,
    };
    const path = join(dir, 'huge.jsonl');
    const log = await SessionLog.create(path);
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'look' }, headerBomb] },
      { role: 'assistant', content: [{ type: 'text', text: 'a huge image' }] },
      { role: 'user', content: [{ type: 'text', text: 'and now?' }] },
    ];
    for (const m of messages) log.appendMessage(m);
    const result = await compact(log.conversation, async () => 'summary', {
      keepRecentTokens: 1,
      imageTokenRule: 'gemini',
    });
    if (!result) throw new Error('expected a compaction');
    expectEstimate(result.compaction.tokensBefore);
    expectEstimate(result.compaction.tokensAfter);
    log.appendCompaction(result.compaction);
    log.close();
  });
});

describe('defineModel checks imageTokenRule', () => {
  it('a misspelled rule is ERR_INVALID_ARGUMENT naming the rules', () => {
    let error: unknown;
    try {
      defineModel({ id: 'my-model', api: 'openai-chat', imageTokenRule: 'gemnini' as 'gemini' });
    } catch (err) {
      error = err;
    }
    expect(isPantoError(error, 'ERR_INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(/imageTokenRule must be one of fixed, anthropic.*"gemnini"/);
  });

  it('every known rule is accepted', () => {
    for (const imageTokenRule of RULES) {
      expect(defineModel({ id: 'm', api: 'openai-chat', imageTokenRule }).imageTokenRule).toBe(
        imageTokenRule,
      );
    }
  });
});
