import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpToolSource, dispatchToolCalls } from './dist/index.js';
const s = new McpToolSource({ v: { type: 'stdio', command: process.execPath, args: ['test/fixtures/mcp/v2-server.mjs'] } }, { log: (e) => console.log('log', e.message) });
console.log(await s.start(), s.protocolVersion('v'), s.list().map((d) => d.name));
const blocks = await dispatchToolCalls([{ type: 'tool_call', id: '1', name: 'v__measure', input: { text: 'a b' } }, { type: 'tool_call', id: '2', name: 'v__picture', input: {} }], { tools: s });
console.log(JSON.stringify(blocks).slice(0, 800));
await s.close();
