/**
 * The client end of MCP stdio: spawn the server and speak newline-delimited JSON-RPC on its stdin/stdout. Our own
 * implementation of the SDK's public `Transport` interface, not the SDK's `StdioClientTransport`, so that an SDK
 * upgrade cannot silently take these away:
 * - Framing by `LineBuffer`: linear in the message size (the SDK's buffer re-copies everything pending on every chunk,
 *   minutes of CPU for a 100 MB image), and a line over `maxMessageBytes` ends the connection (`onerror`, then
 *   `onclose`), the bound on what a server can make us hold.
 * - A line that is not a JSON-RPC message is reported to `onerror` and skipped; reading goes on.
 * - The server closing its stdout ends the connection at once (it can never answer again), even while its process
 *   keeps running.
 * - stderr goes line by line (at most 4096 characters of an unterminated line are kept) to `onStderrLine`.
 * - `close()` fires `onclose` at once, then ends the server: its stdin is closed; SIGTERM after 2 s, SIGKILL 2 s
 *   later (as the SDK does). It resolves when the process is gone (or SIGKILL was sent).
 * - The child gets a minimal inherited environment (HOME, PATH, ... as the SDK) plus `env`; spawned with cross-spawn
 *   (Windows `.cmd` shims such as `npx` work without a shell).
 */

import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { LineBuffer, type ParseMessage } from './line-buffer.js';

export interface StdioServerParams {
  command: string;
  args?: string[] | undefined;
  /** Added to the minimal inherited environment. */
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
}

export interface StdioClientTransportOptions {
  /** Longest JSON-RPC line accepted from the server, bytes. */
  maxMessageBytes: number;
  /** The SDK's message check (`parseJSONRPCMessage`). */
  parse: ParseMessage;
  /** Each line the server writes to stderr (without its line break). */
  onStderrLine?: ((line: string) => void) | undefined;
}

/** Environment variables a server inherits (the SDK's list, after sudo's). */
const INHERITED_ENV =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PROCESSOR_ARCHITECTURE',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'PROGRAMFILES',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** Longest unterminated stderr line kept, in characters. */
const STDERR_PARTIAL_CHARS = 4096;
/** Grace before SIGTERM, and again before SIGKILL, ms. */
const CLOSE_GRACE_MS = 2000;

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    // A value starting with `()` is an exported shell function: never handed on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return env;
}

type Spawn = typeof import('node:child_process').spawn;
let crossSpawn: Spawn | undefined;

export class StdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #params: StdioServerParams;
  readonly #onStderrLine: ((line: string) => void) | undefined;
  readonly #buffer: LineBuffer;
  #child: ChildProcess | undefined;
  #started = false;
  #finished = false;
  #stderrPartial = '';
  /** While the server's stdin is backed up: settles at its next drain (or when the connection ends). */
  #drained: Promise<void> | undefined;
  #endWait: (() => void) | undefined;

  constructor(params: StdioServerParams, options: StdioClientTransportOptions) {
    this.#params = params;
    this.#onStderrLine = options.onStderrLine;
    this.#buffer = new LineBuffer(options.maxMessageBytes, options.parse);
  }

  /** The server's process id once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Spawn the server; rejects when it cannot be spawned (e.g. ENOENT). */
  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioClientTransport already started');
    this.#started = true;
    crossSpawn ??= createRequire(import.meta.url)('cross-spawn') as Spawn;
    const child = crossSpawn(this.#params.command, this.#params.args ?? [], {
      env: { ...inheritedEnv(), ...this.#params.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: process.platform === 'win32',
      ...(this.#params.cwd !== undefined ? { cwd: this.#params.cwd } : {}),
    });
    this.#child = child;
    child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
    // The server can never answer again: the connection is over, whether or not its process exits.
    child.stdout?.on('end', () => {
      this.close().catch(() => {});
    });
    child.stdout?.on('error', (err) => this.onerror?.(err));
    child.stdin?.on('error', (err) => this.onerror?.(err));
    child.stderr?.on('data', (chunk: Buffer) => this.#stderr(chunk));
    child.stderr?.on('end', () => this.#stderrEnd());
    child.on('close', () => this.#finish());
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => {
        this.#finish();
        reject(err);
      };
      child.once('error', failed);
      child.once('spawn', () => {
        child.off('error', failed);
        child.on('error', (err) => this.onerror?.(err));
        resolve();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#finished || !stdin || stdin.destroyed) return Promise.reject(new Error('Not connected'));
    if (stdin.write(`${JSON.stringify(message)}\n`)) return Promise.resolve();
    // One wait for the next drain, shared by every send.
    this.#drained ??= new Promise<void>((resolve) => {
      const done = () => {
        stdin.off('drain', done);
        this.#drained = undefined;
        this.#endWait = undefined;
        resolve();
      };
      this.#endWait = done;
      stdin.once('drain', done);
    });
    return this.#drained;
  }

  async close(): Promise<void> {
    const child = this.#child;
    this.#finish();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const within = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(r, ms, false).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    if (await within(CLOSE_GRACE_MS)) return;
    child.kill('SIGTERM');
    if (await within(CLOSE_GRACE_MS)) return;
    child.kill('SIGKILL');
  }

  #read(chunk: Buffer): void {
    if (this.#finished) return;
    this.#buffer.feed(chunk, {
      message: (message) => this.onmessage?.(message),
      invalid: (err) => this.onerror?.(err),
      overflow: (err) => {
        this.onerror?.(err);
        this.close().catch(() => {});
      },
      stopped: () => this.#finished,
    });
  }

  #stderr(chunk: Buffer): void {
    const lines = (this.#stderrPartial + chunk.toString('utf8')).split(/\r?\n/);
    this.#stderrPartial = (lines.pop() ?? '').slice(-STDERR_PARTIAL_CHARS);
    for (const line of lines) this.#onStderrLine?.(line);
  }

  #stderrEnd(): void {
    if (this.#stderrPartial) this.#onStderrLine?.(this.#stderrPartial);
    this.#stderrPartial = '';
  }

  /** The connection is over: once, `onclose`; pending sends settle. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#buffer.clear();
    this.#endWait?.();
    this.onclose?.();
  }
}
