import { describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import {
  defineModel,
  getModel,
  mediaPolicyFor,
  resolveModel,
} from '../../src/providers/model/model-catalog.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';

function expectInvalid(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(isPantoError(err, 'ERR_INVALID_ARGUMENT')).toBe(true);
    expect((err as Error).message).toMatch(message);
    return;
  }
  throw new Error('expected ERR_INVALID_ARGUMENT');
}

describe('known model families', () => {
  it.each([
    ['claude-opus-4-1-20250805', 'anthropic-messages', true, true, 'anthropic', 32_000],
    ['claude-opus-4-5', 'anthropic-messages', true, true, 'anthropic', 64_000],
    ['claude-sonnet-4-5-20250929', 'anthropic-messages', true, true, 'anthropic', 64_000],
    ['claude-haiku-4-5', 'anthropic-messages', true, true, 'anthropic', 64_000],
    ['gpt-4o', 'openai-responses', true, true, 'openai-tile', 16_384],
    ['gpt-4.1-mini', 'openai-responses', true, true, 'openai-patch', 32_768],
    ['gpt-5', 'openai-responses', true, true, 'openai-tile', 128_000],
    ['gpt-5-mini', 'openai-responses', true, true, 'openai-patch', 128_000],
    ['o3', 'openai-responses', true, true, 'openai-tile', 100_000],
    ['o3-mini', 'openai-responses', false, false, 'openai-tile', 100_000],
    ['o4-mini', 'openai-responses', true, true, 'openai-patch', 100_000],
    ['gemini-2.0-flash', 'gemini', true, true, 'gemini', 8_192],
    ['gemini-2.5-pro', 'gemini', true, true, 'gemini', 65_536],
    ['gemini-3-pro-preview', 'gemini', true, true, 'gemini', 65_536],
  ] as const)('%s: %s, image %s, pdf %s, %s tokens, %i output', (id, api, image, pdf, rule, maxOut) => {
    const model = getModel(id);
    expect(model).toMatchObject({
      id,
      api,
      known: true,
      imageTokenRule: rule,
      input: { text: true, image, pdf },
    });
    expect(model?.limits.maxOutputTokens).toBe(maxOut);
  });

  it('Claude carries the many-image rule and the 5 MiB per-image limit', () => {
    expect(getModel('claude-sonnet-4-5')?.limits).toMatchObject({
      imagesPerRequest: 100,
      maxImageSide: 8000,
      manyImageRule: { over: 20, maxSide: 2000 },
      maxImageBytes: 5 * 1024 * 1024,
      requestBytes: 32 * 1024 * 1024,
    });
  });

  it('Claude: 600 images per request on the 1M-context models, 100 on the 200k ones (Anthropic vision docs)', () => {
    const of = (id: string) => {
      const m = getModel(id);
      return [m?.limits.imagesPerRequest, m?.limits.contextWindow];
    };
    for (const id of [
      'claude-opus-4-6',
      'claude-opus-4-7',
      'claude-opus-4-8',
      'claude-sonnet-4-6',
      'claude-opus-4-6-20260205',
    ])
      expect(of(id), id).toEqual([600, 1_000_000]);
    for (const id of [
      'claude-haiku-4-5',
      'claude-haiku-4-5-20251001',
      'claude-sonnet-4-5',
      'claude-sonnet-4-5-20250929',
      'claude-sonnet-4-20250514',
      'claude-opus-4-5',
      'claude-opus-4-1',
      'claude-opus-4-20250514',
    ])
      expect(of(id), id).toEqual([100, 200_000]);
    // Through a gateway (its spelling of the version) the model's own limit holds.
    expect(getModel('anthropic/claude-sonnet-4.6')?.limits.imagesPerRequest).toBe(600);
    expect(getModel('anthropic/claude-haiku-4.5')?.limits.imagesPerRequest).toBe(100);
  });

  it('only Gemini 3+ takes images inside function responses; no Gemini takes GIF', () => {
    expect(getModel('gemini-3-flash')?.multimodalToolResults).toBe(true);
    expect(getModel('gemini-2.5-flash')?.multimodalToolResults).toBe(false);
    expect(getModel('gemini-2.5-flash')?.input.imageTypes).toEqual(['image/png', 'image/jpeg', 'image/webp']);
  });

  it('returns a fresh object each time (a caller cannot corrupt the catalog)', () => {
    const a = getModel('claude-sonnet-4-5');
    if (!a?.limits.manyImageRule) throw new Error('expected a catalog entry');
    a.limits.manyImageRule.maxSide = 1;
    a.input.image = false;
    expect(getModel('claude-sonnet-4-5')).toMatchObject({
      input: { image: true },
      limits: { manyImageRule: { maxSide: 2000 } },
    });
  });
});

describe('gateway ids (OpenRouter style vendor/model)', () => {
  it("take the model's own inputs and limits, spoken to through OpenAI Chat", () => {
    const m = getModel('anthropic/claude-sonnet-4.5');
    expect(m).toMatchObject({
      id: 'anthropic/claude-sonnet-4.5',
      api: 'openai-chat',
      known: true,
      input: { image: true, pdf: true },
      limits: { maxImageBytes: 5 * 1024 * 1024, manyImageRule: { over: 20, maxSide: 2000 } },
    });
    expect(getModel('openai/gpt-4o')?.input.image).toBe(true);
    expect(getModel('google/gemini-2.5-flash')?.input.imageTypes).not.toContain('image/gif');
    expect(getModel('meta-llama/llama-3.1-8b-instruct')).toBeUndefined();
    expect(resolveModel('meta-llama/llama-3.1-8b-instruct').input.image).toBe(false);
  });
});

describe('unknown models are text-only until the host opts in', () => {
  it.each([
    ['llama-3.1-8b-instruct', 'openai-chat'],
    ['deepseek-chat', 'openai-chat'],
    ['claude-next', 'anthropic-messages'],
    ['gemini-exp', 'gemini'],
    ['gpt-oss-120b', 'openai-responses'],
  ] as Array<[string, ModelApi]>)('%s → %s, no images, no PDFs', (id, api) => {
    expect(getModel(id)).toBeUndefined();
    expect(resolveModel(id)).toMatchObject({ id, api, known: false, input: { image: false, pdf: false } });
  });

  it('resolveModel(id, {input: {image: true}}) opts in; other fields keep their defaults', () => {
    const model = resolveModel('llava-13b', { input: { image: true }, limits: { imagesPerRequest: 4 } });
    expect(model.input).toEqual({ text: true, image: true, pdf: false });
    expect(model.limits.imagesPerRequest).toBe(4);
    expect(model.limits.maxImageBytes).toBe(5 * 1024 * 1024);
  });

  it('overrides merge into a known model field by field', () => {
    const model = resolveModel('claude-sonnet-4-5', {
      limits: { imagesPerRequest: 600 },
      api: 'anthropic-messages',
    });
    expect(model.limits).toMatchObject({ imagesPerRequest: 600, maxImageSide: 8000 });
    expect(model.known).toBe(true);
  });

  it('defineModel declares a model from a spec', () => {
    const model = defineModel({
      id: 'my-vlm',
      api: 'openai-chat',
      provider: 'vllm',
      input: { image: true, pdf: true },
    });
    expect(model).toMatchObject({ id: 'my-vlm', api: 'openai-chat', provider: 'vllm', known: false });
    expect(model.input).toEqual({ text: true, image: true, pdf: true });
  });

  it('rejects invalid declarations with ERR_INVALID_ARGUMENT', () => {
    expectInvalid(() => resolveModel(''), /non-empty/);
    expectInvalid(() => defineModel({ id: 'x', api: 'soap' as ModelApi }), /unknown api 'soap'/);
    expectInvalid(() => resolveModel('x', { limits: { imagesPerRequest: -1 } }), /imagesPerRequest/);
    expectInvalid(() => resolveModel('x', { limits: { requestBytes: Number.NaN } }), /requestBytes/);
  });
});

describe('mediaPolicyFor', () => {
  it('is the pipeline default for current models (2000 px, base64 <= 5 MiB); PDFs fit the request in base64', () => {
    const MiB = 1024 * 1024;
    expect(mediaPolicyFor(resolveModel('claude-sonnet-4-5'))).toEqual({
      maxDimension: 2000,
      maxEncodedBytes: 3_932_160,
      maxPdfBytes: 24 * MiB, // 32 MiB of base64
    });
    expect(mediaPolicyFor(resolveModel('gpt-5')).maxPdfBytes).toBe(24 * MiB);
    expect(mediaPolicyFor(resolveModel('gemini-3-pro-preview'))).toEqual({
      maxDimension: 2000,
      maxEncodedBytes: 3_932_160,
      maxPdfBytes: 32 * MiB,
    });
  });

  it('tightens to a model with smaller limits, so a stored image always fits it', () => {
    const model = defineModel({
      id: 'small',
      api: 'openai-chat',
      input: { image: true },
      limits: {
        maxImageBytes: 1024 * 1024,
        manyImageRule: { over: 5, maxSide: 1568 },
        pdfBytes: 4 * 1024 * 1024,
      },
    });
    const policy = mediaPolicyFor(model);
    expect(policy).toEqual({ maxDimension: 1568, maxEncodedBytes: 786_432, maxPdfBytes: 3_145_728 });
    // The raw cap encodes to at most the base64 limit.
    expect(Math.ceil(policy.maxEncodedBytes / 3) * 4).toBeLessThanOrEqual(1024 * 1024);
  });
});
