import { describe, expect, it } from 'vitest';
import { getModel, resolveModel } from '../../src/providers/model/model-catalog.js';
import { priceOf, usageCost } from '../../src/providers/model/model-prices.js';

describe('price table', () => {
  it.each([
    'claude-opus-4-1',
    'claude-opus-4-5',
    'claude-sonnet-4-5',
    'claude-haiku-4-5',
    'gpt-4o',
    'gpt-4o-mini',
    'gpt-4.1',
    'gpt-4.1-mini',
    'gpt-5',
    'gpt-5-mini',
    'o3',
    'o4-mini',
    'gemini-2.5-pro',
    'gemini-2.5-flash',
    'gemini-2.0-flash',
    'gemini-3-pro-preview',
  ])('%s (a catalog model) has a price', (id) => {
    expect(getModel(id)?.known).toBe(true);
    const price = priceOf(id);
    expect(price?.input).toBeGreaterThan(0);
    expect(price?.output).toBeGreaterThan(price?.input ?? 0);
  });

  it('knows no price for an unknown model (never a guess); gateway ids take their model price', () => {
    expect(priceOf('llama-3.1-8b')).toBeUndefined();
    expect(priceOf('anthropic/claude-sonnet-4-5')).toEqual(priceOf('claude-sonnet-4-5'));
  });
});

describe('usageCost', () => {
  it('Anthropic: uncached input, output, cache reads (0.1x) and cache writes (1.25x) priced separately', () => {
    const price = priceOf('claude-sonnet-4-5');
    if (!price) throw new Error('expected a price');
    const c = usageCost(
      {
        inputTokens: 1_000_000,
        outputTokens: 100_000,
        cacheReadTokens: 2_000_000,
        cacheWriteTokens: 400_000,
      },
      price,
    );
    expect(c.input).toBeCloseTo(3);
    expect(c.output).toBeCloseTo(1.5);
    expect(c.cacheRead).toBeCloseTo(0.6);
    expect(c.cacheWrite).toBeCloseTo(1.5);
    expect(c.total).toBeCloseTo(6.6);
  });

  it('a missing cache price counts at the input price; a bad price is a typed error', () => {
    expect(
      usageCost({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 1_000_000 }, { input: 2, output: 4 })
        .total,
    ).toBeCloseTo(2);
    expect(() => usageCost({ inputTokens: 1, outputTokens: 1 }, { input: -1, output: 1 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });
});

describe('resolveModel contextWindow', () => {
  it('sets the window of an unknown model (default 128,000) and of a known one', () => {
    expect(resolveModel('llama-3.1-8b').limits.contextWindow).toBe(128_000);
    expect(resolveModel('llama-3.1-8b', { contextWindow: 8192 }).limits.contextWindow).toBe(8192);
    expect(resolveModel('claude-sonnet-4-5', { contextWindow: 1_000_000 }).limits.contextWindow).toBe(
      1_000_000,
    );
    expect(() => resolveModel('x', { contextWindow: 0 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    expect(() => resolveModel('x', { contextWindow: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });
});
