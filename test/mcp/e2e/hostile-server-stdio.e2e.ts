import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/agent/agent.js';
import type { ToolResultBlock } from '../../../src/conversation.js';
import type { McpLogEntry } from '../../../src/mcp/mcp-connection.js';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { dispatchToolCalls } from '../../../src/tools/dispatch.js';
import { modelFor, providerFor } from '../../agent/agent-helpers.js';
import { type FakeProviderServer, startFakeProviderServer } from '../../helpers/fake-provider-server.js';
import { HOSTILE } from './servers.js';

// Every case here has a per-test timeout far below the call timeouts it could otherwise fall back on: finishing in
// time is what proves "no hang".

let dir: string;
let provider: FakeProviderServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'panto-mcp-hostile-server-'));
  provider = await startFakeProviderServer();
});
afterAll(async () => {
  await provider?.close();
  await rm(dir, { recursive: true, force: true });
});

const hostile = (mode = 'ok', state?: string) => ({
  type: 'stdio' as const,
  command: process.execPath,
  args: [HOSTILE, mode],
  ...(state ? { env: { HOSTILE_SERVER_STATE: state } } : {}),
});
const text = (r: ToolResultBlock | undefined) =>
  (r?.parts ?? []).map((p) => (p.type === 'text' ? p.text : `<${p.type}>`)).join('\n');
const run = async (source: McpToolSource, name: string, input: Record<string, unknown> = {}) =>
  (await dispatchToolCalls([{ type: 'tool_call', id: name, name, input }], { tools: source }))[0];

async function started(mode = 'ok', state?: string, log?: McpLogEntry[]) {
  const source = new McpToolSource(
    { h: hostile(mode, state) },
    { initTimeoutMs: 10_000, ...(log ? { log: (e) => log.push(e) } : {}) },
  );
  const report = await source.start();
  return { source, report };
}

describe('hostile tool declarations', () => {
  it('an output schema that does not compile does not cost the server its other tools', {
    timeout: 15_000,
  }, async () => {
    const log: McpLogEntry[] = [];
    const { source, report } = await started('out-schema', undefined, log);
    try {
      expect(report).toEqual({ started: ['h'], failed: [] });
      const r = await run(source, 'h__bad_out');
      expect(r?.isError).toBe(false);
      expect(text(r)).toBe('bad_out ok');
      // Nor is an output schema's backtracking pattern run on structuredContent (26 'a's and a '!': 2^26 steps; the
      // server picks the length, so it could freeze the event loop for hours).
      const out = await run(source, 'h__redos_out');
      expect(out?.isError).toBe(false);
      expect(text(out)).toBe('redos_out done');
    } finally {
      await source.close();
    }
  });

  it('oversized and 10 000-deep input schemas leave their tool out (logged); a 1 MB description is cut', {
    timeout: 15_000,
  }, async () => {
    const log: McpLogEntry[] = [];
    const { source } = await started('big-decl', undefined, log);
    try {
      const decls = new Map(source.list().map((d) => [d.name, d]));
      expect(decls.has('h__deep_in')).toBe(false);
      expect(decls.has('h__big_in')).toBe(false);
      const warned = log.filter((e) => e.level === 'warn').map((e) => e.message);
      expect(warned).toContainEqual(
        expect.stringMatching(/'deep_in' left out: .*nests deeper than 64 levels/),
      );
      expect(warned).toContainEqual(expect.stringMatching(/'big_in' left out: .*over the limit/));
      const desc = decls.get('h__long_desc')?.description ?? '';
      expect(desc.length).toBeLessThan(17_000);
      expect(desc).toMatch(/description cut: 1048576 characters\]$/);
      // Every declaration together stays small enough to send with each request, and a turn using them works.
      expect(JSON.stringify([...decls.values()]).length).toBeLessThan(64 * 1024);
      provider.enqueue(
        { type: 'reply', toolCalls: [{ id: 's1', name: 'h__small', args: {} }] },
        { type: 'reply', text: 'done' },
      );
      const agent = new Agent({
        provider: providerFor(provider, 'anthropic-messages'),
        model: modelFor('anthropic-messages'),
        tools: source,
      });
      expect((await agent.prompt('use the tool')).stopReason).toBe('end');
      const sent = JSON.stringify(provider.requests.at(-1)?.body);
      expect(sent).toContain('h__long_desc');
      expect(sent.length).toBeLessThan(64 * 1024);
    } finally {
      await source.close();
    }
  });

  it('a backtracking `pattern` in an input schema never runs here: the model sees it as text, the server checks it', {
    timeout: 15_000,
  }, async () => {
    const { source } = await started();
    try {
      const decl = source.list().find((d) => d.name === 'h__redos_in');
      const s = (decl?.inputSchema.properties ?? {}) as Record<string, unknown>;
      expect(s.s).toEqual({ type: 'string', description: expect.stringContaining('^(a|a)*$') });
      // 28 'a's and a '!' take Ajv's backtracking RegExp 2^28 steps (seconds of a frozen event loop) to refuse.
      const r = await run(source, 'h__redos_in', { s: `${'a'.repeat(28)}!` });
      expect(r?.isError).toBe(false);
      expect(text(r)).toBe('got 29');
      // The required list is still checked here.
      expect(text(await run(source, 'h__redos_in', {}))).toMatch(/missing required property 's'/);
    } finally {
      await source.close();
    }
  });

  it('properties named __proto__ and constructor: no prototype pollution, only own argument properties count', {
    timeout: 15_000,
  }, async () => {
    const { source } = await started();
    try {
      const decl = source.list().find((d) => d.name === 'h__proto');
      const props = (decl?.inputSchema.properties ?? {}) as object;
      expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
      // The SDK's schema parse drops a `__proto__` key rather than setting a prototype with it.
      expect(Object.keys(props)).toEqual(['constructor']);
      expect(decl?.inputSchema.required).toEqual(['__proto__']);
      const args = JSON.parse('{"__proto__":"p","constructor":1}') as Record<string, unknown>;
      expect(text(await run(source, 'h__proto', args))).toBe('proto {"__proto__":"p","constructor":1}');
      // `{}` inherits `constructor` and `__proto__`: neither counts as given.
      const empty = await run(source, 'h__proto', {});
      expect(empty?.isError).toBe(true);
      expect(text(empty)).toMatch(/missing required property '__proto__'/);
      expect(text(empty)).not.toMatch(/constructor/);
    } finally {
      await source.close();
    }
  });

  it('colliding, duplicate, 10 KB, lone-surrogate and odd names map to unique provider-safe names that reach the right tool', {
    timeout: 15_000,
  }, async () => {
    const log: McpLogEntry[] = [];
    const { source } = await started('names', undefined, log);
    try {
      const names = source.list().map((d) => d.name);
      expect(new Set(names).size).toBe(names.length);
      for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      // One-to-one: `a b` is escaped (so it does not take `a_b`'s name), `dup` listed twice is offered once.
      expect(names).toEqual([
        expect.stringMatching(/^h__a_b_[0-9a-f]{8}$/),
        'h__a_b',
        'h__dup',
        expect.stringMatching(/^h__x_y_[0-9a-f]{8}$/),
        'h____proto__',
        expect.stringMatching(/^h__n+_[0-9a-f]{8}$/),
        expect.stringMatching(/^h__lone_surrogate_[0-9a-f]{8}$/),
      ]);
      expect(source.leftOut).toEqual([]);
      const escaped = (n: RegExp) => names.find((x) => n.test(x)) as string;
      expect(text(await run(source, escaped(/^h__a_b_/)))).toMatch(/Unknown tool: a b$/);
      expect(text(await run(source, 'h__a_b'))).toMatch(/Unknown tool: a_b$/);
      // The fixture answers every call with "Unknown tool: <the name it received>".
      expect(text(await run(source, escaped(/^h__x_y_/)))).toMatch(/Unknown tool: x\/y$/);
      expect(text(await run(source, 'h____proto__'))).toMatch(/Unknown tool: __proto__$/);
      // (The error quoting it is clipped: a server's error text is bounded too.)
      const long = text(await run(source, names[5] as string));
      expect(long).toMatch(/Unknown tool: n+… \((\d+) characters\)$/);
      expect(Number(/\((\d+) characters\)$/.exec(long)?.[1])).toBeGreaterThan(10_240);
    } finally {
      await source.close();
    }
  });

  it('43 MB of declarations (200 tools of 216 KB): the budget per server keeps what fits, the host is warned', {
    timeout: 30_000,
  }, async () => {
    const log: McpLogEntry[] = [];
    const { source, report } = await started('huge-decl', undefined, log);
    try {
      expect(report.started).toEqual(['h']);
      const decls = source.list();
      const bytes = Buffer.byteLength(JSON.stringify(decls));
      expect(bytes).toBeLessThanOrEqual(512 * 1024);
      expect(decls.map((d) => d.name)).toEqual(['h__huge0', 'h__huge1']);
      expect(source.leftOut).toHaveLength(198);
      expect(source.leftOut[0]).toMatchObject({ server: 'h', tool: 'huge2' });
      expect(source.leftOut[0]?.reason).toContain('maxDeclarationBytesPerServer (524288 bytes)');
      const warned = log.filter((e) => e.level === 'warn' && /198 tools left out/.test(e.message));
      expect(warned).toHaveLength(1);
      expect(warned[0]?.message.length).toBeLessThan(2000);
    } finally {
      await source.close();
    }
  });

  it('the budget per source bounds two servers together, in config order', { timeout: 30_000 }, async () => {
    const source = new McpToolSource(
      { a: hostile('huge-decl'), b: hostile('huge-decl') },
      { initTimeoutMs: 20_000, maxDeclarationBytesPerServer: 1024 * 1024, maxDeclarationBytes: 1536 * 1024 },
    );
    try {
      await source.start();
      const names = source.list().map((d) => d.name);
      // ~221 KB each: four of a's fit its 1 MiB, then three of b's fit the rest of the source's 1.5 MiB.
      expect(names).toEqual([
        'a__huge0',
        'a__huge1',
        'a__huge2',
        'a__huge3',
        'b__huge0',
        'b__huge1',
        'b__huge2',
      ]);
      expect(Buffer.byteLength(JSON.stringify(source.list()))).toBeLessThanOrEqual(1536 * 1024);
      expect(source.leftOut.filter((l) => l.server === 'b')[0]?.reason).toContain(
        'maxDeclarationBytes (1572864',
      );
    } finally {
      await source.close();
    }
  });

  it("a server's error text that already carries its code is shown with the code once", {
    timeout: 15_000,
  }, async () => {
    const { source } = await started();
    try {
      const r = await run(source, 'h__coded');
      expect(r?.isError).toBe(true);
      expect(text(r)).toBe("MCP server 'h' failed the call: MCP error -32602: Unknown tool: coded");
    } finally {
      await source.close();
    }
  });

  it('100 000 tools: the first 1000 are offered, with a warning', { timeout: 15_000 }, async () => {
    const log: McpLogEntry[] = [];
    const { source, report } = await started('many', undefined, log);
    try {
      expect(report.started).toEqual(['h']);
      const names = source.list().map((d) => d.name);
      expect(names).toHaveLength(1000);
      expect(names.at(-1)).toBe('h__t999');
      expect(log).toContainEqual(
        expect.objectContaining({ level: 'warn', message: expect.stringMatching(/more than 1000 tools/) }),
      );
      expect(text(await run(source, 'h__t5'))).toMatch(/Unknown tool: t5$/);
    } finally {
      await source.close();
    }
  });

  it('an endless tools/list cursor (repeated or always new) fails start() with a reason', {
    timeout: 30_000,
  }, async () => {
    const source = new McpToolSource(
      { loop: hostile('cursor-loop'), fresh: hostile('cursor-new') },
      { initTimeoutMs: 20_000 },
    );
    // Paging 1000 times must not pile abort listeners on one signal (Node warns "possible memory leak" past 10).
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const report = await source.start();
    await source.close();
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    const why = Object.fromEntries(report.failed.map((f) => [f.server, f.error]));
    expect(why.loop).toMatch(/repeated the cursor "again"/);
    expect(why.fresh).toMatch(/more than 1000 pages/);
  });
});

describe('hostile messages during a call', () => {
  it('a storm of 1000 list_changed notifications costs at most two re-lists, not 1000', {
    timeout: 15_000,
  }, async () => {
    const state = join(dir, 'storm-state');
    let changes = 0;
    const source = new McpToolSource({ h: hostile('ok', state) }, { onToolsChanged: () => changes++ });
    await source.start();
    try {
      expect(text(await run(source, 'h__storm'))).toBe('storm sent');
      await expect.poll(() => changes, { timeout: 10_000 }).toBeGreaterThan(0);
      // A later call's answer comes after the server read every tools/list sent before it.
      expect(text(await run(source, 'h__redos_in', { s: 'aa' }))).toBe('got 2');
      const lists = (await readFile(state, 'utf8')).match(/^list$/gm)?.length ?? 0;
      expect(lists).toBeGreaterThanOrEqual(2);
      expect(lists).toBeLessThanOrEqual(3);
    } finally {
      await source.close();
    }
  });

  it('a flood of 1 MB log notifications reaches the log cut to a bounded size', {
    timeout: 15_000,
  }, async () => {
    const log: McpLogEntry[] = [];
    const { source } = await started('ok', undefined, log);
    try {
      expect(text(await run(source, 'h__log_flood'))).toBe('flood sent');
      await expect.poll(() => log.filter((e) => e.message.startsWith('flood: ')).length).toBe(20);
      for (const e of log) expect(e.message.length).toBeLessThanOrEqual(2100);
      expect(log.find((e) => e.message.startsWith('flood: '))).toMatchObject({
        level: 'error',
        message: expect.stringMatching(/… \(1048583 characters\)$/),
      });
    } finally {
      await source.close();
    }
  });

  it('a progress flood reaches the host at a bounded rate, its 1 MB message cut, and the newest value before the result', {
    timeout: 15_000,
  }, async () => {
    const { source } = await started();
    try {
      const updates: Array<{ completed?: number; message?: string }> = [];
      const out = await source.call(
        'h__progress_flood',
        {},
        {
          signal: new AbortController().signal,
          workspaceRoot: dir,
          toolCallId: 'flood',
          update: (u) => updates.push(u),
        },
      );
      expect(out).toMatchObject({ ok: true, parts: [{ type: 'text', text: 'flood sent' }] });
      expect(updates[0]?.message).toBe(`${'m'.repeat(2000)}… (1048576 characters)`);
      // 5001 notifications in a few reads: at most 16 + 1 callbacks per read reach the host, the last being 5000.
      expect(updates.length).toBeLessThan(2500);
      expect(updates.at(-1)?.completed).toBe(5000);
    } finally {
      await source.close();
    }
  });

  it('results for ids never asked, a second result for one call and forged progress tokens are logged and ignored', {
    timeout: 15_000,
  }, async () => {
    const log: McpLogEntry[] = [];
    const { source } = await started('ok', undefined, log);
    try {
      const first = await run(source, 'h__stray');
      expect(text(first)).toBe('first answer');
      expect(text(await run(source, 'h__progress'))).toBe('progress sent');
      expect(text(await run(source, 'h__redos_in', { s: 'aa' }))).toBe('got 2');
      expect(log.some((e) => /protocol error: .*unknown message ID/i.test(e.message))).toBe(true);
    } finally {
      await source.close();
    }
  });

  it('server-to-client requests (sampling, roots, elicitation) get a method-not-found error, so the call ends', {
    timeout: 15_000,
  }, async () => {
    const { source } = await started();
    try {
      expect(text(await run(source, 'h__ask_back'))).toBe('error -32601, error -32601, error -32601');
    } finally {
      await source.close();
    }
  });

  it('a server that closes its stdout and keeps running ends the call inside an agent turn, not at the call timeout', {
    timeout: 15_000,
  }, async () => {
    const source = new McpToolSource({ h: hostile() }, { callTimeoutMs: 60_000 });
    await source.start();
    provider.enqueue(
      { type: 'reply', toolCalls: [{ id: 'c1', name: 'h__close_out', args: {} }] },
      { type: 'reply', toolCalls: [{ id: 'c2', name: 'h__storm', args: {} }] },
      { type: 'reply', text: 'done' },
    );
    const agent = new Agent({
      provider: providerFor(provider, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      tools: source,
    });
    try {
      const result = await agent.prompt('use the tool');
      expect(result.stopReason).toBe('end');
      const results = new Map(
        agent.messages.flatMap((m) => (m.role === 'tool' ? m.results : [])).map((r) => [r.toolUseId, r]),
      );
      expect(results.get('c1')?.isError).toBe(true);
      expect(text(results.get('c1'))).toMatch(/MCP server 'h' stopped during the call/);
      // The next call restarts the server once, with a note for the model.
      expect(results.get('c2')?.isError).toBe(false);
      expect(text(results.get('c2'))).toMatch(
        /^\[note: MCP server 'h' had stopped .* and was restarted\]\nstorm sent$/s,
      );
    } finally {
      await source.close();
    }
  });
});
