import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '../../src/compaction/index.js';
import { loadSession, SessionLog } from '../../src/session/index.js';

const DOC = join(dirname(fileURLToPath(import.meta.url)), '../../docs/session-format.md');
const dir = mkdtempSync(join(tmpdir(), 'panto-session-doc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exampleFile(): string {
  const match = /```jsonl\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'));
  if (!match?.[1]) throw new Error('docs/session-format.md has no jsonl example');
  const path = join(dir, 'example.jsonl');
  writeFileSync(path, match[1]);
  return path;
}

describe('documented format', () => {
  it('the example in docs/session-format.md is a valid session that resolves as documented', async () => {
    const path = exampleFile();
    const loaded = await loadSession(path);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.model).toBe('claude-opus-4-1');
    expect(loaded.entries.map((e) => e.type)).toEqual([
      'message',
      'message',
      'message',
      'message',
      'upload',
      'model_change',
      'message',
      'message',
      'compaction',
      'message',
    ]);
    const messages = loaded.conversation.messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'user', 'assistant']);
    const summary = messages[1]?.role === 'user' ? messages[1].content[0] : undefined;
    expect(summary?.type === 'text' && summary.text.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(messages[2]).toStrictEqual({ role: 'user', content: [{ type: 'text', text: 'Fix it.' }] });
    // The image before the compaction is still in the file.
    const tool = loaded.entries[3];
    expect(
      tool?.type === 'message' && tool.message.role === 'tool' && tool.message.results[0]?.parts[1],
    ).toMatchObject({
      type: 'image',
      width: 1,
      height: 1,
    });
  });

  it('a SessionLog can append to the documented example', async () => {
    const path = exampleFile();
    const log = await SessionLog.open(path);
    const entry = log.appendMessage({ role: 'user', content: [{ type: 'text', text: 'thanks' }] });
    expect(entry.parentId).toBe('a9');
    log.close();
    expect((await loadSession(path)).conversation.messages).toHaveLength(5);
  });
});
