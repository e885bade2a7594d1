/**
 * A hostile history resumed through the Agent against the loopback provider servers: a session recorded on another
 * provider (foreign call ids and names, a lying image media type, a lone surrogate, a call id reused per turn) and a
 * provider that streams a call id another surface rejects. The request that goes over the wire must obey the
 * surface's schema rules (wire-rules.ts) with calls and results paired, and the run must end normally.
 */

import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { ImagePart, Message, StoredPart } from '../../src/conversation.js';
import type { Surface } from '../helpers/fake-provider-server.js';
import { jpeg, png } from '../providers/scenarios.js';
import { expectWireRules, pairs } from '../providers/wire-rules.js';
import { agentFixture, type Json, modelFor, providerFor } from './agent-helpers.js';

const { server, ws } = await agentFixture();

const SURFACES: Surface[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];

const text = (t: string): StoredPart => ({ type: 'text', text: t });

/** Recorded on OpenAI Chat through a compatible server (calls numbered per turn), then on Gemini. */
function foreignHistory(): Message[] {
  const lying: ImagePart = { ...jpeg, mediaType: 'image/png' };
  return [
    { role: 'user', content: [text('Look at the files.')] },
    {
      role: 'assistant',
      model: 'gpt-4.1',
      content: [{ type: 'tool_call', id: 'functions.read:0', name: 'read', input: { path: 'a \ud800' } }],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'functions.read:0',
          toolName: 'read',
          isError: false,
          parts: [text('photo \udc00'), lying],
        },
      ],
    },
    {
      role: 'assistant',
      model: 'gpt-4.1',
      content: [
        { type: 'tool_call', id: 'functions.read:0', name: 'mcp.fs:read file', input: { path: 'b' } },
      ],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: 'functions.read:0',
          toolName: 'mcp.fs:read file',
          isError: false,
          parts: [png],
        },
      ],
    },
    {
      role: 'assistant',
      model: 'gemini-2.5-flash',
      content: [{ type: 'text', text: 'Two pictures.' }],
      stopReason: 'end',
    },
  ];
}

describe.each(SURFACES)('%s: resuming a hostile foreign session', (surface) => {
  it('sends a request the surface accepts, calls and results paired, and ends normally', async () => {
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'Both are pictures.' });
    const agent = new Agent({
      provider: providerFor(server, surface),
      model: modelFor(surface),
      tools: ws.tools,
      messages: foreignHistory(),
    });
    const result = await agent.prompt('Which colours?');
    expect(result.stopReason).toBe('end');
    const requests = server.requests.slice(n);
    expect(requests).toHaveLength(1);
    const body = requests[0]?.body as Json;
    expectWireRules(surface, body);
    const { calls, results } = pairs(surface, body);
    expect(calls).toHaveLength(2);
    expect(results).toEqual(calls);
    if (surface !== 'gemini') expect(new Set(calls).size).toBe(2);
    const json = JSON.stringify(body);
    expect(json).toContain('image/jpeg');
    expect(json).toContain('\ufffd');
  });
});

describe.each(SURFACES)('%s: a streamed call id with dots, colons and spaces', (surface) => {
  it('the tool runs and the next request carries the call and its result under one valid id', async () => {
    const n = server.requests.length;
    server.enqueue(
      { type: 'reply', toolCalls: [{ id: 'call 1.read:0', name: 'read', args: { path: 'notes.txt' } }] },
      { type: 'reply', text: 'Two lines.' },
    );
    const agent = new Agent({
      provider: providerFor(server, surface),
      model: modelFor(surface),
      tools: ws.tools,
    });
    const result = await agent.prompt('Read notes.txt');
    expect(result.stopReason).toBe('end');
    const requests = server.requests.slice(n);
    expect(requests).toHaveLength(2);
    const body = requests[1]?.body as Json;
    expectWireRules(surface, body);
    const { calls, results } = pairs(surface, body);
    expect(calls).toHaveLength(1);
    expect(results).toEqual(calls);
    expect(JSON.stringify(body)).toContain('line two');
  });
});
