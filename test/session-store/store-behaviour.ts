/**
 * One behaviour suite for every `SessionStore`: the JSONL store runs it in the unit run
 * (jsonl-store.test.ts), the PostgreSQL store against a real server (test/postgres/, `npm run test:postgres`).
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import type { SessionStore } from '../../src/session-store/index.js';

const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const answer = (text: string, inputTokens = 10): Message => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'end',
  usage: { inputTokens, outputTokens: 2 },
  model: 'm1',
});
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const tool: Message = {
  role: 'tool',
  results: [
    {
      type: 'tool_result',
      toolUseId: 't1',
      toolName: 'shot',
      isError: false,
      parts: [
        { type: 'text', text: 'a picture' },
        { type: 'image', mediaType: 'image/png', data: PNG, width: 1, height: 1 },
      ],
      meta: { path: 'shot.png' },
    },
  ],
};

async function code(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
    return undefined;
  } catch (err) {
    return isPantoError(err) ? err.code : `untyped ${(err as Error)?.message}`;
  }
}

async function lines(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
}

let n = 0;
const freshId = () => `s${process.pid}-${Date.now().toString(36)}-${n++}`;

/** The suite for the store `make()` gives (a fresh store per test; closed after it). */
export function describeSessionStore(name: string, make: () => Promise<SessionStore>): void {
  const withStore = (fn: (store: SessionStore) => Promise<void>) => async () => {
    const store = await make();
    try {
      await fn(store);
    } finally {
      await store.close();
    }
  };

  describe(`session store: ${name}`, () => {
    it(
      'create, append, close, then open gives the same conversation, leaf, model and entries',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id, model: 'm0', workspace: '/w' });
        log.appendMessage(say('hello'));
        log.appendMessage(answer('hi'));
        log.appendMessage(tool);
        log.appendModelChange({ model: 'm2', api: 'anthropic-messages' });
        log.appendCustom('label', { x: [1, 'two', null] });
        const conversation = log.conversation;
        const leaf = log.leafId;
        await log.close();
        const again = await store.open(id, { eager: true });
        expect(again.header).toMatchObject({ id, model: 'm0', workspace: '/w' });
        expect(again.conversation).toStrictEqual(conversation);
        expect(again.leafId).toBe(leaf);
        expect(again.model).toBe('m2');
        expect(again.entries.map((e) => e.type)).toStrictEqual([
          'message',
          'message',
          'message',
          'model_change',
          'custom',
        ]);
        expect(again.size).toBe(5);
        await again.close();
        const loaded = await store.load(id);
        expect(loaded.conversation).toStrictEqual(conversation);
        expect(loaded.model).toBe('m2');
      }),
    );

    it(
      'a compacted session resumes from its latest compaction: the same conversation as appended',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id });
        for (let i = 0; i < 30; i++) {
          log.appendMessage(say(`q${i}`));
          log.appendMessage(answer(`a${i}`));
        }
        const before = log.conversation.messages.length;
        log.appendCompaction({
          summary: 'sum',
          replacement: [say('summary of q0..q24')],
          firstKeptIndex: 50,
          messageCountBefore: before,
          tokensBefore: 1000,
          tokensAfter: 100,
        });
        log.appendMessage(say('after'));
        const conversation = log.conversation;
        expect(conversation.messages).toHaveLength(1 + 10 + 1);
        await log.close();
        for (const eager of [false, true]) {
          const again = await store.open(id, { eager });
          expect(again.conversation).toStrictEqual(conversation);
          again.appendMessage(answer('more'));
          conversation.messages.push(answer('more'));
          await again.close();
          const reloaded = await store.load(id, { eager: true });
          expect(reloaded.conversation.messages.at(-1)).toStrictEqual(answer('more'));
          expect(reloaded.entries.length).toBe(62 + (eager ? 2 : 1));
        }
      }),
    );

    it(
      'one writer: a second open is ERR_SESSION_LOCKED until the first closes',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id });
        log.appendMessage(say('one'));
        await log.flush();
        expect(await code(store.open(id))).toBe('ERR_SESSION_LOCKED');
        await log.close();
        const next = await store.open(id);
        expect(next.conversation.messages).toStrictEqual([say('one')]);
        await next.close();
      }),
    );

    it(
      'create refuses an existing id; open and load refuse an unknown one with ERR_SESSION_NOT_FOUND',
      withStore(async (store) => {
        const id = freshId();
        await (await store.create({ id })).close();
        expect(await code(store.create({ id }))).toBe('ERR_INVALID_ARGUMENT');
        expect(await code(store.open(`${id}-none`))).toBe('ERR_SESSION_NOT_FOUND');
        expect(await code(store.load(`${id}-none`))).toBe('ERR_SESSION_NOT_FOUND');
      }),
    );

    it(
      'hostile session ids are refused before they reach a path or a query',
      withStore(async (store) => {
        for (const id of [
          "x'; DROP TABLE panto_sessions; --",
          '../../etc/passwd',
          '.hidden',
          '',
          'a'.repeat(129),
          'a/b',
          'a\u0000b',
          'ü',
        ]) {
          expect(await code(store.create({ id }))).toBe('ERR_INVALID_ARGUMENT');
          expect(await code(store.open(id))).toBe('ERR_INVALID_ARGUMENT');
          expect(await code(store.load(id))).toBe('ERR_INVALID_ARGUMENT');
          expect(await code(lines(store.exportLines(id)))).toBe('ERR_INVALID_ARGUMENT');
        }
        // The store still works.
        const id = freshId();
        await (await store.create({ id })).close();
        expect((await store.list()).some((s) => s.id === id)).toBe(true);
      }),
    );

    it(
      'export then import (under a new id) gives the same lines and the same session; list shows both',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id, model: 'm0' });
        log.appendMessage(say('ü 日本 🙂 "quoted" \\ back'));
        log.appendMessage(answer('a'));
        log.appendMessage(tool);
        await log.close();
        const exported = await lines(store.exportLines(id));
        expect(exported).toHaveLength(4);
        const copyId = `${id}-copy`;
        const header = { ...JSON.parse(exported[0] as string), id: copyId };
        const renamed = [JSON.stringify(header), ...exported.slice(1)];
        expect(await store.importLines(renamed)).toBe(copyId);
        expect(await lines(store.exportLines(copyId))).toStrictEqual(renamed);
        expect((await store.load(copyId)).conversation).toStrictEqual((await store.load(id)).conversation);
        // Importing it again: the id exists.
        expect(await code(store.importLines(renamed))).toBe('ERR_INVALID_ARGUMENT');
        const ids = (await store.list()).map((s) => s.id);
        expect(ids).toContain(id);
        expect(ids).toContain(copyId);
        expect((await store.list()).find((s) => s.id === id)).toMatchObject({ entries: 3, model: 'm0' });
      }),
    );

    it(
      'import checks every line as a load does; nothing is stored when one fails',
      withStore(async (store) => {
        const id = freshId();
        const header = JSON.stringify({ type: 'session', version: 1, id, created: 't' });
        const good = JSON.stringify({
          type: 'message',
          id: 'a',
          parentId: null,
          timestamp: 't',
          message: say('x'),
        });
        const cases: Array<[string[], string]> = [
          [[header, good, '{"type":"message", broken'], 'ERR_SESSION_CORRUPT'],
          [[header, good, good], 'ERR_SESSION_FORMAT'], // duplicate id
          [[header, good.replace('"parentId":null', '"parentId":"nowhere"')], 'ERR_SESSION_FORMAT'],
          [
            [
              header,
              `{"type":"custom","id":"d","parentId":null,"timestamp":"t","customType":"x","data":${'['.repeat(600)}${']'.repeat(600)}}`,
            ],
            'ERR_SESSION_FORMAT',
          ],
          [[good], 'ERR_SESSION_FORMAT'], // no header first
          [[], 'ERR_INVALID_ARGUMENT'],
        ];
        for (const [input, want] of cases) expect(await code(store.importLines(input))).toBe(want);
        expect(await code(store.load(id))).toBe('ERR_SESSION_NOT_FOUND');
      }),
    );

    it(
      'appends refused after close; a value nested too deep is refused and nothing stored',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id });
        log.appendMessage(say('kept'));
        expect(
          await code(() =>
            log.appendMessage({
              role: 'assistant',
              content: [
                {
                  type: 'tool_call',
                  id: 'c',
                  name: 'n',
                  input: JSON.parse(`{"a":${'['.repeat(600)}${']'.repeat(600)}}`),
                },
              ],
            }),
          ),
        ).toBe('ERR_INVALID_ARGUMENT');
        await log.close();
        expect(await code(() => log.appendMessage(say('late')))).toBe('ERR_INVALID_ARGUMENT');
        const loaded = await store.load(id, { eager: true });
        expect(loaded.entries).toHaveLength(1);
      }),
    );
  });
}
