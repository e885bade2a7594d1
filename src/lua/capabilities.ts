/**
 * The host capabilities a Lua tool file can declare (`capabilities = {...}`). Kept apart from `host-api.ts` so that
 * option checking and the public `CAPABILITIES` export do not load fengari (the VM loads on the first `fromDir`).
 */

/** Host capabilities a tool file can declare. */
export const CAPABILITIES = ['read_file', 'stat', 'list_dir'] as const;
export type Capability = (typeof CAPABILITIES)[number];
