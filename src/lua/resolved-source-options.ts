/** The options of a `LuaToolSource` once checked and resolved: what its backend (in-thread or worker) runs with. */

import type { ResolvedBudgets } from './budget.js';
import type { ExecOptions } from './exec-command.js';
import type { FetchOptions } from './fetch-url.js';

/** Settings of the standard capabilities (plain data: they cross to a worker). */
export interface CapabilityOptions {
  exec?: ExecOptions | undefined;
  fetch?: FetchOptions | undefined;
}

/** Options that cross to a worker (plain data). */
export interface ResolvedSourceOptions {
  dirs: string[];
  budgets: ResolvedBudgets;
  denylist: readonly string[];
  /** Granted capabilities, host functions included. */
  capabilities: readonly string[];
  /** The names of the host functions (they stay on the host thread). */
  hostFunctionNames: readonly string[];
  capabilityOptions: CapabilityOptions;
  maxConcurrentCalls: number;
  fixedRoot: string | undefined;
  loadRoot: string;
  /** A directory that does not exist gives no tools (`LuaToolSourceOptions.ignoreMissing`). */
  ignoreMissing: boolean;
  /** Which tools need approval (`LuaToolSourceOptions.approval`). */
  approval: ApprovalPolicy;
}

/**
 * Which Lua tools need approval before each call (`ToolDecl.needsApproval`): `'auto'` — those declaring
 * `needs_approval = true` and those declaring a capability that changes the world or reaches out of it
 * (`write_file`, `make_dir`, `exec`, `fetch`; their `needs_approval = false` does not lift it); `'declared'` — only
 * those declaring `needs_approval = true`; `'none'` — none.
 */
export type ApprovalPolicy = 'auto' | 'declared' | 'none';
