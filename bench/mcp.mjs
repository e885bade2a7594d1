// Benchmark for MCP (issues 17, 33): what a trivial tool call costs through MCP, per protocol generation (2025-11-25
// with its initialize handshake and session, 2026-07-28 stateless) and transport (stdio, Streamable HTTP), with our
// client (McpToolSource under dispatchToolCalls) next to the official SDK v2 client (@modelcontextprotocol/client),
// both calling the same `panto mcp serve`; and a direct Lua call as the floor, server-everything as the peer server.
// Imports the built library: run `npm run build:ts` (and have the addon built) first, then `npm run bench:mcp`.
//
// One trivial Lua tool (`add`) is called N times, one call at a time, after a warm-up. The headline is CPU time per
// call of this process and its child processes (the server), all threads (Linux: /proc; elsewhere this process only,
// said so), beside the wall-clock median and p95. Ratios: the official client / ours, per cell.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

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
const TOKEN = 'bench-mcp-token-0123456789abcdef';
const work = await mkdtemp(path.join(tmpdir(), 'panto-bench-mcp-'));
await writeFile(
  path.join(work, 'add.lua'),
  `return { name = "add", description = "add two integers",
    parameters = { type = "object", properties = { a = { type = "integer" }, b = { type = "integer" } },
                   required = { "a", "b" } },
    handler = function(args) return tostring(args.a + args.b) end }`,
);
const serveArgs = [path.join(dist, 'cli/main.js'), 'mcp', 'serve', '--tools', work, '--workspace', work];

// CPU of this process's children (the servers), ms, from /proc (Linux); undefined elsewhere.
const TICK_MS = 10; // USER_HZ is 100 on Linux
const procCpu = existsSync('/proc/self/stat');
function childrenCpuMs() {
  if (!procCpu) return 0;
  let ms = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === process.pid) ms += (Number(f[11]) + Number(f[12])) * TICK_MS;
    } catch {
      // gone meanwhile
    }
  }
  return ms;
}
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000 + childrenCpuMs();
};

async function measure(label, once) {
  for (let i = 0; i < WARMUP; i++) await once(i);
  const times = [];
  const cpu0 = cpuMs();
  const t00 = performance.now();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await once(i);
    times.push(performance.now() - t0);
  }
  const wallTotal = performance.now() - t00;
  const cpu = (cpuMs() - cpu0) / N;
  times.sort((a, b) => a - b);
  const r = { label, cpu, median: times[Math.floor(N / 2)], p95: times[Math.floor(N * 0.95)], wallTotal };
  const us = (ms) => (ms * 1000).toFixed(0).padStart(6);
  console.log(
    `${label.padEnd(26)} CPU ${us(r.cpu)} µs/call   wall median ${us(r.median)} µs   p95 ${us(r.p95)} µs`,
  );
  return r;
}

function viaDispatch(source, name) {
  return async (i) => {
    const [r] = await dispatchToolCalls([{ type: 'tool_call', id: `c${i}`, name, input: { a: i, b: 1 } }], {
      tools: source,
    });
    if (r.isError || !(r.parts[0]?.text ?? '').includes(String(i + 1)))
      throw new Error(`bad result: ${JSON.stringify(r.parts)}`);
  };
}

function viaSdk(client) {
  return async (i) => {
    const r = await client.callTool({ name: 'add', arguments: { a: i, b: 1 } });
    if (r.content[0]?.text !== String(i + 1)) throw new Error(`bad result: ${JSON.stringify(r.content)}`);
  };
}

/** `panto mcp serve --http 0`; its URL once it listens. */
async function serveHttp() {
  const child = spawn(process.execPath, [...serveArgs, '--http', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PANTO_MCP_TOKEN: TOKEN },
  });
  const url = await new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (c) => {
      err += c;
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`panto mcp serve --http exited (${code}): ${err}`)));
  });
  return { child, url };
}

const ERAS = {
  '2025-11-25': { ours: '2025-11-25', sdk: 'legacy' },
  '2026-07-28': { ours: 'auto', sdk: 'auto' },
};
const cells = [];
try {
  console.log(
    `MCP bench: ${N} sequential calls each (after ${WARMUP} warm-up), node ${process.version}, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )}; CPU = ${procCpu ? 'this process + its servers, all threads' : 'this process only (no /proc)'}`,
  );
  const lua = await LuaToolSource.fromDir(work, { workspaceRoot: work });
  const direct = await measure('direct Lua (in process)', viaDispatch(lua, 'add'));
  await lua.close();

  const http = await serveHttp();
  try {
    for (const transport of ['stdio', 'http']) {
      for (const [era, mode] of Object.entries(ERAS)) {
        const server =
          transport === 'stdio'
            ? { type: 'stdio', command: process.execPath, args: serveArgs }
            : { type: 'http', url: http.url, headers: { Authorization: `Bearer ${TOKEN}` } };
        const mcp = new McpToolSource({ panto: { ...server, protocol: mode.ours } });
        await mcp.start();
        if (mcp.protocolVersion('panto') !== era)
          throw new Error(`ours negotiated ${mcp.protocolVersion('panto')}`);
        const ours = await measure(`${transport} ${era} ours`, viaDispatch(mcp, 'panto__add'));
        await mcp.close();

        const client = new Client(
          { name: 'bench', version: '1' },
          { versionNegotiation: { mode: mode.sdk } },
        );
        await client.connect(
          transport === 'stdio'
            ? new StdioClientTransport({ command: process.execPath, args: serveArgs, stderr: 'ignore' })
            : new StreamableHTTPClientTransport(new URL(http.url), {
                requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
              }),
        );
        if (client.getNegotiatedProtocolVersion() !== era)
          throw new Error(`the SDK negotiated ${client.getNegotiatedProtocolVersion()}`);
        const sdk = await measure(`${transport} ${era} official`, viaSdk(client));
        await client.close();
        cells.push({ transport, era, ours, sdk });
      }
    }
  } finally {
    http.child.kill();
  }

  const ev = new McpToolSource({
    everything: { type: 'stdio', command: process.execPath, args: [everything] },
  });
  await ev.start();
  const peer = await measure(
    `stdio ${ev.protocolVersion('everything')} ours→everything`,
    viaDispatch(ev, 'everything__get-sum'),
  );
  await ev.close();

  console.log('');
  console.log('official SDK v2 client / ours, same server (CPU per call; wall median):');
  for (const c of cells) {
    console.log(
      `  ${c.transport.padEnd(5)} ${c.era}   CPU ${(c.sdk.cpu / c.ours.cpu).toFixed(2)}x   wall ${(c.sdk.median / c.ours.median).toFixed(2)}x`,
    );
  }
  const stdio25 = cells.find((c) => c.transport === 'stdio' && c.era === '2025-11-25');
  const stdio26 = cells.find((c) => c.transport === 'stdio' && c.era === '2026-07-28');
  const http25 = cells.find((c) => c.transport === 'http' && c.era === '2025-11-25');
  const http26 = cells.find((c) => c.transport === 'http' && c.era === '2026-07-28');
  console.log('2026-07-28 / 2025-11-25, ours (CPU per call; wall median):');
  for (const [t, a, b] of [
    ['stdio', stdio25, stdio26],
    ['http', http25, http26],
  ]) {
    console.log(
      `  ${t.padEnd(5)}   CPU ${(b.ours.cpu / a.ours.cpu).toFixed(2)}x   wall ${(b.ours.median / a.ours.median).toFixed(2)}x`,
    );
  }
  console.log(
    `MCP stdio (2025) round trip vs direct Lua: CPU ${(stdio25.ours.cpu / direct.cpu).toFixed(1)}x, wall ${(stdio25.ours.median / direct.median).toFixed(1)}x (+${((stdio25.ours.median - direct.median) * 1000).toFixed(0)} µs per call)`,
  );
  console.log(
    `our server vs server-everything (peer), our client, stdio 2025: CPU ${(stdio25.ours.cpu / peer.cpu).toFixed(2)}x, wall ${(stdio25.ours.median / peer.median).toFixed(2)}x`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
