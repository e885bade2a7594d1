/**
 * Our own stdio transports (the SDK's public `Transport` interface, none of its internals) keep the two fixes the
 * SDK's own transports lack: framing in linear time, and progress read in the same chunk as its call's response still
 * reaching the host. Each test fails if the fix is lost (the SDK's `ReadBuffer` concatenates the whole pending buffer on
 * every chunk; its client settles a response before the notifications read with it are handled).
 */

import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineBuffer } from '../../src/mcp/line-buffer.js';
import { McpConnection } from '../../src/mcp/mcp-connection.js';
import { serveMcpStdio } from '../../src/mcp/mcp-stdio-server.js';
import { OrderedTransport } from '../../src/mcp/ordered-transport.js';
import { defineTool } from '../../src/tool.js';
import { StaticToolSource } from '../../src/tool-source.js';

const ONE_WRITE = fileURLToPath(new URL('../fixtures/mcp/one-write-server.mjs', import.meta.url));

function connection(): McpConnection {
  return new McpConnection(
    'w',
    { type: 'stdio', command: process.execPath, args: [ONE_WRITE] },
    {
      initTimeoutMs: 20_000,
      callTimeoutMs: 20_000,
      maxCallTimeMs: 20_000,
      maxMessageBytes: 64 * 1024 * 1024,
      log: () => {},
      onToolsChanged: () => {},
      clientInfo: { name: 'test', version: '1' },
    },
  );
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('stdio framing is linear', () => {
  it('LineBuffer joins a message once, however many chunks it came in', () => {
    const concat = vi.spyOn(Buffer, 'concat');
    const buf = new LineBuffer(64 * 1024 * 1024);
    buf.append(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"x":"'));
    for (let i = 0; i < 2000; i++) buf.append(Buffer.alloc(1024, 0x41));
    buf.append(Buffer.from('"}}\n'));
    expect(concat).toHaveBeenCalledTimes(1);
    expect((buf.readMessage() as unknown as { result: { x: string } }).result.x).toHaveLength(2000 * 1024);
  });

  it('client: an 8 MiB response written in 4 KiB pieces is joined once, never by the SDK ReadBuffer', {
    timeout: 30_000,
  }, async () => {
    const conn = connection();
    try {
      await conn.start();
      const sdkAppend = vi.spyOn(ReadBuffer.prototype, 'append');
      const concat = vi.spyOn(Buffer, 'concat');
      const res = await conn.callTool('big', { mb: 8 }, new AbortController().signal, () => {});
      const text = (res.content[0] as { text: string }).text;
      expect(text).toHaveLength(8 * 1024 * 1024);
      // Quadratic framing joins on every read (hundreds here); linear framing once per message.
      expect(concat.mock.calls.length).toBeLessThan(10);
      expect(sdkAppend).not.toHaveBeenCalled();
    } finally {
      await conn.close();
    }
  });

  it('server: a 4 MiB request line arriving in 1000 chunks is joined once', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const echo = defineTool({
      name: 'len',
      description: 'length of s',
      inputSchema: { type: 'object', properties: { s: { type: 'string' } } },
      invoke: (args) => `${String(args.s).length}`,
    });
    const server = await serveMcpStdio(new StaticToolSource([echo]), { stdin, stdout });
    const lines: string[] = [];
    let pending = '';
    stdout.on('data', (c: Buffer) => {
      pending += c.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts);
    });
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    stdin.write(`${JSON.stringify(init)}\n`);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await vi.waitFor(() => expect(lines.length).toBe(1));
    const sdkAppend = vi.spyOn(ReadBuffer.prototype, 'append');
    const concat = vi.spyOn(Buffer, 'concat');
    const s = 'y'.repeat(4 * 1024 * 1024);
    const bytes = Buffer.from(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'len', arguments: { s } } })}\n`,
    );
    const step = Math.ceil(bytes.length / 1000);
    for (let i = 0; i < bytes.length; i += step) {
      stdin.write(bytes.subarray(i, i + step));
      await new Promise((r) => setImmediate(r));
    }
    await vi.waitFor(() => expect(lines.length).toBe(2), { timeout: 10_000 });
    expect(JSON.parse(lines[1] as string).result.content).toEqual([{ type: 'text', text: `${s.length}` }]);
    expect(concat.mock.calls.length).toBeLessThan(10);
    expect(sdkAppend).not.toHaveBeenCalled();
    await server.close();
  });
});

describe('progress read with its call response', () => {
  it('two progress notifications and the response in one write: both reach the host, before the result', {
    timeout: 30_000,
  }, async () => {
    const conn = connection();
    try {
      await conn.start();
      for (let round = 0; round < 5; round++) {
        const seen: string[] = [];
        const res = await conn.callTool('progress_then_result', {}, new AbortController().signal, (p) =>
          seen.push(`${p.progress}/${p.total} ${p.message}`),
        );
        seen.push((res.content[0] as { text: string }).text);
        expect(seen).toEqual(['1/2 half', '2/2 all', 'done']);
      }
    } finally {
      await conn.close();
    }
  });

  it('OrderedTransport delivers in wire order; a response after a notification of the same turn waits one macrotask', async () => {
    const inner = {
      onmessage: undefined as ((m: unknown) => void) | undefined,
      onclose: undefined as (() => void) | undefined,
      onerror: undefined as ((e: Error) => void) | undefined,
      start: async () => {},
      send: async () => {},
      close: async () => {
        inner.onclose?.();
      },
    };
    const t = new OrderedTransport(inner as never);
    const got: string[] = [];
    t.onmessage = (m) => {
      const msg = m as { id?: number; method?: string };
      got.push(msg.method ?? `response ${msg.id}`);
      // What the SDK client does with a notification: handle it a microtask later.
      if (msg.method) queueMicrotask(() => got.push(`handled ${msg.method}`));
    };
    await t.start();
    inner.onmessage?.({ jsonrpc: '2.0', method: 'notifications/progress', params: {} });
    inner.onmessage?.({ jsonrpc: '2.0', id: 1, result: {} });
    inner.onmessage?.({ jsonrpc: '2.0', method: 'notifications/message', params: {} });
    expect(got).toEqual(['notifications/progress']);
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([
      'notifications/progress',
      'handled notifications/progress',
      'response 1',
      'notifications/message',
      'handled notifications/message',
    ]);
    // A close delivers what still waits, then closes.
    inner.onmessage?.({ jsonrpc: '2.0', method: 'notifications/progress', params: {} });
    inner.onmessage?.({ jsonrpc: '2.0', id: 2, result: {} });
    let closed = false;
    t.onclose = () => {
      closed = true;
    };
    await t.close();
    expect(got).toContain('response 2');
    expect(closed).toBe(true);
  });
});
