/**
 * An Agent resumed from a session whose long texts stay in the file (`SessionLog.open(path, { textInFile: {
 * minFileBytes: 0 } })`) behaves as one resumed with every text in memory (`textInFile: false`): on each surface the
 * request bodies are equal, its new turns are appended, and a compaction that summarises the file-backed history
 * writes a session that reloads equal. Against the loopback fake provider server.
 */

import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import type { Message } from '../../src/conversation.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import type { ModelInfo } from '../../src/providers/model/model-info.js';
import { isFileTextPart } from '../../src/session/file-text.js';
import { loadSession } from '../../src/session/load-session.js';
import type { SessionEntry } from '../../src/session/session-entry.js';
import { SessionLog } from '../../src/session/session-log.js';
import type { RecordedRequest, Surface } from '../helpers/fake-provider-server.js';
import { agentFixture, eventsOf, modelFor, providerFor } from './agent-helpers.js';

const { server, ws } = await agentFixture();
afterEach(() => {
  expect(server.reset()).toBe(0);
});

const SURFACES: Surface[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];
const IN_FILE = { textInFile: { minFileBytes: 0 } } as const;
/** Non-Latin-1 prose (two bytes per character in V8; JSON escapes for the quote, backslash and newline). */
const prose = (n: number, tag: string) =>
  `${tag}: ${'Größe 日本語のテキスト 🙂 "quoted" \\ line\n'.repeat(n)}`;

let sessionNo = 0;
/**
 * A session the library wrote: a system prompt, questions and answers of `n` lines of prose each, and a tool call
 * whose result holds a long text part. Returns two copies of it (one per resume).
 */
async function writtenSession(n: number): Promise<[string, string]> {
  const path = join(ws.root, `resume-text-${sessionNo++}.jsonl`);
  const log = await SessionLog.create(path, { model: 'claude-sonnet-4-5' });
  log.appendMessage({ role: 'system', content: 'You are a careful assistant.' });
  for (let i = 0; i < 3; i++) {
    log.appendMessage({ role: 'user', content: [{ type: 'text', text: prose(n, `question ${i}`) }] });
    log.appendMessage({
      role: 'assistant',
      content: [
        { type: 'text', text: prose(n, `answer ${i}`) },
        { type: 'tool_call', id: `call_${i}`, name: 'read', input: { path: 'notes.txt' } },
      ],
      stopReason: 'tool_use',
    });
    log.appendMessage({
      role: 'tool',
      results: [
        {
          type: 'tool_result',
          toolUseId: `call_${i}`,
          toolName: 'read',
          parts: [{ type: 'text', text: prose(n, `result ${i}`) }],
          isError: false,
        },
      ],
    });
    log.appendMessage({
      role: 'assistant',
      content: [{ type: 'text', text: prose(n, `summary ${i}`) }],
      stopReason: 'end',
    });
  }
  log.close();
  const a = `${path}.plain.jsonl`;
  const b = `${path}.in-file.jsonl`;
  await copyFile(path, a);
  await copyFile(path, b);
  return [a, b];
}

/** How many text parts of `messages` read their text from the file. */
function fileBacked(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) {
    if (m.role === 'user' || m.role === 'assistant') {
      if (typeof m.content !== 'string') n += m.content.filter(isFileTextPart).length;
    } else if (m.role === 'tool') {
      for (const r of m.results) n += r.parts.filter(isFileTextPart).length;
    }
  }
  return n;
}

/** JSON of `entries` with their ids numbered in order of appearance and timestamps blanked (new entries get random ones). */
function stable(entries: readonly SessionEntry[]): string {
  let json = JSON.stringify(entries);
  entries.forEach((e, i) => {
    json = json.replaceAll(`"${e.id}"`, `"#${i}"`);
  });
  return json.replace(/"timestamp":"[^"]*"/g, '"timestamp":"T"');
}

/** Resumes `path` (opened with `options`) and runs one prompt, the model answering `answer` (`summary` to a summary request); the requests it sent. */
async function resume(
  surface: Surface,
  model: ModelInfo,
  path: string,
  options: { textInFile: false | { minFileBytes: number } },
  [summary, answer]: [string, string],
  compaction?: ConstructorParameters<typeof Agent>[0]['compaction'],
): Promise<{ requests: RecordedRequest[]; agent: Agent; events: AgentEvent[]; fileBackedAtOpen: number }> {
  const log = await SessionLog.open(path, options);
  const fileBackedAtOpen = fileBacked(log.conversation.messages);
  const events: AgentEvent[] = [];
  const n = server.requests.length;
  // A summary request (the compaction's, in as many rounds as it takes) gets `summary`, a turn gets `answer`.
  const reply = (request: RecordedRequest) => ({
    type: 'reply' as const,
    text: JSON.stringify(request.body).includes('Summarize this conversation') ? summary : answer,
  });
  server.enqueue(...Array.from({ length: 8 }, () => reply));
  try {
    const agent = new Agent({
      provider: providerFor(server, surface),
      model,
      session: log,
      onEvent: (e) => events.push(e),
      ...(compaction === undefined ? {} : { compaction }),
    });
    const result = await agent.prompt('one more question about the 日本語 notes');
    expect(result.stopReason).toBe('end');
    return { requests: server.requests.slice(n), agent, events, fileBackedAtOpen };
  } finally {
    server.reset();
    log.close();
  }
}

describe.each(SURFACES)('an Agent resumed from file-backed texts (%s)', (surface) => {
  it('sends the request bodies of an in-memory resume and appends its turn after the file-backed history', async () => {
    const [plainPath, inFilePath] = await writtenSession(4);
    const model = modelFor(surface);
    const plain = await resume(surface, model, plainPath, { textInFile: false }, ['SUMMARY', 'the answer']);
    const inFile = await resume(surface, model, inFilePath, IN_FILE, ['SUMMARY', 'the answer']);
    expect(plain.fileBackedAtOpen).toBe(0);
    expect(inFile.fileBackedAtOpen).toBe(12); // every question, answer, result and summary text
    expect(inFile.requests.map((r) => r.body)).toEqual(plain.requests.map((r) => r.body));
    expect(JSON.stringify(inFile.requests[0]?.body)).toContain('Größe 日本語のテキスト 🙂');
    expect(inFile.agent.messages).toEqual(plain.agent.messages);

    const reloaded = await loadSession(inFilePath, IN_FILE);
    const reference = await loadSession(plainPath, { textInFile: false });
    expect(fileBacked(reloaded.conversation.messages)).toBe(12);
    expect(JSON.stringify(reloaded.conversation)).toBe(JSON.stringify(reference.conversation));
    expect(reloaded.conversation.messages).toHaveLength(1 + 12 + 2);
    const last = reloaded.conversation.messages.at(-1);
    expect(last?.role === 'assistant' && last.content).toEqual([{ type: 'text', text: 'the answer' }]);
  });

  it('compacts the file-backed history as the in-memory one, and the session reloads equal', async () => {
    const [plainPath, inFilePath] = await writtenSession(40);
    const base = modelFor(surface);
    const model = resolveModel(base.id, { api: base.api, limits: { contextWindow: 3000 } });
    const compaction = { reserveTokens: 500, keepRecentTokens: 1200 };
    const replies: [string, string] = ['SUMMARY: questions about 日本語 notes.', 'the answer'];
    const plain = await resume(surface, model, plainPath, { textInFile: false }, replies, compaction);
    const inFile = await resume(surface, model, inFilePath, IN_FILE, replies, compaction);
    expect(inFile.fileBackedAtOpen).toBe(12);
    expect(eventsOf(plain.events, 'compaction_end')).toHaveLength(1);
    expect(eventsOf(inFile.events, 'compaction_end')).toHaveLength(1);
    expect(inFile.requests.length).toBeGreaterThanOrEqual(2); // the summary round(s), then the turn
    expect(plain.requests.at(-1)?.body).not.toEqual(plain.requests[0]?.body);
    // The summary request carries the file-backed texts, read from the file.
    expect(JSON.stringify(inFile.requests[0]?.body)).toContain('question 0: Größe 日本語のテキスト 🙂');
    expect(inFile.requests.map((r) => r.body)).toEqual(plain.requests.map((r) => r.body));
    expect(inFile.agent.messages).toEqual(plain.agent.messages);

    for (const eager of [false, true]) {
      const reloaded = await loadSession(inFilePath, { ...IN_FILE, eager });
      const reference = await loadSession(plainPath, { textInFile: false, eager });
      expect(JSON.stringify(reloaded.conversation)).toBe(JSON.stringify(reference.conversation));
      expect(stable(reloaded.entries)).toBe(stable(reference.entries));
      expect(reloaded.conversation.messages).toEqual(inFile.agent.messages);
      expect(JSON.stringify(reloaded.conversation)).toContain('SUMMARY: questions about 日本語 notes.');
    }
  });
});
