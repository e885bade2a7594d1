import { spawn } from 'node:child_process';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallBlock, ToolResultBlock } from '../../../src/conversation.js';
import type { McpLogEntry } from '../../../src/mcp/mcp-connection.js';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { ToolRegistry } from '../../../src/tool-source.js';
import { dispatchToolCalls } from '../../../src/tools/dispatch.js';
import type { ToolEvent } from '../../../src/tools/tool-events.js';
import { EVERYTHING } from './servers.js';

const log: McpLogEntry[] = [];
let source: McpToolSource;

beforeAll(async () => {
  source = new McpToolSource(
    { everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING] } },
    { log: (e) => log.push(e) },
  );
  expect(await source.start()).toEqual({ started: ['everything'], failed: [] });
});
afterAll(() => source?.close());

let seq = 0;
function run(
  name: string,
  input: Record<string, unknown> = {},
  extra: { signal?: AbortSignal; onEvent?: (e: ToolEvent) => void } = {},
) {
  const call: ToolCallBlock = { type: 'tool_call', id: `c${++seq}`, name, input };
  return dispatchToolCalls([call], { tools: new ToolRegistry([source]), ...extra }).then(
    (r) => r[0] as ToolResultBlock,
  );
}
const texts = (r: ToolResultBlock) =>
  r.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);

/** PNG chunks whose stored CRC does not match their bytes (independent of the media pipeline). */
function badCrcChunks(png: Buffer): string[] {
  const bad: string[] = [];
  for (let i = 8; i + 12 <= png.length; ) {
    const n = png.readUInt32BE(i);
    const type = png.toString('latin1', i + 4, i + 8);
    if (crc32(png.subarray(i + 4, i + 8 + n)) !== png.readUInt32BE(i + 8 + n)) bad.push(type);
    i += 12 + n;
  }
  return bad;
}

describe('server-everything over stdio as a tool source', () => {
  it('offers its tools namespaced as everything__<tool>, composable in a ToolRegistry', () => {
    const names = source.list().map((d) => d.name);
    expect(names).toContain('everything__echo');
    expect(names).toContain('everything__get-tiny-image');
    expect(names).toContain('everything__trigger-long-running-operation');
    expect(names.every((n) => /^everything__[a-zA-Z0-9_-]+$/.test(n))).toBe(true);
    expect(() => new ToolRegistry([source, source])).toThrow(
      expect.objectContaining({ code: 'ERR_DUPLICATE_TOOL' }),
    );
  });

  it('echo and structuredContent-only results come back as text; meta names the server and tool', async () => {
    const echo = await run('everything__echo', { message: 'hi there' });
    expect(texts(echo)).toEqual(['Echo: hi there']);
    expect(echo.meta).toEqual({ mcpServer: 'everything', mcpTool: 'echo' });
    const weather = await run('everything__get-structured-content', { location: 'New York' });
    expect(weather.isError).toBe(false);
    expect(JSON.parse(texts(weather).join(''))).toMatchObject({ temperature: expect.any(Number) });
  });

  it('its image goes through the media pipeline: the logo PNG, whose iCCP chunk has a bad CRC, arrives processed without the damaged chunk', async () => {
    // Independent check of the server's bytes with the SDK's raw result: the damage is real.
    const raw = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new raw.Client({ name: 'raw', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING], stderr: 'ignore' }),
    );
    const res = await client.callTool({ name: 'get-tiny-image', arguments: {} });
    await client.close();
    const img = (res.content as Array<{ type: string; data?: string }>).find((c) => c.type === 'image');
    expect(badCrcChunks(Buffer.from(img?.data ?? '', 'base64'))).toEqual(['iCCP']);

    // Like libpng and sharp, the pipeline drops a damaged ANCILLARY chunk and keeps the picture.
    const events: ToolEvent[] = [];
    const r = await run('everything__get-tiny-image', {}, { onEvent: (e) => events.push(e) });
    expect(r.isError).toBe(false);
    const stored = r.parts.find((p) => p.type === 'image');
    expect(stored).toMatchObject({ type: 'image', mediaType: 'image/png' });
    const out = Buffer.from((stored as { data: string }).data, 'base64');
    expect(badCrcChunks(out)).toEqual([]);
    expect(out.includes(Buffer.from('iCCP'))).toBe(false);
    expect(texts(r)).toEqual(["Here's the image you requested:", 'The image above is the MCP logo.']);
    expect(events.find((e) => e.type === 'tool_media_dropped')).toBeUndefined();
    expect(events.find((e) => e.type === 'tool_media_processed')).toBeDefined();
  });

  it('progress notifications arrive as tool_call_update events with a fraction', async () => {
    const updates: unknown[] = [];
    const r = await run(
      'everything__trigger-long-running-operation',
      { duration: 1, steps: 4 },
      { onEvent: (e) => e.type === 'tool_call_update' && updates.push(e.update) },
    );
    expect(texts(r)[0]).toContain('Long running operation completed');
    expect(updates.slice(0, 3)).toEqual([
      { completed: 1, total: 4, progress: 0.25 },
      { completed: 2, total: 4, progress: 0.5 },
      { completed: 3, total: 4, progress: 0.75 },
    ]);
  });

  it('an abort cancels the call (the server is sent notifications/cancelled); the connection stays usable', async () => {
    // Through dispatch: the turn's result is the aborted one.
    const ac = new AbortController();
    const r = await run(
      'everything__trigger-long-running-operation',
      { duration: 60, steps: 60 },
      { signal: ac.signal, onEvent: (e) => e.type === 'tool_call_update' && ac.abort() },
    );
    expect(r.isError).toBe(true);
    expect(texts(r)[0]).toMatch(/cancelled/i);
    // Directly on the source: the call itself settles on abort (a 60 s operation would outlive the test timeout).
    const direct = new AbortController();
    const out = await source.call(
      'everything__trigger-long-running-operation',
      { duration: 60, steps: 60 },
      { signal: direct.signal, workspaceRoot: process.cwd(), toolCallId: 'x', update: () => direct.abort() },
    );
    expect(out).toMatchObject({
      ok: false,
      error: "cancelled; the MCP server 'everything' was told to stop",
    });
    expect(texts(await run('everything__echo', { message: 'still here' }))).toEqual(['Echo: still here']);
  });

  it('resource links are read with resources/read; embedded text resources become text', async () => {
    const links = await run('everything__get-resource-links', { count: 2 });
    const all = texts(links).join('\n');
    expect(all).toContain('demo://resource/dynamic/text/2');
    expect(all).toMatch(/Resource 2: This is a plaintext resource/);
    const ref = await run('everything__get-resource-reference', { resourceType: 'Text', resourceId: 3 });
    expect(texts(ref).join('\n')).toMatch(
      /\[resource demo:\/\/resource\/dynamic\/text\/3 \(text\/plain\)\]\nResource 3/,
    );
  });

  it("the server's stderr goes to the host log, not to our stdout", () => {
    expect(
      log.some((e) => e.server === 'everything' && /Starting default \(STDIO\) server/.test(e.message)),
    ).toBe(true);
  });
});

describe('server-everything over Streamable HTTP as a tool source', () => {
  it('connects by URL, lists, calls and gets progress', async () => {
    const port = 30_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('server-everything (HTTP) did not start')), 60_000);
        const onData = (c: Buffer) => {
          if (/listening|running|port/i.test(c.toString())) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
      });
      const http = new McpToolSource({ remote: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } });
      expect(await http.start()).toEqual({ started: ['remote'], failed: [] });
      const call: ToolCallBlock = {
        type: 'tool_call',
        id: 'h1',
        name: 'remote__echo',
        input: { message: 'over http' },
      };
      const updates: unknown[] = [];
      const progress: ToolCallBlock = {
        type: 'tool_call',
        id: 'h2',
        name: 'remote__trigger-long-running-operation',
        input: { duration: 1, steps: 2 },
      };
      const [echo, slow] = await dispatchToolCalls([call, progress], {
        tools: http,
        onEvent: (e) => e.type === 'tool_call_update' && updates.push(e.update),
      });
      expect(echo?.parts).toEqual([{ type: 'text', text: 'Echo: over http' }]);
      expect(slow?.isError).toBe(false);
      expect(updates[0]).toEqual({ completed: 1, total: 2, progress: 0.5 });
      await http.close();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
