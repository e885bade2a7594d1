import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { type FakeProviderServer, startFakeProviderServer } from '../helpers/fake-provider-server.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built `panto` bin (what `npx panto` runs). */
export const pantoBin = path.join(repoRoot, 'dist', 'cli', 'main.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawn the built `panto` with `args`, feeding `stdin`; resolves when it exits. */
export function runPanto(
  args: string[],
  options: {
    cwd?: string;
    stdin?: string;
    env?: Record<string, string | undefined>;
    timeoutMs?: number;
  } = {},
): Promise<CliRun> {
  if (!existsSync(pantoBin)) throw new Error(`${pantoBin} is missing: run 'npm run build:ts' first`);
  return runShell(process.execPath, [pantoBin, ...args], options);
}

export function runShell(
  file: string,
  args: string[],
  options: {
    cwd?: string;
    stdin?: string;
    env?: Record<string, string | undefined>;
    timeoutMs?: number;
  } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out: ${file} ${args.join(' ')}\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A child that exits without reading its stdin closes the pipe first: that EPIPE is not the test's failure.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');
  });
}

/** Env for a run against a fake server: no provider key of the machine's leaks in. */
export const NO_KEYS = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
};

/** `NO_KEYS`, and no user config either (no `PANTO_CONFIG`, a `HOME` that does not exist): the run sees its flags. */
export const NO_USER_CONFIG = { ...NO_KEYS, PANTO_CONFIG: undefined, HOME: '/nonexistent-home' };

/** `panto chat` flags for `server`'s OpenAI Chat endpoint: model gpt-4o, no context files. */
export function fakeChatFlags(server: FakeProviderServer): string[] {
  return ['--base-url', server.baseUrl('openai-chat'), '--model', 'gpt-4o', '--no-context-files'];
}

/**
 * For one test file: a fake provider server and a temp folder (named from `prefix`), handed to `ready` before the
 * file's tests; the server is closed and the folder removed after them.
 */
export function withFakeServer(
  prefix: string,
  ready: (server: FakeProviderServer, tmp: string) => void,
): void {
  let server: FakeProviderServer | undefined;
  let tmp: string | undefined;
  beforeAll(async () => {
    server = await startFakeProviderServer();
    tmp = await mkdtemp(path.join(os.tmpdir(), prefix));
    ready(server, tmp);
  });
  afterAll(async () => {
    await server?.close();
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  });
}
