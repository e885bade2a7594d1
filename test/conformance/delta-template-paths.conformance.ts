/**
 * The learned delta templates (delta-template.ts) change nothing: every recorded stream of the wire-fixtures folder
 * gives exactly the same `StreamEvent`s, the same final message (or the same error and partial message) with the
 * templates as with every event parsed in full by `JSON.parse`. Also each stream with every event sent three times
 * (so every repeated shape is learned and then matched), and seeded mutations of those (hostile numbers, escapes,
 * whitespace, reordered members, truncated or damaged events).
 */

import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../../src/providers/transport/sse-parser.js';
import { mutate, prng, runBothPaths, sseEvents } from '../helpers/stream-paths.js';
import { recordedStreams } from './wire-fixtures.js';

const streams = recordedStreams();

const tripled = (events: SseEvent[]) => events.flatMap((e) => [e, e, e]);

describe('delta templates: the fast path equals the full-parse path on every recorded stream', () => {
  it('the folder holds recorded streams for all four surfaces', () => {
    expect(new Set(streams.map((s) => s.api)).size).toBe(4);
  });

  for (const stream of streams) {
    it(stream.name, () => {
      const events = sseEvents(stream.body);
      expect(events.length).toBeGreaterThan(0);
      for (const variant of [events, tripled(events)]) {
        const { fast, reference } = runBothPaths(stream.api, variant);
        expect(fast).toEqual(reference);
      }
      const rnd = prng(0x5eed ^ stream.name.length);
      for (let k = 0; k < 60; k++) {
        const variant = mutate(tripled(events), rnd, 1 + (k % 3));
        const { fast, reference } = runBothPaths(stream.api, variant);
        expect(fast, `mutation ${k}`).toEqual(reference);
      }
    });
  }
});
