/**
 * Shared by the *-stream.test.ts files: a streaming decode -> resize path checked against the whole-image path it
 * replaced, through the public processMedia. Each case's input is written to a temporary directory; two child
 * processes run the built library (dist/) on the same addon build over every case, one with the internal switch
 * (e.g. PANTO_JPEG_STREAMING, read once when the addon loads; not API) unset, the default streaming path, and one
 * with it set to '0', the whole-image path; their outputs (sha256 of the bytes, media type, size, changes) must be
 * identical. The same cases also compare the native addon with the WebAssembly build in this process.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { processMedia } from '../../src/media/index.js';
import { loadNativeOnly, loadWasmOnly } from '../../src/media/native-addon.js';
import { resolveProcessOptions } from '../../src/media/policy.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DIST = join(ROOT, 'dist', 'media', 'index.js');

/** True when the built library the children run (dist/media/index.js) exists; the child comparisons need it. */
export const distBuilt = existsSync(DIST);

/** One input and the processMedia options it is run with; `name` labels it in assertion messages. */
export interface StreamingCase {
  name: string;
  input: Buffer;
  options: Record<string, unknown>;
}

/** What a child reports for one case. */
export interface ChildOutput {
  hash: string;
  type: string;
  width: number;
  height: number;
  changes: string[];
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * The cases of one streaming path and its internal switch. Build the cases with `add` (in `beforeAll`), then call
 * `writeFiles` once; call `remove` in `afterAll` to delete the temporary directory (safe if it was never made).
 */
export class StreamingSwitch {
  readonly cases: StreamingCase[] = [];
  private dir = '';

  /**
   * `envVar`: the internal switch ('0' forces the whole-image path); `ext`: the case files' extension; `fixedEnv`:
   * set in both children of expectStreamedMatchesWhole (e.g. another path switched off, so that the streaming child
   * runs the path under test).
   */
  constructor(
    private readonly envVar: string,
    private readonly ext: string,
    private readonly fixedEnv: Record<string, string> = {},
  ) {}

  add(name: string, input: Buffer, options: Record<string, unknown> = {}): void {
    this.cases.push({ name, input, options });
  }

  /** Writes every case's input to a new temporary directory for the children to read. */
  writeFiles(): void {
    this.dir = mkdtempSync(join(tmpdir(), `panto-${this.ext}-stream-`));
    for (const [i, c] of this.cases.entries()) writeFileSync(this.file(i), c.input);
  }

  remove(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs every case in a child process on dist/ (streaming on or off, with `fixedEnv` or with the defaults); one
   *  result per case, in order. */
  runChild(streaming: boolean, fixed = true): ChildOutput[] {
    const script = `
      const { readFileSync } = require('node:fs');
      const { createHash } = require('node:crypto');
      (async () => {
        const { processMedia } = await import(${JSON.stringify(DIST)});
        const cases = JSON.parse(process.argv[1]);
        const out = [];
        for (const c of cases) {
          const r = await processMedia(readFileSync(c.file), c.options);
          out.push({ hash: createHash('sha256').update(r.data).digest('hex'), type: r.mediaType, width: r.width,
            height: r.height, changes: r.changes });
        }
        process.stdout.write(JSON.stringify(out));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const arg = JSON.stringify(this.cases.map((c, i) => ({ file: this.file(i), options: c.options })));
    const env = { ...process.env, ...(fixed ? this.fixedEnv : {}) };
    if (streaming) delete env[this.envVar];
    else env[this.envVar] = '0';
    const r = spawnSync(process.execPath, ['-e', script, arg], { env, encoding: 'utf8', maxBuffer: 1 << 24 });
    if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  /**
   * Asserts that the streaming child gives, case by case, exactly the whole-image child's outputs; returns the
   * streaming child's outputs for the caller's coverage checks.
   */
  expectStreamedMatchesWhole(): ChildOutput[] {
    const whole = this.runChild(false);
    const streamed = this.runChild(true);
    expect(streamed.length).toBe(this.cases.length);
    for (let i = 0; i < this.cases.length; i++) {
      const name = this.cases[i]?.name;
      expect({ name, ...streamed[i] }).toEqual({ name, ...whole[i] });
    }
    return streamed;
  }

  /** Asserts that processMedia in this process gives the streaming child's bytes for the first case. */
  async expectInProcessMatchesChild(): Promise<void> {
    const c = this.cases[0] as StreamingCase;
    const r = await processMedia(c.input, c.options);
    const [child] = this.runChild(true, false);
    expect(sha256(r.data)).toBe(child?.hash);
  }

  /** Asserts that the WebAssembly build gives the native addon's result for every case (needs the wasm build). */
  async expectWasmMatchesNative(): Promise<void> {
    const native = loadNativeOnly(ROOT);
    const wasm = loadWasmOnly(ROOT);
    for (const c of this.cases) {
      const o = resolveProcessOptions(c.options);
      const [a, b] = await Promise.all([native.process(c.input, o), wasm.process(c.input, o)]);
      expect(b, c.name).toEqual(a);
    }
  }

  private file(i: number): string {
    return join(this.dir, `${i}.${this.ext}`);
  }
}
