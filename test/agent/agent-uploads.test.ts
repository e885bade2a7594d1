/**
 * `uploads: 'auto'` end to end: a real Agent, the real Lua `read` tool returning a real PNG/PDF, and loopback servers
 * that implement each provider's Messages/Responses/generateContent stream and its Files API as documented
 * (test/helpers/fake-files-api.ts, which refuses a request referencing an unknown, deleted or expired file as the
 * real APIs do). Pins: each picture is uploaded once per account and referenced after; a resume reuses the ids; a
 * refused id is uploaded again and the request retried once; a failed upload goes inline; an abort mid-upload ends
 * the run at once; expiry; deletion; Chat Completions references PDFs only (its images stay inline).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/agent-events.js';
import { deleteSessionUploads } from '../../src/agent/delete-uploads.js';
import type { ImagePart, Message } from '../../src/conversation.js';
import { isPantoError } from '../../src/errors.js';
import { createProviderFiles } from '../../src/providers/files/provider-files.js';
import { defineModel, resolveModel } from '../../src/providers/model/model-catalog.js';
import type { ModelInfo } from '../../src/providers/model/model-info.js';
import { SessionLog } from '../../src/session/session-log.js';
import { fileRefs, startFilesServer } from '../helpers/fake-files-api.js';
import type { ScriptedTurn, Surface } from '../helpers/fake-provider-server.js';
import { noiseBytes } from '../helpers/media-noise.js';
import { pngFile } from '../helpers/png-file.js';
import { eventsOf, providerFor, workspace } from './agent-helpers.js';

const { server, files } = await startFilesServer();
const ws = await workspace();
const dir = mkdtempSync(join(tmpdir(), 'panto-agent-uploads-'));
afterAll(async () => {
  await server.close();
  await ws.cleanup();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  server.reset();
});

type FilesSurface = Exclude<Surface, 'openai-chat'>;
const SURFACES: FilesSurface[] = ['anthropic-messages', 'openai-responses', 'gemini'];

/** Models that reference files in tool results too (a Gemini 3 function response holds inline data only). */
function model(surface: Surface): ModelInfo {
  switch (surface) {
    case 'anthropic-messages':
      return resolveModel('claude-sonnet-4-5');
    case 'openai-chat':
      return resolveModel('gpt-4.1', { api: 'openai-chat' });
    case 'openai-responses':
      return resolveModel('gpt-4.1');
    case 'gemini':
      return resolveModel('gemini-2.5-pro');
  }
}

const read = (path: string, id: string): ScriptedTurn => ({
  type: 'reply',
  toolCalls: [{ id, name: 'read', args: { path } }],
});
const done: ScriptedTurn = { type: 'reply', text: 'done' };

let n = 0;
function agent(surface: Surface, extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
  const events: AgentEvent[] = [];
  const a = new Agent({
    provider: providerFor(server, surface),
    model: model(surface),
    tools: ws.tools,
    workspaceRoot: ws.root,
    uploads: 'auto',
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { agent: a, events };
}

/** The requests to the model (not the Files API), from `from` on. */
const modelRequests = (from: number) => server.requests.slice(from);
const sessionPath = () => join(dir, `s${n++}.jsonl`);

describe("uploads: 'auto' — each picture crosses the wire once per account", () => {
  it.each(SURFACES)('%s: uploaded once, referenced by id in every later request', async (surface) => {
    const uploadsBefore = files.uploads.length;
    const from = server.requests.length;
    server.enqueue(
      files.guard(read('cat.png', 'c1')),
      files.guard(read('cat.png', 'c2')),
      files.guard(read('report.pdf', 'c3')),
      files.guard(done),
    );
    const { agent: a, events } = agent(surface);
    const result = await a.prompt('look twice');
    expect(result.stopReason).toBe('end');
    // The PNG once (asked for twice), the PDF once.
    expect(files.uploads.slice(uploadsBefore).map((u) => u.mediaType)).toEqual([
      'image/png',
      'application/pdf',
    ]);
    const ends = eventsOf(events, 'upload_end');
    expect(ends.map((e) => [e.mediaType, typeof e.file])).toEqual([
      ['image/png', 'string'],
      ['application/pdf', 'string'],
    ]);
    expect(eventsOf(events, 'upload_start')).toHaveLength(2);
    // Each upload reports the bytes of its body, between its start and its end, up to the total.
    for (const end of ends) {
      const steps = eventsOf(events, 'upload_progress').filter((p) => p.sha256 === end.sha256);
      expect(steps.length).toBeGreaterThan(0);
      expect(steps.at(-1)?.sent).toBe(steps.at(-1)?.total);
      expect(steps.at(-1)?.total).toBeGreaterThanOrEqual(end.bytes);
      const start = events.findIndex((e) => e.type === 'upload_start' && e.sha256 === end.sha256);
      expect(start).toBeLessThan(events.indexOf(steps[0] as AgentEvent));
      expect(events.indexOf(steps.at(-1) as AgentEvent)).toBeLessThan(events.indexOf(end));
    }
    const reqs = modelRequests(from);
    expect(reqs).toHaveLength(4);
    const pngId = ends[0]?.file as string;
    // Requests 2..4 reference the PNG (twice from request 3 on) and never carry its bytes.
    const pngBase64 = files.files.get(pngId)?.data.toString('base64') as string;
    for (const r of reqs.slice(1)) {
      expect(JSON.stringify(r.body)).not.toContain(pngBase64.slice(0, 200));
      expect(fileRefs(r.body).some((ref) => ref === pngId || ref.endsWith(pngId))).toBe(true);
    }
    expect(fileRefs(reqs[2]?.body).length).toBe(2);
    expect(fileRefs(reqs[3]?.body).length).toBe(3);
    if (surface === 'anthropic-messages') {
      expect(String(reqs[1]?.headers['anthropic-beta'])).toContain('files-api-2025-04-14');
    }
    expect(eventsOf(events, 'warning')).toEqual([]);
  });

  it('OpenAI Chat Completions: the PDF is uploaded once (user_data) and sent as file.file_id; images stay inline', async () => {
    const before = files.uploads.length;
    const from = server.requests.length;
    server.enqueue(
      files.guard(read('cat.png', 'c1')),
      files.guard(read('report.pdf', 'c2')),
      files.guard(read('report.pdf', 'c3')),
      files.guard(done),
    );
    const { agent: a, events } = agent('openai-chat');
    expect((await a.prompt('look')).stopReason).toBe('end');
    expect(files.uploads.slice(before).map((u) => u.mediaType)).toEqual(['application/pdf']);
    const id = eventsOf(events, 'upload_end')[0]?.file as string;
    expect(files.files.get(id)?.purpose).toBe('user_data');
    const reqs = modelRequests(from);
    expect(reqs).toHaveLength(4);
    const pdfBase64 = files.files.get(id)?.data.toString('base64') as string;
    const pngSeen = JSON.stringify(reqs[1]?.body).match(/data:image\/png;base64,/g) ?? [];
    expect(pngSeen).toHaveLength(1);
    for (const r of reqs.slice(2)) {
      expect(JSON.stringify(r.body)).not.toContain(pdfBase64.slice(0, 200));
      expect(JSON.stringify(r.body)).toContain('data:image/png;base64,');
    }
    expect(fileRefs(reqs[2]?.body)).toEqual([id]);
    expect(fileRefs(reqs[3]?.body)).toEqual([id, id]);
    const parts = ((reqs[3]?.body.messages ?? []) as Array<{ content: unknown }>).flatMap((m) =>
      Array.isArray(m.content) ? m.content : [],
    );
    expect(parts).toContainEqual({ type: 'file', file: { file_id: id } });
    expect(eventsOf(events, 'warning')).toEqual([]);
  });

  it('OpenAI Chat Completions: a deleted PDF is uploaded again and the request retried once; a failed upload goes inline', async () => {
    server.enqueue(files.guard(read('report.pdf', 'c1')), files.guard(done));
    const { agent: a, events } = agent('openai-chat');
    await a.prompt('read');
    const id = eventsOf(events, 'upload_end')[0]?.file as string;
    files.drop(id);
    const before = files.uploads.length;
    const from = server.requests.length;
    server.enqueue(files.guard(done), files.guard(done));
    expect((await a.prompt('again')).stopReason).toBe('end');
    expect(files.uploads.length).toBe(before + 1);
    expect(eventsOf(events, 'warning').map((w) => w.warning.code)).toEqual(['file-refused']);
    const reqs = modelRequests(from);
    expect(reqs).toHaveLength(2);
    const fresh = eventsOf(events, 'upload_end')[1]?.file as string;
    expect(fresh).not.toBe(id);
    expect(fileRefs(reqs[1]?.body)).toEqual([fresh]);

    files.misbehave({ kind: 'status', status: 500, message: 'boom' }, Number.POSITIVE_INFINITY);
    const failing = agent('openai-chat');
    const next = server.requests.length;
    server.enqueue(files.guard(read('report.pdf', 'c1')), files.guard(done));
    expect((await failing.agent.prompt('read')).stopReason).toBe('end');
    files.behave();
    expect(eventsOf(failing.events, 'warning').map((w) => w.warning.code)).toEqual(['upload-failed']);
    expect(fileRefs(modelRequests(next)[1]?.body)).toEqual([]);
    expect(JSON.stringify(modelRequests(next)[1]?.body)).toContain('data:application/pdf;base64,');
  });

  it("uploads 'off' (the default) uploads nothing", async () => {
    const before = files.uploads.length;
    server.enqueue(read('cat.png', 'c1'), done);
    const { agent: a } = agent('anthropic-messages', { uploads: 'off' });
    expect((await a.prompt('look')).stopReason).toBe('end');
    expect(files.uploads.length).toBe(before);
    expect(() => agent('anthropic-messages', { uploads: 'yes' as 'auto' })).toThrow(
      /uploads must be 'auto' or 'off'/,
    );
  });
});

describe('the session remembers the ids', () => {
  it('a resumed session references the files it uploaded instead of uploading again', async () => {
    const path = sessionPath();
    const log = await SessionLog.create(path);
    server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
    const first = agent('anthropic-messages', { session: log });
    await first.agent.prompt('look');
    const id = eventsOf(first.events, 'upload_end')[0]?.file as string;
    log.close();

    const before = files.uploads.length;
    const resumed = await SessionLog.open(path);
    expect((await resumed.uploadEntries()).flatMap((e) => e.files ?? []).map((f) => f.id)).toEqual([id]);
    const from = server.requests.length;
    server.enqueue(files.guard(done));
    const second = agent('anthropic-messages', { session: resumed });
    expect((await second.agent.prompt('and again?')).stopReason).toBe('end');
    expect(files.uploads.length).toBe(before);
    expect(fileRefs(server.requests[from]?.body)).toEqual([id]);
    resumed.close();
  });

  it('another key (another account) never gets the ids: it uploads its own', async () => {
    const path = sessionPath();
    const log = await SessionLog.create(path);
    server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
    await agent('openai-responses', { session: log }).agent.prompt('look');
    log.close();
    const resumed = await SessionLog.open(path);
    const before = files.uploads.length;
    server.enqueue(files.guard(done));
    const other = agent('openai-responses', {
      session: resumed,
      provider: providerFor(server, 'openai-responses', { apiKey: 'test-key', headers: { 'x-tenant': 'b' } }),
    });
    // Same key, extra non-credential header: the same account, no upload.
    await other.agent.prompt('again');
    expect(files.uploads.length).toBe(before);
    resumed.close();
    // Another key: the recorded id is never sent with it; it tries its own upload (refused here: inline).
    const again = await SessionLog.open(path);
    const from = server.requests.length;
    const tries = files.uploads.length;
    server.enqueue(files.guard(done));
    const stranger = agent('openai-responses', {
      session: again,
      provider: providerFor(server, 'openai-responses', { apiKey: 'another-key' }),
    });
    expect((await stranger.agent.prompt('again')).stopReason).toBe('end');
    expect(files.uploads.length).toBe(tries);
    expect(eventsOf(stranger.events, 'upload_end')[0]?.error?.code).toBe('ERR_PROVIDER_AUTH');
    expect(fileRefs(server.requests[from]?.body)).toEqual([]);
    expect(eventsOf(stranger.events, 'warning').map((w) => w.warning.code)).toEqual(['upload-failed']);
    again.close();
  });
});

describe('failure is never worse than inline', () => {
  it.each(SURFACES)(
    '%s: a file deleted behind the agent is uploaded again and the request retried once',
    async (surface) => {
      server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
      const { agent: a, events } = agent(surface);
      await a.prompt('look');
      const id = eventsOf(events, 'upload_end')[0]?.file as string;
      files.drop(id);
      const before = files.uploads.length;
      const from = server.requests.length;
      server.enqueue(files.guard(done), files.guard(done));
      const result = await a.prompt('again');
      expect(result.stopReason).toBe('end');
      expect(files.uploads.length).toBe(before + 1);
      expect(eventsOf(events, 'warning').map((w) => w.warning.code)).toEqual(['file-refused']);
      const reqs = modelRequests(from);
      expect(reqs).toHaveLength(2);
      const fresh = eventsOf(events, 'upload_end')[1]?.file as string;
      expect(fresh).not.toBe(id);
      expect(fileRefs(reqs[1]?.body).some((r) => r.endsWith(fresh))).toBe(true);
    },
  );

  it('a Files API whose ids never work (it forgets every file): one re-upload, then inline; the turn answers', async () => {
    server.enqueue(
      files.guard(read('cat.png', 'c1')),
      files.guard(done),
      files.guard(done),
      files.guard(done),
    );
    const { agent: a, events } = agent('anthropic-messages');
    a.subscribe((e) => {
      if (e.type === 'upload_end' && e.file !== undefined) files.drop(e.file);
    });
    const from = server.requests.length;
    expect((await a.prompt('look')).stopReason).toBe('end');
    const reqs = modelRequests(from);
    // read → refused (re-upload) → refused again (inline) → answered.
    expect(reqs).toHaveLength(4);
    expect(fileRefs(reqs[3]?.body)).toEqual([]);
    expect(eventsOf(events, 'upload_end')).toHaveLength(2);
    expect(eventsOf(events, 'warning').map((w) => w.warning.code)).toEqual(['file-refused', 'file-refused']);
    // Later turns send it inline without uploading it again.
    server.enqueue(files.guard(done));
    const next = server.requests.length;
    expect((await a.prompt('again')).stopReason).toBe('end');
    expect(eventsOf(events, 'upload_end')).toHaveLength(2);
    expect(fileRefs(server.requests[next]?.body)).toEqual([]);
  });

  it('a provider that refuses file references as such (naming no file): inline at once, and for later turns', async () => {
    const noRefs = (turn: ScriptedTurn) => (request: { body: unknown }) =>
      fileRefs(request.body).length > 0
        ? ({
            type: 'http-error',
            status: 400,
            message: 'file sources are not enabled for this organization',
          } as const)
        : turn;
    server.enqueue(noRefs(read('cat.png', 'c1')), noRefs(done), noRefs(done));
    const { agent: a, events } = agent('anthropic-messages');
    const from = server.requests.length;
    expect((await a.prompt('look')).stopReason).toBe('end');
    expect(modelRequests(from)).toHaveLength(3);
    server.enqueue(noRefs(done));
    expect((await a.prompt('again')).stopReason).toBe('end');
    // The later turn went inline at once: one request, no refusal.
    expect(modelRequests(from)).toHaveLength(4);
    expect(eventsOf(events, 'upload_end')).toHaveLength(1);
    expect(eventsOf(events, 'warning').map((w) => w.warning.code)).toEqual(['file-refused']);
  });

  it('an upload refused with a 500 or answered with garbage goes inline with a warning', async () => {
    for (const how of [
      { kind: 'status' as const, status: 500, message: 'boom' },
      { kind: 'garbage' as const },
      { kind: 'bad-id' as const },
    ]) {
      files.misbehave(how, Number.POSITIVE_INFINITY);
      const from = server.requests.length;
      server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
      const { agent: a, events } = agent('anthropic-messages');
      expect((await a.prompt('look')).stopReason).toBe('end');
      expect(eventsOf(events, 'warning').map((w) => w.warning.code)).toEqual(['upload-failed']);
      expect(fileRefs(modelRequests(from)[1]?.body)).toEqual([]);
      const blocks = JSON.stringify(modelRequests(from)[1]?.body);
      expect(blocks).toContain('"type":"base64"');
      files.behave();
    }
  });

  it('an upload that never answers times out (filesTimeoutMs) and goes inline; the turn still answers', async () => {
    files.misbehave({ kind: 'hang' }, Number.POSITIVE_INFINITY);
    const from = server.requests.length;
    server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
    const { agent: a, events } = agent('openai-responses', {
      provider: providerFor(server, 'openai-responses', { filesTimeoutMs: 300 }),
    });
    expect((await a.prompt('look')).stopReason).toBe('end');
    files.behave();
    expect(eventsOf(events, 'warning').map((w) => w.warning.message)).toEqual([
      expect.stringMatching(/timed out after 300 ms/),
    ]);
    expect(fileRefs(modelRequests(from)[1]?.body)).toEqual([]);
  });

  it('an abort while an upload hangs ends the run at once, aborted, with every call answered', async () => {
    files.misbehave({ kind: 'hang' }, Number.POSITIVE_INFINITY);
    server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
    const { agent: a, events } = agent('gemini');
    const started = new Promise<void>((resolve) =>
      a.subscribe((e) => {
        if (e.type === 'upload_start') resolve();
      }),
    );
    const run = a.prompt('look');
    await started;
    const t0 = Date.now();
    a.abort();
    const result = await run;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(result.stopReason).toBe('aborted');
    expect(isPantoError(result.error, 'ERR_ABORTED')).toBe(true);
    expect(eventsOf(events, 'upload_end')[0]?.error?.code).toBe('ERR_ABORTED');
    files.behave();
  });
});

describe('expiry and deletion', () => {
  it('Gemini: a file that expires within the margin is uploaded again before it is referenced', async () => {
    const short = await startFilesServer({ geminiTtlMs: 60_000 });
    try {
      short.server.enqueue(short.files.guard(read('cat.png', 'c1')), short.files.guard(done));
      const a = new Agent({
        provider: providerFor(short.server, 'gemini'),
        model: model('gemini'),
        tools: ws.tools,
        workspaceRoot: ws.root,
        uploads: 'auto',
      });
      await a.prompt('look');
      // The second request of the run found the 60 s file too close to expiry: uploaded twice in all.
      expect(short.files.uploads).toHaveLength(2);
    } finally {
      await short.server.close();
    }
  });

  it('deleteUploads deletes what the agent uploaded and records it; a resume then uploads again', async () => {
    const path = sessionPath();
    const log = await SessionLog.create(path);
    server.enqueue(
      files.guard(read('cat.png', 'c1')),
      files.guard(read('report.pdf', 'c2')),
      files.guard(done),
    );
    const { agent: a, events } = agent('openai-responses', { session: log });
    await a.prompt('look');
    const ids = eventsOf(events, 'upload_end').map((e) => e.file as string);
    const out = await a.deleteUploads();
    expect(out.deleted.sort()).toEqual([...ids].sort());
    expect(out.failed).toEqual([]);
    for (const id of ids) expect(files.files.has(id)).toBe(false);
    expect((await a.deleteUploads()).deleted).toEqual([]);
    log.close();
    const resumed = await SessionLog.open(path);
    const removed = (await resumed.uploadEntries()).flatMap((e) => e.removed ?? []);
    expect(removed.sort()).toEqual([...ids].sort());
    resumed.close();
  });

  it('deleteSessionUploads deletes through the matching account only; another key keeps its files', async () => {
    const path = sessionPath();
    const log = await SessionLog.create(path);
    server.enqueue(files.guard(read('cat.png', 'c1')), files.guard(done));
    const { events } = await (async () => {
      const made = agent('anthropic-messages', { session: log });
      await made.agent.prompt('look');
      return made;
    })();
    const id = eventsOf(events, 'upload_end')[0]?.file as string;
    log.close();
    const opened = await SessionLog.open(path);
    const wrongKey = createProviderFiles({
      api: 'anthropic-messages',
      baseUrl: server.baseUrl('anthropic-messages'),
      apiKey: 'someone-else',
    });
    const kept = await deleteSessionUploads(opened, wrongKey ? [wrongKey] : []);
    expect(kept).toMatchObject({ deleted: [], kept: [{ id, api: 'anthropic-messages' }] });
    expect(files.files.has(id)).toBe(true);
    const right = createProviderFiles({
      api: 'anthropic-messages',
      baseUrl: `${server.baseUrl('anthropic-messages')}/v1`,
      apiKey: 'test-key',
    });
    const out = await deleteSessionUploads(opened, right ? [right] : []);
    expect(out.deleted).toEqual([id]);
    expect(files.files.has(id)).toBe(false);
    opened.close();
  });
});

/** An RGB PNG of noise (incompressible), `width` x `height`. */
function noisyPng(width: number, height: number, seed: number): ImagePart {
  const row = width * 3 + 1;
  const rows = Buffer.alloc(row * height);
  const noise = noiseBytes(width * 3 * height, seed);
  for (let y = 0; y < height; y++) rows.set(noise.subarray(y * width * 3, (y + 1) * width * 3), y * row + 1);
  return {
    type: 'image',
    mediaType: 'image/png',
    data: pngFile(width, height, 2, rows, 1).toString('base64'),
    width,
    height,
  };
}

describe('degrade before drop, in the agent', () => {
  it('over the request budget, the oldest screenshots go as re-encoded copies: none is left out', async () => {
    const shots = Array.from({ length: 6 }, (_, i) => noisyPng(600, 500, 40 + i));
    const size = shots[0]?.data.length ?? 0;
    const limited = defineModel({
      id: 'limited',
      api: 'anthropic-messages',
      input: { image: true, pdf: true },
      limits: { requestBytes: Math.round(3.5 * size) },
    });
    const history: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'compare' }, ...shots] }];
    const from = server.requests.length;
    server.enqueue(done);
    const events: AgentEvent[] = [];
    const a = new Agent({
      provider: providerFor(server, 'anthropic-messages'),
      model: limited,
      messages: history,
      onEvent: (e) => events.push(e),
    });
    expect((await a.continue()).stopReason).toBe('end');
    const body = server.requests[from]?.body as { messages: Array<{ content: Array<{ type: string }> }> };
    expect(JSON.stringify(body).length).toBeLessThanOrEqual(limited.limits.requestBytes);
    expect(body.messages[0]?.content.filter((b) => b.type === 'image')).toHaveLength(6);
    expect(eventsOf(events, 'warning').map((w) => w.warning.code)).toEqual(['media-degraded']);
    // The stored conversation is unchanged.
    expect(a.messages[0]).toEqual(history[0]);
  });
});
