// Approval before a call runs (issue 31 §4): tools that need approval run only after the approver said yes; asked one
// by one; a declined call never runs and the model reads why; the decision is on the result and in the session log;
// an abort ends the wait. Dispatcher level and through the Agent (fake provider, real session log).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { TextPart, ToolCallBlock, ToolResultBlock, ToolResultsMessage } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { loadSession } from '../../src/session/load-session.js';
import { SessionLog } from '../../src/session/session-log.js';
import { defineTool } from '../../src/tool.js';
import { ToolRegistry } from '../../src/tool-source.js';
import type { ApprovalInfo } from '../../src/tools/approval.js';
import { ABORTED_RESULT_TEXT, dispatchToolCalls } from '../../src/tools/dispatch.js';
import { agentFixture, modelFor, providerFor } from './agent-helpers.js';

const schema = { type: 'object', properties: { n: { type: 'integer' } } } as const;
const ran: string[] = [];
const risky = defineTool({
  name: 'risky',
  description: 'changes the world',
  inputSchema: schema,
  needsApproval: true,
  capabilities: ['exec'],
  invoke: (args) => {
    ran.push(`risky ${String(args.n)}`);
    return `did ${String(args.n)}`;
  },
});
const safe = defineTool({
  name: 'safe',
  description: 'reads',
  inputSchema: schema,
  invoke: (args) => {
    ran.push(`safe ${String(args.n)}`);
    return `read ${String(args.n)}`;
  },
});
const tools = new ToolRegistry([[risky, safe]]);
const call = (name: string, n: number): ToolCallBlock => ({
  type: 'tool_call',
  id: `${name}-${n}`,
  name,
  input: { n },
});
const text = (r: ToolResultBlock | undefined) => (r?.parts ?? []).map((p) => (p as TextPart).text).join('');

describe('dispatchToolCalls with an approver', () => {
  afterEach(() => {
    ran.length = 0;
  });

  it('runs approved calls, never runs declined ones, and keeps each decision on the result', async () => {
    const asked: Array<{ id: string; info: Omit<ApprovalInfo, 'signal'> }> = [];
    const results = await dispatchToolCalls([call('risky', 1), call('safe', 2), call('risky', 3)], {
      tools,
      approve: (c, info) => {
        asked.push({ id: c.id, info: { tool: info.tool, index: info.index, count: info.count } });
        return (c.input as { n: number }).n === 1 ? true : { approved: false, reason: 'not today' };
      },
    });
    expect(asked.map((a) => a.id)).toEqual(['risky-1', 'risky-3']);
    expect(asked[0]?.info).toMatchObject({
      index: 0,
      count: 3,
      tool: { name: 'risky', needsApproval: true, capabilities: ['exec'] },
    });
    expect(ran.sort()).toEqual(['risky 1', 'safe 2']);
    expect(results.map((r) => [text(r), r.isError, r.approval])).toEqual([
      ['did 1', false, { approved: true }],
      ['read 2', false, undefined],
      ['declined by the user: not today', true, { approved: false, reason: 'not today' }],
    ]);
  });

  it('asks about parallel calls one by one, in call order', async () => {
    let open = 0;
    let maxOpen = 0;
    const order: string[] = [];
    await dispatchToolCalls([call('risky', 1), call('risky', 2), call('risky', 3)], {
      tools,
      concurrency: 8,
      approve: async (c) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        order.push(c.id);
        await new Promise((r) => setTimeout(r, 20));
        open--;
        return true;
      },
    });
    expect(maxOpen).toBe(1);
    expect(order).toEqual(['risky-1', 'risky-2', 'risky-3']);
  });

  it('an approver that throws, or answers something unclear, declines', async () => {
    const [a] = await dispatchToolCalls([call('risky', 1)], {
      tools,
      approve: () => {
        throw new Error('no terminal');
      },
    });
    const [b] = await dispatchToolCalls([call('risky', 2)], { tools, approve: () => 'yes' as never });
    expect(text(a)).toBe('declined by the user: the approver failed: no terminal');
    expect(text(b)).toBe('declined by the user: no reason given');
    expect(ran).toEqual([]);
  });

  it('an abort while the approver decides ends the wait: the call ends as aborted and never runs', async () => {
    const ac = new AbortController();
    let seen: AbortSignal | undefined;
    const pending = dispatchToolCalls([call('risky', 1), call('safe', 2)], {
      tools,
      signal: ac.signal,
      approve: (_c, info) => {
        seen = info.signal;
        return new Promise(() => {}); // never answers
      },
    });
    await new Promise((r) => setTimeout(r, 30));
    ac.abort();
    const results = await pending;
    expect(text(results[0])).toBe(ABORTED_RESULT_TEXT);
    expect(seen?.aborted).toBe(true);
    expect(ran).toEqual(['safe 2']);
  });

  it('without an approver, calls that need approval run as any other; a bad approver is refused', async () => {
    const [r] = await dispatchToolCalls([call('risky', 7)], { tools });
    expect(text(r)).toBe('did 7');
    expect(r?.approval).toBeUndefined();
    expect(() => dispatchToolCalls([], { tools, approve: 42 as never })).toThrow(
      /dispatchToolCalls: approve must be a function/,
    );
  });

  it('defineTool checks needsApproval', () => {
    let err: unknown;
    try {
      defineTool({
        name: 'x',
        description: 'd',
        inputSchema: schema,
        needsApproval: 'yes' as never,
        invoke: () => '',
      });
    } catch (e) {
      err = e;
    }
    expect(isPantoError(err, 'ERR_INVALID_ARGUMENT')).toBe(true);
  });
});

describe('Agent approveToolCall', async () => {
  const { server } = await agentFixture();
  const dir = await mkdtemp(join(tmpdir(), 'panto-approval-'));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  afterEach(() => {
    ran.length = 0;
    expect(server.reset()).toBe(0);
  });

  it('declines a call: it never runs, the model reads why, the decision is in the session log', async () => {
    server.enqueue(
      {
        type: 'reply',
        toolCalls: [
          { id: 'c1', name: 'risky', args: { n: 1 } },
          { id: 'c2', name: 'safe', args: { n: 2 } },
        ],
      },
      { type: 'reply', text: 'Understood, I will not do that.' },
    );
    const file = join(dir, 'declined.jsonl');
    const session = await SessionLog.create(file, { model: 'claude-sonnet-4-5' });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      tools,
      session,
      approveToolCall: (c) => (c.name === 'risky' ? { approved: false, reason: 'too risky' } : true),
    });
    const before = server.requests.length;
    const r = await agent.prompt('do it');
    session.close();
    expect(r.error).toBeUndefined();
    expect(ran).toEqual(['safe 2']);
    // The model got the refusal as the tool's error result.
    const second = server.requests[before + 1]?.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(second.messages)).toContain('declined by the user: too risky');
    // The session log holds the decision with the result.
    const loaded = await loadSession(file);
    const results = loaded.conversation.messages.find((m): m is ToolResultsMessage => m.role === 'tool');
    expect(results?.results.map((b) => [b.toolName, b.isError, b.approval])).toEqual([
      ['risky', true, { approved: false, reason: 'too risky' }],
      ['safe', false, undefined],
    ]);
  });

  it('checks the option', () => {
    expect(
      () =>
        new Agent({
          provider: providerFor(server, 'anthropic-messages'),
          model: modelFor('anthropic-messages'),
          approveToolCall: 'always' as never,
        }),
    ).toThrow(/approveToolCall must be a function/);
  });
});
