import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
