/**
 * `dispatchToolCalls({ maxResultChars })`: a result is cut to its share where it is stored, whatever the source — a
 * TypeScript tool, a tool source of its own (as MCP and Lua are), an error text — and the host's `tool_call_end`
 * event carries the cut result, the one that is stored.
 */

import { describe, expect, it } from 'vitest';
import type { ToolCallBlock, ToolResultBlock } from '../../src/conversation.js';
import { defineTool } from '../../src/tool.js';
import { type CallResult, StaticToolSource, type ToolSource } from '../../src/tool-source.js';
import { dispatchToolCalls, type ToolEvent } from '../../src/tools/index.js';

const big = 'x'.repeat(300_000);
const call = (name: string, id = name): ToolCallBlock => ({ type: 'tool_call', id, name, input: {} });
const textOf = (r: ToolResultBlock | undefined) => (r?.parts[0]?.type === 'text' ? r.parts[0].text : '');

const printer = defineTool({
  name: 'print',
  description: 'Print a lot.',
  inputSchema: { type: 'object', properties: {} },
  invoke: () => big,
});
const failing = defineTool({
  name: 'fail',
  description: 'Fail loudly.',
  inputSchema: { type: 'object', properties: {} },
  invoke: () => {
    throw new Error(big);
  },
});

/** A source of its own (the shape of an MCP server's or the Lua host's results): text parts and meta. */
const remote: ToolSource = {
  name: 'remote',
  list: () => [
    { name: 'fetch', description: 'Fetch a page.', inputSchema: { type: 'object', properties: {} } },
  ],
  call: async (): Promise<CallResult> => ({
    ok: true,
    parts: [{ type: 'text', text: big }],
    meta: { url: 'x' },
  }),
};

describe('maxResultChars', () => {
  it('cuts results of a TS tool, a thrown error and another source alike; the event carries the cut result', async () => {
    const events: ToolEvent[] = [];
    const tools = new StaticToolSource([printer, failing], 'ts');
    const local = await dispatchToolCalls([call('print'), call('fail')], {
      tools,
      maxResultChars: 10_000,
      onEvent: (e) => events.push(e),
    });
    const fromRemote = await dispatchToolCalls([call('fetch')], { tools: remote, maxResultChars: 10_000 });
    for (const r of [...local, ...fromRemote]) {
      expect(textOf(r).length).toBeLessThanOrEqual(10_000);
      expect(textOf(r)).toContain('characters were cut here');
    }
    expect(local[1]?.isError).toBe(true);
    expect(fromRemote[0]?.meta).toEqual({ url: 'x' });
    const ends = events.filter((e) => e.type === 'tool_call_end');
    expect(ends).toHaveLength(2);
    for (const e of ends) if (e.type === 'tool_call_end') expect(e.result).toBe(local[e.index]);
  });

  it('leaves results alone without the option, and refuses a value that is not an integer >= 0', async () => {
    const tools = new StaticToolSource([printer], 'ts');
    const [r] = await dispatchToolCalls([call('print')], { tools });
    expect(textOf(r)).toBe(big);
    for (const bad of [-1, 1.5, Number.NaN, '10' as unknown as number]) {
      expect(() => dispatchToolCalls([call('print')], { tools, maxResultChars: bad })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
      );
    }
  });
});
