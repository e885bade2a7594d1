/**
 * The worker side of `TextScanAhead` (text-scan-ahead.ts, which states the protocol): reads each requested chunk of a
 * session file into the shared buffer it names and scans its complete lines for long texts (text-literals.ts
 * `LineScanner`), while the loading thread parses the previous chunk.
 */

import { readSync } from 'node:fs';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { LineScanner } from './text-literals.js';
import type { ScanAheadData, ScanReply, ScanRequest } from './text-scan-ahead.js';

const port = parentPort;
if (port === null) throw new Error('text-scan-worker.js must run in a worker thread');
const data = workerData as ScanAheadData;
const replies: MessagePort = data.replies;
const signal = new Int32Array(data.signal);
const slots = data.slots.map((sab) => Buffer.from(sab));
const scanner = new LineScanner();
const NEWLINE = 0x0a;

function answer(reply: ScanReply, transfer: ArrayBuffer[] = []): void {
  replies.postMessage(reply, transfer);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

port.on('message', (m: ScanRequest) => {
  const buf = slots[m.slot];
  let bytesRead: number;
  try {
    if (buf === undefined) throw new Error('no such slot');
    bytesRead = readSync(m.fd, buf, 0, Math.min(m.length, buf.length), m.position);
  } catch {
    // The loading thread reads the chunk itself and meets the error, if any, as it would have.
    answer({ seq: m.seq, bytesRead: -1 });
    return;
  }
  // The complete lines: from the first line that starts in the chunk to the last newline.
  let from = 0;
  if (m.midLine) {
    const nl = buf.indexOf(NEWLINE);
    from = nl === -1 || nl >= bytesRead ? bytesRead : nl + 1;
  }
  const to = bytesRead === 0 ? 0 : buf.lastIndexOf(NEWLINE, bytesRead - 1) + 1;
  if (to <= from) {
    answer({ seq: m.seq, bytesRead, from: 0, to: 0 });
    return;
  }
  const { lines, records, reduced } = scanner.scan(buf, from, to, m.minBytes);
  answer({ seq: m.seq, bytesRead, from, to, lines, records, reduced }, [
    lines.buffer as ArrayBuffer,
    records.buffer as ArrayBuffer,
    reduced.buffer as ArrayBuffer,
  ]);
});

Atomics.store(signal, 1, 1);
