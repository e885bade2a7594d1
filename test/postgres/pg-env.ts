/**
 * The PostgreSQL server the store tests run against: `PANTO_TEST_PG_URL` (started by `.ci/run` and by
 * `npm run test:postgres` through scripts/pg-test-server.sh). Without it the suites skip, saying why.
 */
import { PostgresSessionStore } from '../../src/session-store/index.js';

export const PG_URL = process.env.PANTO_TEST_PG_URL;

if (PG_URL === undefined)
  console.warn(
    'PostgreSQL store tests skipped: PANTO_TEST_PG_URL is not set (run `npm run test:postgres`, which starts a throwaway server; needs `apt-get install postgresql`)',
  );

export const connectStore = (options: { maxEntryBytes?: number } = {}) =>
  PostgresSessionStore.connect({ connection: PG_URL as string, ...options });
