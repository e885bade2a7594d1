/**
 * `panto chat --base-url`: a provider's environment key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) is not
 * sent to a host other than the provider's own unless the user names the variable (`--api-key-env VAR`), and the CLI
 * says once what it did. A loopback server records which headers arrived.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeProviderServer,
  type Surface,
  startFakeProviderServer,
} from '../helpers/fake-provider-server.js';
import { runPanto } from './run-cli.js';

let server: FakeProviderServer;
let tmp: string;

beforeAll(async () => {
  server = await startFakeProviderServer();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-credentials-'));
});
afterAll(async () => {
  await server.close();
  await rm(tmp, { recursive: true, force: true });
});

const SECRET = 'sk-user-secret-0123456789';
const cases: Array<{ provider: string; surface: Surface; variable: string; header: string; model: string }> =
  [
    {
      provider: 'anthropic',
      surface: 'anthropic-messages',
      variable: 'ANTHROPIC_API_KEY',
      header: 'x-api-key',
      model: 'claude-sonnet-4-5',
    },
    {
      provider: 'openai-chat',
      surface: 'openai-chat',
      variable: 'OPENAI_API_KEY',
      header: 'authorization',
      model: 'gpt-4.1',
    },
    {
      provider: 'gemini',
      surface: 'gemini',
      variable: 'GEMINI_API_KEY',
      header: 'x-goog-api-key',
      model: 'gemini-2.5-flash',
    },
  ];
const noKeys = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
};

async function chat(c: (typeof cases)[number], extra: string[], file: string) {
  server.reset();
  server.enqueue({ type: 'reply', text: 'hello back' });
  const n = server.requests.length;
  const r = await runPanto(
    [
      'chat',
      '--provider',
      c.provider,
      '--base-url',
      server.baseUrl(c.surface),
      '--model',
      c.model,
      '--session',
      path.join(tmp, file),
      '--no-context-files',
      ...extra,
    ],
    { cwd: tmp, stdin: 'hi\n/exit\n', env: { ...noKeys, [c.variable]: SECRET } },
  );
  return { r, request: server.requests[n] };
}

describe.each(cases)('panto chat --provider $provider --base-url <another host>', (c) => {
  it(`does not send ${c.variable} there, and says so once`, async () => {
    const { r, request } = await chat(c, [], `${c.provider}-held.jsonl`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('hello back');
    expect(request).toBeDefined();
    expect(JSON.stringify(request?.headers)).not.toContain(SECRET);
    expect(request?.headers[c.header]).toBeUndefined();
    const notes = r.stderr.split('\n').filter((l) => l.includes(`not sending ${c.variable}`));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`pass --api-key-env ${c.variable}`);
    expect(r.stderr).not.toContain(SECRET);
  });

  it(`sends it when --api-key-env ${c.variable} names it, and says so once`, async () => {
    const { r, request } = await chat(c, ['--api-key-env', c.variable], `${c.provider}-sent.jsonl`);
    expect(r.code).toBe(0);
    expect(request?.headers[c.header]).toContain(SECRET);
    const notes = r.stderr.split('\n').filter((l) => l.includes(`sending the API key in ${c.variable}`));
    expect(notes).toHaveLength(1);
    expect(r.stderr).not.toContain(SECRET);
  });
});
