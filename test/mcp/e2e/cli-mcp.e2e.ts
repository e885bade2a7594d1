import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { DEFAULT_PROCESS_OPTIONS } from '../../../src/media/policy.js';
import { imageSize } from '../../agent/dispatch-fixtures.js';
import { runPanto } from '../../cli/run-cli.js';
import { type FakeProviderServer, startFakeProviderServer } from '../../helpers/fake-provider-server.js';
import { GPS_MARKERS, photoWithGps } from './photo-with-gps.js';
import { BROKEN, LUA_TOOLS, PANTO_CLI } from './servers.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'panto-mcp-cli-'));
  await writeFile(join(root, 'photo.jpg'), await photoWithGps());
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('panto mcp serve over stdio, driven by the official SDK client', () => {
  it('serves read (capped, GPS-free images) and cancellation; stdout carries only JSON-RPC', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [PANTO_CLI, 'mcp', 'serve', '--tools', LUA_TOOLS, '--workspace', root],
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const protocolErrors: Error[] = [];
    const client = new Client({ name: 'sdk-stdio-test', version: '1.0.0' });
    client.onerror = (e) => protocolErrors.push(e);
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('libpanto');
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['read', 'slow_steps', 'test_tool_with_progress']));

      const res = (await client.callTool({
        name: 'read',
        arguments: { path: 'photo.jpg' },
      })) as CallToolResult;
      const image = res.content.find((c) => c.type === 'image');
      if (image?.type !== 'image') throw new Error('no image');
      const bytes = Buffer.from(image.data, 'base64');
      expect(imageSize(bytes)).toMatchObject({ width: 2000, height: 1500 });
      expect(bytes.byteLength).toBeLessThanOrEqual(DEFAULT_PROCESS_OPTIONS.maxEncodedBytes);
      for (const m of GPS_MARKERS) expect(bytes.includes(m)).toBe(false);

      const ac = new AbortController();
      const cancelled = client.callTool({ name: 'slow_steps', arguments: { steps: 10_000_000 } }, undefined, {
        signal: ac.signal,
        onprogress: () => ac.abort(),
      });
      await expect(cancelled).rejects.toThrow();
      const after = (await client.callTool({ name: 'test_simple_text', arguments: {} })) as CallToolResult;
      expect(after.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
      // Progress the server wrote before it read the cancellation can still arrive after the client aborted; the SDK
      // client reports each as an unknown token (the race the MCP spec asks both sides to tolerate). Nothing else may
      // be a protocol error, and the stray ones stop: the server sends nothing more once it has the cancellation.
      const stray = protocolErrors.filter((e) =>
        e.message.includes('progress notification for an unknown token'),
      );
      expect(protocolErrors.filter((e) => !stray.includes(e))).toEqual([]);
      const strayTokens = new Set(stray.map((e) => /"progressToken":(\d+)/.exec(e.message)?.[1]));
      expect(strayTokens.size).toBeLessThanOrEqual(1);
      const strayCount = stray.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(protocolErrors).toHaveLength(strayCount);
      expect(stderr).toContain('panto mcp: serving');
    } finally {
      await client.close();
    }
  });

  it('both directions at once: McpToolSource over `panto mcp serve` gets every panto.progress as an update', async () => {
    // (The official SDK client can drop a progress notification that arrives in the same read as its response; our
    // client keeps the wire order, so all three arrive.)
    const source = new McpToolSource({
      panto: {
        type: 'stdio',
        command: process.execPath,
        args: [PANTO_CLI, 'mcp', 'serve', '--tools', LUA_TOOLS, '--workspace', root],
      },
    });
    await source.start();
    try {
      for (let round = 0; round < 3; round++) {
        const updates: unknown[] = [];
        const out = await source.call(
          'panto__test_tool_with_progress',
          {},
          {
            signal: new AbortController().signal,
            workspaceRoot: root,
            toolCallId: `p${round}`,
            update: (u) => updates.push(u),
          },
        );
        expect(out).toMatchObject({ ok: true, parts: [{ type: 'text', text: 'Progress complete' }] });
        expect(updates).toEqual([
          { completed: 0, total: 100, progress: 0, message: 'starting' },
          { completed: 50, total: 100, progress: 0.5, message: 'halfway' },
          { completed: 100, total: 100, progress: 1, message: 'done' },
        ]);
      }
    } finally {
      await source.close();
    }
  });

  it('usage errors: an unknown subcommand and a bad port exit 2', async () => {
    expect((await runPanto(['mcp', 'frobnicate'])).code).toBe(2);
    const bad = await runPanto(['mcp', 'serve', '--http', 'eighty']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--http expects a positive integer');
  });

  it('limit flags: each checked before anything starts (name, expected, actual), the HTTP-only ones need --http, all in --help', async () => {
    for (const [args, message] of [
      [['--max-pending-calls', '0'], "--max-pending-calls expects a positive integer, got '0'"],
      [['--max-result-bytes', '1.5'], "--max-result-bytes expects a positive integer, got '1.5'"],
      [['--max-message-bytes=-3'], "--max-message-bytes expects a positive integer, got '-3'"],
      [
        ['--http', '0', '--max-connections', 'many'],
        "--max-connections expects a positive integer, got 'many'",
      ],
      [['--session-idle-ms', '1000'], '--session-idle-ms applies to --http only'],
      [['--request-timeout-ms', '1000'], '--request-timeout-ms applies to --http only'],
    ] as const) {
      const r = await runPanto(['mcp', 'serve', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const help = await runPanto(['mcp', 'serve', '--help']);
    for (const flag of [
      '--max-pending-calls',
      '--max-result-bytes',
      '--max-message-bytes',
      '--session-idle-ms',
      '--request-timeout-ms',
      '--max-connections',
    ]) {
      expect(help.stdout).toContain(flag);
    }
  });
});

describe('panto mcp serve --http: the bearer token', () => {
  /** Start `panto mcp serve --http 0 ...`; resolves once it prints its URL. */
  async function serveHttp(args: string[] = [], env: Record<string, string> = {}) {
    const child = spawn(
      process.execPath,
      [PANTO_CLI, 'mcp', 'serve', '--http', '0', '--tools', LUA_TOOLS, '--workspace', root, ...args],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } },
    );
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL in: ${stderr}`)), 30_000);
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    return { child, url, stderr: () => stderr };
  }
  const initialize = (url: string, authorization?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    }).then(async (r) => {
      await r.text();
      return r.status;
    });

  it('a fresh token per start, printed on stderr; without it 401; McpToolSource with it works', async () => {
    const a = await serveHttp();
    const b = await serveHttp();
    try {
      const token = /token: ([A-Za-z0-9_-]{43}) /.exec(a.stderr())?.[1] as string;
      expect(token).toBeDefined();
      expect(b.stderr()).not.toContain(token);
      expect(await initialize(a.url)).toBe(401);
      expect(await initialize(a.url, 'Bearer not-the-token-at-all-no')).toBe(401);
      const source = new McpToolSource({
        p: { type: 'http', url: a.url, headers: { Authorization: `Bearer ${token}` } },
      });
      try {
        expect((await source.start()).started).toEqual(['p']);
        const r = await source.call(
          'p__test_simple_text',
          {},
          {
            signal: new AbortController().signal,
            workspaceRoot: root,
            toolCallId: 't',
            update: () => {},
          },
        );
        expect(r).toMatchObject({
          ok: true,
          parts: [{ type: 'text', text: 'This is a simple text response for testing.' }],
        });
      } finally {
        await source.close();
      }
    } finally {
      a.child.kill();
      b.child.kill();
    }
  });

  it('PANTO_MCP_TOKEN sets it (not echoed); --no-auth turns it off, saying so; both checked before starting', async () => {
    const token = 'env-token-0123456789-abcdef';
    const env = await serveHttp([], { PANTO_MCP_TOKEN: token });
    try {
      expect(env.stderr()).toContain('token: from PANTO_MCP_TOKEN');
      expect(env.stderr()).not.toContain(token);
      expect(await initialize(env.url)).toBe(401);
      expect(await initialize(env.url, `Bearer ${token}`)).toBe(200);
    } finally {
      env.child.kill();
    }
    const open = await serveHttp(['--no-auth']);
    try {
      expect(open.stderr()).toContain('--no-auth: any local process can call these tools');
      expect(await initialize(open.url)).toBe(200);
    } finally {
      open.child.kill();
    }
    const weak = await runPanto(['mcp', 'serve', '--http', '0'], { env: { PANTO_MCP_TOKEN: 'short' } });
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain('PANTO_MCP_TOKEN must be at least 16');
    const stdio = await runPanto(['mcp', 'serve', '--no-auth']);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain('--no-auth applies to --http only');
  });
});

describe('panto chat --mcp FILE', () => {
  let provider: FakeProviderServer;
  beforeAll(async () => {
    provider = await startFakeProviderServer();
  });
  afterAll(() => provider?.close());

  it("offers the config's MCP tools to the model next to the Lua tools, and runs them", async () => {
    const config = join(root, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { b: { command: process.execPath, args: [BROKEN] } } }),
    );
    provider.enqueue(
      { type: 'reply', toolCalls: [{ id: 'call_1', name: 'b__echo', args: {} }] },
      { type: 'reply', text: 'The server said echo ok.' },
    );
    const r = await runPanto(
      [
        'chat',
        '--provider',
        'openai-chat',
        '--base-url',
        provider.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--workspace',
        root,
        '--session',
        join(root, 's.jsonl'),
        '--mcp',
        config,
      ],
      {
        cwd: root,
        stdin: 'ask the server\n/exit\n',
        env: { OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined },
      },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('mcp: b started (6 tools)');
    expect(r.stderr).toContain('[mcp b] broken-server starting in mode ok');
    expect(r.stdout).toContain('The server said echo ok.');
    const [first, second] = provider.requests.slice(-2);
    const tools = ((first?.body.tools ?? []) as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(tools).toEqual(expect.arrayContaining(['read', 'b__echo', 'b__hang']));
    expect(JSON.stringify(second?.body.messages)).toContain('echo ok');
  });

  it('a bad config file is a clear error', async () => {
    const config = join(root, 'bad.json');
    await writeFile(config, '{"mcpServers": {"x": {}}}');
    const r = await runPanto(
      [
        'chat',
        '--provider',
        'openai-chat',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--model',
        'gpt-4o',
        '--mcp',
        config,
      ],
      { cwd: root, stdin: '/exit\n' },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/server 'x' needs exactly one of "command" or "url" \[ERR_MCP_CONFIG\]/);
  });
});
