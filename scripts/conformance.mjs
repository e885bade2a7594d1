#!/usr/bin/env node
/**
 * `npm run test:conformance`: the provider conformance suite (test/conformance/, vitest.conformance.config.ts).
 *
 * It reads the shared wire-fixtures folder (published request schemas + real recorded streams from other public
 * repositories, never copied into this repo) from PANTO_WIRE_FIXTURES, default `../shared/reference/wire-fixtures`
 * beside the repository root. When the folder is missing it says so and exits 1, unless
 * PANTO_CONFORMANCE_OPTIONAL=1 is set, in which case it says it skipped and exits 0.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = process.env.PANTO_WIRE_FIXTURES
  ? resolve(process.env.PANTO_WIRE_FIXTURES)
  : resolve(root, '..', 'shared', 'reference', 'wire-fixtures');

if (!existsSync(join(dir, 'schemas')) || !existsSync(join(dir, 'streams'))) {
  const optional = process.env.PANTO_CONFORMANCE_OPTIONAL === '1';
  console.error(
    `conformance: wire fixtures not found at ${dir} (expected schemas/ and streams/).\n` +
      '  Set PANTO_WIRE_FIXTURES to the wire-fixtures folder' +
      (optional
        ? '.\n  PANTO_CONFORMANCE_OPTIONAL=1: skipped, NOTHING WAS CHECKED.'
        : ', or PANTO_CONFORMANCE_OPTIONAL=1 to skip.'),
  );
  process.exit(optional ? 0 : 1);
}

console.log(`conformance: wire fixtures at ${dir}`);
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(process.execPath, [vitest, 'run', '--config', 'vitest.conformance.config.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PANTO_WIRE_FIXTURES: dir },
});
process.exit(run.status ?? 1);
