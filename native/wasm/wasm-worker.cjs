// @ts-check
/**
 * A media worker (worker_threads) for the WebAssembly backend: one instance of the core, one job at a time, so
 * processMedia's pixel work never runs on the main thread. Started by src/media/wasm-pool.ts with
 * `workerData = { gluePath, wasmModule }` (the compiled module is shared, not recompiled).
 *
 * Protocol: the pool posts `{ id, bytes: Uint8Array (its buffer transferred), options }`; the worker answers
 * `{ id, outcome, heapBytes }` with output bytes transferred (never copied again), where `outcome` is the raw
 * result of wasm-core.cjs's `process` or `{ kind: 'trap', message }` when the instance trapped (the pool then
 * discards this worker).
 */
const { parentPort, workerData } = require('node:worker_threads');
const { createCore } = require('./wasm-core.cjs');

if (!parentPort) throw new Error('wasm-worker.cjs runs only as a worker thread');
const port = parentPort;
const core = createCore(workerData.gluePath, workerData.wasmModule);

port.on('message', (/** @type {{ id: number, bytes: Uint8Array, options: any }} */ job) => {
  /** @type {any} */
  let outcome;
  /** @type {ArrayBuffer[]} */
  const transfer = [];
  try {
    outcome = core.process(job.bytes, job.options);
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
