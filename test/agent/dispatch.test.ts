import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TextPart, ToolCallBlock, ToolResultBlock } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { defineTool, type Tool } from '../../src/tool.js';
import { type CallResult, StaticToolSource, ToolRegistry, type ToolSource } from '../../src/tool-source.js';
import { ABORTED_RESULT_TEXT, dispatchToolCalls, type ToolEvent } from '../../src/tools/index.js';
import { type Deferred, deferred } from './dispatch-fixtures.js';

const objectSchema = { type: 'object', properties: {} } as const;

function call(
  name: string,
  input: Record<string, unknown> = {},
  id = `${name}-${Math.random()}`,
): ToolCallBlock {
  return { type: 'tool_call', id, name, input };
}

function text(result: ToolResultBlock | undefined): string {
  return (result?.parts ?? [])
    .filter((p): p is TextPart => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

const echo = defineTool<{ value: string }>({
  name: 'echo',
  description: 'Echo a value',
  inputSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
  invoke: (args) => `echo:${args.value}`,
});

/** Tools whose completion the test controls: `gate` resolves to the tool's text output. */
function gatedTools(count: number) {
  const gates: Array<Deferred<string>> = [];
  const started: number[] = [];
  let active = 0;
  let maxActive = 0;
  const tool = defineTool<{ i: number }>({
    name: 'gated',
    description: 'Waits for the test',
    inputSchema: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
    invoke: async (args) => {
      started.push(args.i);
      active++;
      maxActive = Math.max(maxActive, active);
      try {
        return await (gates[args.i] as Deferred<string>).promise;
      } finally {
        active--;
      }
    },
  });
  for (let i = 0; i < count; i++) gates.push(deferred<string>());
  return {
    registry: new ToolRegistry([[tool]]),
    gates,
    started,
    calls: gates.map((_, i) => call('gated', { i }, `c${i}`)),
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
  };
}

/** Let queued promise callbacks run. */
const flush = () => new Promise<void>((r) => setImmediate(r));

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('results in call order', () => {
  it('keeps call order when tools finish in reverse order', async () => {
    const t = gatedTools(5);
    const pending = dispatchToolCalls(t.calls, { tools: t.registry });
    await flush();
    expect(t.started).toEqual([0, 1, 2, 3, 4]);
    for (let i = 4; i >= 0; i--) {
      t.gates[i]?.resolve(`done ${i}`);
      await flush();
    }
    const results = await pending;
    expect(results.map((r) => r.toolUseId)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(results.map(text)).toEqual(['done 0', 'done 1', 'done 2', 'done 3', 'done 4']);
    expect(results.every((r) => !r.isError && r.toolName === 'gated')).toBe(true);
  });

  it('resolves to [] for no calls', async () => {
    expect(await dispatchToolCalls([], { tools: new ToolRegistry() })).toEqual([]);
  });

  it('returns string output as one text part and keeps meta', async () => {
    const withMeta = defineTool({
      name: 'with_meta',
      description: 'Returns parts and meta',
      inputSchema: objectSchema,
      invoke: () => ({
        parts: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        meta: { path: '/x' },
      }),
    });
    const [r1, r2] = await dispatchToolCalls(
      [call('echo', { value: 'hi' }, 'e'), call('with_meta', {}, 'm')],
      {
        tools: new ToolRegistry([[echo, withMeta]]),
      },
    );
    expect(r1).toEqual({
      type: 'tool_result',
      toolUseId: 'e',
      toolName: 'echo',
      parts: [{ type: 'text', text: 'echo:hi' }],
      isError: false,
    });
    expect(r2?.parts).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
    expect(r2?.meta).toEqual({ path: '/x' });
  });
});

describe('concurrency', () => {
  it('runs at most `concurrency` tools at once and starts the rest as slots free up', async () => {
    const t = gatedTools(7);
    const pending = dispatchToolCalls(t.calls, { tools: t.registry, concurrency: 3 });
    await flush();
    expect(t.started).toEqual([0, 1, 2]);
    t.gates[1]?.resolve('1');
    await flush();
    expect(t.started).toEqual([0, 1, 2, 3]);
    for (const i of [0, 2, 3, 4, 5, 6]) {
      t.gates[i]?.resolve(String(i));
      await flush();
    }
    const results = await pending;
    expect(t.maxActive).toBe(3);
    expect(results.map(text)).toEqual(['0', '1', '2', '3', '4', '5', '6']);
  });

  it('runs everything at once up to the default limit of 8', async () => {
    const t = gatedTools(10);
    const pending = dispatchToolCalls(t.calls, { tools: t.registry });
    await flush();
    expect(t.active).toBe(8);
    for (const g of t.gates) g.resolve('x');
    await pending;
    expect(t.maxActive).toBe(8);
  });

  it('sequential mode runs one tool at a time in call order', async () => {
    const t = gatedTools(4);
    const pending = dispatchToolCalls(t.calls, { tools: t.registry, sequential: true, concurrency: 8 });
    for (let i = 0; i < 4; i++) {
      await flush();
      expect(t.started).toEqual([0, 1, 2, 3].slice(0, i + 1));
      t.gates[i]?.resolve(String(i));
    }
    const results = await pending;
    expect(t.maxActive).toBe(1);
    expect(results.map(text)).toEqual(['0', '1', '2', '3']);
  });

  it('rejects a bad concurrency or tools option with ERR_INVALID_ARGUMENT', () => {
    const tools = new ToolRegistry([[echo]]);
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => dispatchToolCalls([], { tools, concurrency })).toThrow(/concurrency/);
    }
    try {
      dispatchToolCalls([], { tools: {} as ToolSource });
      expect.unreachable();
    } catch (err) {
      expect(isPantoError(err, 'ERR_INVALID_ARGUMENT')).toBe(true);
    }
  });

  it('rejects a bad media policy at once instead of dropping every attachment', () => {
    const tools = new ToolRegistry([[echo]]);
    expect(() => dispatchToolCalls([], { tools, media: { maxDimension: 0 } })).toThrow(/maxDimension/);
    expect(() => dispatchToolCalls([], { tools, media: { jpegQuality: 101 } })).toThrow(/jpegQuality/);
  });
});

describe('argument validation', () => {
  let invoked = 0;
  const search = defineTool({
    name: 'search',
    description: 'Search',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1 },
        limit: { type: 'integer', minimum: 1, maximum: 50 },
        mode: { enum: ['fast', 'deep'] },
        options: { type: 'object', properties: { depth: { type: 'number' } } },
      },
      required: ['query'],
      additionalProperties: false,
    },
    invoke: () => {
      invoked++;
      return 'ok';
    },
  });
  const tools = new ToolRegistry([[search]]);

  it('names the path, the rule and the received value, and does not run the tool', async () => {
    invoked = 0;
    const [r] = await dispatchToolCalls([call('search', { query: 'cats', limit: 'five' })], { tools });
    expect(r?.isError).toBe(true);
    expect(text(r)).toContain("Invalid arguments for tool 'search'");
    expect(text(r)).toContain('at /limit: must be integer (rule: type), received "five"');
    expect(invoked).toBe(0);
  });

  it('reports every problem: missing property, bounds, enum, nested path, extra property', async () => {
    const [r] = await dispatchToolCalls(
      [call('search', { limit: 99, mode: 'slow', options: { depth: 'x' }, colour: 'red' })],
      { tools },
    );
    const t = text(r);
    expect(t).toContain("at the arguments object: missing required property 'query' (rule: required)");
    expect(t).toContain('at /limit: must be <= 50 (rule: maximum), received 99');
    expect(t).toContain('at /mode: must be one of ["fast","deep"] (rule: enum), received "slow"');
    expect(t).toContain('at /options/depth: must be number (rule: type), received "x"');
    expect(t).toContain('property \'colour\' is not allowed (rule: additionalProperties), received "red"');
  });

  it('passes valid arguments unchanged', async () => {
    const input = { query: 'cats', limit: 3 };
    const [r] = await dispatchToolCalls([call('search', input)], { tools });
    expect(r?.isError).toBe(false);
    expect(input).toEqual({ query: 'cats', limit: 3 });
  });

  it('validates the same way when a source hands out a new but equal schema object each time', async () => {
    const decl = () => ({
      name: 'fresh',
      description: 'rebuilds its declaration',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    });
    const fresh: ToolSource = {
      name: 'fresh-source',
      list: () => [decl()],
      call: async (_name, args) => ({ ok: true, parts: [{ type: 'text', text: `n=${String(args.n)}` }] }),
    };
    for (let round = 0; round < 3; round++) {
      const [good, bad] = await dispatchToolCalls([call('fresh', { n: 2 }), call('fresh', { n: 2.5 })], {
        tools: fresh,
      });
      expect(text(good)).toBe('n=2');
      expect(text(bad)).toContain('at /n: must be integer (rule: type), received 2.5');
    }
  });

  it('compiles draft-07 schemas and reports a schema that does not compile as the tool author’s error', async () => {
    const draft7 = defineTool({
      name: 'draft7',
      description: 'draft-07 schema',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { n: { type: 'number' } },
        required: ['n'],
      },
      invoke: () => 'ok',
    });
    const broken = defineTool({
      name: 'broken',
      description: 'invalid schema',
      inputSchema: { type: 'object', properties: { n: { type: 'no-such-type' } } },
      invoke: () => 'ok',
    });
    const [ok, bad, brokenResult] = await dispatchToolCalls(
      [call('draft7', { n: 1 }), call('draft7', { n: 'one' }), call('broken', { n: 1 })],
      { tools: new ToolRegistry([[draft7, broken]]) },
    );
    expect(ok?.isError).toBe(false);
    expect(text(bad)).toContain('at /n: must be number (rule: type), received "one"');
    expect(brokenResult?.isError).toBe(true);
    expect(text(brokenResult)).toMatch(/Tool 'broken' cannot be called: its input schema does not compile/);
  });
});

describe('arguments that were not a JSON object', () => {
  it('answer with the parse error and the raw text, without running a tool that would accept {}', async () => {
    let invoked = 0;
    const anything = defineTool({
      name: 'anything',
      description: 'Takes no required arguments',
      inputSchema: objectSchema,
      invoke: () => {
        invoked++;
        return 'ran';
      },
    });
    const broken: ToolCallBlock = {
      ...call('anything', {}, 'b1'),
      providerData: { invalidArguments: { raw: '{"path": cat', error: 'Unexpected token c' } },
    };
    const [bad, good] = await dispatchToolCalls([broken, call('anything')], {
      tools: new ToolRegistry([[anything]]),
    });
    expect(bad?.isError).toBe(true);
    expect(text(bad)).toBe(
      'The arguments of this anything call were not a JSON object (Unexpected token c); the tool did not run. Arguments received: {"path": cat',
    );
    expect(text(good)).toBe('ran');
    expect(invoked).toBe(1);
  });
});

describe('failures become error results', () => {
  const throws = defineTool({
    name: 'throws',
    description: 'Throws',
    inputSchema: objectSchema,
    invoke: () => {
      throw new Error('disk on fire');
    },
  });
  const rejects = defineTool({
    name: 'rejects',
    description: 'Rejects',
    inputSchema: objectSchema,
    invoke: async () => {
      await flush();
      throw new TypeError('network unreachable');
    },
  });
  const badOutput = defineTool({
    name: 'bad_output',
    description: 'Returns a number',
    inputSchema: objectSchema,
    invoke: () => 42 as unknown as string,
  });
  const tools = new ToolRegistry([[echo, throws, rejects, badOutput]]);

  it('an unknown tool lists the available tools', async () => {
    const [r] = await dispatchToolCalls([call('nope')], { tools });
    expect(r?.isError).toBe(true);
    expect(text(r)).toBe("Unknown tool 'nope'. Available tools: echo, throws, rejects, bad_output.");
  });

  it('a throwing tool, a rejecting tool and a tool returning garbage give their message; others still run', async () => {
    const results = await dispatchToolCalls(
      [call('throws'), call('echo', { value: 'v' }), call('rejects'), call('bad_output')],
      { tools },
    );
    expect(results.map((r) => r.isError)).toEqual([true, false, true, true]);
    expect(text(results[0])).toBe('disk on fire');
    expect(text(results[1])).toBe('echo:v');
    expect(text(results[2])).toBe('network unreachable');
    expect(text(results[3])).toMatch(/tool returned a number; expected a string/);
  });

  it('a source that rejects or throws synchronously, or breaks its result contract, gives an error result', async () => {
    const decls = [{ name: 'x', description: 'x', inputSchema: objectSchema }];
    const rejecting: ToolSource = {
      name: 'rej',
      list: () => decls,
      call: () => Promise.reject(new Error('gone')),
    };
    const throwing: ToolSource = {
      name: 'thr',
      list: () => decls,
      call: () => {
        throw new Error('sync boom');
      },
    };
    const malformed: ToolSource = {
      name: 'mal',
      list: () => decls,
      call: async () => ({ ok: true }) as unknown as CallResult,
    };
    const failing: ToolSource = {
      name: 'err',
      list: () => decls,
      call: async () => ({ ok: false, error: 'nope', meta: { a: 1 } }),
    };
    expect(text((await dispatchToolCalls([call('x')], { tools: rejecting }))[0])).toBe('gone');
    expect(text((await dispatchToolCalls([call('x')], { tools: throwing }))[0])).toBe('sync boom');
    const [m] = await dispatchToolCalls([call('x')], { tools: malformed });
    expect(m?.isError).toBe(true);
    expect(text(m)).toMatch(/tool source 'mal' returned a malformed result/);
    const [f] = await dispatchToolCalls([call('x')], { tools: failing });
    expect(f).toMatchObject({ isError: true, meta: { a: 1 }, parts: [{ type: 'text', text: 'nope' }] });
  });

  it('works with a plain StaticToolSource (not a registry)', async () => {
    const [r, u] = await dispatchToolCalls([call('echo', { value: 'z' }), call('zzz')], {
      tools: new StaticToolSource([echo], 'mine'),
    });
    expect(text(r)).toBe('echo:z');
    expect(text(u)).toBe("Unknown tool 'zzz'. Available tools: echo.");
  });
});

describe('abort', () => {
  it('ends every pending call with an aborted result; late results never overwrite it', async () => {
    const t = gatedTools(4);
    const controller = new AbortController();
    const events: ToolEvent[] = [];
    const pending = dispatchToolCalls(t.calls, {
      tools: t.registry,
      signal: controller.signal,
      concurrency: 2,
      onEvent: (e) => events.push(e),
    });
    await flush();
    t.gates[0]?.resolve('first');
    await flush();
    expect(t.started).toEqual([0, 1, 2]);
    controller.abort();
    const results = await pending;
    const snapshot = structuredClone(results);
    expect(results.map((r) => r.isError)).toEqual([false, true, true, true]);
    expect(text(results[0])).toBe('first');
    expect(results.slice(1).map(text)).toEqual([
      ABORTED_RESULT_TEXT,
      ABORTED_RESULT_TEXT,
      ABORTED_RESULT_TEXT,
    ]);
    // The running tools finish late (one resolves, one rejects); the queued one never starts.
    t.gates[1]?.resolve('late');
    t.gates[2]?.reject(new Error('late failure'));
    await flush();
    await flush();
    expect(results).toEqual(snapshot);
    expect(t.started).toEqual([0, 1, 2]);
    expect(unhandled).toEqual([]);
    const ends = events.filter((e) => e.type === 'tool_call_end');
    expect(ends.map((e) => [e.index, e.aborted, e.started])).toEqual([
      [0, false, true],
      [1, true, true],
      [2, true, true],
      [3, true, false],
    ]);
  });

  it('resolves even when a tool ignores the signal and never settles', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Never returns',
      inputSchema: objectSchema,
      invoke: () => new Promise<string>(() => {}),
    });
    const controller = new AbortController();
    const pending = dispatchToolCalls([call('hang'), call('hang')], {
      tools: new ToolRegistry([[hang]]),
      signal: controller.signal,
    });
    await flush();
    controller.abort();
    expect((await pending).map((r) => r.isError)).toEqual([true, true]);
  });

  it('runs nothing when the signal is already aborted, and tools see the same signal', async () => {
    let ran = false;
    let seen: AbortSignal | undefined;
    const spy = defineTool({
      name: 'spy',
      description: 'Records its context',
      inputSchema: objectSchema,
      invoke: (_args, ctx) => {
        ran = true;
        seen = ctx.signal;
        return 'ran';
      },
    });
    const tools = new ToolRegistry([[spy]]);
    const [r] = await dispatchToolCalls([call('spy')], { tools, signal: AbortSignal.abort() });
    expect(ran).toBe(false);
    expect(text(r)).toBe(ABORTED_RESULT_TEXT);
    const controller = new AbortController();
    await dispatchToolCalls([call('spy')], { tools, signal: controller.signal });
    expect(seen).toBe(controller.signal);
  });
});

describe('events', () => {
  it('reports start, progress updates and end with duration and isError, in order per call', async () => {
    const progress = defineTool({
      name: 'progress',
      description: 'Reports progress',
      inputSchema: objectSchema,
      invoke: async (_args, ctx) => {
        ctx.update({ message: 'half', progress: 0.5 });
        await flush();
        ctx.update({ message: 'done', progress: 1 });
        return `root=${ctx.workspaceRoot} id=${ctx.toolCallId}`;
      },
    });
    let clock = 0;
    const events: ToolEvent[] = [];
    const results = await dispatchToolCalls([call('progress', {}, 'p1'), call('missing', {}, 'm1')], {
      tools: new ToolRegistry([[progress]]),
      workspaceRoot: '/work/space',
      now: () => (clock += 10),
      onEvent: (e) => events.push(e),
    });
    expect(text(results[0])).toBe('root=/work/space id=p1');
    const p1 = events.filter((e) => e.toolCallId === 'p1');
    expect(p1.map((e) => e.type)).toEqual([
      'tool_call_start',
      'tool_call_update',
      'tool_call_update',
      'tool_call_end',
    ]);
    expect(p1[1]).toMatchObject({ update: { message: 'half', progress: 0.5 } });
    const end = p1[3];
    expect(
      end?.type === 'tool_call_end' && end.durationMs > 0 && !end.isError && end.result === results[0],
    ).toBe(true);
    const m1 = events.filter((e) => e.toolCallId === 'm1');
    expect(m1.map((e) => e.type)).toEqual(['tool_call_start', 'tool_call_end']);
    expect(m1[1]).toMatchObject({
      isError: true,
      aborted: false,
      started: true,
      toolName: 'missing',
      index: 1,
    });
  });

  it('ignores updates after the end and survives a throwing listener', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    let lateUpdate: (() => void) | undefined;
    const leaky = defineTool({
      name: 'leaky',
      description: 'Keeps its context',
      inputSchema: objectSchema,
      invoke: (_args, ctx) => {
        lateUpdate = () => ctx.update({ message: 'late' });
        return 'ok';
      },
    });
    const types: string[] = [];
    const results = await dispatchToolCalls([call('leaky')], {
      tools: new ToolRegistry([[leaky]]),
      onEvent: (e) => {
        types.push(e.type);
        throw new Error('listener bug');
      },
    });
    lateUpdate?.();
    expect(text(results[0])).toBe('ok');
    expect(types).toEqual(['tool_call_start', 'tool_call_end']);
    await flush();
    expect(warnings.map((w) => (w as Error & { code?: string }).code)).toEqual(['PANTO_LISTENER_THREW']);
    process.off('warning', onWarning);
  });
});

// A Tool type check: defineTool's result is usable wherever a Tool is.
const _typed: Tool = echo;
void _typed;
