/**
 * Where credentials go and what errors say, on a loopback server that records every request's path and headers:
 * - the library keeps the official SDKs' rule (the environment key goes with an explicit `baseUrl`) and `env: {}`
 *   keeps it home; an explicit `apiKey` always goes;
 * - base URLs are taken with and without their API version (`…/v1`, `…/v1beta`) on every surface;
 * - every HTTP error names the URL that was requested, and never the key (nor a credential in the base URL).
 */

import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { collectStream } from '../../src/providers/common/collect-stream.js';
import { createProvider, type ProviderOptions } from '../../src/providers/http-provider.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { shownUrl } from '../../src/providers/transport/shown-url.js';
import { type Surface, startFakeProviderServer } from '../helpers/fake-provider-server.js';

const server = await startFakeProviderServer();
afterAll(() => server.close());

const SURFACES: Surface[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];
const MODEL: Record<Surface, string> = {
  'anthropic-messages': 'claude-sonnet-4-5',
  'openai-chat': 'gpt-4.1',
  'openai-responses': 'gpt-4.1',
  gemini: 'gemini-2.5-flash',
};
const PATH: Record<Surface, string> = {
  'anthropic-messages': '/v1/messages',
  'openai-chat': '/v1/chat/completions',
  'openai-responses': '/v1/responses',
  gemini: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
};
const KEY_HEADER: Record<Surface, string> = {
  'anthropic-messages': 'x-api-key',
  'openai-chat': 'authorization',
  'openai-responses': 'authorization',
  gemini: 'x-goog-api-key',
};
const ENV_VAR: Record<Surface, string> = {
  'anthropic-messages': 'ANTHROPIC_API_KEY',
  'openai-chat': 'OPENAI_API_KEY',
  'openai-responses': 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
};

/** One request through a provider made with `options`; the recorded request and the outcome. */
async function once(surface: Surface, options: Omit<ProviderOptions, 'api'>, reply = true) {
  server.reset();
  if (reply) server.enqueue({ type: 'reply', text: 'ok' });
  const n = server.requests.length;
  const provider = createProvider({ api: surface as ModelApi, retry: { maxAttempts: 1 }, ...options });
  const message = await collectStream(
    provider.stream({ model: MODEL[surface], body: { messages: [] } }),
  ).catch((err: unknown) => err);
  return { request: server.requests[n], message };
}

describe.each(SURFACES)('%s', (surface) => {
  it('the environment key goes with an explicit baseUrl (the SDKs’ rule); env: {} keeps it home', async () => {
    const env = { [ENV_VAR[surface]]: 'sk-from-env-0123' };
    const withEnv = await once(surface, { baseUrl: server.baseUrl(surface), env });
    expect(withEnv.request?.headers[KEY_HEADER[surface]]).toContain('sk-from-env-0123');
    const home = await once(surface, { baseUrl: server.baseUrl(surface), env: {} });
    expect(home.request?.headers[KEY_HEADER[surface]]).toBeUndefined();
    const explicit = await once(surface, {
      baseUrl: server.baseUrl(surface),
      apiKey: 'sk-explicit-4567',
      env: {},
    });
    expect(explicit.request?.headers[KEY_HEADER[surface]]).toContain('sk-explicit-4567');
  });

  it('takes the base URL with or without its API version, with or without a final slash', async () => {
    const version = surface === 'gemini' ? '/v1beta' : '/v1';
    for (const base of [
      server.url,
      `${server.url}/`,
      `${server.url}${version}`,
      `${server.url}${version}/`,
    ]) {
      const { request, message } = await once(surface, { baseUrl: base, env: {} });
      expect(request?.path, base).toBe(PATH[surface]);
      expect(message).not.toBeInstanceOf(Error);
    }
  });

  it('an HTTP error names the URL requested, never the key', async () => {
    server.reset();
    server.enqueue({ type: 'http-error', status: 404, message: 'no such model' });
    const provider = createProvider({
      api: surface as ModelApi,
      baseUrl: server.baseUrl(surface),
      apiKey: 'sk-secret-9876',
      retry: { maxAttempts: 1 },
    });
    const error = await collectStream(provider.stream({ model: MODEL[surface], body: {} })).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ProviderError);
    const message = (error as ProviderError).message;
    expect(message).toContain('HTTP 404');
    expect(message).toContain(`[POST ${server.url}${PATH[surface]}]`);
    expect(message).not.toContain('sk-secret-9876');
    expect((error as ProviderError).url).toBe(`${server.url}${PATH[surface]}`);
  });
});

describe('failures before any answer name the URL too, masked', () => {
  it('a refused connection: the message says where it went', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const provider = createProvider({
      api: 'openai-chat',
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'sk-secret-9876',
      retry: { maxAttempts: 1 },
    });
    const error = await collectStream(provider.stream({ model: 'gpt-4.1', body: {} })).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ProviderError);
    const message = (error as ProviderError).message;
    expect(message).toContain('request failed');
    expect(message).toContain(`[POST http://127.0.0.1:${port}/v1/chat/completions]`);
    expect(message).not.toContain('sk-secret-9876');
  });

  it('a base URL holding a password or the key: neither appears in the error or the provider name', async () => {
    for (const baseUrl of [
      server.url.replace('http://', 'http://user:hunter2@'),
      `${server.url}/sk-secret-9876/v1`,
    ]) {
      server.reset();
      server.enqueue({ type: 'http-error', status: 404, message: 'no route' });
      const provider = createProvider({
        api: 'openai-chat',
        baseUrl,
        apiKey: 'sk-secret-9876',
        retry: { maxAttempts: 1 },
      });
      const error = await collectStream(provider.stream({ model: 'gpt-4.1', body: {} })).catch(
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ProviderError);
      for (const text of [(error as ProviderError).message, provider.name]) {
        expect(text).not.toContain('hunter2');
        expect(text).not.toContain('sk-secret-9876');
      }
      expect((error as ProviderError).message).toMatch(/\[POST http:\/\/127\.0\.0\.1:\d+\//);
    }
  });

  it('shownUrl masks secret-looking query values and the key wherever it is', () => {
    expect(shownUrl('https://h.example/v1?key=abc&alt=sse&access_token=t0k')).toBe(
      'https://h.example/v1?key=***&alt=sse&access_token=***',
    );
    expect(shownUrl('https://u:p@h.example/x/sk-1234/y', 'sk-1234')).toBe('https://h.example/x/***/y');
    expect(shownUrl('not a url with sk-1234 inside', 'sk-1234')).toBe('not a url with *** inside');
  });
});
