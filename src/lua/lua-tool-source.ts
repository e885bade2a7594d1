/**
 * `LuaToolSource`: tools written in Lua, loaded from `.lua` files (docs/lua-tools.md).
 *
 * A tool file returns `{ name, description, parameters, handler }`. Every `*.lua` file directly inside each
 * directory is loaded (sorted by name; the package's own `lua/` first when `includeBuiltins` is set). A file that
 * fails to compile, raises while loading or returns a bad table is reported in `loadErrors` (file + line) and to the
 * log; the other files still load.
 */

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PantoError } from '../errors.js';
import type { ToolContext, ToolDecl } from '../tool.js';
import type { CallResult, ToolSource } from '../tool-source.js';
import { type LuaBudgets, resolveBudgets } from './budget.js';
import type { LuaLogger } from './lua-log.js';
import { type LoadedLuaTool, type LuaLoadError, LuaRuntime } from './lua-runtime.js';
import { DEFAULT_DENYLIST, Denylist, realRoot } from './workspace-paths.js';

export interface LuaToolSourceOptions {
  /**
   * Workspace root that `panto.*` file access is confined to. When set it wins over `ToolContext.workspaceRoot`;
   * when unset each call uses its context's root. Load-time code uses this or the current directory.
   */
  workspaceRoot?: string;
  /** Paths refused even inside the root. Default `DEFAULT_DENYLIST`; pass `[...DEFAULT_DENYLIST, ...]` to extend. */
  denylist?: readonly string[];
  /** Per-call budgets (see `LuaBudgets`). */
  budgets?: LuaBudgets;
  /** Host log: print output, `panto.log`, load errors, tool errors with tracebacks. Default: discard. */
  log?: LuaLogger;
  /** Also load the tools shipped with the package (`lua/`, e.g. `read`). Default false. */
  includeBuiltins?: boolean;
  /** A directory that does not exist gives no tools instead of `ERR_TOOL_LOAD` (an optional tool folder). */
  ignoreMissing?: boolean;
  /** Source name used in error messages. Default `lua:<the last directory>`. */
  name?: string;
}

export class LuaToolSource implements ToolSource {
  readonly name: string;
  /** Files that did not load, with the reason (and line when known). */
  readonly loadErrors: readonly LuaLoadError[];
  readonly #runtime: LuaRuntime;
  readonly #tools: ReadonlyMap<string, LoadedLuaTool>;
  readonly #decls: readonly ToolDecl[];
  readonly #fixedRoot: string | undefined;

  private constructor(
    name: string,
    runtime: LuaRuntime,
    tools: Map<string, LoadedLuaTool>,
    loadErrors: LuaLoadError[],
    fixedRoot: string | undefined,
  ) {
    this.name = name;
    this.#runtime = runtime;
    this.#tools = tools;
    this.loadErrors = Object.freeze(loadErrors);
    this.#fixedRoot = fixedRoot;
    this.#decls = Object.freeze(
      [...tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.parameters,
      })),
    );
  }

  /** The directory of the Lua tools shipped with the package. */
  static builtinDir(): string {
    // src/lua/ and dist/lua/ are both two levels below the package root.
    return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'lua');
  }

  /**
   * Load every `*.lua` tool in `dir` (or each of `dirs`). Throws `ERR_INVALID_ARGUMENT` for bad options and
   * `ERR_TOOL_LOAD` when a directory cannot be read; a broken tool FILE never throws (see `loadErrors`).
   */
  static async fromDir(
    dir: string | readonly string[],
    options: LuaToolSourceOptions = {},
  ): Promise<LuaToolSource> {
    const dirs = typeof dir === 'string' ? [dir] : [...dir];
    if (dirs.some((d) => typeof d !== 'string' || d.length === 0)) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'LuaToolSource.fromDir: directories must be non-empty strings',
      );
    }
    if (options.includeBuiltins) dirs.unshift(LuaToolSource.builtinDir());
    const budgets = resolveBudgets(options.budgets);
    const log: LuaLogger = options.log ?? (() => {});
    const denylist = new Denylist(options.denylist ?? DEFAULT_DENYLIST);
    let fixedRoot: string | undefined;
    if (options.workspaceRoot !== undefined) {
      try {
        fixedRoot = await realRoot(options.workspaceRoot);
      } catch (err) {
        throw new PantoError(
          'ERR_INVALID_ARGUMENT',
          `workspaceRoot ${options.workspaceRoot} does not exist`,
          {
            cause: err,
          },
        );
      }
    }
    const loadRoot = fixedRoot ?? (await realRoot(process.cwd()));
    const runtime = new LuaRuntime({ budgets, denylist, log });
    const tools = new Map<string, LoadedLuaTool>();
    const errors: LuaLoadError[] = [];

    for (const d of dirs) {
      let names: string[];
      try {
        names = (await readdir(d, { withFileTypes: true }))
          .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith('.lua'))
          .map((e) => e.name)
          .sort();
      } catch (err) {
        if (options.ignoreMissing && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
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
          source = await readFile(file);
        } catch (err) {
          report({ file, message: `cannot read: ${(err as Error).message}` });
          continue;
        }
        const res = await runtime.loadTool(file, fileName, source, loadRoot);
        if (!res.ok) {
          report(res.error);
          continue;
        }
        const existing = tools.get(res.tool.name);
        if (existing) {
          report({ file, message: `tool '${res.tool.name}' is already defined by ${existing.file}` });
          continue;
        }
        tools.set(res.tool.name, res.tool);
      }
    }
    const name = options.name ?? `lua:${dirs[dirs.length - 1] ?? ''}`;
    return new LuaToolSource(name, runtime, tools, errors, fixedRoot);
  }

  list(): ToolDecl[] {
    return [...this.#decls];
  }

  async call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult> {
    const tool = this.#tools.get(name);
    if (!tool) throw new PantoError('ERR_UNKNOWN_TOOL', `source '${this.name}' has no tool '${name}'`);
    let root: string;
    try {
      root = this.#fixedRoot ?? (await realRoot(ctx.workspaceRoot));
    } catch {
      return { ok: false, error: `workspace root ${ctx.workspaceRoot} does not exist` };
    }
    return this.#runtime.call(tool, args, {
      toolCallId: ctx.toolCallId,
      root,
      signal: ctx.signal,
      update: ctx.update,
    });
  }
}
