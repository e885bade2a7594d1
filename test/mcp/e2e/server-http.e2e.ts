import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../../src/lua/lua-tool-source.js';
import { type McpHttpServer, serveMcpHttp } from '../../../src/mcp/mcp-http-server.js';
import { DEFAULT_PROCESS_OPTIONS } from '../../../src/media/policy.js';
import type { ToolContext } from '../../../src/tool.js';
import type { CallResult, ToolSource } from '../../../src/tool-source.js';
import { fixture, imageSize } from '../../agent/dispatch-fixtures.js';
import { GPS_MARKERS, photoWithGps } from './photo-with-gps.js';

const LUA = fileURLToPath(new URL('../../fixtures/mcp/lua/', import.meta.url));

/** The real Lua source, with each call's outcome recorded (to see that a cancelled Lua call really ended). */
class Recording implements ToolSource {
  readonly name = 'recording';
  readonly settled: Array<{ name: string; result: CallResult; abortedBefore: boolean }> = [];
  constructor(readonly inner: LuaToolSource) {}
  list() {
    return this.inner.list();
  }
  async call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult> {
    const result = await this.inner.call(name, args, ctx);
    this.settled.push({ name, result, abortedBefore: ctx.signal.aborted });
    return result;
  }
}

let root: string;
let server: McpHttpServer;
let source: Recording;
let client: Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'panto-mcp-serve-'));
  await writeFile(join(root, 'photo.jpg'), await photoWithGps());
  await writeFile(join(root, 'report.pdf'), fixture('pdf-2page.pdf'));
  await writeFile(join(root, 'png-rgb.png'), fixture('png-rgb.png'));
  await writeFile(join(root, 'pdf-2page.pdf'), fixture('pdf-2page.pdf'));
  source = new Recording(await LuaToolSource.fromDir(LUA, { includeBuiltins: true, workspaceRoot: root }));
  server = await serveMcpHttp(source, { workspaceRoot: root });
  client = new Client({ name: 'sdk-test-client', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${server.authToken}` } },
    }),
  );
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe('Lua tools served over Streamable HTTP, driven by the official SDK client', () => {
  it('lists the built-in read tool and the directory tools with their schemas intact', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('read');
    expect(tools.map((t) => t.name)).toContain('slow_steps');
    const schema = tools.find((t) => t.name === 'json_schema_2020_12_tool')?.inputSchema;
    expect(schema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      additionalProperties: false,
    });
  });

  it('read on a 4000x3000 phone photo: the MCP image is ≤ 2000 px, under the byte cap, and its GPS/EXIF is gone', async () => {
    const res = await call('read', { path: 'photo.jpg' });
    expect(res.isError).toBeFalsy();
    const image = res.content.find((c) => c.type === 'image');
    if (image?.type !== 'image') throw new Error('no image content');
    const bytes = Buffer.from(image.data, 'base64');
    const size = imageSize(bytes);
    expect(Math.max(size.width, size.height)).toBeLessThanOrEqual(2000);
    expect(bytes.byteLength).toBeLessThanOrEqual(DEFAULT_PROCESS_OPTIONS.maxEncodedBytes);
    expect(image.mimeType).toBe('image/jpeg');
    for (const marker of GPS_MARKERS) expect(bytes.includes(marker)).toBe(false);
  });

  it('a PDF comes out as an embedded resource with its name', async () => {
    const res = await call('read', { path: 'report.pdf' });
    const resource = res.content.find((c) => c.type === 'resource');
    expect(resource).toMatchObject({
      type: 'resource',
      resource: { uri: 'panto://document/report.pdf', mimeType: 'application/pdf' },
    });
    if (resource?.type !== 'resource' || !('blob' in resource.resource)) throw new Error('no blob');
    expect(Buffer.from(resource.resource.blob, 'base64').equals(fixture('pdf-2page.pdf'))).toBe(true);
  });

  it('panto.progress arrives as increasing MCP progress notifications', async () => {
    const seen: Progress[] = [];
    const res = (await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p),
    })) as CallToolResult;
    expect(res.content).toEqual([{ type: 'text', text: 'Progress complete' }]);
    expect(seen.map((p) => p.message)).toEqual(['starting', 'halfway', 'done']);
    expect(seen.map((p) => p.progress)).toEqual([0, 50, 100]);
    expect(seen.every((p) => p.total === 100)).toBe(true);
  });

  it('cancelling the request aborts the Lua call: it ends long before its steps are done', async () => {
    const ac = new AbortController();
    const before = source.settled.length;
    const pending = client.callTool({ name: 'slow_steps', arguments: { steps: 10_000_000 } }, undefined, {
      signal: ac.signal,
      onprogress: () => ac.abort('user pressed stop'),
    });
    await expect(pending).rejects.toThrow();
    await expect.poll(() => source.settled.length, { timeout: 10_000 }).toBe(before + 1);
    const last = source.settled[before];
    expect(last?.name).toBe('slow_steps');
    expect(last?.abortedBefore).toBe(true);
    expect(last?.result.ok).toBe(false);
    // The session is still usable afterwards.
    expect((await call('test_simple_text')).content).toEqual([
      { type: 'text', text: 'This is a simple text response for testing.' },
    ]);
  });

  it('invalid arguments and a failing tool are isError results; an unknown tool is JSON-RPC error -32602', async () => {
    const bad = await call('slow_steps', { steps: 'many' });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('steps');
    const failed = await call('test_error_handling');
    expect(failed).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('intentionally') }],
    });
    // The code once: the server sends the bare text, the SDK client adds `MCP error -32602: ` itself.
    await expect(call('no_such_tool')).rejects.toMatchObject({
      code: -32602,
      message: 'MCP error -32602: Unknown tool: no_such_tool',
    });
  });

  it('refuses a foreign Host (DNS rebinding), a foreign Origin, unknown sessions and oversized bodies', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${server.authToken}`,
    };
    const { request } = await import('node:http');
    const answer = (extra: Record<string, string>, body: string) =>
      new Promise<{ status: number; auth: string | undefined }>((resolve, reject) => {
        const req = request(server.url, { method: 'POST', headers: { ...headers, ...extra } }, (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, auth: res.headers['www-authenticate'] });
        });
        req.on('error', reject);
        req.end(body);
      });
    const raw = async (extra: Record<string, string>, body: string) => (await answer(extra, body)).status;
    expect(await answer({ authorization: '' }, init)).toEqual({
      status: 401,
      auth: 'Bearer realm="panto-mcp"',
    });
    expect(await answer({ authorization: 'Bearer wrong-token-of-the-right-kind' }, init)).toEqual({
      status: 401,
      auth: 'Bearer realm="panto-mcp", error="invalid_token"',
    });
    expect(await raw({ authorization: `Basic ${server.authToken}` }, init)).toBe(401);
    expect(await raw({ host: 'evil.example:80' }, init)).toBe(403);
    expect(await raw({ origin: 'http://evil.example' }, init)).toBe(403);
    expect(await raw({ 'mcp-session-id': 'no-such-session' }, init)).toBe(404);
    expect(await raw({}, `{"x":"${'a'.repeat(17 * 1024 * 1024)}"}`)).toBe(413);
    expect(await raw({}, '{not json')).toBe(400);
  });
});
