/**
 * The host capabilities a Lua tool file can declare (`capabilities = {...}`). Kept apart from `host-api.ts` so that
 * option checking and the public `CAPABILITIES` export do not load fengari (the VM loads on the first `fromDir`).
 *
 * A host function (`hostFunctions` option) is a capability too, named like the function.
 */

/** The standard host capabilities a tool file can declare. */
export const CAPABILITIES = [
  'read_file',
  'stat',
  'list_dir',
  'write_file',
  'make_dir',
  'exec',
  'fetch',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** What a host grants when it does not say: reading only. Writing, running commands and fetching are off. */
export const DEFAULT_GRANT: readonly Capability[] = Object.freeze(['read_file', 'stat', 'list_dir']);

/**
 * Capabilities that change the world or reach out of it: a tool declaring one needs approval before each call unless
 * the host says otherwise (the `approval` option of `fromDir`; a tool's own `needs_approval = false` does not lift it).
 */
export const WORLD_CAPABILITIES: ReadonlySet<string> = new Set(['write_file', 'make_dir', 'exec', 'fetch']);

/** `panto.*` names that are always there (a host function may not take them). */
export const ALWAYS_NAMES = ['sniff', 'json_encode', 'json_decode', 'json', 'log', 'progress'] as const;

/** Every name a host function may not take: the always-present functions and the standard capabilities. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set<string>([...ALWAYS_NAMES, ...CAPABILITIES]);
