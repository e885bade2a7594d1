/**
 * The Files API clients against loopback servers that implement each API as documented (test/helpers/fake-files-api.ts):
 * what reaches the server (multipart fields, bytes, the beta header, the resumable protocol), ids and expiry, delete,
 * and hostile answers — each bounded in time.
 */

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { accountOf, createProviderFiles } from '../../src/providers/files/provider-files.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { startFilesServer } from '../helpers/fake-files-api.js';

const MEDIA = new URL('../fixtures/media/', import.meta.url);
const png = readFileSync(new URL('png-rgb.png', MEDIA));
const pdf = readFileSync(new URL('pdf-2page.pdf', MEDIA));

const { server, files } = await startFilesServer();
afterAll(() => server.close());

type FilesApi = Exclude<ModelApi, 'openai-chat'>;
const APIS: FilesApi[] = ['anthropic-messages', 'openai-responses', 'gemini'];

function client(api: FilesApi, extra: { apiKey?: string; timeoutMs?: number; pollMs?: number } = {}) {
  const made = createProviderFiles({
    api,
    baseUrl: server.baseUrl(api),
    apiKey: 'test-key',
    timeoutMs: 5000,
    pollMs: 5,
    ...extra,
  });
  if (made === undefined) throw new Error(`no files client for ${api}`);
  return made;
}

describe('upload: what reaches each Files API', () => {
  it.each(APIS)(
    '%s: the bytes arrive intact with the documented fields, and an id comes back',
    async (api) => {
      const before = files.uploads.length;
      const up = await client(api).upload({ data: png, mediaType: 'image/png', filename: 'panto-0123.png' });
      const seen = files.uploads[before];
      expect(seen).toMatchObject({ bytes: png.length, filename: 'panto-0123.png', mediaType: 'image/png' });
      const stored = files.files.get(up.id);
      expect(stored?.data.equals(png)).toBe(true);
      expect(up).toMatchObject({ mediaType: 'image/png', bytes: png.length });
      if (api === 'anthropic-messages') expect(up.id).toMatch(/^file_011/);
      if (api === 'openai-responses') {
        expect(up.id).toMatch(/^file-/);
        expect(stored?.purpose).toBe('vision');
      }
      if (api === 'gemini') {
        expect(up.id).toMatch(/^files\//);
        expect(up.uri).toBe(`${server.url}/v1beta/${up.id}`);
        // 48 h after the upload, give or take the test's run time.
        const left = Date.parse(up.expiresAt as string) - Date.now();
        expect(left).toBeGreaterThan(47.9 * 3600 * 1000);
        expect(left).toBeLessThanOrEqual(48 * 3600 * 1000);
      }
    },
  );

  it('OpenAI: a PDF is uploaded with purpose user_data', async () => {
    const up = await client('openai-responses').upload({
      data: pdf,
      mediaType: 'application/pdf',
      filename: 'a.pdf',
    });
    expect(files.files.get(up.id)?.purpose).toBe('user_data');
  });

  it('Gemini: a PDF still PROCESSING is polled until ACTIVE', async () => {
    const up = await client('gemini').upload({ data: pdf, mediaType: 'application/pdf', filename: 'a.pdf' });
    expect(files.files.get(up.id)?.state).toBe('ACTIVE');
  });

  it('Anthropic: the upload carries the Files API beta, joined to a beta the host set', async () => {
    const made = createProviderFiles({
      api: 'anthropic-messages',
      baseUrl: server.baseUrl('anthropic-messages'),
      apiKey: 'test-key',
      headers: { 'anthropic-beta': 'other-beta-2025-01-01' },
    });
    // The fake refuses an upload without the files beta; a joined list passes.
    await expect(
      made?.upload({ data: png, mediaType: 'image/png', filename: 'x.png' }),
    ).resolves.toMatchObject({
      mediaType: 'image/png',
    });
  });

  it('a wrong key is refused as an auth error, not retried', async () => {
    for (const api of APIS) {
      const err = await client(api, { apiKey: 'wrong' })
        .upload({ data: png, mediaType: 'image/png', filename: 'x.png' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).retryable).toBe(false);
    }
  });

  it("OpenAI Chat Completions has OpenAI's files client (for PDFs), scoped apart from Responses", () => {
    const chat = createProviderFiles({ api: 'openai-chat', apiKey: 'k' });
    const responses = createProviderFiles({ api: 'openai-responses', apiKey: 'k' });
    expect(chat?.api).toBe('openai-chat');
    expect(chat?.baseUrl).toBe(responses?.baseUrl);
    expect(chat?.account).toBe(responses?.account);
  });
});

describe('delete', () => {
  it.each(APIS)('%s: deletes the file; a second delete (already gone) resolves too', async (api) => {
    const c = client(api);
    const up = await c.upload({ data: png, mediaType: 'image/png', filename: 'x.png' });
    await c.delete(up.id);
    expect(files.files.has(up.id)).toBe(false);
    expect(files.deletes).toContain(up.id);
    await expect(c.delete(up.id)).resolves.toBeUndefined();
  });

  it('refuses an id that is not an id before any request', async () => {
    await expect(client('anthropic-messages').delete('../../v1/messages')).rejects.toThrow(/not an id/);
    await expect(client('gemini').delete('files/../../x')).rejects.toThrow(/not an id/);
  });
});

describe('the account fingerprint', () => {
  it('differs per key, is stable, never holds the key, and is `none` without one', () => {
    const a = client('anthropic-messages', { apiKey: 'sk-ant-secret-one' });
    const b = client('anthropic-messages', { apiKey: 'sk-ant-secret-two' });
    expect(a.account).toMatch(/^[0-9a-f]{16}$/);
    expect(a.account).not.toBe(b.account);
    expect(client('anthropic-messages', { apiKey: 'sk-ant-secret-one' }).account).toBe(a.account);
    expect(JSON.stringify(a)).not.toContain('secret');
    expect(accountOf({ 'content-type': 'x' })).toBe('none');
    expect(accountOf({ Authorization: 'Bearer a' })).not.toBe(accountOf({ Authorization: 'Bearer b' }));
  });
});

describe('a hostile Files API: every failure is a clear error, in bounded time', () => {
  const upload = (api: FilesApi, timeoutMs = 5000) =>
    client(api, { timeoutMs })
      .upload({ data: png, mediaType: 'image/png', filename: 'x.png' })
      .catch((e: unknown) => e);

  it.each(APIS)('%s: garbage instead of JSON', async (api) => {
    files.misbehave({ kind: 'garbage' });
    const err = await upload(api);
    expect(err).toBeInstanceOf(ProviderError);
    expect(String((err as Error).message)).toMatch(/not JSON/);
    expect((err as ProviderError).retryable).toBe(false);
  });

  it.each(APIS)('%s: a 4 MiB answer is cut at 64 KiB', async (api) => {
    files.misbehave({ kind: 'huge' });
    const t0 = Date.now();
    const err = await upload(api);
    expect(String((err as Error).message)).toMatch(/larger than 65536 bytes/);
    expect(Date.now() - t0).toBeLessThan(4000);
  });

  it.each(APIS)('%s: a body that never ends is cut, not waited for', async (api) => {
    files.misbehave({ kind: 'endless' });
    const err = await upload(api);
    expect(String((err as Error).message)).toMatch(/larger than 65536 bytes/);
  });

  it.each(APIS)('%s: a server that never answers hits the deadline (retryable)', async (api) => {
    files.misbehave({ kind: 'hang' });
    const t0 = Date.now();
    const err = await upload(api, 300);
    expect(err).toBeInstanceOf(ProviderError);
    expect(String((err as Error).message)).toMatch(/timed out after 300 ms/);
    expect((err as ProviderError).retryable).toBe(true);
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it.each(APIS)('%s: a 503 is retryable, a 400 is not', async (api) => {
    files.misbehave({ kind: 'status', status: 503, message: 'overloaded' });
    expect((await upload(api)) as ProviderError).toMatchObject({ status: 503, retryable: true });
    files.misbehave({ kind: 'status', status: 400, message: 'no' });
    expect((await upload(api)) as ProviderError).toMatchObject({ status: 400, retryable: false });
  });

  it.each(['anthropic-messages', 'openai-responses'] as const)(
    '%s: an id that is not an id is refused',
    async (api) => {
      files.misbehave({ kind: 'bad-id' });
      expect(String(((await upload(api)) as Error).message)).toMatch(/is not an id/);
    },
  );

  it('Gemini: an upload URL on another origin is refused (the key is never sent there)', async () => {
    files.misbehave({ kind: 'foreign-upload-url' });
    expect(String(((await upload('gemini')) as Error).message)).toMatch(/another origin/);
  });

  it.each(APIS)('%s: aborted mid-upload, it rejects with ERR_ABORTED at once', async (api) => {
    files.misbehave({ kind: 'hang' });
    const ctl = new AbortController();
    const pending = client(api, { timeoutMs: 30_000 })
      .upload({ data: png, mediaType: 'image/png', filename: 'x.png' }, { signal: ctl.signal })
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    ctl.abort();
    const err = await pending;
    expect(isPantoError(err, 'ERR_ABORTED')).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
