import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeProviderServer } from '../helpers/fake-provider-server.js';
import { fakeChatFlags, NO_USER_CONFIG, runPanto, withFakeServer } from './run-cli.js';

let server: FakeProviderServer;
let tmp: string;

withFakeServer('panto-bugs-', (s, t) => {
  server = s;
  tmp = t;
});

const env = NO_USER_CONFIG;

function chat(lines: string[], args: string[] = []) {
  return runPanto(['chat', ...fakeChatFlags(server), ...args], {
    cwd: tmp,
    stdin: lines.map((l) => `${l}\n`).join(''),
    env,
  });
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe('/compact', () => {
  it('works at any size, once, with a focus passed to the summary (no "near the window" at 300 tokens)', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: 'The answer is 42.' },
      { type: 'reply', text: 'And the other is 17.' },
      { type: 'reply', text: 'SUMMARY: 42 and 17.' },
    );
    const r = await chat(
      ['first question', 'second question', '/compact keep the numbers'],
      ['--session', path.join(tmp, 'compact.jsonl')],
    );
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('near the');
    expect(r.stderr).not.toContain('nothing to compact');
    expect(count(r.stderr, '[compacted the conversation:')).toBe(1);
    expect(count(r.stderr, '[compacting')).toBe(1);
    const summary = JSON.stringify(server.requests[before + 2]?.body);
    expect(summary).toContain('Summarize this conversation');
    expect(summary).toContain('The user asks the summary to focus on: keep the numbers');
  });

  it('a single exchange: nothing to compact, said once, no request', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'hello' });
    const r = await chat(['hi', '/compact'], ['--session', path.join(tmp, 'compact1.jsonl')]);
    expect(r.stderr).toContain('nothing to compact: the conversation is a single exchange so far');
    expect(r.stderr).not.toContain('[compacting');
    expect(server.requests.length - before).toBe(1);
  });
});

describe('a context overflow the estimate did not predict', () => {
  const refusal = (window: number) => ({
    type: 'http-error' as const,
    status: 400,
    errorType: 'invalid_request_error',
    message: `This model's maximum context length is ${window} tokens. However, your messages resulted in 9000 tokens.`,
  });

  it('with earlier messages: compacts for real, retries once, and /session shows the window the server stated', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      { type: 'reply', text: `first ${'a'.repeat(2000)}` },
      refusal(4096),
      { type: 'reply', text: 'SUMMARY of the first exchange' },
      { type: 'reply', text: 'fits now' },
    );
    const r = await chat(['one', 'two', '/session'], ['--session', path.join(tmp, 'overflow.jsonl')]);
    expect(r.stdout).toContain('fits now');
    expect(r.stderr).toContain('compacted the conversation and retried once');
    expect(r.stderr).toContain(
      'of a 4096-token window (estimate) (the server stated it; the catalog says 128,000)',
    );
    expect(server.requests.length - before).toBe(4);
    expect(r.code).toBe(0);
  });

  it('a single long message: says there is nothing to compact instead of "compacting and retrying"', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(refusal(2048));
    const r = await chat(['x'.repeat(500)], ['--session', path.join(tmp, 'overflow1.jsonl')]);
    expect(r.stderr).not.toContain('compacting and retrying');
    expect(r.stderr).toContain(
      'there is nothing older than the last message to compact, so it was not retried',
    );
    expect(server.requests.length - before).toBe(1);
    expect(r.code).toBe(1);
  });
});

describe('messages speak CLI, not library', () => {
  it('a thinking level on a model that does not reason names the config file, not resolveModel()', async () => {
    server.reset();
    server.enqueue({ type: 'reply', text: 'ok' });
    const r = await chat(['/thinking high', 'hi'], ['--session', path.join(tmp, 'think.jsonl')]);
    expect(r.stderr).toContain("thinking 'high' was not sent: model 'gpt-4o' is not known to reason");
    expect(r.stderr).toContain('declare "reasoning": true for it under "models" in the config file');
    expect(r.stderr).not.toContain('resolveModel');
  });

  it('a provider asking for a long wait names --max-retry-wait, which changes it', async () => {
    server.reset();
    server.enqueue({
      type: 'http-error',
      status: 429,
      message: 'slow down',
      headers: { 'retry-after': '120' },
    });
    const r = await chat(['hi'], ['--session', path.join(tmp, 'wait.jsonl'), '--max-retry-wait', '1']);
    expect(r.stderr).toContain('(--max-retry-wait: 1 s)');
    expect(r.stderr).not.toContain('maxRetryAfterMs');
  });
});

describe('/help', () => {
  it('every synopsis is separated from its summary', async () => {
    const r = await chat(['/help'], ['--session', path.join(tmp, 'help.jsonl')]);
    expect(r.stderr).toMatch(/\/thinking \[LEVEL\|collapse\|show\|hide\] {2,}print the last thinking/);
    for (const line of r.stderr.split('\n').filter((l) => l.startsWith('  /')))
      expect(line).toMatch(/^ {2}\/\S+(?: \S+)? {2,}\S/);
  });
});
