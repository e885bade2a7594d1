import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/agent/agent.js';
import type { ToolResultBlock } from '../../../src/conversation.js';
import type { McpLogEntry } from '../../../src/mcp/mcp-connection.js';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { ToolRegistry } from '../../../src/tool-source.js';
import { dispatchToolCalls } from '../../../src/tools/dispatch.js';
import { modelFor, providerFor } from '../../agent/agent-helpers.js';
import { type FakeProviderServer, startFakeProviderServer } from '../../helpers/fake-provider-server.js';
import { BROKEN } from './servers.js';

let dir: string;
let provider: FakeProviderServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'panto-mcp-hostile-'));
  provider = await startFakeProviderServer();
});
afterAll(async () => {
  await provider?.close();
  await rm(dir, { recursive: true, force: true });
});

const broken = (mode = 'ok', state?: string) => ({
  type: 'stdio' as const,
  command: process.execPath,
  args: [BROKEN, mode],
  ...(state ? { env: { BROKEN_SERVER_STATE: state } } : {}),
});
const text = (r: ToolResultBlock | undefined) =>
  (r?.parts ?? []).map((p) => (p.type === 'text' ? p.text : `<${p.type}>`)).join('\n');

describe('a broken MCP server inside an agent turn', () => {
  it('garbage on stdout, a 100 MB image, a call never answered and a crash mid-call: the turn goes on with error results', async () => {
    // Two sources in one registry: a short call timeout for the hanging server, the default for the huge one (so the
    // message cap, not the timeout, is what ends it).
    const quick = new McpToolSource(
      { g: broken(), n: broken(), d: broken() },
      { callTimeoutMs: 2_000, name: 'quick' },
    );
    const big = new McpToolSource({ h: broken() }, { name: 'big' });
    await Promise.all([quick.start(), big.start()]);
    const source = new ToolRegistry([quick, big]);
    provider.enqueue(
      {
        type: 'reply',
        toolCalls: [
          { id: 't1', name: 'g__garbage', args: {} },
          { id: 't2', name: 'h__huge', args: {} },
          { id: 't3', name: 'n__hang', args: {} },
          { id: 't4', name: 'd__die', args: {} },
        ],
      },
      { type: 'reply', text: 'I saw the errors.' },
    );
    const agent = new Agent({
      provider: providerFor(provider, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      tools: source,
    });
    const result = await agent.prompt('use the tools');
    await Promise.all([quick.close(), big.close()]);
    expect(result.stopReason).toBe('end');
    const results = agent.messages.flatMap((m) => (m.role === 'tool' ? m.results : []));
    const byId = new Map(results.map((r) => [r.toolUseId, r]));
    expect(byId.get('t1')).toMatchObject({ isError: false });
    expect(text(byId.get('t1'))).toBe('after garbage');
    expect(byId.get('t2')?.isError).toBe(true);
    expect(text(byId.get('t2'))).toMatch(/stopped during the call.*message over 50331648 bytes/);
    expect(byId.get('t3')?.isError).toBe(true);
    expect(text(byId.get('t3'))).toMatch(/did not answer hang in time.*cancelled/);
    expect(byId.get('t4')?.isError).toBe(true);
    expect(text(byId.get('t4'))).toMatch(
      /stopped during the call.*fatal: simulated crash in the middle of a call/,
    );
    // The model's second request carried all four results.
    const second = provider.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    const toolResults = JSON.stringify(second.messages.at(-1)?.content);
    for (const id of ['t1', 't2', 't3', 't4']) expect(toolResults).toContain(id);
  });

  it('a 100 MB image within a raised message cap reaches the media pipeline and is refused there with a note', async () => {
    const source = new McpToolSource({ h: broken() }, { maxMessageBytes: 256 * 1024 * 1024 });
    await source.start();
    const [r] = await dispatchToolCalls([{ type: 'tool_call', id: 'x', name: 'h__huge', input: {} }], {
      tools: source,
    });
    await source.close();
    expect(r?.isError).toBe(false);
    expect(r?.parts).toEqual([
      { type: 'text', text: expect.stringMatching(/^\[attachment dropped: .*(too large|over|exceeds)/i) },
    ]);
  });
});

describe('broken MCP server lifecycle', () => {
  it('a server that hangs on initialize, talks garbage or exits at once fails start() with a clear reason; others start', async () => {
    const log: McpLogEntry[] = [];
    const source = new McpToolSource(
      {
        hang: broken('hang-init'),
        garbage: broken('garbage-init'),
        exits: broken('exit-init'),
        good: broken(),
      },
      { initTimeoutMs: 3_000, log: (e) => log.push(e) },
    );
    const report = await source.start();
    expect(report.started).toEqual(['good']);
    const why = Object.fromEntries(report.failed.map((f) => [f.server, f.error]));
    expect(why.hang).toMatch(/could not be started: did not answer initialize\/tools\/list within 3000 ms/);
    expect(why.garbage).toMatch(/could not be started/);
    expect(why.exits).toMatch(/could not be started: .*(closed|exit)/i);
    expect(source.list().map((d) => d.name)).toEqual([
      'good__echo',
      'good__garbage',
      'good__huge',
      'good__hang',
      'good__die',
      'good__add_tool',
    ]);
    expect(log.some((e) => e.server === 'garbage' && /not valid JSON|Unexpected token/.test(e.message))).toBe(
      true,
    );
    await source.close();
  });

  it('restarts once after a crash with a note; after a second crash it stays down with an error saying so', async () => {
    const state = join(dir, 'restart-state');
    const source = new McpToolSource({ d: broken('ok', state) });
    await source.start();
    const call = async (name: string) =>
      (await dispatchToolCalls([{ type: 'tool_call', id: name, name, input: {} }], { tools: source }))[0];
    expect((await call('d__die'))?.isError).toBe(true);
    const after = await call('d__echo');
    expect(after?.isError).toBe(false);
    expect(text(after)).toMatch(/^\[note: MCP server 'd' had stopped \(.*\) and was restarted\]\necho ok$/s);
    expect((await call('d__die'))?.isError).toBe(true);
    const down = await call('d__echo');
    expect(down?.isError).toBe(true);
    expect(text(down)).toMatch(/stopped again after being restarted once, so it is not restarted/);
    await source.close();
    expect((await readFile(state, 'utf8')).match(/^start$/gm)).toHaveLength(2);
  });

  it('an aborted call sends notifications/cancelled to the server', async () => {
    const state = join(dir, 'cancel-state');
    const source = new McpToolSource({ n: broken('ok', state) });
    await source.start();
    const ac = new AbortController();
    const pending = source.call(
      'n__hang',
      {},
      { signal: ac.signal, workspaceRoot: dir, toolCallId: 'c', update: () => {} },
    );
    setTimeout(() => ac.abort(), 200);
    expect(await pending).toMatchObject({ ok: false, error: expect.stringMatching(/cancelled/) });
    await expect.poll(async () => readFile(state, 'utf8'), { timeout: 10_000 }).toMatch(/^cancelled \d+$/m);
    await source.close();
  });

  it('tools/list is read across all pages; list_changed re-lists and calls reach the new tool', async () => {
    let changes = 0;
    const source = new McpToolSource({ p: broken('paged') }, { onToolsChanged: () => changes++ });
    await source.start();
    const names = () => source.list().map((d) => d.name);
    expect(names()).toEqual(['p__echo', 'p__garbage', 'p__huge', 'p__hang', 'p__die', 'p__add_tool']);
    const run = async (name: string) =>
      (await dispatchToolCalls([{ type: 'tool_call', id: name, name, input: {} }], { tools: source }))[0];
    const before = new ToolRegistry([source]);
    expect(text(await run('p__add_tool'))).toBe('added');
    await expect.poll(() => changes, { timeout: 10_000 }).toBe(1);
    expect(names()).toContain('p__added_1');
    expect(text(await run('p__added_1'))).toBe('added_1 ok');
    // A registry built before the change does not offer the new tool: the host rebuilds it from onToolsChanged.
    expect(before.has('p__added_1')).toBe(false);
    expect(new ToolRegistry([source]).has('p__added_1')).toBe(true);
    await source.close();
  });

  it('close() ends the server processes and later calls get an error result', async () => {
    const source = new McpToolSource({ s: broken() });
    await source.start();
    await source.close();
    const [r] = await dispatchToolCalls([{ type: 'tool_call', id: 'z', name: 's__echo', input: {} }], {
      tools: source,
    });
    expect(r?.isError).toBe(true);
    expect(text(r)).toMatch(/was closed/);
  });
});
