// a v2 server over stdio serving one tool, both eras
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';
serveStdio(() => {
  const s = new McpServer({ name: 'v2s', version: '1' }, { capabilities: { tools: {} } });
  s.registerTool('echo', { description: 'echo', inputSchema: z.object({ text: z.string() }) }, async ({ text }, ctx) => ({ content: [{ type: 'text', text: `echo ${text}` }] }));
  return s;
});
