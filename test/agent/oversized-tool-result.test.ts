/**
 * A session must survive any tool result. Against a loopback Anthropic server that refuses, as "prompt is too long",
 * every request body over 800 KB (a 200k-token window at ~4 characters per token): a tool returning 1 MiB of text
 * (~270k tokens) once killed the session for good — compaction kept the newest result verbatim, so every later prompt
 * sent it again and failed, resumes included. Now the result is cut to its share of the window where it is stored
 * (head and tail kept, a note saying how much was cut and how to get the rest), compaction shortens a kept result
 * that alone does not fit (a session written before the cap), and a turn is never sent knowing it cannot fit.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import { SUMMARY_SYSTEM } from '../../src/agent/agent-compaction.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import type { Message, ToolResultsMessage } from '../../src/conversation.js';
import { SessionLog } from '../../src/session/index.js';
import { defineTool } from '../../src/tool.js';
import { StaticToolSource } from '../../src/tool-source.js';
import type { RecordedRequest, ScriptedTurn } from '../helpers/fake-provider-server.js';
import { PNG_SIGNATURE, pngChunk } from '../helpers/png-file.js';
import { agentFixture, eventsOf, modelFor, providerFor } from './agent-helpers.js';

const { server } = await agentFixture();
const dir = mkdtempSync(join(tmpdir(), 'panto-oversized-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 800 * 1024;
/** 1 MiB of log-like text (numbered lines of 64 characters), so head and tail are recognisable. */
const HUGE = Array.from(
  { length: 16_384 },
  (_, i) => `line ${String(i).padStart(5, '0')} ${'x'.repeat(52)}\n`,
).join('');

const dump = defineTool({
  name: 'dump',
  description: 'Print a big log.',
  inputSchema: { type: 'object', properties: {} },
  invoke: () => HUGE,
});

const bodySize = (r: RecordedRequest) => Buffer.byteLength(JSON.stringify(r.body));

/** The text of the first tool result's first part in `messages`. */
function firstResultText(messages: readonly Message[]): string {
  const tool = messages.find((m): m is ToolResultsMessage => m.role === 'tool');
  const part = tool?.results[0]?.parts[0];
  if (part?.type !== 'text') throw new Error('no text result');
  return part.text;
}

const isSummary = (r: RecordedRequest) =>
  JSON.stringify(r.body.system ?? '').includes(SUMMARY_SYSTEM.slice(0, 60));

/**
 * Script a run: every request over 800 KB is "prompt is too long", a summary request gets a summary, the others the
 * next of `answers` (then `ok`). Spare turns cover compaction summaries and retries.
 */
function enqueueRun(...answers: Array<() => ScriptedTurn>): void {
  server.reset();
  const queue = [...answers];
  for (let i = 0; i < 12; i++) {
    server.enqueue((r) => {
      const size = bodySize(r);
      if (size > LIMIT) {
        return {
          type: 'http-error',
          status: 400,
          errorType: 'invalid_request_error',
          message: `prompt is too long: ${Math.ceil(size / 4)} tokens > 200000 maximum`,
        };
      }
      if (isSummary(r))
        return { type: 'reply', text: 'The user asked for the log; the dump tool printed it.' };
      return (queue.shift() ?? reply('ok'))();
    });
  }
}

const callDump = (): ScriptedTurn => ({
  type: 'reply',
  toolCalls: [{ id: 'call_dump', name: 'dump', args: {} }],
});
const reply = (text: string) => (): ScriptedTurn => ({ type: 'reply', text });

describe('a tool result of 1 MiB against a 200k-token window (bodies over 800 KB refused)', () => {
  it('three prompts in a row all succeed: the result is cut where it is stored, head and tail kept', async () => {
    const n = server.requests.length;
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      tools: new StaticToolSource([dump], 'test'),
      onEvent: (e) => events.push(e),
    });
    for (const prompt of ['dump the log', 'what was the last line?', 'thanks']) {
      enqueueRun(prompt === 'dump the log' ? callDump : reply('seen'), reply('done'));
      const result = await agent.prompt(prompt);
      expect(result.error).toBeUndefined();
      expect(result.stopReason).toBe('end');
    }
    for (const r of server.requests.slice(n)) expect(bodySize(r)).toBeLessThanOrEqual(LIMIT);
    const stored = agent.messages.find((m): m is ToolResultsMessage => m.role === 'tool');
    const text = stored?.results[0]?.parts[0];
    expect(text?.type).toBe('text');
    const kept = (text as { text: string }).text;
    expect(kept.startsWith('line 00000')).toBe(true);
    expect(kept.endsWith(HUGE.slice(-40))).toBe(true);
    expect(kept).toContain(`of this tool result's ${HUGE.length} characters were cut here`);
    expect(kept).toContain('call the tool again for a smaller piece');
    // A quarter of the window (200k tokens ~ 800k characters) by default.
    expect(kept.length).toBeLessThanOrEqual(200_000);
    expect(kept.length).toBeGreaterThan(150_000);
    // The host saw the cut result too (the event carries what is stored).
    const end = eventsOf(events, 'tool_call_end')[0];
    expect(end?.result.parts[0]).toEqual(text);
  });

  it('maxToolResultShare sets the share: 0.05 of the window keeps ~40k characters', async () => {
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      tools: new StaticToolSource([dump], 'test'),
      maxToolResultShare: 0.05,
    });
    enqueueRun(callDump, reply('done'));
    expect((await agent.prompt('dump')).stopReason).toBe('end');
    const kept = firstResultText(agent.messages);
    expect(kept.length).toBeLessThanOrEqual(40_000);
    expect(kept.length).toBeGreaterThan(30_000);
  });

  it('a resumed session holding a 1 MiB result (written before the cap): compaction shortens it, the prompt succeeds', async () => {
    const path = join(dir, 'old.jsonl');
    const log = await SessionLog.create(path);
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'dump the log' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'call_dump', name: 'dump', input: {} }],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'call_dump',
            toolName: 'dump',
            parts: [{ type: 'text', text: HUGE }],
            isError: false,
          },
        ],
      },
    ];
    for (const m of history) log.appendMessage(m);
    const n = server.requests.length;
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      session: log,
      onEvent: (e) => events.push(e),
    });
    for (const prompt of ['what was the last line?', 'and the first?']) {
      enqueueRun(reply('seen'));
      const result = await agent.prompt(prompt);
      expect(result.error).toBeUndefined();
      expect(result.stopReason).toBe('end');
    }
    for (const r of server.requests.slice(n)) expect(bodySize(r)).toBeLessThanOrEqual(LIMIT);
    expect(eventsOf(events, 'compaction_end')).toHaveLength(1);
    log.close();
    // The shortening is recorded: reopened, the session holds the shortened result, not the 1 MiB one.
    const reopened = await SessionLog.open(path);
    const kept = firstResultText(reopened.conversation.messages);
    expect(kept.length).toBeLessThan(200_000);
    expect(kept).toMatch(/characters were cut here/);
    expect(kept.endsWith(HUGE.slice(-40))).toBe(true);
    reopened.close();
  });

  it('with compaction off, a conversation that cannot fit is not sent: the run ends with ERR_MODEL_CAPABILITY', async () => {
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: HUGE }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a big paste' }], stopReason: 'end' },
    ];
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      messages: history,
      compaction: false,
    });
    server.reset();
    const n = server.requests.length;
    const result = await agent.prompt('and now?');
    expect(result.stopReason).toBe('error');
    expect(result.error?.code).toBe('ERR_MODEL_CAPABILITY');
    expect(result.error?.message).toMatch(/does not fit the context window \(200000 tokens\)/);
    expect(server.requests.length).toBe(n);
  });
});

describe('an image whose header claims 2^31-1 px sides, on Gemini', () => {
  it('costs what Gemini charges at most (16 tiles): the agent does not compact on every turn', async () => {
    const side = 2 ** 31 - 1;
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(side, 0);
    ihdr.writeUInt32BE(side, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const png = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IEND', new Uint8Array(0))]);
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, 'gemini'),
      model: modelFor('gemini'),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a huge picture' },
            {
              type: 'image',
              mediaType: 'image/png',
              data: png.toString('base64'),
              width: side,
              height: side,
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'noted' }], stopReason: 'end' },
      ],
      onEvent: (e) => events.push(e),
    });
    for (const prompt of ['one', 'two', 'three']) {
      server.reset();
      server.enqueue({ type: 'reply', text: 'ok' });
      expect((await agent.prompt(prompt)).stopReason).toBe('end');
    }
    expect(eventsOf(events, 'compaction_start')).toEqual([]);
  });
});
