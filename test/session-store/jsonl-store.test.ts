import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionLog } from '../../src/session/index.js';
import { JsonlSessionStore } from '../../src/session-store/index.js';
import { describeSessionStore } from './store-behaviour.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-jsonl-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeSessionStore(
  'JSONL files',
  async () => new JsonlSessionStore(join(dir, 'store')),
  join(dir, 'store'),
);

describe('the JSONL store is the files SessionLog writes', () => {
  it('a session the store made is a file SessionLog opens, and its export is the file byte for byte', async () => {
    const store = new JsonlSessionStore(join(dir, 'bytes'));
    const log = await store.create({ id: 'abc', model: 'm' });
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'ü "x"' }] });
    await log.close();
    const path = store.pathOf('abc');
    const exported: string[] = [];
    for await (const l of store.exportLines('abc')) exported.push(l);
    expect(Buffer.from(exported.map((l) => `${l}\n`).join(''))).toStrictEqual(readFileSync(path));
    const file = await SessionLog.open(path);
    expect(file.header.id).toBe('abc');
    file.close();
  });
});

describe('the PostgreSQL driver is optional and lazy', () => {
  it("import 'libpanto' never loads pg (a loader hook that refuses it sees no request)", () => {
    const hook = join(dir, 'refuse-pg.mjs');
    writeFileSync(
      hook,
      "export async function resolve(s, c, next) { if (s === 'pg') throw new Error('pg was loaded'); return next(s, c); }\n",
    );
    const register = join(dir, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hook).href)});\n`,
    );
    const dist = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        register,
        '-e',
        `import(${JSON.stringify(pathToFileURL(dist).href)}).then((m) => console.log(typeof m.PostgresSessionStore))`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('function');
  });
});
