import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { PROGRESS_PER_TURN, progressGate } from '../../src/mcp/progress-gate.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('progress from a server to the host', () => {
  it('a 1 MB progress message is cut to 2000 characters with its length; a non-string message is left out', () => {
    const got: Progress[] = [];
    const gate = progressGate((p) => got.push(p));
    gate.onprogress({ progress: 1, message: 'x'.repeat(1024 * 1024) });
    gate.onprogress({ progress: 2, total: 3, message: { evil: true } as unknown as string });
    expect(got[0]?.message).toBe(`${'x'.repeat(2000)}… (1048576 characters)`);
    expect(got[1]).toEqual({ progress: 2, total: 3 });
    gate.close();
  });

  it('a flood in one turn reaches the host as PROGRESS_PER_TURN callbacks plus the newest one on the next turn', async () => {
    const got: number[] = [];
    const gate = progressGate((p) => got.push(p.progress));
    for (let i = 0; i < 100_000; i++) gate.onprogress({ progress: i });
    expect(got).toHaveLength(PROGRESS_PER_TURN);
    await nextTurn();
    expect(got).toEqual([...Array.from({ length: PROGRESS_PER_TURN }, (_, i) => i), 99_999]);
    // A new turn delivers again.
    gate.onprogress({ progress: 100_000 });
    expect(got.at(-1)).toBe(100_000);
    gate.close();
  });

  it('flush() hands over the held newest value at once (before the result); after close() nothing arrives', async () => {
    const got: number[] = [];
    const gate = progressGate((p) => got.push(p.progress));
    for (let i = 0; i < 50; i++) gate.onprogress({ progress: i });
    gate.flush();
    expect(got.at(-1)).toBe(49);
    expect(got).toHaveLength(PROGRESS_PER_TURN + 1);
    gate.onprogress({ progress: 50 });
    gate.close();
    gate.onprogress({ progress: 51 });
    await nextTurn();
    expect(got).toHaveLength(PROGRESS_PER_TURN + 1);
  });

  it('a host update that throws reaches no caller: not onprogress, not flush(), not the next-turn delivery', async () => {
    const seen: number[] = [];
    const gate = progressGate((p) => {
      seen.push(p.progress);
      throw new Error('host update failed');
    });
    for (let i = 0; i < PROGRESS_PER_TURN + 2; i++)
      expect(() => gate.onprogress({ progress: i })).not.toThrow();
    // The held value goes out on the next turn, from a timer: a throw there would be an uncaught exception.
    await nextTurn();
    expect(seen.at(-1)).toBe(PROGRESS_PER_TURN + 1);
    for (let i = 0; i < PROGRESS_PER_TURN + 2; i++) gate.onprogress({ progress: 100 + i });
    expect(() => gate.flush()).not.toThrow();
    expect(seen.at(-1)).toBe(100 + PROGRESS_PER_TURN + 1);
    gate.close();
  });
});
