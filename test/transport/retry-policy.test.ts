import { describe, expect, it } from 'vitest';
import { extractProviderMessage, isRetryableStatus } from '../../src/providers/transport/provider-error.js';
import {
  backoffDelay,
  parseRetryAfter,
  resolveRetryOptions,
  sleep,
} from '../../src/providers/transport/retry-policy.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  it('reads delta-seconds, an HTTP date and retry-after-ms (preferred)', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '7' }), now)).toBe(7000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sun, 29 Nov 2026 12:00:30 GMT' }), now)).toBe(
      30_000,
    );
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sun, 29 Nov 2026 11:00:00 GMT' }), now)).toBe(0);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '7' }), now)).toBe(250);
  });
  it('ignores absent and malformed values', () => {
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': '-3' }), now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  const opts = resolveRetryOptions({ initialDelayMs: 100, maxDelayMs: 1000 });
  it('doubles per attempt between half and the full step, capped', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, opts, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, opts, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  });
  it('defaults to 4 attempts and clamps nonsense', () => {
    expect(resolveRetryOptions(undefined).maxAttempts).toBe(4);
    expect(resolveRetryOptions({ maxAttempts: 0 }).maxAttempts).toBe(1);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason', async () => {
    const ctl = new AbortController();
    const p = sleep(10_000, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});

describe('provider error bodies', () => {
  it('extracts the message and kind of each surface', () => {
    expect(
      extractProviderMessage('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    ).toEqual({ message: 'Overloaded', type: 'overloaded_error' });
    expect(
      extractProviderMessage(
        '{"error":{"message":"Invalid image.","type":"invalid_request_error","code":"invalid_image"}}',
      ),
    ).toEqual({ message: 'Invalid image.', type: 'invalid_request_error' });
    expect(
      extractProviderMessage('[{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}]'),
    ).toEqual({
      message: 'bad',
      type: 'INVALID_ARGUMENT',
    });
    expect(extractProviderMessage('<html>Bad Gateway</html>')).toEqual({
      message: '<html>Bad Gateway</html>',
    });
    expect(extractProviderMessage('')).toEqual({ message: '(empty response body)' });
  });
  it('classifies statuses', () => {
    expect([400, 401, 404, 408, 409, 429, 500, 529].map(isRetryableStatus)).toEqual([
      false,
      false,
      false,
      true,
      true,
      true,
      true,
      true,
    ]);
  });
});
