/**
 * Hostile CALLERS of the addon (issue 12, memory safety 1-2): a caller that detaches its input while a call is in
 * flight, and worker_threads terminated with calls in flight while the addon is loaded in several workers. Each runs in
 * a fresh Node process: a use-after-free or an escaping C++ exception kills that process, not the test runner.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROCESS_OPTIONS } from '../../src/media/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/media/', import.meta.url));

/** Loads the raw addon the way src/media/native-addon.ts does, with a stand-in error class. */
const LOAD = `
  const { createRequire } = require('node:module');
  const addon = require('node-gyp-build')(${JSON.stringify(ROOT)});
  class MediaError extends Error { constructor(code, message) { super(message); this.code = code; } }
  addon.init(MediaError);
  const OPTIONS = ${JSON.stringify(DEFAULT_PROCESS_OPTIONS)};
`;

function run(script: string, args: string[] = []): string {
  return execFileSync(process.execPath, [...args, '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('input ownership', () => {
  it('a caller that transfers (detaches) its input buffer mid-call gets the right bytes and no crash', () => {
    // Pass-through (PDF, small PNG) copies the input into the result; decode paths (JPEG resize, GIF) read it on the
    // threadpool. Without ownership the worker reads freed memory: wrong bytes or SIGSEGV.
    const script = `${LOAD}
      const fs = require('node:fs');
      const files = ['pdf-2page.pdf', 'png-rgb.png', 'jpeg-progressive.jpg', 'gif-animated.gif', 'webp-lossy.webp'];
      (async () => {
        for (let round = 0; round < 40; round++) {
          for (const f of files) {
            const src = fs.readFileSync(${JSON.stringify(FIXTURES)} + f);
            const ref = await addon.process(new Uint8Array(src), { ...OPTIONS, maxDimension: 48 });
            const ab = new ArrayBuffer(src.length);
            const u8 = new Uint8Array(ab);
            u8.set(src);
            const p = addon.process(u8, { ...OPTIONS, maxDimension: 48 });
            structuredClone(ab, { transfer: [ab] }); // detaches u8; the clone is garbage at once
            if (u8.byteLength !== 0) throw new Error('not detached');
            globalThis.gc();
            const r = await p;
            if (Buffer.compare(r.data, ref.data) !== 0) throw new Error(f + ': output differs after detaching the input');
          }
        }
        process.stdout.write('ok');
      })().catch((e) => { process.stdout.write('fail: ' + e.message); });`;
    expect(run(script, ['--expose-gc'])).toBe('ok');
  });

  it('a caller may overwrite its input right after the call returns (the call owns a copy)', () => {
    const script = `${LOAD}
      const src = require('node:fs').readFileSync(${JSON.stringify(FIXTURES)} + 'pdf-2page.pdf');
      (async () => {
        const u8 = new Uint8Array(src);
        const p = addon.process(u8, OPTIONS);
        u8.fill(0);
        const r = await p;
        process.stdout.write(Buffer.compare(r.data, src) === 0 ? 'ok' : 'changed');
      })();`;
    expect(run(script)).toBe('ok');
  });
});

describe('worker_thread teardown', () => {
  it('terminating workers with calls in flight, many times, in several workers at once, leaves the main thread running', () => {
    // Each worker loads the addon and queues successful and failing calls (resolve and reject paths), then is
    // terminated at a random moment while they run. A completion callback that throws during environment teardown
    // aborts the whole process (exit 134, "terminate called after throwing an instance of 'Napi::Error'").
    const worker = `${LOAD}
      const fs = require('node:fs');
      const { parentPort } = require('node:worker_threads');
      const jpeg = fs.readFileSync(${JSON.stringify(FIXTURES)} + 'jpeg-progressive.jpg');
      const pdf = fs.readFileSync(${JSON.stringify(FIXTURES)} + 'pdf-2page.pdf');
      const bad = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
      for (let i = 0; i < 6; i++) {
        addon.process(jpeg, { ...OPTIONS, maxDimension: 64 }).catch(() => {});
        addon.process(pdf, OPTIONS).catch(() => {});
        addon.process(bad, OPTIONS).catch(() => {});
      }
      try { addon.probe(bad); } catch {}
      parentPort.postMessage('busy');`;
    const main = `
      const { Worker } = require('node:worker_threads');
      (async () => {
        let seed = 7;
        const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 40);
        for (let round = 0; round < 12; round++) {
          await Promise.all([0, 1, 2].map(() => new Promise((resolve) => {
            const w = new Worker(${JSON.stringify(worker)}, { eval: true });
            w.once('message', () => setTimeout(() => w.terminate().then(resolve), rnd()));
            w.once('error', (e) => { process.stdout.write('worker error: ' + e.message); resolve(); });
          })));
        }
        process.stdout.write('main alive');
      })();`;
    expect(run(main)).toBe('main alive');
  });
});
