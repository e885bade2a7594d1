/**
 * `panto session ID --store postgres://… --delete-uploads` against the real PostgreSQL server (PANTO_TEST_PG_URL;
 * skipped, saying why (pg-env.ts), without it).
 */
import { describe, it } from 'vitest';
import { describeCliStoreUploads } from '../session-store/cli-store-uploads.js';
import { PG_URL } from './pg-env.js';

if (PG_URL !== undefined) describeCliStoreUploads('PostgreSQL', () => PG_URL as string);
else
  describe.skip('panto session ID --store postgres://… --delete-uploads', () =>
    it('needs PANTO_TEST_PG_URL'));
