import { defineConfig } from 'vitest/config';

// The PostgreSQL session store against a real server (npm run test:postgres, which starts a throwaway one; .ci/run
// starts it the same way). Kept out of the unit run: it needs the server. The JSONL store runs the same behaviour
// suite in the unit run (test/session-store/).
export default defineConfig({
  test: {
    include: ['test/postgres/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
