/**
 * A hostile client against `panto mcp serve` over stdio: a real child process (the built CLI, `npm run build:ts`)
 * with the real fengari Lua tools, driven with raw bytes on its pipes.
 */

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LUA_TOOLS, PANTO_CLI } from './servers.js';

const INIT = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
})}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n`;
const SIMPLE = (id: number) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } })}\n`;

interface Served {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<{ code: number | null; signal: string | null }>;
  stderr: () => string;
}

function serve(flags: string[] = []): Served {
  const child = spawn(process.execPath, [PANTO_CLI, 'mcp', 'serve', '--tools', LUA_TOOLS, ...flags], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdin.on('error', () => {});
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stderr: () => stderr };
}

/** Collect stdout lines until `done(lines)` holds. */
function readUntil(
  child: ChildProcessWithoutNullStreams,
  done: (lines: string[]) => boolean,
): Promise<string[]> {
  const lines: string[] = [];
  let rest = '';
  return new Promise((resolve) => {
    const onData = (c: Buffer) => {
      const parts = (rest + c.toString()).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
      if (done(lines)) {
        child.stdout.off('data', onData);
        resolve(lines);
      }
    };
    child.stdout.on('data', onData);
  });
}

const bounded = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing in ${ms} ms`)), ms)),
  ]);

/** End the session; a child that does not exit on its own within 5 s is killed. */
async function stop(s: Served): Promise<void> {
  s.child.stdin.end();
  s.child.stdout.resume();
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 5_000);
  await s.exited;
  clearTimeout(timer);
}

const rssKiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

describe('panto mcp serve (stdio) against a hostile client', () => {
  it('binary garbage and non-JSON-RPC lines get JSON-RPC errors with id null; the next request is answered', async () => {
    const s = serve();
    try {
      s.child.stdin.write(INIT);
      s.child.stdin.write(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x0a, 0x7b, 0x0a, 0x5b, 0x5d, 0x0a]));
      s.child.stdin.write('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n');
      s.child.stdin.write(SIMPLE(5));
      const lines = await bounded(
        readUntil(s.child, (l) => l.some((x) => x.includes('"id":5'))),
        20_000,
        'answer after garbage',
      );
      expect(lines.find((x) => x.includes('"id":5'))).toContain('simple text response');
      // The binary line and '{' (not JSON: -32700), '[]' and the object id (JSON, not JSON-RPC: -32600).
      const codes = lines.flatMap((x) => {
        const m = JSON.parse(x) as { id?: unknown; error?: { code: number } };
        return m.error && m.id === null ? [m.error.code] : [];
      });
      expect(codes).toEqual([-32700, -32700, -32600, -32600]);
    } finally {
      await stop(s);
    }
  });

  it('--max-result-bytes and --max-message-bytes reach the server: a bigger result is an error result, a longer line ends the session', async () => {
    const s = serve(['--max-result-bytes', '20', '--max-message-bytes', '4096']);
    s.child.stdin.write(INIT);
    s.child.stdin.write(SIMPLE(5));
    const lines = await bounded(
      readUntil(s.child, (l) => l.some((x) => x.includes('"id":5'))),
      20_000,
      'a result over the cap',
    );
    const answer = JSON.parse(lines.find((x) => x.includes('"id":5')) ?? '{}') as {
      result?: { isError?: boolean; content?: Array<{ text: string }> };
    };
    expect(answer.result?.isError).toBe(true);
    expect(answer.result?.content?.[0]?.text).toMatch(/over maxResultBytes \(20\)/);
    s.child.stdin.write(Buffer.alloc(5000, 0x61));
    expect(await bounded(s.exited, 20_000, 'exit after a line over 4096 bytes')).toEqual({
      code: 0,
      signal: null,
    });
  });

  it('a line over 10 MiB without a newline ends the session: the process exits cleanly instead of buffering on', async () => {
    const s = serve();
    s.child.stdin.write(INIT);
    await bounded(
      readUntil(s.child, (l) => l.length > 0),
      20_000,
      'initialize',
    );
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 12 && s.child.exitCode === null; i++) {
      if (!s.child.stdin.write(mib)) {
        await Promise.race([new Promise((resolve) => s.child.stdin.once('drain', resolve)), s.exited]);
      }
    }
    expect(await bounded(s.exited, 20_000, 'exit after an endless line')).toEqual({ code: 0, signal: null });
    expect(s.stderr()).not.toMatch(/\n\s+at /);
  });

  it('three 9 MiB requests (under the cap) are framed in linear time: all answered, and the session goes on', async () => {
    const s = serve();
    try {
      s.child.stdin.write(INIT);
      await bounded(
        readUntil(s.child, (l) => l.length > 0),
        20_000,
        'initialize',
      );
      const pad = 'a'.repeat(9 * 1024 * 1024);
      // One reader for every answer: the answer to 14 may arrive in the same chunk as 13's.
      const answers = readUntil(s.child, (l) => l.some((x) => x.includes('"id":14')));
      // Written as a pipe delivers it: many 64 KiB reads per line (the SDK's buffer re-copied all of it on each).
      for (let id = 11; id <= 13; id++) {
        s.child.stdin.write(
          `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"_meta":{"pad":"${pad}"}}}\n`,
        );
      }
      // A call after them: the session goes on.
      s.child.stdin.write(SIMPLE(14));
      // A bound against a hang only: linearity itself is pinned without timing (Buffer.concat once per message,
      // test/mcp/stdio-transports.test.ts). (Quadratic framing took 17 s for the three here at load ~9, linear ~2 s.)
      const lines = await bounded(answers, 60_000, 'three 9 MiB pings and a call after them');
      expect(lines.filter((x) => /"id":1[123]/.test(x))).toHaveLength(3);
    } finally {
      await stop(s);
    }
  });

  it('stdin closed while a Lua call runs: the call is aborted and the process exits at once', async () => {
    const s = serve();
    s.child.stdin.write(INIT);
    s.child.stdin.write(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_steps","arguments":{"steps":100000000},"_meta":{"progressToken":"p"}}}\n',
    );
    // The call is running once it reports progress.
    await bounded(
      readUntil(s.child, (l) => l.some((x) => x.includes('notifications/progress'))),
      20_000,
      'progress',
    );
    s.child.stdin.end();
    // The call alone would run until its 30 s budget.
    expect(await bounded(s.exited, 10_000, 'exit after stdin closed')).toEqual({ code: 0, signal: null });
  });

  it('a client that sends 40k requests and reads nothing: the server stops reading instead of buffering answers', async () => {
    const s = serve();
    try {
      s.child.stdin.write(INIT);
      await bounded(
        readUntil(s.child, (l) => l.length > 0),
        20_000,
        'initialize',
      );
      s.child.stdout.pause();
      const before = rssKiB(s.child.pid ?? 0);
      const n = 40_000;
      // ~2.5 KiB of answer per 45-byte request: ~100 MB of answers nobody reads.
      let flood = '';
      for (let i = 1; i <= n; i++) flood += `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}\n`;
      s.child.stdin.write(flood);
      // Give the server time to read what it will read (without backpressure: everything, as fast as it can).
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const grown = rssKiB(s.child.pid ?? 0) - before;
      // Measured at load ~10: +19 MiB with backpressure, +122 MiB (and growing) without.
      expect(grown).toBeLessThan(48 * 1024);
      // The client reads at last: every request is answered.
      const answered = new Set<number>();
      s.child.stdout.resume();
      await bounded(
        readUntil(s.child, (lines) => {
          for (const l of lines.splice(0)) {
            const id = /"id":(\d+)}$/.exec(l)?.[1];
            if (id !== undefined && l.includes('"tools"')) answered.add(Number(id));
          }
          return answered.size === n;
        }),
        60_000,
        'all answers',
      );
      expect(answered.size).toBe(n);
    } finally {
      await stop(s);
    }
  });
});
