// Benchmark for MCP (issue 17): what a trivial tool call costs through MCP over stdio, next to a direct Lua call.
// Imports the built library: run `npm run build:ts` (and have the addon built) first, then `npm run bench:mcp`.
//
// One trivial Lua tool (`add`) is called N times, one call at a time, after a warm-up, by:
//   A. direct       dispatchToolCalls -> LuaToolSource (in process)
//   B. mcp/panto    dispatchToolCalls -> McpToolSource -> stdio -> `panto mcp serve` -> the same Lua tool
//   C. sdk/panto    the official SDK Client -> stdio -> `panto mcp serve` (no dispatch on the client side)
//   D. mcp/everything  dispatchToolCalls -> McpToolSource -> stdio -> @modelcontextprotocol/server-everything `get-sum`
//                   (the reference TypeScript server: the peer for our server side)
// Prints the median and p95 per call and the ratios to A (the MCP overhead) and of B to D.

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
if (!existsSync(path.join(dist, 'index.js'))) {
  console.error('bench:mcp needs the built library (dist/ is missing): run `npm run build:ts` first.');
  process.exit(1);
}
const { dispatchToolCalls, LuaToolSource, McpToolSource } = await import(path.join(dist, 'index.js'));
const require = createRequire(import.meta.url);
const everything = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

const N = Number(process.env.BENCH_MCP_CALLS ?? 300);
const WARMUP = 30;
const work = await mkdtemp(path.join(tmpdir(), 'panto-bench-mcp-'));
await writeFile(
  path.join(work, 'add.lua'),
  `return { name = "add", description = "add two integers",
    parameters = { type = "object", properties = { a = { type = "integer" }, b = { type = "integer" } },
                   required = { "a", "b" } },
    handler = function(args) return tostring(args.a + args.b) end }`,
);
const serveArgs = [path.join(dist, 'cli/main.js'), 'mcp', 'serve', '--tools', work, '--workspace', work];

async function measure(label, once) {
  for (let i = 0; i < WARMUP; i++) await once(i);
  const times = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await once(i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const r = { label, median: times[Math.floor(N / 2)], p95: times[Math.floor(N * 0.95)] };
  console.log(
    `${label.padEnd(16)} median ${(r.median * 1000).toFixed(0).padStart(6)} µs   p95 ${(r.p95 * 1000).toFixed(0).padStart(6)} µs`,
  );
  return r;
}

function viaDispatch(source, name, input, check) {
  return async (i) => {
    const [r] = await dispatchToolCalls([{ type: 'tool_call', id: `c${i}`, name, input: input(i) }], {
      tools: source,
    });
    if (r.isError || !check(r.parts[0]?.text ?? '', i))
      throw new Error(`bad result: ${JSON.stringify(r.parts)}`);
  };
}

const rows = [];
try {
  console.log(`MCP bench: ${N} sequential calls each (after ${WARMUP} warm-up), node ${process.version}`);
  const lua = await LuaToolSource.fromDir(work, { workspaceRoot: work });
  rows.push(
    await measure(
      'A direct Lua',
      viaDispatch(
        lua,
        'add',
        (i) => ({ a: i, b: 1 }),
        (t, i) => t === String(i + 1),
      ),
    ),
  );

  const mcp = new McpToolSource({ panto: { type: 'stdio', command: process.execPath, args: serveArgs } });
  await mcp.start();
  rows.push(
    await measure(
      'B mcp/panto',
      viaDispatch(
        mcp,
        'panto__add',
        (i) => ({ a: i, b: 1 }),
        (t, i) => t === String(i + 1),
      ),
    ),
  );
  await mcp.close();

  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: serveArgs, stderr: 'ignore' }),
  );
  rows.push(
    await measure('C sdk/panto', async (i) => {
      const r = await client.callTool({ name: 'add', arguments: { a: i, b: 1 } });
      if (r.content[0]?.text !== String(i + 1)) throw new Error('bad result');
    }),
  );
  await client.close();

  const ev = new McpToolSource({
    everything: { type: 'stdio', command: process.execPath, args: [everything] },
  });
  await ev.start();
  rows.push(
    await measure(
      'D mcp/everything',
      viaDispatch(
        ev,
        'everything__get-sum',
        (i) => ({ a: i, b: 1 }),
        (t, i) => t.includes(String(i + 1)),
      ),
    ),
  );
  await ev.close();

  const [a, b, c, d] = rows;
  console.log('');
  console.log(
    `MCP stdio round trip vs direct Lua call: B/A ${(b.median / a.median).toFixed(1)}x (+${((b.median - a.median) * 1000).toFixed(0)} µs per call)`,
  );
  console.log(`official SDK client vs ours, same server:  C/B ${(c.median / b.median).toFixed(2)}x`);
  console.log(`our server vs server-everything (peer):   B/D ${(b.median / d.median).toFixed(2)}x`);
} finally {
  await rm(work, { recursive: true, force: true });
}
