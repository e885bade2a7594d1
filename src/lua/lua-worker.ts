/**
 * The worker side of `isolation: 'worker'` (see worker-backend.ts for the protocol). Loads the tools with the thread
 * backend, then serves calls; sends a heartbeat every `heartbeatMs` so the parent's watchdog can tell a stalled event
 * loop (a builtin that could not be interrupted) from a busy one.
 */

import { parentPort, workerData } from 'node:worker_threads';
import type { ResultPart } from '../tool.js';
import { type HostInvoker, type HostOutcome, hostValueBuffers } from './host-functions.js';
import type { LuaLogEntry } from './lua-log.js';
import type { ResolvedSourceOptions } from './resolved-source-options.js';
import { loadToolsInThread } from './thread-backend.js';
import type { ParentMessage, WorkerMessage } from './worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('lua-worker.js must run in a worker thread');
const { opts, heartbeatMs } = workerData as { opts: ResolvedSourceOptions; heartbeatMs: number };
const send = (m: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

const beat = setInterval(() => send({ type: 'beat' }), heartbeatMs);
beat.unref();

const aborts = new Map<number, AbortController>();

/** Host function calls waiting for the parent's answer, by id. */
const hostWaits = new Map<number, (outcome: HostOutcome) => void>();
let nextHid = 1;

/** Host functions live on the parent thread: each call is a message there and back (bytes transferred). */
const hostInvoker: HostInvoker | undefined =
  opts.hostFunctionNames.length === 0
    ? undefined
    : {
        names: opts.hostFunctionNames,
        invoke: (name, args, call) =>
          new Promise<HostOutcome>((resolve) => {
            const signal = call.signal;
            if (signal.aborted || call.tag === undefined) {
              resolve({ ok: false, error: 'the tool call ended' });
              return;
            }
            const hid = nextHid++;
            const onAbort = () => {
              hostWaits.delete(hid);
              send({ type: 'hostCancel', hid });
              resolve({ ok: false, error: 'the tool call ended' });
            };
            signal.addEventListener('abort', onAbort, { once: true });
            hostWaits.set(hid, (outcome) => {
              hostWaits.delete(hid);
              signal.removeEventListener('abort', onAbort);
              resolve(outcome);
            });
            send({ type: 'host', id: call.tag, hid, name, args }, hostValueBuffers(args));
          }),
      };

try {
  const { backend, decls, loadErrors } = await loadToolsInThread(
    opts,
    (entry: LuaLogEntry) => send({ type: 'log', entry }),
    hostInvoker,
  );
  port.on('message', (m: ParentMessage) => {
    if (m.type === 'abort') {
      aborts.get(m.id)?.abort();
      return;
    }
    if (m.type === 'hostResult') {
      hostWaits.get(m.hid)?.(m.outcome);
      return;
    }
    const ac = new AbortController();
    aborts.set(m.id, ac);
    const update = m.wantsUpdates
      ? (u: Parameters<NonNullable<Parameters<typeof backend.call>[2]['update']>>[0]) =>
          send({ type: 'update', id: m.id, update: u })
      : undefined;
    backend
      .call(m.name, m.args, { toolCallId: m.toolCallId, root: m.root, signal: ac.signal, update, tag: m.id })
      .then((result) => {
        aborts.delete(m.id);
        const transfer: ArrayBuffer[] = [];
        if (result.ok) {
          // Media bytes are views of Lua strings: copy each into its own buffer and transfer that (no second copy).
          result.parts = result.parts.map((p): ResultPart => {
            if (p.type !== 'media') return p;
            const own = new Uint8Array(p.data.byteLength);
            own.set(p.data);
            transfer.push(own.buffer);
            return { ...p, data: own };
          });
        }
        send({ type: 'result', id: m.id, result }, transfer);
      });
  });
  send({ type: 'ready', decls, loadErrors });
} catch (err) {
  send({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
}
