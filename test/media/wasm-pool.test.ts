import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { resolveProcessOptions } from '../../src/media/policy.js';
import { createMemoryPool, WasmAbortToken, WasmPool } from '../../src/media/wasm-pool.js';
import { pngFile } from '../helpers/png-file.js';
import { fixture, noisePng } from './pixel-helpers.js';
import { wasmFiles } from './wasm-build.js';

const files = wasmFiles as NonNullable<typeof wasmFiles>;
const WasmApi = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } })
  .WebAssembly;
const compile = () => new WasmApi.Module(readFileSync(files.wasmPath));
const GiB = 1024 * 1024 * 1024;
/** Resolved options, as the backends take them. */
const opts = (o: object = {}) => resolveProcessOptions(o);

describe.runIf(wasmFiles)('the wasm worker pool', () => {
  it('starts workers on demand, never more than its size, and reuses them', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), createMemoryPool(GiB), {
      size: 2,
    });
    try {
      expect(pool.workers).toBe(0);
      const input = fixture('png-rgba.png');
      const outcomes = await Promise.all(
        [1, 2, 3, 4, 5].map(() => pool.run(input, opts({ format: 'jpeg' }))),
      );
      expect(outcomes.every((o) => o.kind === 'ok')).toBe(true);
      expect(pool.spawned).toBe(2);
      await pool.run(input, opts({}));
      expect(pool.spawned).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('retires a worker whose wasm memory grew past the threshold, and the next job gets a fresh one', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), createMemoryPool(GiB), {
      size: 1,
      retireHeapBytes: 32 << 20,
    });
    try {
      // Linear memory starts at 16 MiB; a 12 MP decode (36 MB of RGB) has to grow it past 32 MiB.
      const big = await pool.run(pngFile(4000, 3000, 2, Buffer.alloc((4000 * 3 + 1) * 3000)), opts({}));
      expect(big.kind).toBe('ok');
      expect(pool.workers).toBe(0);
      const small = await pool.run(fixture('png-rgb.png'), opts({ maxDimension: 16 }));
      expect(small.kind).toBe('ok');
      expect(pool.spawned).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('a worker that dies mid-job resolves its job as a trap (never a hang), and queued jobs still run', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), createMemoryPool(GiB), {
      size: 1,
    });
    const running = pool.run(noisePng(600, 400, 3, 9), opts({ format: 'jpeg' }));
    const closed = await Promise.all([running, pool.close()]);
    expect(closed[0]).toEqual({ kind: 'trap', message: 'the media worker pool was closed' });
    // A pool whose worker script cannot start reports that as the job's outcome.
    const broken = new WasmPool(
      files.workerPath,
      '/nonexistent/panto-media.cjs',
      compile(),
      createMemoryPool(GiB),
      { size: 1 },
    );
    const outcome = await broken.run(fixture('png-rgb.png'), opts());
    expect(outcome.kind).toBe('trap');
    expect(outcome.kind === 'trap' && outcome.message).toMatch(
      /the WebAssembly media worker failed: .*nonexistent/,
    );
    const again = await broken.run(fixture('png-rgb.png'), opts());
    expect(again.kind).toBe('trap');
    await broken.close();
  });

  it('reserves from the shared pool while a job runs and gives a dead worker’s reservation back', async () => {
    const memory = createMemoryPool(GiB);
    const words = new BigInt64Array(memory);
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), memory, { size: 1 });
    try {
      const ok = await pool.run(noisePng(600, 400, 3, 9), opts({ format: 'jpeg' }));
      expect(ok.kind).toBe('ok');
      expect(words[1]).toBe(0n);
      // Terminated mid-call: the core's destructors never run, the pool returns what the worker held.
      const big = pngFile(4000, 3000, 2, Buffer.alloc((4000 * 3 + 1) * 3000));
      const running = pool.run(big, opts({ format: 'webp' }));
      while (words[1] === 0n) await new Promise((r) => setTimeout(r, 2));
      const [outcome] = await Promise.all([running, pool.close()]);
      expect(outcome.kind).toBe('trap');
      expect(words[1]).toBe(0n);
    } finally {
      await pool.close();
    }
  });

  it('abort stops a running job between rows (ERR_ABORTED) and a queued one starts aborted', async () => {
    const pool = new WasmPool(files.workerPath, files.gluePath, compile(), createMemoryPool(GiB), {
      size: 1,
    });
    try {
      const token = new WasmAbortToken();
      const big = pngFile(4000, 3000, 2, Buffer.alloc((4000 * 3 + 1) * 3000));
      const running = pool.run(big, opts({ format: 'webp' }), token);
      const queued = pool.run(noisePng(300, 200, 3, 4), opts({ maxDimension: 50 }), token);
      const other = pool.run(noisePng(300, 200, 3, 4), opts({ maxDimension: 50 }));
      await new Promise((r) => setTimeout(r, 30));
      pool.abort(token);
      const [a, b, c] = await Promise.all([running, queued, other]);
      expect(a).toMatchObject({ kind: 'error', code: 'ERR_ABORTED' });
      expect(b).toMatchObject({ kind: 'error', code: 'ERR_ABORTED' });
      expect(c.kind).toBe('ok');
      expect(pool.spawned).toBe(1); // abort never costs a worker
    } finally {
      await pool.close();
    }
  });
});
