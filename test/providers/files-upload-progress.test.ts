/**
 * Byte-level upload progress (`FilesCallOptions.onProgress`): the bytes of the request body as it is written, for a
 * host's progress bar on a 30 MB PDF. Against the loopback Files APIs (what the server received is what was
 * reported), and against a server that stops reading mid-body: the progress stops there too — it follows the socket,
 * not a buffer filled ahead — and reaches the total once the server reads on.
 */

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { createProviderFiles } from '../../src/providers/files/provider-files.js';
import { bytesBody, multipartBody, UPLOAD_CHUNK_BYTES } from '../../src/providers/files/upload-body.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { parseMultipart, startFilesServer } from '../helpers/fake-files-api.js';

const { server, files } = await startFilesServer();
afterAll(() => server.close());

type Step = { sent: number; total: number };

function client(api: ModelApi, baseUrl: string) {
  const made = createProviderFiles({ api, baseUrl, apiKey: 'test-key', timeoutMs: 30_000, pollMs: 5 });
  if (made === undefined) throw new Error(`no files client for ${api}`);
  return made;
}

/** Progress steps are strictly increasing, of one total, the last equal to it. */
function checkSteps(steps: Step[]): number {
  expect(steps.length).toBeGreaterThan(0);
  const total = steps[0]?.total as number;
  let last = 0;
  for (const s of steps) {
    expect(s.total).toBe(total);
    expect(s.sent).toBeGreaterThan(last);
    expect(s.sent - last).toBeLessThanOrEqual(UPLOAD_CHUNK_BYTES);
    last = s.sent;
  }
  expect(last).toBe(total);
  return total;
}

describe('upload progress: bytes of the body as it is written', () => {
  const data = randomBytes(3 * 1024 * 1024 + 123);

  it.each(['anthropic-messages', 'openai-chat', 'openai-responses'] as const)(
    '%s: a 3 MB multipart body reported chunk by chunk; the total is what the server received',
    async (api) => {
      const steps: Step[] = [];
      const before = files.uploadBytes;
      const up = await client(api, server.baseUrl(api)).upload(
        { data, mediaType: 'application/pdf', filename: 'big.pdf' },
        { onProgress: (sent, total) => steps.push({ sent, total }) },
      );
      const total = checkSteps(steps);
      expect(total).toBe(files.uploadBytes - before);
      expect(total).toBeGreaterThan(data.length);
      expect(steps.length).toBeGreaterThanOrEqual(Math.ceil(data.length / UPLOAD_CHUNK_BYTES));
      expect(files.files.get(up.id)?.data.equals(data)).toBe(true);
    },
  );

  it('gemini: the raw bytes of the upload-finalize step, exactly the file', async () => {
    const steps: Step[] = [];
    const up = await client('gemini', server.baseUrl('gemini')).upload(
      { data, mediaType: 'image/png', filename: 'big.png' },
      { onProgress: (sent, total) => steps.push({ sent, total }) },
    );
    expect(checkSteps(steps)).toBe(data.length);
    expect(files.files.get(up.id)?.data.equals(data)).toBe(true);
  });

  it('a listener that throws does not break the upload', async () => {
    const up = await client('anthropic-messages', server.baseUrl('anthropic-messages')).upload(
      { data: data.subarray(0, 1000), mediaType: 'image/png', filename: 'x.png' },
      {
        onProgress: () => {
          throw new Error('bad listener');
        },
      },
    );
    expect(files.files.get(up.id)?.data.length).toBe(1000);
  });
});

describe('upload progress follows the socket', () => {
  it('a 32 MB upload to a server that stops reading: progress stalls below the total, then completes', async () => {
    const big = randomBytes(32 * 1024 * 1024);
    let paused: { req: IncomingMessage; res: ServerResponse } | undefined;
    let gotRequest: () => void = () => {};
    const requested = new Promise<void>((resolve) => {
      gotRequest = resolve;
    });
    const slow = createServer((req, res) => {
      req.pause();
      paused = { req, res };
      gotRequest();
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const port = (slow.address() as AddressInfo).port;
      const steps: Step[] = [];
      const upload = client('openai-responses', `http://127.0.0.1:${port}/v1`).upload(
        { data: big, mediaType: 'application/pdf', filename: 'huge.pdf' },
        { onProgress: (sent, total) => steps.push({ sent, total }) },
      );
      await requested;
      // Let the client fill whatever the socket buffers hold; it must then wait for the server.
      let seen = -1;
      while (seen !== steps.length) {
        seen = steps.length;
        await new Promise((r) => setTimeout(r, 200));
      }
      const stalled = steps.at(-1)?.sent ?? 0;
      expect(stalled).toBeLessThan(big.length);
      const { req, res } = paused as { req: IncomingMessage; res: ServerResponse };
      expect(Number(req.headers['content-length'])).toBe(steps[0]?.total);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const file = parseMultipart(req, body).find((p) => p.name === 'file');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'file-slow', object: 'file', bytes: file?.data.length }));
      });
      req.resume();
      const up = await upload;
      expect(up).toMatchObject({ id: 'file-slow', bytes: big.length });
      checkSteps(steps);
      expect(steps.at(-1)?.sent).toBe(Buffer.concat(chunks).length);
    } finally {
      paused?.res.destroy();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });
});

describe('a server that never reads the body', () => {
  it('the deadline ends the upload mid-body (retryable), an abort ends it at once; the process is unharmed', async () => {
    const big = randomBytes(24 * 1024 * 1024);
    const held: ServerResponse[] = [];
    const stuck = createServer((req, res) => {
      req.pause();
      held.push(res);
    });
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}`;
      const files = createProviderFiles({ api: 'anthropic-messages', baseUrl, apiKey: 'k', timeoutMs: 500 });
      const steps: Step[] = [];
      const t0 = Date.now();
      const err = await files
        ?.upload(
          { data: big, mediaType: 'application/pdf', filename: 'x.pdf' },
          { onProgress: (sent, total) => steps.push({ sent, total }) },
        )
        .catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).retryable).toBe(true);
      expect((err as ProviderError).message).toMatch(/timed out after 500 ms/);
      expect(steps.at(-1)?.sent ?? 0).toBeLessThan(big.length);

      const controller = new AbortController();
      const patient = createProviderFiles({
        api: 'openai-responses',
        baseUrl,
        apiKey: 'k',
        timeoutMs: 30_000,
      });
      const midBody: Step[] = [];
      const pending = patient
        ?.upload(
          { data: big, mediaType: 'application/pdf', filename: 'x.pdf' },
          { signal: controller.signal, onProgress: (sent, total) => midBody.push({ sent, total }) },
        )
        .catch((e: unknown) => e);
      while (midBody.length === 0) await new Promise((r) => setTimeout(r, 20));
      const t1 = Date.now();
      controller.abort();
      const aborted = await pending;
      expect(Date.now() - t1).toBeLessThan(5000);
      expect(midBody.at(-1)?.sent ?? 0).toBeLessThan(big.length);
      expect(isPantoError(aborted, 'ERR_ABORTED')).toBe(true);
    } finally {
      for (const r of held) r.destroy();
      stuck.closeAllConnections();
      await new Promise<void>((resolve) => stuck.close(() => resolve()));
    }
  });
});

describe('upload bodies', () => {
  it('multipartBody: parses back to its fields and file; quotes and line breaks in names are encoded', async () => {
    const data = randomBytes(700_000);
    const b = multipartBody([['purpose', 'user_data']], {
      field: 'file',
      filename: 'a"b\r\nc.pdf',
      mediaType: 'application/pdf',
      data,
    });
    const body = Buffer.from(await new Response(b.body).arrayBuffer());
    expect(body.length).toBe(b.length);
    expect(b.headers['content-length']).toBe(String(b.length));
    const parts = parseMultipart(
      { headers: { 'content-type': b.headers['content-type'] } } as unknown as IncomingMessage,
      body,
    );
    expect(parts.map((p) => p.name)).toEqual(['purpose', 'file']);
    expect(parts[0]?.data.toString()).toBe('user_data');
    expect(parts[1]?.filename).toBe('a%22b%0D%0Ac.pdf');
    expect(parts[1]?.type).toBe('application/pdf');
    expect(parts[1]?.data.equals(data)).toBe(true);
  });

  it('bytesBody: the bytes as they are, chunked views of the caller buffer', async () => {
    const data = randomBytes(UPLOAD_CHUNK_BYTES * 2 + 5);
    const b = bytesBody(data, 'image/png');
    const reader = b.body.getReader();
    const sizes: number[] = [];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      expect(next.value.buffer).toBe(data.buffer);
      sizes.push(next.value.length);
    }
    expect(sizes).toEqual([UPLOAD_CHUNK_BYTES, UPLOAD_CHUNK_BYTES, 5]);
    expect(b.headers).toEqual({ 'content-type': 'image/png', 'content-length': String(data.length) });
  });
});
