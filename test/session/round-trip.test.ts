import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ImagePart, Message } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { loadSession, SESSION_FORMAT_VERSION, SessionLog } from '../../src/session/index.js';
import { pngBase64 } from './helpers/media.js';
import { everyKindOfMessage } from './helpers/sample-conversation.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-session-rt-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function images(messages: Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    const parts = m.role === 'user' ? m.content : m.role === 'tool' ? m.results.flatMap((r) => r.parts) : [];
    for (const p of parts) if (p.type !== 'text') out.push(p.data);
  }
  return out;
}

describe('round trip of every message and part kind', () => {
  it('loads back a conversation deep-equal to what was appended, base64 byte-identical', async () => {
    const path = file();
    const messages = everyKindOfMessage();
    const log = await SessionLog.create(path, {
      model: 'test-model-1',
      workspace: '/work/space',
      id: 'sess-1',
    });
    for (const m of messages) log.appendMessage(m);
    expect(log.conversation.messages).toStrictEqual(messages);
    log.close();

    const expected = JSON.parse(JSON.stringify(messages)) as Message[];
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual(expected);
    expect(images(loaded.conversation.messages)).toEqual(images(messages));
    expect(loaded.header).toMatchObject({
      type: 'session',
      version: SESSION_FORMAT_VERSION,
      id: 'sess-1',
      model: 'test-model-1',
      workspace: '/work/space',
    });
    expect(Number.isNaN(Date.parse(loaded.header.created))).toBe(false);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.entries).toHaveLength(messages.length);
    expect(loaded.leafId).toBe(loaded.entries.at(-1)?.id);
    // Entries chain: each parent is the previous entry.
    loaded.entries.forEach((e, i) => {
      expect(e.parentId).toBe(i === 0 ? null : loaded.entries[i - 1]?.id);
      expect(Number.isNaN(Date.parse(e.timestamp))).toBe(false);
    });
  });

  it('reads lines that span chunks and grow the buffer (tiny chunk size), incl. multi-byte UTF-8', async () => {
    const path = file();
    const messages = everyKindOfMessage();
    const log = await SessionLog.create(path);
    for (const m of messages) log.appendMessage(m);
    log.close();
    for (const chunkBytes of [13, 97, 4096]) {
      const loaded = await loadSession(path, { chunkBytes });
      expect(loaded.conversation.messages).toStrictEqual(JSON.parse(JSON.stringify(messages)));
    }
  });

  it('keeps custom entries out of the conversation and round-trips their data', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
    const custom = log.appendCustom('model_change', { from: 'a', to: 'b', at: [1, 2] });
    log.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'hello' }] });
    log.close();
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(loaded.entries[1]).toStrictEqual(custom);
    expect(loaded.entries[2]?.parentId).toBe(custom.id);
  });

  it('appends to an existing file with open() and the result equals a single-writer log', async () => {
    const path = file();
    const [a, b, c] = everyKindOfMessage();
    const first = await SessionLog.create(path);
    first.appendMessage(a as Message);
    first.close();
    const second = await SessionLog.open(path);
    expect(second.conversation.messages).toStrictEqual([a]);
    second.appendMessage(b as Message);
    second.appendMessage(c as Message);
    second.close();
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual(JSON.parse(JSON.stringify([a, b, c])));
    expect(loaded.entries[1]?.parentId).toBe(loaded.entries[0]?.id);
  });

  it('openOrCreate creates a missing file and opens an existing one', async () => {
    const path = file();
    const created = await SessionLog.openOrCreate(path, { model: 'm1' });
    created.appendMessage({ role: 'user', content: [{ type: 'text', text: 'first' }] });
    created.close();
    const opened = await SessionLog.openOrCreate(path, { model: 'ignored' });
    expect(opened.header.model).toBe('m1');
    expect(opened.conversation.messages).toHaveLength(1);
    opened.close();
  });

  it('writes exactly one line per append, each a complete JSON object', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    for (const m of everyKindOfMessage()) log.appendMessage(m);
    log.appendCustom('note', 'text');
    log.close();
    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(1 + everyKindOfMessage().length + 1);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });
});

describe('branches', () => {
  it('resolves the conversation as the path from the root to the last entry', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
    const a = log.appendMessage(say('a'));
    log.appendMessage(say('b'));
    log.appendMessage(say('c'));
    log.branch(a.id);
    expect(log.conversation.messages).toStrictEqual([say('a')]);
    const d = log.appendMessage(say('d'));
    expect(d.parentId).toBe(a.id);
    expect(log.conversation.messages).toStrictEqual([say('a'), say('d')]);
    log.close();
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual([say('a'), say('d')]);
    expect(loaded.entries).toHaveLength(4);
  });

  it('rejects branching to an unknown entry', async () => {
    const log = await SessionLog.create(file());
    try {
      expect(() => log.branch('nope')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    } finally {
      log.close();
    }
  });
});

describe('append-time checks', () => {
  it('refuses values that would not round-trip, and writes nothing for them', async () => {
    const path = file();
    const log = await SessionLog.create(path);
    const before = readFileSync(path);
    const bad: unknown[] = [
      {
        role: 'assistant',
        content: [{ type: 'image', mediaType: 'image/png', data: 'x', width: 1, height: 1 }],
      },
      { role: 'user', content: [{ type: 'image', mediaType: 'image/bmp', data: 'x', width: 1, height: 1 }] },
      { role: 'user', content: [{ type: 'image', mediaType: 'image/png', data: 'x', width: 0, height: 1 }] },
      {
        role: 'tool',
        results: [
          {
            type: 'tool_result',
            toolUseId: 'a',
            toolName: 't',
            parts: [],
            isError: false,
            meta: { b: new Uint8Array(2) },
          },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'a', name: 't', input: { when: new Date() } }],
      },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'a', name: 't', input: { n: Number.NaN } }] },
      { role: 'narrator', content: 'x' },
    ];
    for (const m of bad) {
      let caught: unknown;
      try {
        log.appendMessage(m as Message);
      } catch (err) {
        caught = err;
      }
      expect(isPantoError(caught, 'ERR_INVALID_ARGUMENT'), JSON.stringify(m)).toBe(true);
    }
    expect(() => log.appendCustom('', 1)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    expect(() => log.appendCustom('x', undefined)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    log.close();
    expect(readFileSync(path)).toEqual(before);
    expect(() => log.appendCustom('x', 1)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });

  it('refuses to create over an existing file', async () => {
    const path = file();
    (await SessionLog.create(path)).close();
    await expect(SessionLog.create(path)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
  });

  it('appends with fsync on', async () => {
    const path = file();
    const log = await SessionLog.create(path, { fsync: true });
    const image: ImagePart = {
      type: 'image',
      mediaType: 'image/png',
      data: pngBase64(20, 20),
      width: 20,
      height: 20,
    };
    log.appendMessage({ role: 'user', content: [image] });
    log.close();
    expect((await loadSession(path)).conversation.messages).toStrictEqual([
      { role: 'user', content: [image] },
    ]);
  });
});

describe('model changes', () => {
  it('are recorded, reloaded and resumed as the current model of the branch', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'panto-model-change-'));
    try {
      const path = join(dir2, 's.jsonl');
      const log = await SessionLog.create(path, { model: 'claude-sonnet-4-5' });
      expect(log.model).toBe('claude-sonnet-4-5');
      log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
      const change = log.appendModelChange({ model: 'gpt-4.1', api: 'openai-responses', provider: 'openai' });
      expect(change).toMatchObject({ type: 'model_change', model: 'gpt-4.1', api: 'openai-responses' });
      expect(log.model).toBe('gpt-4.1');
      expect(() => log.appendModelChange({ model: '' })).toThrow(/non-empty/);
      log.close();
      const loaded = await loadSession(path);
      expect(loaded.model).toBe('gpt-4.1');
      expect(loaded.conversation.messages).toHaveLength(1);
      const reopened = await SessionLog.open(path);
      expect(reopened.model).toBe('gpt-4.1');
      // a branch from before the switch is back on the header's model
      const first = reopened.entries[0]?.id as string;
      reopened.branch(first);
      expect(reopened.model).toBe('claude-sonnet-4-5');
      reopened.close();
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
  });
});
