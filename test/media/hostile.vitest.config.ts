import { defineConfig } from 'vitest/config';

/**
 * The hostile-input suite (`npm run test:hostile-media`): bomb-scale inputs, one child process per case. Not part of
 * the unit run (its files end in `.hostile.ts`).
 */
export default defineConfig({
  test: {
    include: ['test/media/**/*.hostile.ts'],
    testTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
