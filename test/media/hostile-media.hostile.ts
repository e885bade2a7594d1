/**
 * Hostile inputs at bomb scale (issue 12), each in a fresh child process with a time bound (killed past it) and a
 * resident-memory bound (stops itself past it): a progressive JPEG scan bomb, redundant progressions, huge headers,
 * 16-bit PNGs, zlib streams longer than the image, paletted PNGs with out-of-range indices, 35-byte GIFs declaring
 * 100 MP (alone and four at once), GIFs without a clear code, animated WebPs with a 10000x10000 canvas.
 *
 * Env: PANTO_HOSTILE_ADDON=<addon.node> runs another build (scripts/ci-native.sh passes the ASan+UBSan one, with
 * PANTO_HOSTILE_PRELOAD=<asan runtime> and PANTO_HOSTILE_SANITIZED=1: RSS bounds off, time bounds x6, the heavy
 * full-scale successful decodes skipped).
 * PANTO_HOSTILE_REPORT=<file> also runs sharp on every case and writes both runs as JSON (bench:media's table).
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HOSTILE_CASES, type HostileRun, runHostile } from '../helpers/media-hostile-cases.js';

const sanitized = process.env.PANTO_HOSTILE_SANITIZED === '1';
const report = process.env.PANTO_HOSTILE_REPORT;
const rows: Array<{
  name: string;
  parallel: number;
  inputBytes: number;
  libpanto: HostileRun;
  sharp?: HostileRun;
}> = [];

describe('hostile inputs: bounded time and memory, clean outcomes', () => {
  for (const c of HOSTILE_CASES) {
    it.skipIf(sanitized && c.heavy)(c.name, async () => {
      const bytes = await c.build();
      const maxMs = sanitized ? c.maxMs * 6 : c.maxMs;
      const maxRssMb = sanitized ? 1 << 20 : c.maxRssMb;
      const parallel = c.parallel ?? 1;
      const ours = runHostile(bytes, 'libpanto', { maxMs, maxRssMb, parallel });
      const row = { name: c.name, parallel, inputBytes: bytes.length, libpanto: ours };
      rows.push(
        report
          ? { ...row, sharp: runHostile(bytes, 'sharp', { maxMs: 120_000, maxRssMb: 8192, parallel }) }
          : row,
      );
      const what = `${c.name}: ${JSON.stringify(ours)}`;
      expect(ours.crash, what).toBeUndefined();
      expect(ours.stopped, what).toBeUndefined();
      expect(ours.outcomes, what).toHaveLength(parallel);
      for (const o of ours.outcomes) expect(c.expect, what).toContain(o.startsWith('ok ') ? 'ok' : o);
      if (!sanitized) expect(ours.peakRssMb, what).toBeLessThanOrEqual(maxRssMb);
    });
  }

  it('writes the report when asked', () => {
    if (report) writeFileSync(report, JSON.stringify(rows, null, 2));
    expect(rows.length).toBe(HOSTILE_CASES.filter((c) => !(sanitized && c.heavy)).length);
  });
});
