import { defineConfig } from 'vitest/config';

/** The standard tools on hostile trees (`npm run test:hostile-tools`): slow, so not in `vitest run`. */
export default defineConfig({
  test: {
    include: ['test/builtin-tools/**/*.slow.ts'],
    testTimeout: 300_000,
    pool: 'forks',
  },
});
