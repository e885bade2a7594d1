/**
 * Loading tool files into a `LuaRuntime` on the current thread, and the backend that calls them. Used directly by
 * `LuaToolSource` (`isolation: 'thread'`) and inside the worker (`isolation: 'worker'`).
 */

import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PantoError } from '../errors.js';
import { packagePath } from '../package-root.js';
import { readRegularFile } from '../regular-file.js';
import type { ToolDecl } from '../tool.js';
import type { CallResult } from '../tool-source.js';
import { CAPABILITIES, WORLD_CAPABILITIES } from './capabilities.js';
import { accountingAvailable } from './fengari-fixes.js';
import type { HostInvoker } from './host-functions.js';
import type { LuaLogger } from './lua-log.js';
import { type LoadedLuaTool, type LuaLoadError, LuaRuntime, type RunContext } from './lua-runtime.js';
import type { ResolvedSourceOptions } from './resolved-source-options.js';
import { Denylist } from './workspace-paths.js';

/** What `LuaToolSource` calls: one implementation per isolation mode. */
export interface ToolBackend {
  /** Run a tool that exists (the source checked the name). Never rejects. */
  call(name: string, args: Record<string, unknown>, ctx: RunContext): Promise<CallResult>;
  close(): Promise<void>;
}

/** Tool files larger than this are not read (a tool file is source code, not data). */
const MAX_TOOL_FILE_BYTES = 4 * 1024 * 1024;

/** Load every `*.lua` file of `opts.dirs` into a fresh runtime. Throws `ERR_TOOL_LOAD` for an unreadable dir. */
export async function loadToolsInThread(
  opts: ResolvedSourceOptions,
  log: LuaLogger,
  hostFunctions?: HostInvoker,
): Promise<{ backend: ToolBackend; decls: ToolDecl[]; loadErrors: LuaLoadError[] }> {
  const runtime = new LuaRuntime({
    budgets: opts.budgets,
    denylist: new Denylist(opts.denylist),
    log,
    grant: opts.capabilities,
    known: [...CAPABILITIES, ...opts.hostFunctionNames],
    hostFunctions,
    capabilityOptions: opts.capabilityOptions,
    maxConcurrentCalls: opts.maxConcurrentCalls,
    builtinLib: path.join(packagePath('lua'), 'lib'),
  });
  if (!accountingAvailable()) {
    log({
      level: 'warn',
      message:
        'fengari is not patched (patches/fengari+0.1.5.patch): the memory budget and maxBlockingMs are not enforced ' +
        'inside library functions; use isolation: "worker" for untrusted tools',
    });
  }
  const tools = new Map<string, LoadedLuaTool>();
  const errors: LuaLoadError[] = [];
  for (const d of opts.dirs) {
    let names: string[];
    try {
      names = (await readdir(d, { withFileTypes: true }))
        .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith('.lua'))
        .map((e) => e.name)
        .sort();
    } catch (err) {
      if (opts.ignoreMissing && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new PantoError(
        'ERR_TOOL_LOAD',
        `cannot read Lua tool directory ${d}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    for (const fileName of names) {
      const file = path.resolve(d, fileName);
      const report = (e: LuaLoadError) => {
        errors.push(e);
        log({ level: 'error', message: `Lua tool ${e.file} did not load: ${e.message}`, file: e.file });
      };
      let source: Buffer;
      try {
        // A `.lua` symlink to a FIFO or a device (/dev/zero) would block or never end: only regular files are read,
        // opened non-blocking, judged by fstat, at most the cap.
        const read = await readRegularFile(file, MAX_TOOL_FILE_BYTES);
        if ('not' in read) {
          report({ file, message: `${fileName}: ${read.not}, not a regular file; not read` });
          continue;
        }
        if ('over' in read) {
          report({
            file,
            message: `${fileName}: over the ${MAX_TOOL_FILE_BYTES}-byte cap of a tool file; not read`,
          });
          continue;
        }
        source = read.bytes;
      } catch (err) {
        report({ file, message: `cannot read: ${(err as Error).message}` });
        continue;
      }
      const res = await runtime.loadTool(file, fileName, source, opts.loadRoot);
      for (const e of res.errors) report(e);
      for (const tool of res.tools) {
        const existing = tools.get(tool.name);
        if (existing) {
          report({ file, message: `tool '${tool.name}' is already defined by ${existing.file}` });
          continue;
        }
        tools.set(tool.name, tool);
      }
    }
  }
  const decls = [...tools.values()].map((t) => {
    const decl: ToolDecl = { name: t.name, description: t.description, inputSchema: t.parameters };
    const world = t.capabilities.filter((c) => WORLD_CAPABILITIES.has(c));
    if (world.length > 0) decl.capabilities = world;
    const needs =
      opts.approval === 'none'
        ? false
        : t.needsApproval === true || (opts.approval === 'auto' && world.length > 0);
    if (needs) decl.needsApproval = true;
    return decl;
  });
  const backend: ToolBackend = {
    call: (name, args, ctx) => {
      const tool = tools.get(name);
      if (!tool) return Promise.resolve({ ok: false, error: `no tool '${name}'` });
      return runtime.call(tool, args, ctx);
    },
    close: () => Promise.resolve(),
  };
  return { backend, decls, loadErrors: errors };
}
