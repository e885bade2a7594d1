import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { loadMcpConfig, parseMcpConfig } from '../../src/mcp/mcp-config.js';
import { McpToolSource, namespacedName } from '../../src/mcp/mcp-tool-source.js';

describe('mcpServers config', () => {
  it('reads stdio and http entries, skips disabled ones and ignores keys of other hosts', () => {
    const servers = parseMcpConfig({
      mcpServers: {
        files: { command: 'npx', args: ['-y', 'srv', '/tmp'], env: { K: 'v' }, cwd: '/srv', autoApprove: [] },
        remote: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
        off: { command: 'x', disabled: true },
      },
    });
    expect(servers).toEqual({
      files: { type: 'stdio', command: 'npx', args: ['-y', 'srv', '/tmp'], env: { K: 'v' }, cwd: '/srv' },
      remote: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
    });
  });

  it('reads needsApproval per server', () => {
    expect(
      parseMcpConfig({
        mcpServers: {
          a: { command: 'x', needsApproval: true },
          b: { url: 'http://h/', needsApproval: false },
        },
      }),
    ).toEqual({
      a: { type: 'stdio', command: 'x', needsApproval: true },
      b: { type: 'http', url: 'http://h/' },
    });
  });

  it.each([
    [{ mcpServers: { a: { command: 'x', needsApproval: 'yes' } } }, '"needsApproval" must be true or false'],
    [{ mcpServers: [] }, 'must be an object'],
    [
      { mcpServers: { 'a b': { command: 'x' } } },
      "server 'a b' a server name must be 1-32 of the characters",
    ],
    // One-to-one names: `evil_` + `deploy` would meet `evil` + `_deploy` as `evil___deploy`.
    [{ mcpServers: { evil_: { command: 'x' } } }, "not end in '_' and not contain '__'"],
    [{ mcpServers: { a__b: { command: 'x' } } }, "not end in '_' and not contain '__'"],
    [{ mcpServers: { ['x'.repeat(33)]: { command: 'x' } } }, 'a server name must be 1-32'],
    [{ mcpServers: { a: { command: 'x', url: 'http://h/' } } }, 'exactly one of "command" or "url"'],
    [{ mcpServers: { a: {} } }, 'exactly one of "command" or "url"'],
    [{ mcpServers: { a: { command: '' } } }, '"command" must be a non-empty string'],
    [{ mcpServers: { a: { command: 'x', args: [1] } } }, '"args" must be an array of strings'],
    [{ mcpServers: { a: { command: 'x', env: { A: 1 } } } }, '"env" must be an object of string values'],
    [{ mcpServers: { a: { url: 'ftp://h/' } } }, '"url" must be http(s)'],
    [{ mcpServers: { a: { url: 'not a url' } } }, 'not a valid URL'],
    ['text', 'must be a JSON object'],
  ])('refuses %j with ERR_MCP_CONFIG', (config, message) => {
    let caught: unknown;
    try {
      parseMcpConfig(config);
    } catch (err) {
      caught = err;
    }
    expect(isPantoError(caught, 'ERR_MCP_CONFIG')).toBe(true);
    expect((caught as Error).message).toContain(message);
  });

  it('a FIFO, a device or an over-cap file is refused with ERR_MCP_CONFIG, without blocking or reading it whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'panto-mcp-config-'));
    try {
      const fifo = join(dir, 'fifo.json');
      execFileSync('mkfifo', [fifo]);
      await expect(McpToolSource.fromConfig(fifo)).rejects.toMatchObject({
        code: 'ERR_MCP_CONFIG',
        message: `MCP config ${fifo}: a FIFO, not a regular file`,
      });
      await expect(loadMcpConfig('/dev/zero')).rejects.toMatchObject({
        code: 'ERR_MCP_CONFIG',
        message: 'MCP config /dev/zero: a character device, not a regular file',
      });
      const big = join(dir, 'big.json');
      await writeFile(big, '{}');
      await truncate(big, 16 * 1024 * 1024 + 1);
      await expect(loadMcpConfig(big)).rejects.toMatchObject({
        code: 'ERR_MCP_CONFIG',
        message: `MCP config ${big}: over the ${16 * 1024 * 1024}-byte cap of a config file`,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('loads a file and names it in errors (missing file, bad JSON)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'panto-mcp-config-'));
    try {
      const good = join(dir, 'good.json');
      await writeFile(good, JSON.stringify({ mcpServers: { s: { command: 'node' } } }));
      expect(await loadMcpConfig(good)).toEqual({ s: { type: 'stdio', command: 'node' } });
      const bad = join(dir, 'bad.json');
      await writeFile(bad, '{"mcpServers": ');
      await expect(loadMcpConfig(bad)).rejects.toMatchObject({
        code: 'ERR_MCP_CONFIG',
        message: expect.stringContaining(bad),
      });
      await expect(loadMcpConfig(join(dir, 'none.json'))).rejects.toMatchObject({ code: 'ERR_MCP_CONFIG' });
      const source = await McpToolSource.fromConfig(good);
      expect(source.servers).toEqual(['s']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('McpToolSource before start', () => {
  it('spawns nothing and refuses to list until started; bad numeric options are ERR_INVALID_ARGUMENT', () => {
    const source = new McpToolSource({ s: { type: 'stdio', command: '/nonexistent/never-spawned' } });
    expect(() => source.list()).toThrow(expect.objectContaining({ code: 'ERR_MCP_UNAVAILABLE' }));
    expect(() => new McpToolSource({}, { callTimeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
  });

  it('a server that cannot be spawned is reported by start(), not thrown; the source stays usable', async () => {
    const source = new McpToolSource({ s: { type: 'stdio', command: '/nonexistent/mcp-server' } });
    const report = await source.start();
    expect(report.started).toEqual([]);
    expect(report.failed).toEqual([
      { server: 's', error: expect.stringContaining("MCP server 's' could not be started") },
    ]);
    expect(source.list()).toEqual([]);
    await source.close();
  });
});

describe('namespaced tool names', () => {
  it('prefixes the server; a name providers refuse or too long is escaped with a stable hash, one-to-one', () => {
    expect(namespacedName('fs', 'read_file')).toBe('fs__read_file');
    expect(namespacedName('fs', 'ns.read/file v2')).toMatch(/^fs__ns_read_file_v2_[0-9a-f]{8}$/);
    // Escaped names never equal a name kept as it is: `a.b` and `a_b` stay apart.
    expect(namespacedName('fs', 'a.b')).not.toBe(namespacedName('fs', 'a_b'));
    expect(namespacedName('fs', 'a.b')).not.toBe(namespacedName('fs', 'a-b'));
    // Across servers the first `__` ends the server name (which cannot end in `_`): these never meet.
    expect(namespacedName('evil', '_deploy')).toBe('evil___deploy');
    expect(namespacedName('evi', 'l__deploy')).toBe('evi__l__deploy');
    const long = namespacedName('server', 'x'.repeat(100));
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(long).toHaveLength(64);
    expect(namespacedName('server', 'x'.repeat(100))).toBe(long);
    expect(namespacedName('server', `${'x'.repeat(99)}y`)).not.toBe(long);
  });
});
