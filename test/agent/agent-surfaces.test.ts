import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import type { RecordedRequest, Surface } from '../helpers/fake-provider-server.js';
import { agentFixture, eventsOf, isPngBase64, type Json, modelFor, providerFor } from './agent-helpers.js';

const { server, ws } = await agentFixture();

/** Where each surface must carry the picture a tool returned, checked on the request that follows the call. */
const expectPictureInPlace: Record<Surface, (body: Json, callId: string) => void> = {
  'anthropic-messages': (body, callId) => {
    // The tool_result block of the last user message holds the image block beside the text.
    const last = body.messages.at(-1);
    expect(last.role).toBe('user');
    const result = last.content.find((b: Json) => b.type === 'tool_result');
    expect(result.tool_use_id).toBe(callId);
    const image = result.content.find((b: Json) => b.type === 'image');
    expect(image.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    expect(isPngBase64(image.source.data)).toBe(true);
    expect(result.content.some((b: Json) => b.type === 'text')).toBe(true);
  },
  'openai-chat': (body, callId) => {
    // Tool messages carry text only; the picture follows in ONE user message right after them.
    const msgs: Json[] = body.messages;
    const toolIndex = msgs.findIndex((m) => m.role === 'tool' && m.tool_call_id === callId);
    expect(toolIndex).toBeGreaterThan(0);
    expect(JSON.stringify(msgs[toolIndex]?.content)).not.toContain('base64');
    const next = msgs[toolIndex + 1] as Json;
    expect(next.role).toBe('user');
    const image = next.content.find((p: Json) => p.type === 'image_url');
    expect(image.image_url.url.startsWith('data:image/png;base64,')).toBe(true);
    expect(isPngBase64(image.image_url.url.slice('data:image/png;base64,'.length))).toBe(true);
  },
  'openai-responses': (body, callId) => {
    // The function_call_output's output list holds input_text and input_image.
    const out = body.input.find((i: Json) => i.type === 'function_call_output' && i.call_id === callId);
    expect(Array.isArray(out.output)).toBe(true);
    const image = out.output.find((p: Json) => p.type === 'input_image');
    expect(image.image_url.startsWith('data:image/png;base64,')).toBe(true);
    expect(isPngBase64(image.image_url.slice('data:image/png;base64,'.length))).toBe(true);
    expect(out.output.some((p: Json) => p.type === 'input_text')).toBe(true);
    expect(body.input.some((i: Json) => i.type === 'function_call' && i.call_id === callId)).toBe(true);
  },
  gemini: (body) => {
    // Gemini 3: the picture rides inside functionResponse.parts as inlineData; the call's signature is echoed.
    const contents: Json[] = body.contents;
    const model = contents.find((c) => c.role === 'model' && c.parts.some((p: Json) => p.functionCall));
    const callPart = model?.parts.find((p: Json) => p.functionCall);
    expect(callPart.functionCall.name).toBe('read');
    expect(callPart.thoughtSignature).toMatch(/^gsig_\d+$/);
    const response = contents.at(-1)?.parts.find((p: Json) => p.functionResponse)?.functionResponse;
    expect(response.name).toBe('read');
    const inline = response.parts.find((p: Json) => p.inlineData)?.inlineData;
    expect(inline.mimeType).toBe('image/png');
    expect(isPngBase64(inline.data)).toBe(true);
  },
};

describe.each(Object.keys(expectPictureInPlace) as Surface[])(
  '%s: a full turn through the Lua read tool',
  (surface) => {
    it('streams the call, runs read on a PNG, and the next request carries the picture in place', async () => {
      const n = server.requests.length;
      server.enqueue(
        {
          type: 'reply',
          text: 'Let me look.',
          toolCalls: [
            // Gemini calls often carry no id: the agent must synthesise one and still match the result.
            surface === 'gemini'
              ? { name: 'read', args: { path: 'cat.png' } }
              : { id: 'call_cat', name: 'read', args: { path: 'cat.png' } },
          ],
        },
        { type: 'reply', text: 'A red square on grey.' },
      );
      const events: AgentEvent[] = [];
      const agent = new Agent({
        provider: providerFor(server, surface),
        model: modelFor(surface),
        tools: ws.tools,
        system: 'You are terse.',
        onEvent: (e) => events.push(e),
      });
      const result = await agent.prompt('What is in cat.png?');

      expect(result.stopReason).toBe('end');
      expect(result.turns).toBe(2);
      const requests = server.requests.slice(n);
      expect(requests).toHaveLength(2);
      // The conversation: user, assistant(call), tool(result with the stored image), assistant(answer).
      expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      const tool = agent.messages[2];
      const call = agent.messages[1];
      if (tool?.role !== 'tool' || call?.role !== 'assistant') throw new Error('unexpected roles');
      const callId = call.content.find((b) => b.type === 'tool_call')?.id as string;
      const stored = tool.results[0];
      expect(stored?.isError).toBe(false);
      expect(stored?.toolUseId).toBe(callId);
      const image = stored?.parts.find((p) => p.type === 'image');
      expect(image).toMatchObject({ type: 'image', mediaType: 'image/png', width: 64, height: 48 });
      expect(stored?.meta).toMatchObject({ path: 'cat.png' });

      expectPictureInPlace[surface](requests[1]?.body as Json, callId);

      // Events: streamed text, tool start/end, message_end per appended message.
      expect(eventsOf(events, 'message_delta').some((e) => e.delta.type === 'text_delta')).toBe(true);
      expect(eventsOf(events, 'tool_call_start').map((e) => e.toolName)).toEqual(['read']);
      expect(eventsOf(events, 'tool_call_end').map((e) => e.isError)).toEqual([false]);
      expect(eventsOf(events, 'message_end').map((e) => e.message.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
      ]);
      expect(events.at(-1)).toMatchObject({ type: 'agent_end', result: { stopReason: 'end' } });
    });
  },
);

describe.each(Object.keys(expectPictureInPlace) as Surface[])('%s: a 400 about the picture', (surface) => {
  it('is retried once without the picture, and the picture stays in history', async () => {
    const n = server.requests.length;
    const hasPng = (req: RecordedRequest) => JSON.stringify(req.body).includes('iVBORw0KGgo');
    server.enqueue(
      { type: 'reply', toolCalls: [{ id: 'call_img', name: 'read', args: { path: 'cat.png' } }] },
      (req) =>
        hasPng(req)
          ? { type: 'http-error', status: 400, message: 'Unable to process input image. Please retry.' }
          : { type: 'reply', text: 'I cannot see it.' },
      (req) =>
        hasPng(req)
          ? { type: 'http-error', status: 400, message: 'Unable to process input image. Please retry.' }
          : { type: 'reply', text: 'I cannot see it.' },
    );
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: providerFor(server, surface),
      model: modelFor(surface),
      tools: ws.tools,
      onEvent: (e) => events.push(e),
    });
    const result = await agent.prompt('What is in cat.png?');
    expect(result.stopReason).toBe('end');
    const reqs = server.requests.slice(n);
    expect(reqs.map(hasPng)).toEqual([false, true, false]);
    expect(JSON.stringify(reqs[2]?.body)).toContain('the provider rejected this attachment');
    expect(eventsOf(events, 'warning').filter((e) => e.warning.code === 'media-rejected')).toHaveLength(1);
    const tool = agent.messages[2];
    expect(tool?.role === 'tool' && tool.results[0]?.parts.some((p) => p.type === 'image')).toBe(true);
  });
});
