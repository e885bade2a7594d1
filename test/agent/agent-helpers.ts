/** Shared set-up for the Agent tests: a workspace with real files, the real Lua `read` tool, models per surface. */

import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import { LuaToolSource } from '../../src/lua/lua-tool-source.js';
import { createProvider, type Provider, type ProviderOptions } from '../../src/providers/http-provider.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import type { ModelInfo } from '../../src/providers/model/model-info.js';
import {
  type FakeProviderServer,
  type Surface,
  startFakeProviderServer,
} from '../helpers/fake-provider-server.js';

export const MEDIA = fileURLToPath(new URL('../fixtures/media/', import.meta.url));

/** A model of each surface that takes images (and, on Gemini, images inside function responses). */
export function modelFor(surface: Surface): ModelInfo {
  switch (surface) {
    case 'anthropic-messages':
      return resolveModel('claude-sonnet-4-5');
    case 'openai-chat':
      return resolveModel('gpt-4.1', { api: 'openai-chat' });
    case 'openai-responses':
      return resolveModel('gpt-4.1');
    case 'gemini':
      return resolveModel('gemini-3-pro-preview');
  }
}

export function providerFor(
  server: FakeProviderServer,
  surface: Surface,
  extra: Partial<ProviderOptions> = {},
): Provider {
  return createProvider({
    api: surface,
    baseUrl: server.baseUrl(surface),
    apiKey: 'test-key',
    retry: { initialDelayMs: 1, maxDelayMs: 5 },
    // A script mistake fails fast instead of hanging a test.
    idleTimeoutMs: 10_000,
    ...extra,
  });
}

export interface Workspace {
  root: string;
  tools: LuaToolSource;
  cleanup(): Promise<void>;
}

/** A temp workspace holding `cat.png` (64x48 PNG), `notes.txt` and `report.pdf`, with the shipped Lua tools. */
export async function workspace(): Promise<Workspace> {
  const root = await mkdtemp(join(tmpdir(), 'panto-agent-'));
  await copyFile(join(MEDIA, 'png-rgb.png'), join(root, 'cat.png'));
  await copyFile(join(MEDIA, 'pdf-2page.pdf'), join(root, 'report.pdf'));
  await writeFile(join(root, 'notes.txt'), 'line one\nline two\n');
  const tools = await LuaToolSource.fromDir(LuaToolSource.builtinDir(), { workspaceRoot: root });
  return { root, tools, cleanup: () => rm(root, { recursive: true, force: true }) };
}

export interface AgentFixture {
  server: FakeProviderServer;
  ws: Workspace;
}

/**
 * A fake provider server and a workspace for one test file, closed by the `afterAll` this registers. Call once at the
 * top level of the file: `const { server, ws } = await agentFixture();`.
 */
export async function agentFixture(): Promise<AgentFixture> {
  const server = await startFakeProviderServer();
  const ws = await workspace();
  afterAll(async () => {
    await server.close();
    await ws.cleanup();
  });
  return { server, ws };
}

/** A recorded request body, inspected structurally. */
// biome-ignore lint/suspicious/noExplicitAny: wire bodies of four APIs, checked field by field in the tests
export type Json = Record<string, any>;

/** Collect events of one type. */
export function eventsOf<T extends AgentEvent['type']>(
  events: AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}

export const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** True when base64 `data` decodes to a PNG file. */
export function isPngBase64(data: unknown): boolean {
  if (typeof data !== 'string') return false;
  const bytes = Buffer.from(data, 'base64');
  return PNG_MAGIC.every((b, i) => bytes[i] === b);
}
