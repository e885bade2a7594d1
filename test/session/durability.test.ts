import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { loadSession, SessionLog } from '../../src/session/index.js';
import { pngBase64 } from './helpers/media.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-session-dur-'));
let n = 0;
const file = () => join(dir, `s${n++}.jsonl`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const say = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const withImage = (seed: number): Message => ({
  role: 'user',
  content: [{ type: 'image', mediaType: 'image/png', data: pngBase64(40, 30, seed), width: 40, height: 30 }],
});

/** A session of header + the given messages, closed. Returns its path and the file's lines (with newlines). */
async function sessionOf(messages: Message[]): Promise<{ path: string; lines: string[] }> {
  const path = file();
  const log = await SessionLog.create(path);
  for (const m of messages) log.appendMessage(m);
  log.close();
  const text = readFileSync(path, 'utf8');
  return { path, lines: text.split(/(?<=\n)/) };
}

describe('torn last line', () => {
  it('skips a line cut short by a crash, with a warning, and keeps everything before it', async () => {
    const messages = [say('one'), withImage(1), say('three')];
    const { path } = await sessionOf(messages);
    // Simulate a crash in the middle of writing the next entry (an image line).
    const next = JSON.stringify({
      type: 'message',
      id: 'torn',
      parentId: null,
      timestamp: 't',
      message: withImage(2),
    });
    appendFileSync(path, next.slice(0, Math.floor(next.length / 2)));
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual(messages);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatchObject({ kind: 'torn_line', line: 5 });
    expect(loaded.warnings[0]?.message).toMatch(/:5: last line is incomplete/);
  });

  it.each([false, true])(
    'cuts the torn line off before the next append, so the file stays valid (eager: %s)',
    async (eager) => {
      const messages = [say('one'), withImage(1)];
      const { path } = await sessionOf(messages);
      const goodSize = statSync(path).size;
      appendFileSync(
        path,
        '{"type":"message","id":"x","parentId":null,"timestamp":"t","message":{"role":"us',
      );
      const log = await SessionLog.open(path, { eager });
      expect(log.warnings.map((w) => w.kind)).toEqual(['torn_line', 'repaired']);
      expect(statSync(path).size).toBe(goodSize);
      log.appendMessage(say('after the crash'));
      log.close();
      const loaded = await loadSession(path);
      expect(loaded.warnings).toEqual([]);
      expect(loaded.conversation.messages).toStrictEqual([...messages, say('after the crash')]);
    },
  );

  it.each([false, true])(
    'keeps a complete last line that only lacks its newline, and terminates it before appending (eager: %s)',
    async (eager) => {
      const { path, lines } = await sessionOf([say('one'), say('two')]);
      writeFileSync(path, lines.join('').slice(0, -1));
      const loaded = await loadSession(path);
      expect(loaded.conversation.messages).toStrictEqual([say('one'), say('two')]);
      expect(loaded.warnings.map((w) => w.kind)).toEqual(['unterminated_line']);
      const log = await SessionLog.open(path, { eager });
      log.appendMessage(say('three'));
      log.close();
      const again = await loadSession(path);
      expect(again.warnings).toEqual([]);
      expect(again.conversation.messages).toStrictEqual([say('one'), say('two'), say('three')]);
    },
  );
});

describe('corrupt middle line', () => {
  it('fails with ERR_SESSION_CORRUPT naming the line number', async () => {
    const { path, lines } = await sessionOf([say('one'), withImage(1), say('three'), say('four')]);
    lines[3] = `${(lines[3] as string).slice(0, 40)}\n`; // line 4 cut short, but followed by more lines
    writeFileSync(path, lines.join(''));
    const err = await loadSession(path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    expect((err as Error).message).toContain(`${path}:4:`);
    // A writer refuses it too (never appends after damage it cannot repair).
    await expect(SessionLog.open(path)).rejects.toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    expect(readFileSync(path, 'utf8')).toBe(lines.join(''));
  });

  it('fails with ERR_SESSION_FORMAT (line number) for valid JSON that is not an entry', async () => {
    const { path, lines } = await sessionOf([say('one'), say('two')]);
    lines.splice(
      2,
      0,
      '{"type":"message","id":"zz","parentId":null,"timestamp":"t","message":{"role":"robot"}}\n',
    );
    writeFileSync(path, lines.join(''));
    // Eagerly: at load time.
    const err = await loadSession(path, { eager: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    expect((err as Error).message).toMatch(/:3: entry\.message\.role/);
    // Lazily on the index path (the file mentions a compaction): line 3 is off the current branch, so the load parses
    // it only when `entries` is read, with the same error.
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'custom', id: 'n', parentId: JSON.parse(lines[lines.length - 1] as string).id, timestamp: 't', customType: 'note', data: 'compaction' })}\n`,
    );
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual([say('one'), say('two')]);
    const lazyErr = (() => {
      try {
        return loaded.entries;
      } catch (e) {
        return e;
      }
    })();
    expect(lazyErr).toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    expect((lazyErr as Error).message).toBe((err as Error).message);
  });

  it('fails for a parentId that names no earlier entry and for a duplicate id', async () => {
    const { path, lines } = await sessionOf([say('one'), say('two')]);
    const second = JSON.parse(lines[2] as string) as { parentId: string; id: string };
    writeFileSync(
      path,
      [lines[0], lines[1], `${JSON.stringify({ ...second, parentId: 'ghost' })}\n`].join(''),
    );
    await expect(loadSession(path)).rejects.toThrow(/:3: parentId ghost/);
    const first = JSON.parse(lines[1] as string) as { id: string };
    writeFileSync(path, [lines[0], lines[1], `${JSON.stringify({ ...second, id: first.id })}\n`].join(''));
    await expect(loadSession(path)).rejects.toThrow(/:3: duplicate entry id/);
  });

  it('skips an empty line with a warning', async () => {
    const { path, lines } = await sessionOf([say('one'), say('two')]);
    lines.splice(2, 0, '\n');
    writeFileSync(path, lines.join(''));
    const loaded = await loadSession(path);
    expect(loaded.conversation.messages).toStrictEqual([say('one'), say('two')]);
    expect(loaded.warnings).toMatchObject([{ kind: 'empty_line', line: 3 }]);
  });
});

describe('a session killed before its header was written', () => {
  it.each([
    ['empty', ''],
    ['blank lines only', '\n\n'],
    ['a torn header', '{"type":"session","vers'],
  ])('%s: loads as an empty session with a no_header note', async (_name, content) => {
    const path = file();
    writeFileSync(path, content);
    const loaded = await loadSession(path);
    expect(loaded.entries).toEqual([]);
    expect(loaded.conversation.messages).toEqual([]);
    expect(loaded.header).toMatchObject({ type: 'session', version: 1 });
    expect(loaded.warnings.map((w) => w.kind)).toContain('no_header');
    expect(loaded.warnings.find((w) => w.kind === 'no_header')?.message).toContain(path);
  });

  it.each([
    ['empty', '', false],
    ['a torn header', '{"type":"session","version":1,"id":"ab', false],
    ['empty', '', true],
    ['a torn header', '{"type":"session","version":1,"id":"ab', true],
  ])(
    '%s: open() (eager: %s) writes a new header, appends, and the file reloads cleanly',
    async (_name, content, eager) => {
      const path = file();
      writeFileSync(path, content);
      const log = await SessionLog.open(path, { eager });
      expect(log.warnings.map((w) => w.kind)).toEqual(
        content === '' ? ['no_header', 'repaired'] : ['torn_line', 'no_header', 'repaired'],
      );
      log.appendMessage(say('after the crash'));
      log.close();
      const loaded = await loadSession(path);
      expect(loaded.warnings).toEqual([]);
      expect(loaded.header.id).toBe(log.header.id);
      expect(loaded.conversation.messages).toEqual([say('after the crash')]);
      // openOrCreate takes the same path
      const again = await SessionLog.openOrCreate(path);
      expect(again.conversation.messages).toHaveLength(1);
      again.close();
    },
  );
});

describe('header and limits', () => {
  it('refuses a file whose first line is not a header, or with a newer version', async () => {
    const path = file();
    writeFileSync(
      path,
      '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"system","content":"x"}}\n',
    );
    await expect(loadSession(path)).rejects.toMatchObject({ code: 'ERR_SESSION_FORMAT' });
    writeFileSync(path, '{"type":"session","version":99,"id":"a","created":"t"}\n');
    await expect(loadSession(path)).rejects.toThrow(/version 99 is newer/);
  });

  it('fails clearly on a line longer than maxLineBytes instead of building a huge string', async () => {
    const { path } = await sessionOf([say('x'.repeat(10_000))]);
    const err = await loadSession(path, { maxLineBytes: 4096, chunkBytes: 1024 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_SESSION_CORRUPT' });
    expect((err as Error).message).toMatch(/:2: line is longer than maxLineBytes \(4096 bytes\)/);
  });

  it('passes file-system errors through', async () => {
    await expect(loadSession(join(dir, 'missing.jsonl'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
