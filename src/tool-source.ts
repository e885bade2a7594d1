/**
 * Tool sources: where tools come from (TS tools, a directory of Lua files, a host's own), and a registry that
 * presents several sources as one.
 */

import { PantoError } from './errors.js';
import type { NormalizedToolOutput, Tool, ToolContext, ToolDecl } from './tool.js';
import { normalizeToolOutput } from './tool.js';

/** Outcome of one call through a source. `error` is a message the model can read. */
export type CallResult =
  | ({ ok: true } & NormalizedToolOutput)
  | { ok: false; error: string; meta?: Record<string, unknown> };

export interface ToolSource {
  /** A short name used in error messages (e.g. `lua:/path/to/tools`, `builtin`). */
  readonly name: string;
  /** The tools this source offers. Stable for the life of the source. */
  list(): ToolDecl[];
  /**
   * Call a tool by name with already-validated arguments. Never rejects for a tool's own failure: a throwing tool
   * resolves to `{ok:false, error}`. Rejects only for the caller's own mistakes (unknown name).
   */
  call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult>;
}

/** A source over TypeScript `Tool` objects (see `defineTool`). */
export class StaticToolSource implements ToolSource {
  readonly name: string;
  readonly #tools = new Map<string, Tool>();

  constructor(tools: Tool[], name = 'tools') {
    this.name = name;
    for (const t of tools) {
      if (this.#tools.has(t.name)) {
        throw new PantoError('ERR_DUPLICATE_TOOL', `tool '${t.name}' is defined twice in source '${name}'`);
      }
      this.#tools.set(t.name, t);
    }
  }

  list(): ToolDecl[] {
    return [...this.#tools.values()].map((t) => {
      const decl: ToolDecl = { name: t.name, description: t.description, inputSchema: t.inputSchema };
      if (t.needsApproval) decl.needsApproval = true;
      if (t.capabilities !== undefined) decl.capabilities = [...t.capabilities];
      return decl;
    });
  }

  async call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult> {
    const tool = this.#tools.get(name);
    if (!tool) throw new PantoError('ERR_UNKNOWN_TOOL', `source '${this.name}' has no tool '${name}'`);
    try {
      const out = normalizeToolOutput(await tool.invoke(args, ctx));
      return { ok: true, ...out };
    } catch (err) {
      return { ok: false, error: errorMessage(err) };
    }
  }
}

/** Several sources as one. Two tools with one name is an error at registration, naming both sources. */
export class ToolRegistry implements ToolSource {
  readonly name = 'registry';
  readonly #owners = new Map<string, ToolSource>();
  readonly #decls = new Map<string, ToolDecl>();
  #anonymous = 0;

  constructor(sources: Array<ToolSource | Tool[]> = []) {
    for (const s of sources) this.add(s);
  }

  /**
   * Add a source (or a list of TS tools, named `tools`, `tools#2`, ... in messages). Throws `ERR_DUPLICATE_TOOL`
   * naming both sources on a clash; on a throw nothing of `source` is added.
   */
  add(source: ToolSource | Tool[]): this {
    let src: ToolSource;
    if (Array.isArray(source)) {
      this.#anonymous++;
      src = new StaticToolSource(source, this.#anonymous === 1 ? 'tools' : `tools#${this.#anonymous}`);
    } else {
      src = source;
    }
    const decls = src.list();
    const seen = new Set<string>();
    for (const d of decls) {
      const owner = this.#owners.get(d.name);
      if (owner) {
        throw new PantoError(
          'ERR_DUPLICATE_TOOL',
          `tool '${d.name}' is offered by both '${owner.name}' and '${src.name}'; rename one of them`,
        );
      }
      if (seen.has(d.name)) {
        throw new PantoError(
          'ERR_DUPLICATE_TOOL',
          `tool '${d.name}' is offered twice by source '${src.name}'`,
        );
      }
      seen.add(d.name);
    }
    for (const d of decls) {
      this.#owners.set(d.name, src);
      this.#decls.set(d.name, d);
    }
    return this;
  }

  list(): ToolDecl[] {
    return [...this.#decls.values()];
  }

  /** The declaration of one tool, or undefined. */
  get(name: string): ToolDecl | undefined {
    return this.#decls.get(name);
  }

  has(name: string): boolean {
    return this.#decls.has(name);
  }

  call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult> {
    const owner = this.#owners.get(name);
    if (!owner) {
      return Promise.reject(new PantoError('ERR_UNKNOWN_TOOL', `no tool '${name}'`));
    }
    return owner.call(name, args, ctx);
  }
}

/** A readable message from anything thrown. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
