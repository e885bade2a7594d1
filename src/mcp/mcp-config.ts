/**
 * The `mcpServers` configuration shape (the de-facto format of MCP host config files):
 *
 * ```json
 * { "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "some-server", "/tmp"], "env": {"K": "v"}, "cwd": "/srv" },
 *     "remote": { "url": "https://example.test/mcp", "headers": { "Authorization": "Bearer ..." } } } }
 * ```
 *
 * Entries with `"disabled": true` are skipped; `"needsApproval": true` makes every tool of the server need approval
 * before each call (`ToolDecl.needsApproval`); unknown keys (`type`, `autoApprove`, ...) are ignored so configs
 * written for other hosts load unchanged. Anything malformed is a `PantoError` `ERR_MCP_CONFIG` naming the entry.
 */

import { PantoError } from '../errors.js';
import { readRegularFile } from '../regular-file.js';

/** A server spawned as a child process and spoken to over its stdin/stdout. */
export interface McpStdioServerConfig {
  type: 'stdio';
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (HOME, PATH, ...), as the SDK does. */
  env?: Record<string, string>;
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig {
  type: 'http';
  url: string;
  headers?: Record<string, string>;
}

/** Settings of either kind of server. */
interface McpServerCommon {
  /** Every tool of this server needs approval before each call (`ToolDecl.needsApproval`). */
  needsApproval?: boolean;
}

export type McpServerConfig = (McpStdioServerConfig | McpHttpServerConfig) & McpServerCommon;

/**
 * Server names become tool-name prefixes (`server__tool`), so they must be provider-safe; and one-to-one: a name that
 * ended in `_` or held `__` would let `evil` + `_deploy` and `evil_` + `deploy` both become `evil___deploy`.
 */
const SERVER_NAME = /^(?!.*__)[a-zA-Z0-9_-]{0,31}[a-zA-Z0-9-]$/;

/**
 * Validate a parsed config (`{mcpServers: {...}}`, or the inner map alone) into named server configs, in file order.
 * Throws `ERR_MCP_CONFIG` naming the first bad entry.
 */
export function parseMcpConfig(value: unknown, origin = 'MCP config'): Record<string, McpServerConfig> {
  if (!isObject(value)) throw configError(origin, 'must be a JSON object');
  const servers = 'mcpServers' in value ? value.mcpServers : value;
  if (!isObject(servers)) throw configError(origin, '"mcpServers" must be an object of named servers');
  const out: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(servers)) {
    const where = `${origin}: server '${name}'`;
    if (!SERVER_NAME.test(name)) {
      throw configError(
        where,
        "a server name must be 1-32 of the characters a-z A-Z 0-9 _ -, not end in '_' and not contain '__' (it prefixes tool names as <server>__<tool>, which must be one-to-one)",
      );
    }
    if (!isObject(entry)) throw configError(where, 'must be an object with "command" or "url"');
    if (entry.disabled === true) continue;
    const cfg: McpServerConfig = parseEntry(entry, where);
    if (entry.needsApproval !== undefined) {
      if (typeof entry.needsApproval !== 'boolean')
        throw configError(where, '"needsApproval" must be true or false');
      if (entry.needsApproval) cfg.needsApproval = true;
    }
    out[name] = cfg;
  }
  return out;
}

function parseEntry(entry: Record<string, unknown>, where: string): McpServerConfig {
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand === hasUrl) throw configError(where, 'needs exactly one of "command" or "url"');
  if (hasUrl) {
    if (typeof entry.url !== 'string') throw configError(where, '"url" must be a string');
    let url: URL;
    try {
      url = new URL(entry.url);
    } catch {
      throw configError(where, `"url" is not a valid URL: ${entry.url}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw configError(where, `"url" must be http(s), got ${url.protocol}`);
    }
    const cfg: McpHttpServerConfig = { type: 'http', url: url.href };
    if (entry.headers !== undefined) cfg.headers = stringMap(entry.headers, where, 'headers');
    return cfg;
  }
  if (typeof entry.command !== 'string' || entry.command.length === 0) {
    throw configError(where, '"command" must be a non-empty string');
  }
  const cfg: McpStdioServerConfig = { type: 'stdio', command: entry.command };
  if (entry.args !== undefined) {
    if (!Array.isArray(entry.args) || entry.args.some((a) => typeof a !== 'string')) {
      throw configError(where, '"args" must be an array of strings');
    }
    cfg.args = [...(entry.args as string[])];
  }
  if (entry.env !== undefined) cfg.env = stringMap(entry.env, where, 'env');
  if (entry.cwd !== undefined) {
    if (typeof entry.cwd !== 'string') throw configError(where, '"cwd" must be a string');
    cfg.cwd = entry.cwd;
  }
  return cfg;
}

/** The largest config file read (a config is a few KB; the cap only keeps a hostile path from costing memory). */
export const MCP_CONFIG_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Read and validate a config file. Throws `ERR_MCP_CONFIG` for an unreadable file, one that is not a regular file (a
 * FIFO, a device: refused without blocking, see `readRegularFile`), one over `MCP_CONFIG_MAX_BYTES`, bad JSON or a bad
 * entry.
 */
export async function loadMcpConfig(file: string): Promise<Record<string, McpServerConfig>> {
  let text: string;
  try {
    const read = await readRegularFile(file, MCP_CONFIG_MAX_BYTES);
    if ('not' in read) throw configError(`MCP config ${file}:`, `${read.not}, not a regular file`);
    if ('over' in read) {
      throw configError(`MCP config ${file}:`, `over the ${MCP_CONFIG_MAX_BYTES}-byte cap of a config file`);
    }
    text = read.bytes.toString('utf8');
  } catch (err) {
    if (err instanceof PantoError) throw err;
    throw new PantoError('ERR_MCP_CONFIG', `cannot read MCP config ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PantoError(
      'ERR_MCP_CONFIG',
      `MCP config ${file} is not valid JSON: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return parseMcpConfig(json, `MCP config ${file}`);
}

function stringMap(v: unknown, where: string, key: string): Record<string, string> {
  if (!isObject(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    throw configError(where, `"${key}" must be an object of string values`);
  }
  return { ...(v as Record<string, string>) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function configError(where: string, message: string): PantoError {
  return new PantoError('ERR_MCP_CONFIG', `${where} ${message}`);
}
