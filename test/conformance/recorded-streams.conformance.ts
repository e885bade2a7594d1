/**
 * Every recorded stream of the wire-fixtures folder, through our real transport (`createProvider` with a fetch that
 * answers with the recording, delivered in 61-byte reads), yields the text, thinking, tool calls (ids, names, parsed
 * arguments), usage and stop reason that the official SDK's own accumulator builds from the same bytes
 * (@anthropic-ai/sdk MessageStream, openai ChatCompletionStream / ResponseStream, @google/genai response getters).
 * Where the SDK refuses a stream, or has no field for what is compared, the expectation comes from the recording's
 * own peer test (peer-expectations.ts).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { chatReasoningFromRecording, PEER_EXPECTATIONS } from './peer-expectations.js';
import { type Outcome, ourOutcome, reconcileSyntheticIds, sdkOutcome } from './stream-outcome.js';
import { type RecordedStream, recordedStreams } from './wire-fixtures.js';

const streams = recordedStreams();
const verdicts: string[] = [];

async function expectationFor(
  stream: RecordedStream,
  ours: Outcome,
): Promise<{ expected: Outcome; by: string }> {
  const peer = PEER_EXPECTATIONS[stream.name];
  if (peer) {
    // Only while the SDK still refuses it: a fixed SDK should take over.
    const sdk = await sdkOutcome(stream);
    expect(sdk.kind, `${stream.name}: the SDK accepts this stream now; drop its peer expectation`).toBe(
      'error',
    );
    return { expected: peer.expected, by: 'peer test' };
  }
  let expected = reconcileSyntheticIds(await sdkOutcome(stream), ours);
  let by = 'SDK';
  if (stream.api === 'openai-chat' && expected.kind === 'message') {
    const reasoning = chatReasoningFromRecording(stream.body);
    if (reasoning !== expected.thinking) {
      expected = { ...expected, thinking: reasoning };
      by = 'SDK + peer reasoning';
    }
  }
  return { expected, by };
}

describe('recorded streams: our transport against the official SDK accumulators', () => {
  it('the folder holds recorded streams for all four surfaces', () => {
    const apis = new Set(streams.map((s) => s.api));
    expect([...apis].sort()).toEqual(['anthropic-messages', 'gemini', 'openai-chat', 'openai-responses']);
  });

  for (const stream of streams) {
    it(stream.name, async () => {
      const ours = await ourOutcome(stream);
      const { expected, by } = await expectationFor(stream, ours);
      if (expected.kind === 'error') {
        // A stream that carries a provider error: both fail, ours quoting the provider's message.
        expect(ours.kind, `${stream.name}: the SDK failed with "${expected.message}"`).toBe('error');
        expect(ours.kind === 'error' && ours.message).toContain(expected.message);
      } else {
        expect(ours).toEqual(expected);
      }
      verdicts.push(`${by.padEnd(22)} ${expected.kind === 'error' ? 'error  ' : 'message'} ${stream.name}`);
    });
  }

  afterAll(() => {
    console.log(
      `recorded streams: ${verdicts.length}/${streams.length} match\n  ${verdicts.sort().join('\n  ')}`,
    );
  });
});
