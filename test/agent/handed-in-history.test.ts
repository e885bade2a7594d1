/**
 * A history handed to `new Agent({ messages })` enters the conversation there: its images/PDFs are checked against
 * their bytes once (serializers trust stored parts). Repairable lies are corrected in the agent's copy; unusable data
 * becomes a placeholder with an `unsupported-input` warning; the request over the wire carries what the bytes say.
 */

import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import type { ImagePart, Message, StoredPart } from '../../src/conversation.js';
import { jpeg, png } from '../providers/scenarios.js';
import { agentFixture, eventsOf, type Json, modelFor, providerFor } from './agent-helpers.js';

const { server } = await agentFixture();

const user = (...content: StoredPart[]): Message => ({ role: 'user', content });

describe('a handed-in history is checked where it enters the agent', () => {
  it('a lying mediaType, size and base64 form are corrected in the agent’s copy and on the wire', async () => {
    const lying: ImagePart = { ...jpeg, mediaType: 'image/png', width: 1, height: 1 };
    const mime: ImagePart = { ...png, data: (png.data.match(/.{1,76}/g) ?? []).join('\r\n') };
    const handed: Message[] = [user({ type: 'text', text: 'two pictures' }, lying, mime)];
    const n = server.requests.length;
    server.enqueue({ type: 'reply', text: 'seen' });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: modelFor('anthropic-messages'),
      messages: handed,
    });
    expect(agent.messages[0]).toEqual(user({ type: 'text', text: 'two pictures' }, jpeg, png));
    // The host's objects are left as they were.
    expect(handed[0]).toEqual(user({ type: 'text', text: 'two pictures' }, lying, mime));
    const result = await agent.continue();
    expect(result.stopReason).toBe('end');
    const body = server.requests[n]?.body as Json;
    const sources = (body.messages[0].content as Json[])
      .filter((b) => b.type === 'image')
      .map((b) => b.source);
    expect(sources).toEqual([
      { type: 'base64', media_type: 'image/jpeg', data: jpeg.data },
      { type: 'base64', media_type: 'image/png', data: png.data },
    ]);
  });

  it('data that is no image becomes a placeholder, reported once as unsupported-input', async () => {
    const events: AgentEvent[] = [];
    const garbage: ImagePart = { ...png, data: Buffer.from('not a picture').toString('base64') };
    const agent = new Agent({
      provider: providerFor(server, 'openai-chat'),
      model: modelFor('openai-chat'),
      messages: [user({ type: 'text', text: 'look' }, garbage, png)],
      onEvent: (e) => events.push(e),
    });
    expect(agent.messages[0]).toEqual(
      user(
        { type: 'text', text: 'look' },
        { type: 'text', text: '[image omitted: its data is not a PNG, JPEG, GIF or WebP image]' },
        png,
      ),
    );
    expect(eventsOf(events, 'warning').map((e) => e.warning)).toEqual([
      {
        code: 'unsupported-input',
        message:
          '1 part of the handed-in history replaced by a placeholder: image: its data is not a PNG, JPEG, GIF or WebP image',
        parts: ['0:0:1'],
      },
    ]);
  });

  it('a history without lies is taken as it is (the same message objects)', () => {
    const handed: Message[] = [user({ type: 'text', text: 'fine' }, png), { role: 'assistant', content: [] }];
    const agent = new Agent({
      provider: providerFor(server, 'gemini'),
      model: modelFor('gemini'),
      messages: handed,
    });
    expect(agent.messages[0]).toBe(handed[0]);
    expect(agent.messages[1]).toBe(handed[1]);
  });
});
