// The MCP HTTP server's memory under clients that never read their responses (issue 36): `panto mcp serve --http`
// (a child process, serving test/fixtures/mcp/lua-big), N connections that each initialize a session and then POST a
// batch of calls to `big_text` (~1 MB of text each) and never read a byte. The server's RSS is sampled for a while;
// prints the baseline and the peak. With --max-rss-mib=M it exits 1 when the peak passes M (a bound, not a timing).
// Then a polite client must still be served, within the unsent-bytes budget's drain timeout.
//
// Usage: node test/mcp/never-reading-clients.mjs [--connections=10] [--batch=60] [--seconds=20] [--max-rss-mib=M]
//        [--extra=--flag,value] (after npm run build:ts)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? fallback : a.slice(name.length + 3);
};
const connections = Number(arg('connections', 10));
const batch = Number(arg('batch', 60));
const seconds = Number(arg('seconds', 20));
const maxRss = arg('max-rss-mib', undefined);
const extra = arg('extra', '')
  .split(',')
  .filter((x) => x.length > 0);

const server = spawn(
  process.execPath,
  [
    path.join(root, 'dist/cli/main.js'),
    'mcp',
    'serve',
    '--http',
    '0',
    '--tools',
    path.join(root, 'test/fixtures/mcp/lua-big'),
    '--workspace',
    root,
    ...extra,
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
let stderr = '';
const started = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`panto mcp serve did not start: ${stderr}`)), 30_000);
  server.stderr.on('data', (c) => {
    stderr += c;
    const url = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1];
    const token = /token: (\S+)/.exec(stderr)?.[1];
    // The token line (when auth is on) comes before the serving line.
    if (url) {
      clearTimeout(timer);
      resolve({ url, token });
    }
  });
  server.on('exit', (code) => reject(new Error(`panto mcp serve exited (${code}): ${stderr}`)));
});
const { url, token } = started;
const port = Number(new URL(url).port);
const auth = token ? { authorization: `Bearer ${token}` } : {};

const rssMiB = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

async function initialize() {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'never-reads', version: '1' },
      },
    }),
  });
  await res.text();
  const session = res.headers.get('mcp-session-id');
  if (!session) throw new Error(`initialize got ${res.status} without a session`);
  const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await (
    await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
        ...auth,
      },
      body: note,
    })
  ).text();
  return session;
}

/** POST a batch of `batch` calls on a raw socket and never read the answer. */
function neverRead(session, n) {
  const body = JSON.stringify(
    Array.from({ length: batch }, (_, i) => ({
      jsonrpc: '2.0',
      id: n * 1000 + i,
      method: 'tools/call',
      params: { name: 'big_text', arguments: {} },
    })),
  );
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => {});
  sock.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\n` +
      `MCP-Protocol-Version: 2025-06-18\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  sock.pause();
  return sock;
}

const baseline = rssMiB();
const sessions = [];
for (let i = 0; i < connections; i++) sessions.push(await initialize());
const sockets = sessions.map((s, i) => neverRead(s, i));
let peak = baseline;
const t0 = Date.now();
while (Date.now() - t0 < seconds * 1000) {
  await new Promise((r) => setTimeout(r, 250));
  peak = Math.max(peak, rssMiB());
}
const end = rssMiB();

// A polite client is still served (its own session, one small call).
const polite = await (async () => {
  try {
    const session = await initialize();
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
        ...auth,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'big_text', arguments: { bytes: 10 } },
      }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return res.status === 200 && text.includes('xxxxxxxxxx')
      ? 'served'
      : `HTTP ${res.status}: ${text.slice(0, 200)}`;
  } catch (err) {
    return `failed: ${err.message}`;
  }
})();

for (const s of sockets) s.destroy();
server.kill('SIGTERM');
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `${connections} never-reading connections x ${batch} calls of ~1 MB, ${seconds} s: server RSS baseline ${baseline.toFixed(0)} MiB, ` +
    `peak ${peak.toFixed(0)} MiB, at the end ${end.toFixed(0)} MiB; a polite client afterwards: ${polite} (load ${load})`,
);
let bad = polite !== 'served';
if (maxRss !== undefined && peak > Number(maxRss)) {
  console.log(`FAIL: peak RSS ${peak.toFixed(0)} MiB is over --max-rss-mib=${maxRss}`);
  bad = true;
}
process.exit(bad ? 1 : 0);
