import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processStart } from '../../src/session/file-lock.js';
import { loadSession, SessionLog } from '../../src/session/index.js';
import { transpileSources } from './helpers/transpile-sources.js';

// Canonical (symlink-free) so that `${path}.lock` is the lock file's real name.
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'panto-session-lock-')));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
let childScript = '';
const children: ChildProcess[] = [];

beforeAll(() => {
  const { session } = transpileSources(join(dir, 'js'));
  childScript = join(dir, 'js', 'lock-child.mjs');
  writeFileSync(
    childScript,
    `import { SessionLog } from ${JSON.stringify(session)};
const [path, mode] = process.argv.slice(2);
let log;
try {
  log = await SessionLog.open(path);
} catch (err) {
  process.stdout.write('refused ' + err.code + '\\n');
  process.exit(0);
}
log.appendCustom('child', { pid: process.pid });
process.stdout.write('locked\\n');
if (mode === 'exit') process.exit(0); // no close(): the exit hook must release the lock
process.stdin.resume();
process.stdin.on('end', () => { log.close(); process.exit(0); });
`,
  );
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Start a child that opens `path`; resolves with the child and its first stdout line. */
function startChild(path: string, mode: 'hold' | 'exit'): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, [childScript, path, mode], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve({ child, line: out.slice(0, nl) });
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!out.includes('\n')) reject(new Error(`child exited (${code}) before reporting`));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on('exit', () => resolve());
  });
}

async function newSession(): Promise<string> {
  const path = file();
  (await SessionLog.create(path)).close();
  return path;
}

describe('single writer lock', () => {
  it('refuses a second writer in the same process until the first closes', async () => {
    const path = await newSession();
    const first = await SessionLog.open(path);
    const err = await SessionLog.open(path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_SESSION_LOCKED' });
    expect((err as Error).message).toContain(`process ${process.pid} on ${hostname()}`);
    // Readers are never blocked.
    await expect(loadSession(path)).resolves.toMatchObject({ entries: [] });
    first.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    (await SessionLog.open(path)).close();
  });

  it('refuses a writer that reaches the same file through a symlink', async () => {
    const path = await newSession();
    const alias = join(dir, `alias-${n++}.jsonl`);
    symlinkSync(path, alias);
    const log = await SessionLog.open(path);
    await expect(SessionLog.open(alias)).rejects.toMatchObject({ code: 'ERR_SESSION_LOCKED' });
    log.close();
    (await SessionLog.open(alias)).close();
  });

  it('refuses a writer in another process while this one holds the lock', async () => {
    const path = await newSession();
    const log = await SessionLog.open(path);
    try {
      const { child, line } = await startChild(path, 'hold');
      expect(line).toBe('refused ERR_SESSION_LOCKED');
      await exited(child);
    } finally {
      log.close();
    }
  });

  it('refuses this process while a child holds the lock, and opens after the child closes', async () => {
    const path = await newSession();
    const { child, line } = await startChild(path, 'hold');
    expect(line).toBe('locked');
    const err = await SessionLog.open(path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_SESSION_LOCKED' });
    expect((err as Error).message).toContain(`process ${child.pid} on ${hostname()}`);
    child.stdin?.end();
    await exited(child);
    expect(existsSync(`${path}.lock`)).toBe(false);
    const log = await SessionLog.open(path);
    expect(log.entries.map((e) => e.type)).toEqual(['custom']);
    log.close();
  });

  it('is released on process exit without close()', async () => {
    const path = await newSession();
    const { child, line } = await startChild(path, 'exit');
    expect(line).toBe('locked');
    await exited(child);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('takes over a stale lock left by a killed process on this host', async () => {
    const path = await newSession();
    const { child, line } = await startChild(path, 'hold');
    expect(line).toBe('locked');
    child.kill('SIGKILL');
    await exited(child);
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8'))).toMatchObject({ pid: child.pid });
    const log = await SessionLog.open(path);
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    log.close();
  });

  it('takes over a lock naming a dead pid, never one from another host', async () => {
    const path = await newSession();
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(
      `${path}.lock`,
      JSON.stringify({ pid: Number(dead), hostname: hostname(), token: 't', acquired: 'x' }),
    );
    (await SessionLog.open(path)).close();

    writeFileSync(
      `${path}.lock`,
      JSON.stringify({ pid: 1, hostname: 'elsewhere.example', token: 't', acquired: 'x' }),
    );
    const err = await SessionLog.open(path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_SESSION_LOCKED' });
    expect((err as Error).message).toContain('elsewhere.example');
    rmSync(`${path}.lock`);
  });

  it('treats a fresh unreadable lock file as held', async () => {
    const path = await newSession();
    writeFileSync(`${path}.lock`, '');
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_LOCKED' });
    rmSync(`${path}.lock`);
  });

  it('records the holder process start time where the platform tells it', async () => {
    const path = await newSession();
    const log = await SessionLog.open(path);
    const info = JSON.parse(readFileSync(`${path}.lock`, 'utf8')) as { start?: string };
    expect(info.start).toBe(processStart(process.pid));
    log.close();
  });
});

describe('PID reuse', () => {
  it('takes over a lock naming THIS pid that no SessionLog of this process holds (container restarted as PID 1)', async () => {
    const path = await newSession();
    writeFileSync(
      `${path}.lock`,
      JSON.stringify({ pid: process.pid, hostname: hostname(), token: 'previous-run', acquired: 'x' }),
    );
    const log = await SessionLog.open(path);
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    // ...while a lock this process really holds still refuses a second writer
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_LOCKED' });
    log.close();
  });

  it.runIf(processStart(process.pid) !== undefined)(
    'takes over a lock whose pid now belongs to another live process (start time differs), not one whose holder still runs',
    async () => {
      const path = await newSession();
      const live = spawn(process.execPath, ['-e', 'process.stdin.resume()'], {
        stdio: ['pipe', 'ignore', 'inherit'],
      });
      children.push(live);
      await new Promise((r) => live.once('spawn', r));
      const pid = live.pid as number;
      const realStart = processStart(pid);
      expect(realStart).toBeDefined();
      // The lock was written by an earlier process with the same pid: another start time.
      writeFileSync(
        `${path}.lock`,
        JSON.stringify({ pid, hostname: hostname(), token: 'old', acquired: 'x', start: `${realStart}0` }),
      );
      (await SessionLog.open(path)).close();
      // The same pid with its real start time is the live holder: refused.
      writeFileSync(
        `${path}.lock`,
        JSON.stringify({ pid, hostname: hostname(), token: 'live', acquired: 'x', start: realStart }),
      );
      await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_LOCKED' });
      live.stdin?.end();
      await exited(live);
      rmSync(`${path}.lock`);
    },
  );
});
