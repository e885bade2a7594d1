import { defineConfig } from 'vitest/config';

/** The provider conformance suite (`npm run test:conformance`, via scripts/conformance.mjs). */
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.conformance.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
