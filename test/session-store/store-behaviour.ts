/**
 * One behaviour suite for every `SessionStore`: the JSONL store runs it in the unit run
 * (jsonl-store.test.ts), the PostgreSQL store against a real server (test/postgres/, `npm run test:postgres`).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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

const RESUME = fileURLToPath(new URL('./resume-process.mjs', import.meta.url));

/** Session `id` of store `where` opened in another process (the built library): what it resumed; it appends `text`. */
async function resumeInProcess(
  where: string,
  id: string,
  text: string,
): Promise<{ leafId: string | null; model?: string; messages: Message[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, [RESUME, where, id, text]);
  return JSON.parse(stdout);
}

/**
 * The suite for the store `make()` gives (a fresh store per test; closed after it). `where` names the same store for
 * another process (a folder of JSONL files or a PostgreSQL URL, as `--store` takes it).
 */
export function describeSessionStore(name: string, make: () => Promise<SessionStore>, where: string): void {
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
      'usage: a compaction records the answers before it; an open knows every answer without reading the history',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id });
        for (let i = 0; i < 10; i++) {
          log.appendMessage(say(`q${i}`));
          log.appendMessage(answer(`a${i}`, i));
        }
        log.appendMessage({ ...answer('other model', 100), model: 'm2' } as Message);
        log.appendCompaction({
          summary: 'sum',
          replacement: [say('summary')],
          firstKeptIndex: 18,
          messageCountBefore: 21,
          tokensBefore: 1000,
          tokensAfter: 100,
        });
        log.appendMessage(answer('after', 1000));
        const m1 = (requests: number, inputTokens: number) => ({
          model: 'm1',
          requests,
          inputTokens,
          outputTokens: 2 * requests,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        });
        const m2 = { ...m1(1, 100), model: 'm2' };
        const expected = [m1(11, 45 + 1000), m2];
        expect(log.usage).toStrictEqual(expected);
        await log.close();
        const compaction = (await store.load(id, { eager: true })).entries.find(
          (e) => e.type === 'compaction',
        );
        expect(compaction?.type === 'compaction' && compaction.usageBefore).toStrictEqual([m1(10, 45), m2]);
        for (const eager of [false, true]) {
          const again = await store.open(id, { eager });
          expect(again.usage).toStrictEqual(expected);
          await again.close();
        }
        // A session stored before compactions recorded usage: every answer is counted at open.
        const old = (await lines(store.exportLines(id))).map((l, i) => {
          const v = JSON.parse(l);
          if (i === 0) v.id = `${id}-old`;
          delete v.usageBefore;
          return JSON.stringify(v);
        });
        await store.importLines(old);
        for (const eager of [false, true]) {
          const again = await store.open(`${id}-old`, { eager });
          expect(again.usage).toStrictEqual(expected);
          await again.close();
        }
      }),
    );

    it(
      'branch to an entry before the latest compaction (from a log that read only what follows it), append: the branch is current, also reopened and in another process',
      withStore(async (store) => {
        const id = freshId();
        const first = await store.create({ id, model: 'm0' });
        const ids: string[] = [];
        for (let i = 0; i < 10; i++) {
          ids.push(first.appendMessage(say(`q${i}`)).id);
          ids.push(first.appendMessage(answer(`a${i}`)).id);
          if (i === 1) first.appendModelChange({ model: 'm1' });
        }
        first.appendCompaction({
          summary: 'sum',
          replacement: [say('summary of q0..q7')],
          firstKeptIndex: 16,
          messageCountBefore: 20,
          tokensBefore: 1000,
          tokensAfter: 100,
        });
        first.appendModelChange({ model: 'm2' });
        first.appendMessage(say('after the compaction'));
        await first.close();

        const log = await store.open(id);
        expect(log.conversation.messages).toHaveLength(1 + 4 + 1);
        expect(log.model).toBe('m2');
        const size = log.size;
        // a1 is before the model change to m1, a4 after it; both before the compaction and its kept entries.
        await log.branch(ids[3] as string);
        expect(log.leafId).toBe(ids[3]);
        expect(log.model).toBe('m0');
        expect(log.conversation.messages).toStrictEqual([say('q0'), answer('a0'), say('q1'), answer('a1')]);
        await log.branch(ids[9] as string);
        expect(log.model).toBe('m1');
        const upToA4: Message[] = [];
        for (let i = 0; i <= 4; i++) upToA4.push(say(`q${i}`), answer(`a${i}`));
        expect(log.conversation.messages).toStrictEqual(upToA4);
        // A kept entry after the compaction's branch point (q8): the compacted conversation does not apply on it.
        await log.branch(ids[16] as string);
        expect(log.conversation.messages).toHaveLength(17);
        expect(log.size).toBe(size);
        await log.branch(ids[9] as string);
        const branched = log.appendMessage(say('branched'));
        expect(branched.parentId).toBe(ids[9]);
        const expected = [...upToA4, say('branched')];
        expect(log.conversation.messages).toStrictEqual(expected);
        await log.close();

        for (const eager of [false, true]) {
          const again = await store.open(id, { eager });
          expect(again.conversation.messages).toStrictEqual(expected);
          expect(again.leafId).toBe(branched.id);
          expect(again.model).toBe('m1');
          await again.close();
        }
        expect((await store.load(id)).conversation.messages).toStrictEqual(expected);
        const child = await resumeInProcess(where, id, 'from another process');
        expect(child).toMatchObject({ leafId: branched.id, model: 'm1', messages: expected });
        const last = await store.open(id);
        expect(last.conversation.messages).toStrictEqual([...expected, say('from another process')]);
        // Back on the compacted branch: its conversation again, from the entry the first log appended last.
        const entries = (await store.load(id, { eager: true })).entries;
        const tip = entries.find(
          (e) =>
            e.type === 'message' && JSON.stringify(e.message) === JSON.stringify(say('after the compaction')),
        );
        await last.branch(tip?.id as string);
        expect(last.model).toBe('m2');
        expect(last.conversation.messages).toHaveLength(1 + 4 + 1);
        expect(last.conversation.messages[0]).toStrictEqual(say('summary of q0..q7'));
        await last.close();
      }),
    );

    it(
      'branch to an id the session does not hold: ERR_INVALID_ARGUMENT, the log unchanged and still appending',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id });
        const a = log.appendMessage(say('one'));
        log.appendMessage(say('two'));
        const before = log.conversation;
        for (const bad of [
          'nope',
          '',
          a.id.toUpperCase(),
          "x' OR '1'='1",
          'a'.repeat(10_000),
          42 as unknown as string,
        ])
          expect(await code(async () => log.branch(bad))).toBe('ERR_INVALID_ARGUMENT');
        // An id of another session is unknown in this one.
        const other = await store.create({ id: `${id}-other` });
        const foreign = other.appendMessage(say('elsewhere'));
        await other.close();
        expect(await code(async () => log.branch(foreign.id))).toBe('ERR_INVALID_ARGUMENT');
        expect(log.conversation).toStrictEqual(before);
        log.appendMessage(say('three'));
        await log.close();
        expect((await store.load(id)).conversation.messages).toStrictEqual([
          say('one'),
          say('two'),
          say('three'),
        ]);
      }),
    );

    it(
      'branch while this log holds the lock: another open is refused, a reader sees nothing change until the append',
      withStore(async (store) => {
        const id = freshId();
        const first = await store.create({ id });
        const a = first.appendMessage(say('one'));
        first.appendMessage(say('two'));
        await first.close();
        const log = await store.open(id);
        await log.branch(a.id);
        expect(await code(store.open(id))).toBe('ERR_SESSION_LOCKED');
        expect((await store.load(id)).conversation.messages).toStrictEqual([say('one'), say('two')]);
        log.appendMessage(say('instead'));
        await log.flush();
        expect((await store.load(id)).conversation.messages).toStrictEqual([say('one'), say('instead')]);
        expect(await code(store.open(id))).toBe('ERR_SESSION_LOCKED');
        await log.close();
        const next = await store.open(id);
        expect(next.conversation.messages).toStrictEqual([say('one'), say('instead')]);
        await next.close();
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

    it(
      'upload entries: stored like any entry, read back over all branches without reading the conversation',
      withStore(async (store) => {
        const id = freshId();
        const log = await store.create({ id });
        const sha = 'ab'.repeat(32);
        const scope = {
          api: 'anthropic-messages',
          baseUrl: 'https://api.anthropic.com',
          account: '0123456789abcdef',
        };
        log.appendMessage(tool);
        log.appendUpload?.({
          ...scope,
          files: [{ sha256: sha, id: 'file_1', mediaType: 'image/png', bytes: 69 }],
        });
        for (let i = 0; i < 5; i++) log.appendMessage(say(`q${i}`));
        log.appendCompaction({
          summary: 'sum',
          replacement: [say('summary')],
          firstKeptIndex: 5,
          messageCountBefore: 6,
          tokensBefore: 100,
          tokensAfter: 10,
        });
        log.appendUpload?.({ ...scope, removed: ['file_1'] });
        expect((await log.uploadEntries?.())?.map((e) => [e.files?.length ?? 0, e.removed ?? []])).toEqual([
          [1, []],
          [0, ['file_1']],
        ]);
        await log.close();
        // A lazy open (from the compaction on) still finds both; the conversation is unchanged by them.
        const again = await store.open(id);
        expect(again.conversation.messages).toHaveLength(2);
        const uploads = (await again.uploadEntries?.()) ?? [];
        expect(uploads.map((e) => e.type)).toEqual(['upload', 'upload']);
        expect(uploads[0]?.files?.[0]).toEqual({
          sha256: sha,
          id: 'file_1',
          mediaType: 'image/png',
          bytes: 69,
        });
        expect(uploads[0]).toMatchObject(scope);
        expect(
          await code(() =>
            again.appendUpload?.({
              ...scope,
              files: [{ sha256: 'no', id: 'x', mediaType: 'image/png', bytes: 1 }],
            }),
          ),
        ).toBe('ERR_INVALID_ARGUMENT');
        await again.close();
      }),
    );
  });
}
