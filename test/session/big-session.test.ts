import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/conversation.js';
import { SESSION_FORMAT_VERSION } from '../../src/session/index.js';
import { noisePngBase64 } from './helpers/media.js';
import { transpileSources } from './helpers/transpile-sources.js';

const dir = mkdtempSync(join(tmpdir(), 'panto-session-big-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 300 MB by default; PANTO_BIG_SESSION_MB raises it (e.g. 700 to cross V8's ~512 MB string limit). */
const TARGET_BYTES = Number(process.env.PANTO_BIG_SESSION_MB ?? 300) * 1024 * 1024;

/**
 * Write a session of alternating assistant tool calls and tool results, each result holding a ~3.4 MB base64 PNG,
 * until the file reaches `targetBytes`. Lines are written directly (fast); their shape is what SessionLog writes.
 */
function writeBigSession(
  path: string,
  targetBytes: number,
): { entries: number; images: number; sha256: string } {
  const data = noisePngBase64(800, 1000);
  const sha256 = createHash('sha256').update(data).digest('hex');
  const fd = openSync(path, 'w');
  let size = writeSync(
    fd,
    `${JSON.stringify({ type: 'session', version: SESSION_FORMAT_VERSION, id: 'big', created: new Date().toISOString() })}\n`,
  );
  let entries = 0;
  let images = 0;
  let parentId: string | null = null;
  while (size < targetBytes) {
    const id = `e${entries}`;
    const call = `c${entries - (entries % 2)}`;
    const message: Message =
      entries % 2 === 0
        ? {
            role: 'assistant',
            content: [{ type: 'tool_call', id: call, name: 'screenshot', input: { n: entries } }],
          }
        : {
            role: 'tool',
            results: [
              {
                type: 'tool_result',
                toolUseId: call,
                toolName: 'screenshot',
                parts: [
                  { type: 'text', text: `screenshot ${entries}` },
                  { type: 'image', mediaType: 'image/png', data, width: 800, height: 1000 },
                ],
                isError: false,
                meta: { n: entries },
              },
            ],
          };
    if (message.role === 'tool') images++;
    const line = `${JSON.stringify({ type: 'message', id, parentId, timestamp: new Date().toISOString(), message })}\n`;
    size += writeSync(fd, line);
    parentId = id;
    entries++;
  }
  closeSync(fd);
  return { entries, images, sha256 };
}

describe('big image-heavy sessions', () => {
  it('loads a multi-hundred-MB session under a heap ceiling with peak RSS <= 2x the file size', () => {
    const { session } = transpileSources(join(dir, 'js'));
    const path = join(dir, 'big.jsonl');
    const expected = writeBigSession(path, TARGET_BYTES);
    const fileBytes = statSync(path).size;
    const child = join(dir, 'js', 'load-child.mjs');
    writeFileSync(
      child,
      `import { createHash } from 'node:crypto';
import { loadSession } from ${JSON.stringify(session)};
const loaded = await loadSession(process.argv[2]);
const hashes = new Set();
let images = 0;
for (const m of loaded.conversation.messages) {
  if (m.role !== 'tool') continue;
  for (const p of m.results[0].parts) {
    if (p.type !== 'image') continue;
    images++;
    hashes.add(createHash('sha256').update(p.data).digest('hex'));
  }
}
process.stdout.write(JSON.stringify({
  entries: loaded.entries.length,
  messages: loaded.conversation.messages.length,
  warnings: loaded.warnings.length,
  images,
  hashes: [...hashes],
  maxRssBytes: process.resourceUsage().maxRSS * 1024,
}));
`,
    );
    const heapMb = Math.ceil((fileBytes / 1024 / 1024) * 1.5);
    const run = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, child, path], {
      encoding: 'utf8',
    });
    rmSync(path);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as {
      entries: number;
      messages: number;
      warnings: number;
      images: number;
      hashes: string[];
      maxRssBytes: number;
    };
    console.log(
      `big session: ${(fileBytes / 2 ** 20).toFixed(0)} MB file, heap ceiling ${heapMb} MB, peak RSS ` +
        `${(report.maxRssBytes / 2 ** 20).toFixed(0)} MB (${(report.maxRssBytes / fileBytes).toFixed(2)}x file size)`,
    );
    expect(report).toMatchObject({
      entries: expected.entries,
      messages: expected.entries,
      warnings: 0,
      images: expected.images,
      hashes: [expected.sha256],
    });
    expect(report.maxRssBytes).toBeLessThanOrEqual(2 * fileBytes);
  });
});
