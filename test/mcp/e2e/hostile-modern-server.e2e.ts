/**
 * Hostile servers of the 2026-07-28 generation against `McpToolSource` (test/fixtures/mcp/hostile-modern-server.mjs,
 * raw JSON-RPC on stdio): an `input_required` loop, a `server/discover` that lies or names only a future version or
 * answers garbage, tool lists with a TTL of 0 or of a century. Each case is bounded by its test timeout, far below the
 * call timeouts it could otherwise fall back on.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpLogEntry } from '../../../src/mcp/mcp-connection.js';
import { MAX_TOOLS_TTL_MS } from '../../../src/mcp/mcp-connection.js';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { dispatchToolCalls } from '../../../src/tools/dispatch.js';
import { HOSTILE_MODERN } from './servers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'panto-mcp-hostile-modern-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let n = 0;
async function started(mode: string, log?: McpLogEntry[]) {
  const state = join(dir, `state-${++n}`);
  const source = new McpToolSource(
    {
      h: {
        type: 'stdio',
        command: process.execPath,
        args: [HOSTILE_MODERN, mode],
        env: { HOSTILE_STATE: state },
      },
    },
    { initTimeoutMs: 10_000, callTimeoutMs: 10_000, ...(log ? { log: (e) => log.push(e) } : {}) },
  );
  const report = await source.start();
  const requests = async () => (await readFile(state, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { source, report, requests };
}

const call = async (source: McpToolSource, name: string) =>
  (await dispatchToolCalls([{ type: 'tool_call', id: name, name, input: {} }], { tools: source }))[0];

describe('hostile 2026-07-28 servers', () => {
  it('input_required for ever: the call ends with an error result after a bounded number of rounds', {
    timeout: 20_000,
  }, async () => {
    const { source, report, requests } = await started('input-loop');
    try {
      expect(report.started).toEqual(['h']);
      expect(source.protocolVersion('h')).toBe('2026-07-28');
      const r = await call(source, 'h__ask');
      expect(r?.isError).toBe(true);
      const text = r?.parts[0]?.type === 'text' ? r.parts[0].text : '';
      expect(text).toBe(
        "MCP server 'h' asked for input during the call (elicitation/create), which this host does not give (no elicitation, sampling or roots); the call did not complete",
      );
      const asks = (await requests()).filter((l) => l === 'tools/call ask');
      expect(asks.length).toBeGreaterThanOrEqual(1);
      expect(asks.length).toBeLessThanOrEqual(3);
      // The connection is still good.
      expect((await call(source, 'h__ok'))?.parts).toEqual([{ type: 'text', text: 'ok' }]);
    } finally {
      await source.close();
    }
  });

  it('a server/discover that claims 2026-07-28 and then answers nothing: start() fails with the reason, at once', {
    timeout: 20_000,
  }, async () => {
    const { source, report } = await started('discover-lies');
    try {
      expect(report.started).toEqual([]);
      expect(report.failed[0]?.error).toMatch(/could not be started: .*Method not found: tools\/list/);
    } finally {
      await source.close();
    }
  });

  it('a server/discover naming only a future version, or garbage: the 2025 handshake instead', {
    timeout: 20_000,
  }, async () => {
    for (const mode of ['discover-future', 'discover-garbage']) {
      const { source, report, requests } = await started(mode);
      try {
        expect(report.started).toEqual(['h']);
        expect(source.protocolVersion('h')).toBe('2025-11-25');
        expect((await requests()).slice(0, 2)).toEqual(['server/discover -', 'initialize -']);
        expect((await call(source, 'h__ok'))?.parts).toEqual([{ type: 'text', text: 'ok' }]);
      } finally {
        await source.close();
      }
    }
  });

  it('a tool list with ttlMs 0 is not fetched again on every call; one of a century is fetched again within a day', {
    timeout: 20_000,
  }, async () => {
    const zero = await started('ttl-zero');
    try {
      for (let i = 0; i < 20; i++) expect((await call(zero.source, 'h__ok'))?.isError).toBe(false);
      expect((await zero.requests()).filter((l) => l.startsWith('tools/list'))).toHaveLength(1);
    } finally {
      await zero.source.close();
    }
    const years = await started('ttl-years');
    try {
      expect(years.source.protocolVersion('h')).toBe('2026-07-28');
      const staleAt = years.source.toolsStaleAt('h') ?? Number.POSITIVE_INFINITY;
      expect(staleAt - Date.now()).toBeLessThanOrEqual(MAX_TOOLS_TTL_MS);
      expect(staleAt - Date.now()).toBeGreaterThan(MAX_TOOLS_TTL_MS - 60_000);
    } finally {
      await years.source.close();
    }
  });
});
