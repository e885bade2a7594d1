#!/usr/bin/env node
/**
 * `npm run test:hostile-media` — the hostile-input suite (test/media/hostile-media.hostile.ts): every bomb class of
 * issue 12 at full scale, each case in a fresh child process with a time and an RSS bound. Needs the addon built
 * (build/Release) or PANTO_HOSTILE_ADDON=<addon.node>. Cost on 2 cores: ~2-3 min (input generation streams ~2 GB of
 * zeros through zlib; the 100 MP decodes dominate).
 *
 * Env (all optional): PANTO_HOSTILE_ADDON, PANTO_HOSTILE_PRELOAD (LD_PRELOAD for the children only, e.g. the ASan
 * runtime), PANTO_HOSTILE_SANITIZED=1 (sanitizer build: RSS bounds off, time bounds x6), PANTO_HOSTILE_REPORT=<file>
 * (also run sharp on each case and write both as JSON).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const r = spawnSync(
  process.execPath,
  [
    join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--config',
    'test/media/hostile.vitest.config.ts',
  ],
  { cwd: ROOT, stdio: 'inherit', env: process.env },
);
process.exit(r.status ?? 1);
