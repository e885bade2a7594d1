import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { describeCliStore } from './cli-store.js';

const dir = path.join(os.tmpdir(), `panto-cli-jsonl-store-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
describeCliStore('a folder of JSONL files', () => dir);
