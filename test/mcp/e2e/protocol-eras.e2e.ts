/**
 * Protocol versions × transports × directions (docs/mcp.md "Compatibility"): each cell here, with the version
 * actually negotiated asserted. Server side: `panto mcp serve` (stdio, a child process) and `serveMcpHttp` against
 * the official SDK v1 client (2025-11-25) and the SDK v2 client (2025-11-25 in its default legacy mode, 2026-07-28 when
 * it negotiates). Client side: `McpToolSource` against an SDK v2 server (both eras; test/fixtures/mcp/v2-server.mjs)
 * and our own server. (The 2025-only reference servers: client-everything.e2e.ts, client-filesystem.e2e.ts.) And the
 * stateless HTTP server answering one client from two server processes behind a round-robin proxy.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../../src/lua/lua-tool-source.js';
import { type McpHttpServer, serveMcpHttp } from '../../../src/mcp/mcp-http-server.js';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { OrderedTransport } from '../../../src/mcp/ordered-transport.js';
import { dispatchToolCalls } from '../../../src/tools/dispatch.js';
import { LUA_TOOLS, PANTO_CLI, V2_SERVER } from './servers.js';

const SIMPLE = [{ type: 'text', text: 'This is a simple text response for testing.' }];
const PANTO_STDIO = { command: process.execPath, args: [PANTO_CLI, 'mcp', 'serve', '--tools', LUA_TOOLS] };
const modern = { versionNegotiation: { mode: 'auto' as const } };

let lua: LuaToolSource;
let http: McpHttpServer;
const auth = () => ({ authorization: `Bearer ${http.authToken}` });
beforeAll(async () => {
  lua = await LuaToolSource.fromDir(LUA_TOOLS, { includeBuiltins: false });
  http = await serveMcpHttp(lua);
});
afterAll(async () => {
  await http?.close();
  await lua?.close();
});

/** Start `node v2-server.mjs --http`; its URL once it listens. */
async function v2Http(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [V2_SERVER, '--http'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`v2 server did not start: ${err}`)), 30_000);
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening (\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
  });
  return { child, url };
}

describe('panto mcp serve over stdio', () => {
  it('2025-11-25: the SDK v1 client, and the v2 client in its default (legacy) mode', async () => {
    const v1 = new V1Client({ name: 'v1', version: '1' });
    await v1.connect(new V1StdioClientTransport({ ...PANTO_STDIO, stderr: 'ignore' }));
    try {
      expect((await v1.callTool({ name: 'test_simple_text', arguments: {} })).content).toEqual(SIMPLE);
    } finally {
      await v1.close();
    }
    const v2 = new Client({ name: 'v2-legacy', version: '1' });
    await v2.connect(new StdioClientTransport({ ...PANTO_STDIO, stderr: 'ignore' }));
    try {
      expect(v2.getProtocolEra()).toBe('legacy');
      expect(v2.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect((await v2.callTool({ name: 'test_simple_text', arguments: {} })).content).toEqual(SIMPLE);
    } finally {
      await v2.close();
    }
  });

  it('2026-07-28: the v2 client negotiates it; lists with a cache hint, calls with progress', async () => {
    const v2 = new Client({ name: 'v2-modern', version: '1' }, modern);
    // The bare SDK client drops a progress notification read in the same chunk as its call's result (it handles the
    // notification a microtask later): on a loaded machine the last one can be lost however the server paces its
    // writes. OrderedTransport (what McpToolSource uses) removes that race, so this asserts what the server wrote.
    await v2.connect(new OrderedTransport(new StdioClientTransport({ ...PANTO_STDIO, stderr: 'ignore' })));
    try {
      expect(v2.getProtocolEra()).toBe('modern');
      expect(v2.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(v2.getServerVersion()?.name).toBe('libpanto');
      const list = await v2.listTools();
      expect(list.tools.map((t) => t.name)).toContain('test_tool_with_progress');
      expect(list).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
      const seen: number[] = [];
      const res = await v2.callTool(
        { name: 'test_tool_with_progress', arguments: {} },
        { onprogress: (p) => seen.push(p.progress) },
      );
      expect(res.content).toEqual([{ type: 'text', text: 'Progress complete' }]);
      expect(seen).toEqual([0, 50, 100]);
    } finally {
      await v2.close();
    }
  });
});

describe('serveMcpHttp', () => {
  it('2025-11-25: the SDK v1 client gets a session (Mcp-Session-Id); the v2 legacy client too', async () => {
    const t = new V1HttpTransport(new URL(http.url), { requestInit: { headers: auth() } });
    const v1 = new V1Client({ name: 'v1', version: '1' });
    await v1.connect(t);
    try {
      expect(t.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await v1.callTool({ name: 'test_simple_text', arguments: {} })).content).toEqual(SIMPLE);
    } finally {
      await t.terminateSession();
      await v1.close();
    }
    const v2 = new Client({ name: 'v2-legacy', version: '1' });
    await v2.connect(
      new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: auth() } }),
    );
    try {
      expect(v2.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect((await v2.callTool({ name: 'test_simple_text', arguments: {} })).content).toEqual(SIMPLE);
    } finally {
      await v2.close();
    }
  });

  it('2026-07-28: stateless — no session is opened, every request stands alone; progress still streams', async () => {
    const sessionsBefore = http.sessions;
    const seenHeaders: Array<string | null> = [];
    const v2 = new Client({ name: 'v2-modern', version: '1' }, modern);
    // OrderedTransport: see the stdio case above (SSE events read in one chunk race the same way).
    await v2.connect(
      new OrderedTransport(
        new StreamableHTTPClientTransport(new URL(http.url), {
          requestInit: { headers: auth() },
          fetch: async (url, init) => {
            const res = await fetch(url, init);
            seenHeaders.push(res.headers.get('mcp-session-id'));
            return res;
          },
        }),
      ),
    );
    try {
      expect(v2.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const seen: number[] = [];
      const res = await v2.callTool(
        { name: 'test_tool_with_progress', arguments: {} },
        { onprogress: (p) => seen.push(p.progress) },
      );
      expect(res.content).toEqual([{ type: 'text', text: 'Progress complete' }]);
      expect(seen).toEqual([0, 50, 100]);
      expect(http.sessions).toBe(sessionsBefore);
      expect(seenHeaders.length).toBeGreaterThan(1);
      expect(seenHeaders.every((h) => h === null)).toBe(true);
    } finally {
      await v2.close();
    }
  });

  it('2026-07-28: a request whose headers disagree with its body, or with no envelope, is refused', async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(http.url, {
        method: 'POST',
        headers: {
          ...auth(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { code: number } } }));
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const ok = await post(
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } },
    );
    expect(ok.status).toBe(200);
    const mismatch = await post(
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error?.code).toBe(-32020);
    const future = await post(
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/list',
        params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      },
    );
    expect(future.body.error?.code).toBe(-32022);
  });
});

describe('McpToolSource', () => {
  it('stdio, 2026-07-28: an SDK v2 server and panto mcp serve; structured content, a link read and processed', async () => {
    const source = new McpToolSource({
      v2: { type: 'stdio', command: process.execPath, args: [V2_SERVER] },
      panto: { type: 'stdio', ...PANTO_STDIO },
    });
    try {
      expect(await source.start()).toEqual({ started: ['v2', 'panto'], failed: [] });
      expect(source.protocolVersion('v2')).toBe('2026-07-28');
      expect(source.protocolVersion('panto')).toBe('2026-07-28');
      // Icons reach the host made safe: the javascript: one is left out.
      expect(source.list().find((d) => d.name === 'v2__echo')?.icons).toEqual([
        { src: 'https://example.com/echo.png', mimeType: 'image/png' },
      ]);
      const [measure, picture, simple] = await dispatchToolCalls(
        [
          { type: 'tool_call', id: 'm', name: 'v2__measure', input: { text: 'two words' } },
          { type: 'tool_call', id: 'p', name: 'v2__picture', input: {} },
          { type: 'tool_call', id: 's', name: 'panto__test_simple_text', input: {} },
        ],
        { tools: source },
      );
      expect(measure?.meta?.structuredContent).toEqual({ length: 9, words: 2 });
      // The image and the resource link (read with resources/read): both through the media pipeline.
      expect(picture?.parts.map((p) => `${p.type} ${p.type === 'image' ? p.mediaType : ''}`)).toEqual([
        'image image/png',
        'image image/png',
      ]);
      expect(simple?.parts).toEqual(SIMPLE);
    } finally {
      await source.close();
    }
  });

  it('2025-11-25 when the config says so (no probe): panto mcp serve over stdio and serveMcpHttp', async () => {
    const source = new McpToolSource({
      stdio: { type: 'stdio', ...PANTO_STDIO, protocol: '2025-11-25' },
      http: { type: 'http', url: http.url, headers: auth(), protocol: '2025-11-25' },
    });
    const sessionsBefore = http.sessions;
    try {
      expect(await source.start()).toEqual({ started: ['stdio', 'http'], failed: [] });
      expect(source.protocolVersion('stdio')).toBe('2025-11-25');
      expect(source.protocolVersion('http')).toBe('2025-11-25');
      expect(http.sessions).toBe(sessionsBefore + 1);
      const blocks = await dispatchToolCalls(
        [
          { type: 'tool_call', id: 'a', name: 'stdio__test_simple_text', input: {} },
          { type: 'tool_call', id: 'b', name: 'http__test_simple_text', input: {} },
        ],
        { tools: source },
      );
      expect(blocks.map((b) => b.parts)).toEqual([SIMPLE, SIMPLE]);
    } finally {
      await source.close();
    }
  });

  it('HTTP, 2026-07-28: an SDK v2 server (createMcpHandler) and serveMcpHttp', async () => {
    const v2 = await v2Http();
    const source = new McpToolSource({
      v2: { type: 'http', url: v2.url },
      panto: { type: 'http', url: http.url, headers: auth() },
    });
    try {
      expect(await source.start()).toEqual({ started: ['v2', 'panto'], failed: [] });
      expect(source.protocolVersion('v2')).toBe('2026-07-28');
      expect(source.protocolVersion('panto')).toBe('2026-07-28');
      const updates: unknown[] = [];
      const [echo, simple] = await dispatchToolCalls(
        [
          { type: 'tool_call', id: 'e', name: 'v2__echo', input: { text: 'hi' } },
          { type: 'tool_call', id: 's', name: 'panto__test_simple_text', input: {} },
        ],
        { tools: source, onEvent: (e) => e.type === 'tool_call_update' && updates.push(e.update) },
      );
      expect(echo?.parts).toEqual([{ type: 'text', text: 'echo hi' }]);
      expect(updates).toEqual([
        { completed: 1, total: 2, progress: 0.5 },
        { completed: 2, total: 2, progress: 1 },
      ]);
      expect(simple?.parts).toEqual(SIMPLE);
    } finally {
      await source.close();
      v2.child.kill();
    }
  });
});

describe('one client, two server processes, no shared memory', () => {
  let servers: ChildProcess[] = [];
  let proxy: Server | undefined;
  afterAll(() => {
    for (const s of servers) s.kill();
    proxy?.close();
  });

  it('panto mcp serve --http twice behind a round-robin proxy: every request of one McpToolSource is answered', async () => {
    const token = 'shared-token-of-both-processes-0123';
    const start = () =>
      new Promise<{ child: ChildProcess; port: number }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [PANTO_CLI, 'mcp', 'serve', '--http', '0', '--tools', LUA_TOOLS],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
            env: { ...process.env, PANTO_MCP_TOKEN: token },
          },
        );
        let err = '';
        child.stderr?.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
          if (m) resolve({ child, port: Number(m[1]) });
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
    const backends = await Promise.all([start(), start()]);
    servers = backends.map((b) => b.child);
    const hits = [0, 0];
    let next = 0;
    // A load balancer without affinity: each request to the next process in turn.
    proxy = createServer((req, res) => {
      const i = next++ % 2;
      hits[i] = (hits[i] ?? 0) + 1;
      const upstream = request(
        {
          host: '127.0.0.1',
          port: backends[i]?.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy?.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    const source = new McpToolSource({
      lb: {
        type: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { Authorization: `Bearer ${token}` },
      },
    });
    try {
      expect(await source.start()).toEqual({ started: ['lb'], failed: [] });
      expect(source.protocolVersion('lb')).toBe('2026-07-28');
      const calls = Array.from({ length: 6 }, (_, i) => ({
        type: 'tool_call' as const,
        id: `c${i}`,
        name: i % 2 === 0 ? 'lb__test_simple_text' : 'lb__test_tool_with_progress',
        input: {},
      }));
      const blocks = await dispatchToolCalls(calls, { tools: source });
      expect(blocks.every((b) => !b.isError)).toBe(true);
      // discover + tools/list + 6 calls, alternating: each process answered several.
      expect(hits[0]).toBeGreaterThanOrEqual(3);
      expect(hits[1]).toBeGreaterThanOrEqual(3);
    } finally {
      await source.close();
    }
  });
});
