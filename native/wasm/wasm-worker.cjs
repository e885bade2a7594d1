// @ts-check
/**
 * A media worker (worker_threads) for the WebAssembly backend: one instance of the core, one job at a time, so
 * processMedia's pixel work never runs on the main thread. Started by src/media/wasm-pool.ts with
 * `workerData = { gluePath, wasmModule, pool, slot }` (the compiled module is shared, not recompiled). `pool` is the
 * backend's SharedArrayBuffer memory pool (BigInt64Array [cap, inFlight]); `slot` this worker's SharedArrayBuffer of
 * 16 bytes: an Int32Array abort word at 0 (set by the pool when the running job's token is aborted, cleared by the
 * pool before each job) and a BigInt64Array word at 8 with the bytes this worker holds reserved in the pool (the
 * pool gives them back if the worker dies mid-call).
 *
 * Protocol: the pool posts `{ id, bytes: Uint8Array (its buffer transferred), options, hasAbort }`; the worker answers
 * `{ id, outcome, heapBytes }` with output bytes transferred (never copied again), where `outcome` is the raw
 * result of wasm-core.cjs's `process` or `{ kind: 'trap', message }` when the instance trapped (the pool then
 * discards this worker).
 */
const { parentPort, workerData } = require('node:worker_threads');
const { createCore } = require('./wasm-core.cjs');

if (!parentPort) throw new Error('wasm-worker.cjs runs only as a worker thread');
const port = parentPort;
const core = createCore(workerData.gluePath, workerData.wasmModule, {
  pool: new BigInt64Array(workerData.pool),
  reserved: new BigInt64Array(workerData.slot, 8, 1),
  abort: new Int32Array(workerData.slot, 0, 1),
});

port.on('message', (/** @type {{ id: number, bytes: Uint8Array, options: any, hasAbort: boolean }} */ job) => {
  /** @type {any} */
  let outcome;
  /** @type {ArrayBuffer[]} */
  const transfer = [];
  try {
    outcome = core.process(job.bytes, job.options, job.hasAbort);
    if (outcome.kind === 'ok') {
      if (outcome.unchanged) {
        // Pass-through: hand the input copy this worker already owns back as the output.
        outcome.data = job.bytes.buffer;
      }
      if (outcome.data) transfer.push(outcome.data);
    }
  } catch (err) {
    outcome = { kind: 'trap', message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage({ id: job.id, outcome, heapBytes: core.heapBytes() }, transfer);
});
