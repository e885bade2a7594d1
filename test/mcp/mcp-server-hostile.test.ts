/**
 * A hostile client against `createMcpServer` / `serveMcpStdio`, in process: real fengari Lua tools, the official SDK
 * client, in-memory or stream transports. (Spawned processes and real HTTP: test/mcp/e2e/hostile-client-*.e2e.ts.)
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/lua-tool-source.js';
import { createMcpServer, type McpServerOptions } from '../../src/mcp/mcp-server.js';
import { serveMcpStdio } from '../../src/mcp/mcp-stdio-server.js';
import { defineTool } from '../../src/tool.js';
import { StaticToolSource } from '../../src/tool-source.js';

const LUA = fileURLToPath(new URL('../fixtures/mcp/lua/', import.meta.url));
const SIMPLE_TEXT = [{ type: 'text', text: 'This is a simple text response for testing.' }];

let source: LuaToolSource;
beforeAll(async () => {
  source = await LuaToolSource.fromDir(LUA, { includeBuiltins: false });
});
afterAll(() => source?.close());

async function connect(options: McpServerOptions = {}): Promise<Client> {
  const server = createMcpServer(source, options);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'hostile', version: '1' });
  await client.connect(clientSide);
  return client;
}

/** A `tools/call` with raw params, past the SDK client's typing. */
const rawCall = (client: Client, params: unknown) =>
  client.request({ method: 'tools/call', params: params as { name: string } }, CallToolResultSchema);

describe('tools/call with params a hostile client makes up', () => {
  it('arguments that are not an object, or a name that is not a string: -32602 naming the field, not -32603', async () => {
    const client = await connect();
    try {
      for (const params of [
        { name: 'test_simple_text', arguments: [1, 2] },
        { name: 'test_simple_text', arguments: 'x' },
        { name: { toString: 'x' } },
      ]) {
        const err = await rawCall(client, params).then(
          () => undefined,
          (e: unknown) => e as { code: number; message: string },
        );
        expect(err?.code).toBe(-32602);
        expect(err?.message).toMatch(/Invalid tools\/call request.*(arguments|name)/s);
      }
      expect((await rawCall(client, { name: 'test_simple_text', arguments: {} })).content).toEqual(
        SIMPLE_TEXT,
      );
    } finally {
      await client.close();
    }
  });

  it('a __proto__ key never supplies a required argument: the call is refused before Lua runs', async () => {
    const client = await connect();
    try {
      const args = JSON.parse('{"__proto__":{"steps":5}}') as Record<string, unknown>;
      const res = (await client.callTool({ name: 'slow_steps', arguments: args })) as CallToolResult;
      expect(res.isError).toBe(true);
      expect(JSON.stringify(res.content)).toContain("missing required property 'steps'");
    } finally {
      await client.close();
    }
  });

  it('calls beyond maxPendingCalls get an isError result at once instead of queueing', async () => {
    const client = await connect({ maxPendingCalls: 2 });
    const ac = new AbortController();
    try {
      const slow = [1, 2].map(() =>
        client
          .callTool({ name: 'slow_steps', arguments: { steps: 100_000_000 } }, undefined, {
            signal: ac.signal,
          })
          .catch((e: unknown) => e),
      );
      // Requests are handled in the order they arrive: the third call finds the two slow ones in flight.
      const refused = (await client.callTool({ name: 'test_simple_text', arguments: {} })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('too many tool calls in flight (2)');
      ac.abort();
      await Promise.all(slow);
      // Once they ended, the server serves again.
      await expect
        .poll(async () => ((await client.callTool({ name: 'test_simple_text' })) as CallToolResult).content)
        .toEqual(SIMPLE_TEXT);
    } finally {
      await client.close();
    }
  });

  it('a progress notification whose send never settles does not hold the call once it is cancelled', async () => {
    const server = createMcpServer(source, { maxPendingCalls: 1 });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    // A transport stuck on progress (as stdio waiting for a drain that never comes): the send never settles.
    const send = serverSide.send.bind(serverSide);
    let progressSends = 0;
    serverSide.send = (message, opts) => {
      if (!('method' in message && message.method === 'notifications/progress')) return send(message, opts);
      progressSends++;
      return new Promise<void>(() => {});
    };
    await server.connect(serverSide);
    const client = new Client({ name: 'hostile', version: '1' });
    await client.connect(clientSide);
    const ac = new AbortController();
    try {
      const stuck = client
        .callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
          signal: ac.signal,
          onprogress: () => {},
        })
        .catch((e: unknown) => e);
      await expect.poll(() => progressSends).toBe(1);
      // The only slot is held while the call waits for its progress to go out.
      await expect
        .poll(async () => JSON.stringify((await client.callTool({ name: 'test_simple_text' })).content))
        .toContain('too many tool calls in flight (1)');
      ac.abort();
      await stuck;
      // Cancelled, it gives its slot back although that send never settles.
      await expect
        .poll(async () => ((await client.callTool({ name: 'test_simple_text' })) as CallToolResult).content, {
          timeout: 3_000,
        })
        .toEqual(SIMPLE_TEXT);
    } finally {
      await client.close();
    }
  });

  it('a request id reused while its call runs: the running call is aborted and the new one refused', async () => {
    const server = createMcpServer(source);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    const received: JSONRPCMessage[] = [];
    clientSide.onmessage = (m) => received.push(m);
    await server.connect(serverSide);
    await clientSide.start();
    const send = (m: unknown) => clientSide.send(m as JSONRPCMessage);
    await send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const slow = { name: 'slow_steps', arguments: { steps: 100_000_000 } };
    await send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: slow });
    await send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: slow });
    const answersTo5 = () => received.filter((m) => 'id' in m && m.id === 5);
    // Both end long before the 30 s wall clock of the first call.
    await expect.poll(() => answersTo5().length, { timeout: 5_000 }).toBe(2);
    const [refused, aborted] = answersTo5() as Array<{ error?: { code: number }; result?: CallToolResult }>;
    expect(refused?.error?.code).toBe(-32600);
    expect(aborted?.result?.isError).toBe(true);
    // The connection still serves.
    await send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'test_simple_text' } });
    await expect
      .poll(
        () => (received.find((m) => 'id' in m && m.id === 6) as { result?: CallToolResult })?.result?.content,
      )
      .toEqual(SIMPLE_TEXT);
    await server.close();
  }, 10_000);

  it('a host ToolSource result over maxResultBytes becomes a readable isError result; one within it is sent', async () => {
    const big = defineTool({
      name: 'big',
      description: 'returns n characters',
      inputSchema: {
        type: 'object',
        properties: { n: { type: 'integer' }, nl: { type: 'boolean' } },
        required: ['n'],
      },
      invoke: ({ n, nl }) => (nl ? '\n' : 'é').repeat(n as number),
    });
    const server = createMcpServer(new StaticToolSource([big]), { maxResultBytes: 1000 });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'hostile', version: '1' });
    await client.connect(clientSide);
    try {
      // Counted: the result's JSON ({"content":[{"type":"text","text":…}]}, 39 bytes around the text) plus 256 bytes
      // of envelope. 'é' is 2 bytes of UTF-8: 353 of them (353 characters) make 706 + 39 + 256 = 1001 bytes.
      const over = (await client.callTool({ name: 'big', arguments: { n: 353 } })) as CallToolResult;
      expect(over.isError).toBe(true);
      expect(over.content).toEqual([
        {
          type: 'text',
          text: 'the result of big was not sent: it is 1001 bytes of JSON-RPC, over maxResultBytes (1000)',
        },
      ]);
      const within = (await client.callTool({ name: 'big', arguments: { n: 352 } })) as CallToolResult;
      expect(within.isError).toBeUndefined();
      expect(within.content).toEqual([{ type: 'text', text: 'é'.repeat(352) }]);
      // 400 newlines are 400 bytes of text but 800 once JSON-escaped: over the cap as sent.
      const escaped = (await client.callTool({
        name: 'big',
        arguments: { n: 400, nl: true },
      })) as CallToolResult;
      expect(escaped.isError).toBe(true);
    } finally {
      await client.close();
    }
    expect(() => createMcpServer(source, { maxResultBytes: 0 })).toThrow(
      'createMcpServer: maxResultBytes must be a positive integer, got 0',
    );
  });

  it('maxPendingCalls and maxMessageBytes must be positive integers (one shared check, same message)', async () => {
    for (const maxPendingCalls of [0, 1.5, Number.NaN]) {
      expect(() => createMcpServer(source, { maxPendingCalls })).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_ARGUMENT',
          message: `createMcpServer: maxPendingCalls must be a positive integer, got ${maxPendingCalls}`,
        }),
      );
    }
    await expect(
      serveMcpStdio(source, { stdin: new PassThrough(), stdout: new PassThrough(), maxMessageBytes: -1 }),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'serveMcpStdio: maxMessageBytes must be a positive integer, got -1',
    });
  });
});

describe('serveMcpStdio against a client that misbehaves on the pipe', () => {
  const line = (id: number, method = 'tools/list') => `${JSON.stringify({ jsonrpc: '2.0', id, method })}\n`;
  const init = `${JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  })}\n`;

  /** A stdout whose reader is stuck: each write completes only when the test calls its callback in `held`. */
  const stuckStdout = () => {
    const held: Array<() => void> = [];
    const written: string[] = [];
    const stdout = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk.toString());
        held.push(cb);
      },
    });
    return { stdout, held, written };
  };

  it('a line that is JSON but not JSON-RPC gets -32600 (its id if usable, else null), one that is not JSON -32700; traffic goes on', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out: Array<{ id?: unknown; error?: { code: number; message: string }; result?: unknown }> = [];
    let rest = '';
    stdout.on('data', (c: Buffer) => {
      const parts = (rest + c.toString()).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) out.push(JSON.parse(p));
    });
    const server = await serveMcpStdio(source, { stdin, stdout });
    try {
      stdin.write(init);
      for (const bad of [
        '[]',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        // Found by test/fuzz/fuzz-mcp.mjs (seed 1, case 1), shrunk: the sender of id 7 waited for ever.
        '{"jsonrpc":"1.0","id":7,"method":"ping"}',
        '42',
        '{"jsonrpc":"2.0","id":8,"method":"ping"',
      ]) {
        stdin.write(`${bad}\n`);
      }
      stdin.write(line(9));
      await expect.poll(() => out.some((m) => m.id === 9)).toBe(true);
      const errors = out.filter((m) => m.error !== undefined);
      // A wrong "jsonrpc" with a usable id and method: answered with that id, so its sender stops waiting.
      expect(errors.map((m) => [m.id, m.error?.code])).toEqual([
        [null, -32600],
        [null, -32600],
        [7, -32600],
        [null, -32600],
        [null, -32700],
      ]);
      expect(errors[0]?.error?.message).toMatch(
        /^Invalid Request: the line is JSON but not a JSON-RPC message/,
      );
      expect(out.find((m) => m.id === 9)?.result).toHaveProperty('tools');
    } finally {
      await server.close();
    }
  });

  it('an invalid line reusing the id of a running call is answered with id null (one response per id); its error is one short line', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out: Array<{ id?: unknown; error?: { code: number; message: string }; result?: CallToolResult }> =
      [];
    let rest = '';
    stdout.on('data', (c: Buffer) => {
      const parts = (rest + c.toString()).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) out.push(JSON.parse(p));
    });
    const server = await serveMcpStdio(source, { stdin, stdout });
    try {
      stdin.write(init);
      const slow = { name: 'slow_steps', arguments: { steps: 100_000_000 } };
      stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: slow })}\n{"jsonrpc":"1.0","id":5,"method":"ping"}\n`,
      );
      await expect.poll(() => out.some((m) => m.error?.code === -32600)).toBe(true);
      const invalid = out.find((m) => m.error?.code === -32600);
      expect(invalid?.id).toBeNull();
      expect(invalid?.error?.message).not.toContain('\n');
      expect(invalid?.error?.message.length).toBeLessThan(200);
      stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } })}\n`,
      );
      stdin.write(line(9));
      await expect.poll(() => out.some((m) => m.id === 9)).toBe(true);
      expect(out.filter((m) => m.id === 5)).toHaveLength(0);
    } finally {
      await server.close();
    }
  }, 10_000);

  it('a client that does not read: requests stop being read while stdout is backed up, and all are answered later', async () => {
    const stdin = new PassThrough();
    const { stdout, held, written } = stuckStdout();
    const server = await serveMcpStdio(source, { stdin, stdout });
    try {
      stdin.write(init);
      // One line per read, as from a pipe (a single chunk is always read whole).
      for (let i = 1; i <= 300; i++) {
        stdin.write(line(i));
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Every response is KiBs: the server read a few requests, then stopped reading; what waits in its stdout buffer
      // is a few responses, not 300.
      expect(stdin.readableLength).toBeGreaterThan(0);
      expect(stdout.writableLength).toBeLessThan(64 * 1024);
      // The client starts reading: everything gets answered.
      const answered = () => written.filter((w) => w.includes('"tools"')).length;
      for (let round = 0; round < 10_000 && answered() < 300; round++) {
        for (const cb of held.splice(0)) cb();
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(answered()).toBe(300);
    } finally {
      for (const cb of held.splice(0)) cb();
      await server.close();
    }
  });

  it('a Lua tool flooding panto.progress to a client that does not read: queued progress stays bounded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'panto-mcp-flood-'));
    await writeFile(
      join(dir, 'flood.lua'),
      `return { name = "flood", description = "progress flood", parameters = { type = "object" },
        handler = function() for i = 1, 10000 do panto.progress("step " .. i, i / 10000) end return "flooded" end }`,
    );
    const settled: string[] = [];
    const lua = await LuaToolSource.fromDir(dir, { includeBuiltins: false });
    const recording = {
      name: 'recording',
      list: () => lua.list(),
      call: async (...args: Parameters<LuaToolSource['call']>) => {
        const r = await lua.call(...args);
        settled.push(args[0]);
        return r;
      },
    };
    const stdin = new PassThrough();
    const { stdout, held, written } = stuckStdout();
    const server = await serveMcpStdio(recording, { stdin, stdout });
    try {
      stdin.write(init);
      stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', _meta: { progressToken: 't' } } })}\n`,
      );
      await expect.poll(() => settled.length, { timeout: 10_000 }).toBe(1);
      // 10k notifications were made while stdout was stuck: only what fits its buffer plus the bounded queue is held.
      expect(stdout.writableLength).toBeLessThan(64 * 1024);
      for (let round = 0; round < 10_000 && !written.some((w) => w.includes('flooded')); round++) {
        for (const cb of held.splice(0)) cb();
        await new Promise((resolve) => setImmediate(resolve));
      }
      const values = written
        .join('')
        .split('\n')
        .filter((l) => l.includes('notifications/progress'))
        .map((l) => (JSON.parse(l) as { params: { progress: number } }).params.progress);
      expect(values.length).toBeGreaterThan(0);
      expect(values.every((v, i) => i === 0 || v > (values[i - 1] ?? 0))).toBe(true);
      expect(values.at(-1)).toBe(100);
    } finally {
      for (const cb of held.splice(0)) cb();
      await server.close();
      lua.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 20_000);

  it('sessions served one after another on the same stdout add one error listener to it, not one each', async () => {
    const stdout = new PassThrough();
    stdout.resume();
    const before = stdout.listenerCount('error');
    for (let i = 0; i < 12; i++) {
      const stdin = new PassThrough();
      const server = await serveMcpStdio(source, { stdin, stdout });
      stdin.end();
      await server.closed;
    }
    expect(stdout.listenerCount('error')).toBe(before + 1);
    // A failure now ends the session that is open, and throws nothing.
    const stdin = new PassThrough();
    const server = await serveMcpStdio(source, { stdin, stdout });
    stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await server.closed;
  });

  it('stdout failing (EPIPE: the client went away) ends the session instead of throwing an uncaught error', async () => {
    const stdin = new PassThrough();
    const stdout = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const server = await serveMcpStdio(source, { stdin, stdout });
    stdin.write(init);
    await server.closed;
    expect(stdout.destroyed).toBe(true);
  }, 10_000);
});
