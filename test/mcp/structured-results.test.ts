/**
 * Structured results and tool annotations, both ways: a Lua tool's `output_schema`, `structured` result and
 * `read_only`/`destructive`/... served over MCP (checked against the schema before it leaves), and an MCP tool's
 * `structuredContent`, annotations and icons reaching the model as text, the host as data, and the approval rule.
 */

import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LuaToolSource } from '../../src/lua/lua-tool-source.js';
import { type McpHttpServer, serveMcpHttp } from '../../src/mcp/mcp-http-server.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';
import { McpToolSource } from '../../src/mcp/mcp-tool-source.js';
import { dispatchToolCalls } from '../../src/tools/dispatch.js';

const LUA = fileURLToPath(new URL('../fixtures/mcp/lua-structured/', import.meta.url));
const LUA_BAD = fileURLToPath(new URL('../fixtures/mcp/lua-structured-bad/', import.meta.url));

const COUNT_ICONS = [
  { src: 'https://example.com/count.svg', mimeType: 'image/svg+xml', sizes: ['any'] },
  { src: 'data:image/png;base64,iVBORw0KGgo=', sizes: ['16x16'], theme: 'dark' },
];

let lua: LuaToolSource;
beforeAll(async () => {
  lua = await LuaToolSource.fromDir(LUA, { includeBuiltins: false });
});
afterAll(() => lua?.close());

async function sdkClient(): Promise<Client> {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(lua).connect(serverSide);
  const client = new Client({ name: 'structured-test', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('a Lua tool with output_schema and annotations, served over MCP', () => {
  it('tools/list carries outputSchema and the annotations as MCP hints', async () => {
    const client = await sdkClient();
    try {
      const { tools } = await client.listTools();
      const count = tools.find((t) => t.name === 'count_words');
      expect(count?.outputSchema).toEqual({
        type: 'object',
        properties: { count: { type: 'integer' }, longest: { type: 'string' } },
        required: ['count'],
      });
      expect(count?.annotations).toEqual({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
      expect(count?.icons).toEqual(COUNT_ICONS);
      expect(tools.find((t) => t.name === 'wipe')?.annotations).toEqual({
        destructiveHint: true,
        openWorldHint: false,
      });
    } finally {
      await client.close();
    }
  });

  it('a structured result goes out as structuredContent, with its JSON as the text when the tool gave none', async () => {
    const client = await sdkClient();
    try {
      const res = await client.callTool({ name: 'count_words', arguments: { text: 'one three five' } });
      expect(res.structuredContent).toEqual({ count: 3, longest: 'three' });
      expect(res.content).toEqual([{ type: 'text', text: '{"count":3,"longest":"three"}' }]);
      const said = await client.callTool({ name: 'count_words', arguments: { text: 'say it' } });
      expect(said.structuredContent).toEqual({ count: 2, longest: 'say' });
      expect(said.content).toEqual([{ type: 'text', text: '2 words' }]);
    } finally {
      await client.close();
    }
  });

  it('a structured result that does not match the schema, or none, is not sent: an error result says why', async () => {
    const client = await sdkClient();
    try {
      const wrong = await client.callTool({ name: 'wrong_shape', arguments: {} });
      expect(wrong.isError).toBe(true);
      expect(wrong.structuredContent).toBeUndefined();
      expect(JSON.stringify(wrong.content)).toContain(
        'its structured result does not match the tool\'s outputSchema:\\n- at /count: must be integer (rule: type), received \\"three\\"',
      );
      const none = await client.callTool({ name: 'wrong_shape', arguments: { none: true } });
      expect(none.isError).toBe(true);
      expect(JSON.stringify(none.content)).toContain('no structured result was returned');
    } finally {
      await client.close();
    }
  });

  it('fields of the wrong kind are load errors naming the field; the other tools load', async () => {
    const bad = await LuaToolSource.fromDir(LUA_BAD, { includeBuiltins: false });
    try {
      expect(bad.list().map((d) => d.name)).toEqual(['d']);
      expect(bad.list()[0]?.annotations).toEqual({ destructive: false });
      const messages = bad.loadErrors.map((e) => e.message);
      expect(messages).toEqual([
        expect.stringContaining("tool 'a': 'read_only' must be true or false, got string"),
        expect.stringContaining("tool 'b': 'output_schema' must describe an object"),
        expect.stringContaining("tool 'c': 'output_schema' must be a table, got string"),
        expect.stringContaining(
          "tool 'e': 'icons': icon 1: src must be https: or a data: image, got javascript:",
        ),
        expect.stringContaining("tool 'f': 'icons' must be a list of tables, got string"),
      ]);
    } finally {
      await bad.close();
    }
  });
});

describe('an MCP tool with structuredContent and annotations, as a tool source', () => {
  let server: McpHttpServer;
  beforeAll(async () => {
    server = await serveMcpHttp(lua);
  });
  afterAll(() => server?.close());

  const source = (options: ConstructorParameters<typeof McpToolSource>[1] = {}, needsApproval?: boolean) =>
    new McpToolSource(
      {
        s: {
          type: 'http',
          url: server.url,
          headers: { Authorization: `Bearer ${server.authToken}` },
          ...(needsApproval === undefined ? {} : { needsApproval }),
        },
      },
      options,
    );

  it('the model reads the text, the host gets the value in meta.structuredContent; annotations reach the declaration', async () => {
    const mcp = source();
    try {
      await mcp.start();
      const decl = mcp.list().find((d) => d.name === 's__count_words');
      expect(decl?.annotations).toEqual({ readOnly: true, idempotent: true, openWorld: false });
      expect(decl?.icons).toEqual(COUNT_ICONS);
      expect(decl?.outputSchema).toMatchObject({ type: 'object', required: ['count'] });
      const [block] = await dispatchToolCalls(
        [{ type: 'tool_call', id: 'c1', name: 's__count_words', input: { text: 'a bb ccc' } }],
        { tools: mcp },
      );
      expect(block?.parts).toEqual([{ type: 'text', text: '{"count":3,"longest":"ccc"}' }]);
      expect(block?.meta).toEqual({
        mcpServer: 's',
        mcpTool: 'count_words',
        structuredContent: { count: 3, longest: 'ccc' },
      });
    } finally {
      await mcp.close();
    }
  });

  it('approval: a destructive tool, or one that does not say it is safe, needs it; read-only ones do not; the host decides otherwise', async () => {
    const byDefault = source();
    const none = source({ approval: 'none' });
    const custom = source({ approval: (_server, tool) => tool === 'count_words' });
    // The server's own config entry overrides the source's policy both ways.
    const allByConfig = source({ approval: 'none' }, true);
    const noneByConfig = source({}, false);
    const all = [byDefault, none, custom, allByConfig, noneByConfig];
    try {
      await Promise.all(all.map((s) => s.start()));
      const needs = (s: McpToolSource) =>
        Object.fromEntries(s.list().map((d) => [d.name, d.needsApproval === true]));
      // wrong_shape has no annotations: MCP's defaults make it destructive.
      expect(needs(byDefault)).toEqual({ s__count_words: false, s__wrong_shape: true, s__wipe: true });
      expect(needs(none)).toEqual({ s__count_words: false, s__wrong_shape: false, s__wipe: false });
      expect(needs(custom)).toEqual({ s__count_words: true, s__wrong_shape: false, s__wipe: false });
      expect(needs(allByConfig)).toEqual({ s__count_words: true, s__wrong_shape: true, s__wipe: true });
      expect(needs(noneByConfig)).toEqual({ s__count_words: false, s__wrong_shape: false, s__wipe: false });
      expect(() => source({ approval: 'sometimes' as never })).toThrow(/approval must be/);
    } finally {
      await Promise.all(all.map((s) => s.close()));
    }
  });
});
