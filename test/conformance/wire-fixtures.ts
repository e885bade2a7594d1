/**
 * The shared wire-fixtures folder (published request schemas + real recorded streams), read where it lies — never
 * copied into this repository. Its path comes from `PANTO_WIRE_FIXTURES`; the default is
 * `../shared/reference/wire-fixtures` next to the repository root. `scripts/conformance.mjs` checks that it exists
 * before the suite runs.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelApi } from '../../src/providers/model/model-info.js';

export const FIXTURES_ENV = 'PANTO_WIRE_FIXTURES';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The folder the suite reads. */
export function fixturesDir(): string {
  const fromEnv = process.env[FIXTURES_ENV];
  return fromEnv !== undefined && fromEnv !== ''
    ? resolve(fromEnv)
    : resolve(repoRoot, '..', 'shared', 'reference', 'wire-fixtures');
}

/** Throws a message naming the folder and the variable when the fixtures are not there. */
export function requireFixtures(): string {
  const dir = fixturesDir();
  if (!existsSync(join(dir, 'schemas')) || !existsSync(join(dir, 'streams'))) {
    throw new Error(
      `wire fixtures not found at ${dir} (expected schemas/ and streams/); set ${FIXTURES_ENV} to the folder`,
    );
  }
  return dir;
}

/** The schema files for one provider family: `<family>.schema.json` and any newer `<family>.*.schema.json` beside it. */
export function schemaFiles(family: 'openai' | 'anthropic' | 'gemini'): string[] {
  const dir = join(requireFixtures(), 'schemas');
  return readdirSync(dir)
    .filter(
      (f) => f === `${family}.schema.json` || (f.startsWith(`${family}.`) && f.endsWith('.schema.json')),
    )
    .sort()
    .map((f) => join(dir, f));
}

export function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** One recorded response stream, framed as the provider sends it on the wire. */
export interface RecordedStream {
  api: ModelApi;
  /** `<surface dir>/<file>` plus `#<n>` when the file held several requests. */
  name: string;
  /** The `text/event-stream` body. */
  body: string;
}

const SURFACE_DIRS: Record<string, ModelApi> = {
  anthropic: 'anthropic-messages',
  'openai-chat': 'openai-chat',
  'openai-responses': 'openai-responses',
  gemini: 'gemini',
};

/** Every recorded stream, `.sse` bodies as they are and `.chunks.txt` files framed (see `frameChunks`). */
export function recordedStreams(): RecordedStream[] {
  const root = join(requireFixtures(), 'streams');
  const out: RecordedStream[] = [];
  for (const dir of readdirSync(root).sort()) {
    const api = SURFACE_DIRS[dir];
    if (api === undefined) continue;
    for (const file of readdirSync(join(root, dir)).sort()) {
      const text = readFileSync(join(root, dir, file), 'utf8');
      if (file.endsWith('.sse')) {
        out.push({ api, name: `${dir}/${file}`, body: text });
      } else if (file.endsWith('.chunks.txt')) {
        const bodies = frameChunks(api, text);
        bodies.forEach((body, i) => {
          out.push({ api, name: bodies.length > 1 ? `${dir}/${file}#${i + 1}` : `${dir}/${file}`, body });
        });
      }
    }
  }
  return out;
}

/**
 * Frame a `.chunks.txt` file (one JSON payload per line) as the wire carries it, per the fixtures README: `event:
 * <type>` lines for Anthropic and OpenAI Responses, `data: [DONE]` after OpenAI Chat chunks; a file holding several
 * requests (a second `message_start` / `response.created`) becomes one stream per request.
 */
export function frameChunks(api: ModelApi, text: string): string[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const starter =
    api === 'anthropic-messages'
      ? 'message_start'
      : api === 'openai-responses'
        ? 'response.created'
        : undefined;
  const groups: string[][] = [];
  for (const line of lines) {
    const type = (JSON.parse(line) as { type?: unknown }).type;
    if (groups.length === 0 || (starter !== undefined && type === starter && groups.at(-1)?.length))
      groups.push([]);
    groups.at(-1)?.push(line);
  }
  return groups.map((group) => {
    let body = '';
    for (const line of group) {
      if (api === 'anthropic-messages' || api === 'openai-responses') {
        body += `event: ${String((JSON.parse(line) as { type?: unknown }).type)}\n`;
      }
      body += `data: ${line}\n\n`;
    }
    if (api === 'openai-chat') body += 'data: [DONE]\n\n';
    return body;
  });
}
