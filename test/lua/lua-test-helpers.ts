/** Helpers for the Lua host tests: tool files written to a temp dir, a workspace, a ToolContext. */

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LuaLogEntry, LuaToolSourceOptions } from '../../src/lua/index.js';
import { LuaToolSource } from '../../src/lua/index.js';
import type { ToolContext } from '../../src/tool.js';

export interface Loaded {
  source: LuaToolSource;
  dir: string;
  workspace: string;
  logs: LuaLogEntry[];
}

/** Write `files` (name -> Lua source) to a fresh dir and load them; the workspace is a second fresh dir. */
export async function loadTools(
  files: Record<string, string>,
  options: Omit<LuaToolSourceOptions, 'log'> = {},
): Promise<Loaded> {
  const dir = await mkdtemp(path.join(tmpdir(), 'panto-lua-tools-'));
  const workspace = options.workspaceRoot ?? (await mkdtemp(path.join(tmpdir(), 'panto-lua-ws-')));
  for (const [name, src] of Object.entries(files)) await writeFile(path.join(dir, name), src);
  const logs: LuaLogEntry[] = [];
  const source = await LuaToolSource.fromDir(dir, {
    ...options,
    workspaceRoot: workspace,
    log: (e) => logs.push(e),
  });
  return { source, dir, workspace, logs };
}

/** Every host capability, as a Lua list (what the test tools declare). */
export const ALL_CAPABILITIES = '{ "read_file", "stat", "list_dir" }';

/** A tool file whose handler body is `body` (args in `args`); it declares every capability. */
export function tool(name: string, body: string, extra = ''): string {
  return `${extra}\nreturn { name = ${JSON.stringify(name)}, description = "test tool", capabilities = ${ALL_CAPABILITIES}, handler = function(args, ctx)\n${body}\nend }\n`;
}

export function ctx(
  workspaceRoot: string,
  toolCallId = 'call-1',
  signal = new AbortController().signal,
): ToolContext {
  return { signal, workspaceRoot, toolCallId, update: () => {} };
}
