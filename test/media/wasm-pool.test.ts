import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WasmPool } from '../../src/media/wasm-pool.js';
import { pngFile } from '../helpers/png-file.js';
import { fixture, noisePng } from './pixel-helpers.js';
import { wasmFiles } from './wasm-build.js';

const files = wasmFiles as NonNullable<typeof wasmFiles>;
const WasmApi = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } })
  .WebAssembly;
const compile = () => new WasmApi.Module(readFileSync(files.wasmPath));

describe.runIf(wasmFiles)('the wasm worker pool', () => {
  it('starts workers on demand, never more than its size, and reuses them', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), { size: 2 });
    try {
      expect(pool.workers).toBe(0);
      const input = fixture('png-rgba.png');
      const outcomes = await Promise.all([1, 2, 3, 4, 5].map(() => pool.run(input, { format: 'jpeg' })));
      expect(outcomes.every((o) => o.kind === 'ok')).toBe(true);
      expect(pool.spawned).toBe(2);
      await pool.run(input, {});
      expect(pool.spawned).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('retires a worker whose wasm memory grew past the threshold, and the next job gets a fresh one', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), {
      size: 1,
      retireHeapBytes: 32 << 20,
    });
    try {
      // Linear memory starts at 16 MiB; a 12 MP decode (36 MB of RGB) has to grow it past 32 MiB.
      const big = await pool.run(pngFile(4000, 3000, 2, Buffer.alloc((4000 * 3 + 1) * 3000)), {});
      expect(big.kind).toBe('ok');
      expect(pool.workers).toBe(0);
      const small = await pool.run(fixture('png-rgb.png'), { maxDimension: 16 });
      expect(small.kind).toBe('ok');
      expect(pool.spawned).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('a worker that dies mid-job resolves its job as a trap (never a hang), and queued jobs still run', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), { size: 1 });
    const running = pool.run(noisePng(600, 400, 3, 9), { format: 'jpeg' });
    const closed = await Promise.all([running, pool.close()]);
    expect(closed[0]).toEqual({ kind: 'trap', message: 'the media worker pool was closed' });
    // A pool whose worker script cannot start reports that as the job's outcome.
    const broken = new WasmPool(files.workerPath, '/nonexistent/panto-media.cjs', compile(), { size: 1 });
    const outcome = await broken.run(fixture('png-rgb.png'), {});
    expect(outcome.kind).toBe('trap');
    expect(outcome.kind === 'trap' && outcome.message).toMatch(
      /the WebAssembly media worker failed: .*nonexistent/,
    );
    const again = await broken.run(fixture('png-rgb.png'), {});
    expect(again.kind).toBe('trap');
    await broken.close();
  });
});
