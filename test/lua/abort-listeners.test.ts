/**
 * Many in-thread Lua tool calls sharing one AbortSignal (one agent turn's signal, many tool calls) must not add one
 * abort listener each: past 10 listeners Node prints MaxListenersExceededWarning ("Possible EventTarget memory leak").
 * The runtime watches each signal once and fans out to the calls waiting on it.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ctx, loadTools, tool } from './lua-test-helpers.js';

const TOOLS: Record<string, string> = {
  'reader.lua': tool(
    'reader',
    `
  local total = 0
  for i = 1, 3 do
    local data, err = panto.read_file("data.txt")
    if not data then return nil, err end
    total = total + #data
  end
  return tostring(total)`,
  ),
  'spin.lua': tool('spin', 'while true do end'),
};

describe('one abort listener per signal, however many calls wait on it', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it('30 queued calls (8 running, the rest waiting for a slot) on one signal: no warning, all complete', async () => {
    const e = await loadTools(TOOLS, { maxConcurrentCalls: 8 });
    await writeFile(path.join(e.workspace, 'data.txt'), 'x'.repeat(100));
    const signal = new AbortController().signal;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => e.source.call('reader', {}, ctx(e.workspace, `c${i}`, signal))),
    );
    expect(results).toEqual(
      Array.from({ length: 30 }, () => ({ ok: true, parts: [{ type: 'text', text: '300' }] })),
    );
    // Warnings are emitted on the next tick.
    await new Promise((r) => setImmediate(r));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });

  it('aborting that signal still stops every running and queued call', async () => {
    const e = await loadTools(TOOLS, { maxConcurrentCalls: 4, budgets: { instructions: 1e12 } });
    const ac = new AbortController();
    const calls = Array.from({ length: 30 }, (_, i) =>
      e.source.call('spin', {}, ctx(e.workspace, `s${i}`, ac.signal)),
    );
    setTimeout(() => ac.abort(), 20);
    const results = await Promise.all(calls);
    for (const r of results) expect(r).toMatchObject({ ok: false });
    expect(results.filter((r) => !r.ok && r.error === 'aborted').length).toBeGreaterThan(0);
    await new Promise((r) => setImmediate(r));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
