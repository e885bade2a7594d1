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
}
