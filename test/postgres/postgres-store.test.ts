/**
 * The PostgreSQL session store against a real server: the behaviour suite every store passes, then what only a
 * database shared by several processes can show — two processes resuming one session in turn, a writer killed mid-append,
 * a connection dropped mid-turn, lock waits and lost locks, hostile rows.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { Message } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { defineTool } from '../../src/tool.js';
import { StaticToolSource } from '../../src/tool-source.js';
import { agentFixture, providerFor } from '../agent/agent-helpers.js';
import { describeCliStore } from '../session-store/cli-store.js';
import { describeSessionStore } from '../session-store/store-behaviour.js';
import { connectStore, PG_URL } from './pg-env.js';

const WRITER = fileURLToPath(new URL('./writer-process.mjs', import.meta.url));
const run = PG_URL === undefined ? describe.skip : describe;

if (PG_URL !== undefined) describeSessionStore('PostgreSQL', () => connectStore(), PG_URL);

const admin = PG_URL === undefined ? undefined : new pg.Pool({ connectionString: PG_URL, max: 2 });
afterAll(async () => admin?.end());
const sql = async (text: string, values: unknown[] = []) =>
  (await (admin as pg.Pool).query(text, values)).rows;

let n = 0;
const freshId = () => `pg${process.pid}-${Date.now().toString(36)}-${n++}`;
const say = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
const texts = (messages: readonly Message[]) =>
  messages.map((m) => (m.role === 'user' ? (m.content[0] as { text?: string }).text : undefined));

/** Run the writer process to its end; resolves with its exit code and output. */
function writer(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WRITER, ...args], {
      env: { ...process.env, PANTO_TEST_PG_URL: PG_URL },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

async function code(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (err) => (isPantoError(err) ? err.code : `untyped ${err?.message}`),
  );
}

/** The backend pid holding the advisory lock of session `id`. */
async function lockHolder(id: string): Promise<number | undefined> {
  const rows = await sql(
    `SELECT l.pid FROM pg_locks l JOIN panto_sessions s ON l.objid = (s.key % 2147483647)
     WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.granted AND s.id = $2`,
    [0x70616e74, id],
  );
  return rows[0]?.pid;
}

run('two processes, one session', () => {
  it('two processes resume the session in turn, each appending: every entry stored once, in order', async () => {
    const id = freshId();
    const store = await connectStore();
    await (await store.create({ id })).close();
    for (let round = 0; round < 3; round++) {
      for (const who of ['A', 'B']) {
        const r = await writer(['append', id, `${who}${round}`, '3']);
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
      }
    }
    const s = await store.load(id, { eager: true });
    expect(texts(s.conversation.messages)).toStrictEqual(
      [0, 1, 2].flatMap((r) => ['A', 'B'].flatMap((w) => [0, 1, 2].map((i) => `${w}${r} ${i}`))),
    );
    expect(s.entries.map((e) => e.parentId)).toStrictEqual([
      null,
      ...s.entries.slice(0, -1).map((e) => e.id),
    ]);
    await store.close();
  });

  it('a writer killed with SIGKILL mid-append: nothing half-written, the lock released, the session opens', async () => {
    const id = freshId();
    const store = await connectStore();
    await (await store.create({ id })).close();
    const child: ChildProcess = spawn(process.execPath, [WRITER, 'flood', id], {
      env: { ...process.env, PANTO_TEST_PG_URL: PG_URL },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // Killed once it has stored a few hundred KB of entries and is in the middle of sending more.
    await new Promise<void>((resolve) => {
      let out = '';
      child.stdout?.on('data', (d) => {
        out += d;
        if (out.split('\n').length > 5) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    const log = await store.open(id, { eager: true, lockTimeoutMs: 10_000 });
    const entries = log.entries;
    expect(entries.length).toBeGreaterThan(4);
    const [row] = await sql('SELECT entry_count FROM panto_sessions WHERE id = $1', [id]);
    expect(Number(row.entry_count)).toBe(entries.length);
    // Every stored entry whole (the eager open parsed and checked each), and the log appends after them.
    log.appendMessage(say('after the crash'));
    await log.close();
    expect(texts((await store.load(id)).conversation.messages).at(-1)).toBe('after the crash');
    await store.close();
  });
});

run('locks', () => {
  it('a second writer waits with lockTimeoutMs and gets the session when the first closes', async () => {
    const id = freshId();
    const store = await connectStore();
    const first = await store.create({ id });
    first.appendMessage(say('one'));
    setTimeout(() => void first.close(), 300);
    const t0 = Date.now();
    const second = await store.open(id, { lockTimeoutMs: 5000 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    expect(texts(second.conversation.messages)).toStrictEqual(['one']);
    await second.close();
    // Without waiting long enough: ERR_SESSION_LOCKED.
    const held = await store.open(id);
    expect(await code(store.open(id, { lockTimeoutMs: 150 }))).toBe('ERR_SESSION_LOCKED');
    await held.close();
    await store.close();
  });

  it('an append that lost the session (another writer took it over) is refused, never interleaved', async () => {
    const id = freshId();
    const store = await connectStore();
    const log = await store.create({ id });
    log.appendMessage(say('mine'));
    await log.flush();
    // A writer that ignored the lock marks the session as its own.
    await sql("UPDATE panto_sessions SET writer = 'someone-else' WHERE id = $1", [id]);
    log.appendMessage(say('refused'));
    expect(await code(log.flush())).toBe('ERR_SESSION_LOCKED');
    expect(() => log.appendMessage(say('later'))).toThrow(
      expect.objectContaining({ code: 'ERR_SESSION_LOCKED' }),
    );
    await code(log.close());
    const rows = await sql(
      'SELECT e.body FROM panto_session_entries e JOIN panto_sessions s ON s.key = e.session_key WHERE s.id = $1',
      [id],
    );
    expect(rows).toHaveLength(1);
    await store.close();
  });

  it('a branch on a log that lost the session is refused (ERR_SESSION_LOCKED), and so is every append after it', async () => {
    const id = freshId();
    const store = await connectStore();
    const log = await store.create({ id });
    const first = log.appendMessage(say('one'));
    log.appendMessage(say('two'));
    await log.flush();
    await sql("UPDATE panto_sessions SET writer = 'someone-else' WHERE id = $1", [id]);
    expect(await code(log.branch(first.id))).toBe('ERR_SESSION_LOCKED');
    expect(texts(log.conversation.messages)).toStrictEqual(['one', 'two']);
    expect(() => log.appendMessage(say('late'))).toThrow(
      expect.objectContaining({ code: 'ERR_SESSION_LOCKED' }),
    );
    await code(log.close());
    expect(await code(log.branch(first.id))).toBe('ERR_INVALID_ARGUMENT');
    await store.close();
  });

  it('an append or a second branch while a branch is pending is refused, never attached to the old leaf', async () => {
    const store = await connectStore();
    const log = await store.create({ id: freshId() });
    const first = log.appendMessage(say('one'));
    log.appendMessage(say('two'));
    const pending = log.branch(first.id);
    expect(() => log.appendMessage(say('too soon'))).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    expect(await code(log.branch(first.id))).toBe('ERR_INVALID_ARGUMENT');
    await pending;
    expect(log.appendMessage(say('now')).parentId).toBe(first.id);
    expect(texts(log.conversation.messages)).toStrictEqual(['one', 'now']);
    await log.close();
    await store.close();
  });

  it('a branch through hostile rows: a parent that is not earlier, a cycle, a kept entry off the branch, all typed', async () => {
    const store = await connectStore();
    const id = freshId();
    const log = await store.create({ id });
    const a = log.appendMessage(say('a'));
    const b = log.appendMessage(say('b'));
    const c = log.appendMessage(say('c'));
    await log.flush();
    const key = (await sql('SELECT key FROM panto_sessions WHERE id = $1', [id]))[0]?.key;
    // a's parent made c (later): a cycle a -> c -> b -> a that the walk must not follow.
    const aBody = JSON.stringify({
      ...JSON.parse(
        (
          await sql('SELECT body FROM panto_session_entries WHERE session_key = $1 AND id = $2', [key, a.id])
        )[0]?.body,
      ),
      parentId: c.id,
    });
    await sql(
      'UPDATE panto_session_entries SET parent_id = $3, body = $4 WHERE session_key = $1 AND id = $2',
      [key, a.id, c.id, aBody],
    );
    expect(await code(log.branch(c.id))).toBe('ERR_SESSION_FORMAT');
    expect(await code(log.branch(b.id))).toBe('ERR_SESSION_FORMAT');
    // The row's JSON no longer matches its columns.
    await sql('UPDATE panto_session_entries SET parent_id = NULL WHERE session_key = $1 AND id = $2', [
      key,
      a.id,
    ]);
    expect(await code(log.branch(b.id))).toBe('ERR_SESSION_FORMAT');
    await code(log.close());
    await store.close();
  });

  it('the connection dropped mid-turn: the agent run fails typed, what was stored stays whole, the session reopens', async () => {
    const { server } = await fixture;
    const id = freshId();
    const store = await connectStore();
    const log = await store.create({ id });
    server.enqueue(
      { type: 'reply', toolCalls: [{ name: 'drop', args: {} }] },
      { type: 'reply', text: 'done' },
    );
    let dropped = false;
    // The tool runs mid-turn (the answer with its call appended): it drops the log's connection, and waits until the
    // server has released the session's lock with it; the tool's result is appended after that.
    const drop = defineTool({
      name: 'drop',
      description: 'drops the session connection',
      inputSchema: { type: 'object', properties: {} },
      invoke: async () => {
        await log.flush();
        const pid = await lockHolder(id);
        await sql('SELECT pg_terminate_backend($1)', [pid]);
        while ((await lockHolder(id)) !== undefined) await new Promise((r) => setTimeout(r, 20));
        dropped = true;
        return 'dropped';
      },
    });
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      tools: new StaticToolSource([drop]),
      session: log,
    });
    const outcome = await code(agent.prompt('drop it').then(() => log.flush()));
    server.reset();
    expect(dropped).toBe(true);
    expect(['ERR_SESSION_LOCKED', undefined]).toContain(outcome);
    expect(await code(log.flush())).toBe('ERR_SESSION_LOCKED');
    await code(log.close());
    // The server released the lock with the connection: the session opens, every stored entry parses.
    const again = await store.open(id, { eager: true, lockTimeoutMs: 5000 });
    // The prompt and the answer with the call were stored before the drop; nothing after it.
    expect(again.entries.map((e) => (e.type === 'message' ? e.message.role : e.type))).toStrictEqual([
      'user',
      'assistant',
    ]);
    expect(again.conversation.messages[0]).toStrictEqual(say('drop it'));
    await again.close();
    await store.close();
  });
});

run('usage of a lazily opened session', () => {
  it('rows changed after the open: agent.usage still reads, without a query, and never throws', async () => {
    const { server } = await fixture;
    const id = freshId();
    const store = await connectStore();
    const log = await store.create({ id });
    const answer = (i: number): Message => ({
      role: 'assistant',
      content: [{ type: 'text', text: `a${i}` }],
      stopReason: 'end',
      usage: { inputTokens: 100 + i, outputTokens: 1 },
      model: 'claude-sonnet-4-5',
    });
    for (let i = 0; i < 6; i++) {
      log.appendMessage(say(`q${i}`));
      log.appendMessage(answer(i));
    }
    log.appendCompaction({
      summary: 's',
      replacement: [say('summary')],
      firstKeptIndex: 10,
      messageCountBefore: 12,
      tokensBefore: 100,
      tokensAfter: 10,
    });
    await log.close();
    const lazy = await store.open(id);
    const agent = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: 'claude-sonnet-4-5',
      session: lazy,
    });
    // The replaced history is damaged, then gone; the log's connection is dropped.
    await sql(
      `UPDATE panto_session_entries SET body = 'garbage' WHERE session_key = (SELECT key FROM panto_sessions WHERE id = $1) AND seq < 4`,
      [id],
    );
    await sql('SELECT pg_terminate_backend($1)', [await lockHolder(id)]);
    expect(agent.usage).toMatchObject({ requests: 6, inputTokens: 6 * 100 + 15, outputTokens: 6 });
    expect(() => lazy.entries).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    await code(lazy.close());
    await store.close();
  });
});

const fixture =
  PG_URL === undefined ? Promise.resolve({} as Awaited<ReturnType<typeof agentFixture>>) : agentFixture();

run('hostile rows', () => {
  /** A session of three messages whose second row is replaced by `body`. */
  async function withRow(body: string, options: { maxEntryBytes?: number } = {}) {
    const id = freshId();
    const store = await connectStore(options);
    const log = await store.create({ id });
    for (const t of ['a', 'b', 'c']) log.appendMessage(say(t));
    await log.close();
    await sql(
      'UPDATE panto_session_entries SET body = $2 WHERE seq = 1 AND session_key = (SELECT key FROM panto_sessions WHERE id = $1)',
      [id, body],
    );
    return { id, store };
  }

  it('a row of garbage JSON: ERR_SESSION_CORRUPT naming it, on every read', async () => {
    const { id, store } = await withRow('{"type":"message", garbage');
    for (const read of [() => store.load(id), () => store.open(id), () => store.load(id, { eager: true })])
      expect(await code(read())).toBe('ERR_SESSION_CORRUPT');
    await expect(store.load(id)).rejects.toThrow(/session .*:3: not valid JSON/);
    await store.close();
  });

  it('a row whose JSON says another id than its columns: ERR_SESSION_FORMAT', async () => {
    const { id, store } = await withRow(
      JSON.stringify({ type: 'message', id: 'other', parentId: null, timestamp: 't', message: say('x') }),
    );
    expect(await code(store.load(id))).toBe('ERR_SESSION_FORMAT');
    await store.close();
  });

  it('a huge row is refused by its size, without fetching it; a row nested 100k deep is ERR_SESSION_FORMAT', async () => {
    const big = await withRow(`"${'x'.repeat(200_000)}"`, { maxEntryBytes: 100_000 });
    const t0 = performance.now();
    await expect(big.store.load(big.id)).rejects.toMatchObject({
      code: 'ERR_SESSION_CORRUPT',
      message: expect.stringMatching(/longer than maxEntryBytes/),
    });
    expect(performance.now() - t0).toBeLessThan(10_000);
    await big.store.close();
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const { id, store } = await withRow(
      `{"type":"message","id":"x","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"n","input":{"a":${deep}}}]}}`,
    );
    expect(await code(store.load(id))).toBe('ERR_SESSION_FORMAT');
    await store.close();
  });
});

if (PG_URL !== undefined) describeCliStore('PostgreSQL', () => PG_URL as string);
