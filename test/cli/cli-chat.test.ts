import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeProviderServer } from '../helpers/fake-provider-server.js';
import { NO_KEYS, repoRoot, runPanto, withFakeServer } from './run-cli.js';

const workspace = path.join(repoRoot, 'examples', 'workspace');
let server: FakeProviderServer;
let tmp: string;

withFakeServer('panto-chat-', (s, t) => {
  server = s;
  tmp = t;
});

type ChatMessage = { role: string; content: unknown; tool_call_id?: string };
type ChatPart = { type: string; text?: string; image_url?: { url: string } };

const noKeys = NO_KEYS;

describe('panto chat: an interactive agent over a provider, with the Lua tools', () => {
  it('attaches an @image mention, runs read on a picture, and saves a session that panto session prints', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue(
      {
        type: 'reply',
        text: 'Let me look at the chart too.',
        toolCalls: [{ id: 'call_a', name: 'read', args: { path: 'chart.png' } }],
      },
      { type: 'reply', text: 'The photo shows hills; the chart has six bars.' },
    );
    const sessionFile = path.join(tmp, 'chat.jsonl');
    const r = await runPanto(
      [
        'chat',
        '--provider',
        'openai-chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--workspace',
        workspace,
        '--session',
        sessionFile,
      ],
      {
        cwd: workspace,
        stdin: 'Compare @photo.jpg with the chart, then mail bob@example.com\n/exit\n',
        env: noKeys,
      },
    );
    expect(r.stderr).toContain('attached: photo.jpg');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('The photo shows hills; the chart has six bars.');
    expect(r.stderr).toContain('[tool] read(path="chart.png")');
    expect(r.stderr).toContain('image/png 640x360');

    const requests = server.requests.slice(before);
    expect(requests).toHaveLength(2);
    // Request 1: the user's turn carries the mentioned photo (processed: upright, <= 2000 px).
    const first = requests[0]?.body.messages as ChatMessage[];
    const user = first.find((m) => m.role === 'user');
    const userParts = user?.content as ChatPart[];
    expect(userParts[0]?.text).toContain('mail bob@example.com');
    expect(
      userParts.some((p) => p.type === 'image_url' && p.image_url?.url.startsWith('data:image/jpeg;base64,')),
    ).toBe(true);
    expect(userParts.filter((p) => p.type === 'image_url')).toHaveLength(1);
    // Request 2: the tool message is text, the chart follows in one user message.
    const second = requests[1]?.body.messages as ChatMessage[];
    const toolIdx = second.findIndex((m) => m.role === 'tool');
    expect(second[toolIdx]?.tool_call_id).toBe('call_a');
    const after = second[toolIdx + 1];
    expect(after?.role).toBe('user');
    const afterParts = (after?.content ?? []) as ChatPart[];
    expect(afterParts.some((p) => (p.image_url?.url ?? '').startsWith('data:image/png;base64,'))).toBe(true);

    const log = await readFile(sessionFile, 'utf8');
    expect(log.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(5);
    const transcript = await runPanto(['session', sessionFile]);
    expect(transcript.code).toBe(0);
    expect(transcript.stdout).toContain('[image: image/jpeg 2000x1500]');
    expect(transcript.stdout).toContain('[image: image/png 640x360]');
    expect(transcript.stdout).toContain('The photo shows hills');

    // Resume: the saved conversation goes back to the provider.
    server.enqueue({ type: 'reply', text: 'Still six bars.' });
    const resumed = await runPanto(
      [
        'chat',
        '--provider',
        'openai-chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'gpt-4o',
        '--resume',
        sessionFile,
      ],
      { cwd: workspace, stdin: 'How many bars again?\n', env: noKeys },
    );
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Still six bars.');
    const third = server.requests.at(-1)?.body.messages as ChatMessage[];
    expect(third.filter((m) => m.role === 'user').length).toBeGreaterThanOrEqual(3);
  });

  it('a model that cannot take images: the mention is left out with a plain note', async () => {
    server.reset();
    const before = server.requests.length;
    server.enqueue({ type: 'reply', text: 'ok' });
    const r = await runPanto(
      [
        'chat',
        '--base-url',
        server.baseUrl('openai-chat'),
        '--model',
        'my-local-llm',
        '--session',
        path.join(tmp, 'b.jsonl'),
      ],
      { cwd: workspace, stdin: 'what is in @photo.jpg?\n', env: noKeys },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("model 'my-local-llm' does not accept image input");
    const body = server.requests[before]?.body.messages as ChatMessage[];
    expect(JSON.stringify(body)).not.toContain('image_url');
  });

  it('a missing API key is reported plainly (exit 1)', async () => {
    const r = await runPanto(['chat', '--provider', 'anthropic'], { stdin: '', env: noKeys });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no API key for anthropic-messages: set ANTHROPIC_API_KEY');
  });
});

describe('mentions: what counts as an @path', () => {
  it('quoted paths, trailing punctuation and e-mail addresses', async () => {
    const { parseMentions } = await import('../../src/cli/mentions.js');
    expect(
      parseMentions('see @a.png, and @"my file.pdf" but not me@x.org; last @b.jpg.').map((m) => m.path),
    ).toEqual(['a.png', 'my file.pdf', 'b.jpg']);
  });

  it('tab completion lists files after @ (directories end in /, spaces get quotes)', async () => {
    const { completeMention } = await import('../../src/cli/mentions.js');
    const { mkdir, writeFile } = await import('node:fs/promises');
    const dir = path.join(tmp, 'complete');
    await mkdir(path.join(dir, 'shots'), { recursive: true });
    await writeFile(path.join(dir, 'shot one.png'), '');
    const [items, token] = await completeMention('look at @sh', dir);
    expect(token).toBe('@sh');
    expect(items).toEqual(['@"shot one.png"', '@shots/']);
  });
});
