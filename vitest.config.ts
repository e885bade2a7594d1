import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Needs a PostgreSQL server: npm run test:postgres (vitest.postgres.config.ts).
    exclude: ['test/postgres/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default is one worker less than the cores: a single worker on a 2-core machine. Most files wait on
    // child processes, sockets and timers, so a second worker pays there too (a 2-core CI run: 540 s -> 343 s).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // CI also writes machine-readable results, from which .ci/run prints a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.vitest-results.json' },
  },
});
