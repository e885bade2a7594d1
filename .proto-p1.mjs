import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from './dist/chunks/stdio-client-transport.js';
class OrderedStdio { constructor(inner) { this.inner = inner; }
  get pid() { return this.inner.pid; } get stderr() { return null; }
  get sessionId() { return this.inner.sessionId; }
  start() { this.inner.onmessage = (m, e) => this.onmessage?.(m, e); this.inner.onclose = () => this.onclose?.(); this.inner.onerror = (e) => this.onerror?.(e); return this.inner.start(); }
  send(m, o) { return this.inner.send(m, o); } close() { return this.inner.close(); } }
async function run(label, params) {
  const c = new Client({ name: 'p', version: '1' }, { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 3000 } } });
  const t = new OrderedStdio(new StdioClientTransport(params, { maxMessageBytes: 1e7, onStderrLine: () => {} }));
  const t0 = Date.now();
  try {
    await c.connect(t);
    console.log(label, 'era', c.getProtocolEra?.(), c.getNegotiatedProtocolVersion?.(), Date.now() - t0, 'ms');
    const tools = await c.listTools();
    console.log(label, tools.tools.map((x) => x.name).slice(0, 4), tools.ttlMs, tools.cacheScope);
    const r = await c.callTool({ name: 'echo', arguments: { text: 'hi', message: 'hi' } });
    console.log(label, JSON.stringify(r).slice(0, 200));
  } catch (e) { console.log(label, 'ERR', e.message); }
  await c.close();
}
await run('everything', { command: process.execPath, args: ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'] });
await run('v2', { command: process.execPath, args: ['.proto-v2server.mjs'] });
