import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { describeCliStoreUploads } from './cli-store-uploads.js';

const dir = path.join(os.tmpdir(), `panto-cli-jsonl-store-uploads-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
describeCliStoreUploads('a folder of JSONL files', () => dir);
