import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runPanto } from './run-cli.js';

const workspace = path.join(repoRoot, 'examples', 'workspace');
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'panto-cli-'));
  await writeFile(path.join(tmp, 'notes.txt'), 'first line\nsecond line\nthird line\n');
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('panto tool: runs a tool through dispatchToolCalls and prints its result', () => {
  it('reads a text file as numbered lines', async () => {
    const r = await runPanto(['tool', 'read', '{"path":"notes.txt"}', '--workspace', tmp]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^read: ok in [\d.]+ ms$/m);
    expect(r.stdout).toMatch(/1\D+first line/);
    expect(r.stdout).toMatch(/3\D+third line/);
  });

  it('reads an image: type, size, dimensions before/after and the changes', async () => {
    const r = await runPanto(['tool', 'read', '{"path":"photo.jpg"}', '--workspace', workspace]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[image] image/jpeg 2000x1500');
    // The input is named upright (as the model's note says "original 2400x1800"), its stored size as such.
    expect(r.stdout).toContain('from image/jpeg 2400x1800 upright (stored as 1800x2400, EXIF-rotated)');
    expect(r.stdout).not.toContain('input image/jpeg 1800x2400');
    expect(r.stdout).toMatch(/changes: [^)]*resized/);
    expect(r.stdout).toMatch(/changes: [^)]*oriented/);
    expect(r.stdout).toContain('multiply coordinates by 1.2');
  });

  it('reads a PDF as a document', async () => {
    const r = await runPanto(['tool', 'read', '{"path":"notes.pdf"}', '--workspace', workspace, '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { parts: Array<{ type: string; mediaType?: string; name?: string }> };
    const doc = out.parts.find((p) => p.type === 'document');
    expect(doc).toMatchObject({ mediaType: 'application/pdf', name: 'notes.pdf' });
    const text = await runPanto(['tool', 'read', '{"path":"notes.pdf"}', '--workspace', workspace]);
    expect(text.stdout).toContain(
      '[document notes.pdf] application/pdf, 2 pages, 2.8 KB (passed through unchanged)',
    );
    expect(text.stdout).not.toContain('0x0');
  });

  it('a path outside the workspace is a tool error with exit code 1', async () => {
    const r = await runPanto(['tool', 'read', '{"path":"../../etc/passwd"}', '--workspace', tmp]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('read: ERROR');
    expect(r.stdout).toContain('outside the workspace');
  });

  it('bad JSON arguments are a usage error (exit 2)', async () => {
    const r = await runPanto(['tool', 'read', '{path:', '--workspace', tmp]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('JSON-ARGS is not valid JSON');
  });

  it('arguments that break the schema come back as a readable tool error', async () => {
    const r = await runPanto(['tool', 'read', '{"path":42}', '--workspace', tmp]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('read: ERROR');
    expect(r.stdout).toMatch(/path/);
  });

  it('runs a Lua tool from --tools that renders a picture (BMP made in Lua, stored as PNG)', async () => {
    const r = await runPanto([
      'tool',
      'bar_chart',
      '{"values":[1,2,3]}',
      '--tools',
      path.join(repoRoot, 'examples', 'tools'),
      '--json',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      media: Array<{ mediaType: string; original: { mediaType: string } }>;
    };
    expect(out.media[0]).toMatchObject({ mediaType: 'image/png', original: { mediaType: 'image/bmp' } });
  });
});

describe('panto tool --as: the request fragment each surface receives', () => {
  const run = (surface: string, extra: string[] = []) =>
    runPanto([
      'tool',
      'read',
      '{"path":"chart.png"}',
      '--workspace',
      workspace,
      '--as',
      surface,
      '--json',
      ...extra,
    ]);

  it('anthropic: the image inside tool_result.content', async () => {
    const r = await run('anthropic');
    expect(r.code).toBe(0);
    const { request } = JSON.parse(r.stdout);
    const result = request.fragment[0].content[0];
    expect(result.type).toBe('tool_result');
    const image = result.content.find((b: { type: string }) => b.type === 'image');
    expect(image.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    expect(image.source.data).toMatch(/…<\d+ base64 chars>$/);
  });

  it('openai-chat: text-only tool message, then one user message with the image_url', async () => {
    const r = await run('openai-chat');
    const { request } = JSON.parse(r.stdout);
    expect(request.fragment[0]).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(typeof request.fragment[0].content).toBe('string');
    expect(request.fragment[1].role).toBe('user');
    const img = request.fragment[1].content.find((p: { type: string }) => p.type === 'image_url');
    expect(img.image_url.url).toMatch(/^data:image\/png;base64,/);
  });

  it('openai-responses: input_image inside function_call_output.output', async () => {
    const r = await run('openai-responses');
    const { request } = JSON.parse(r.stdout);
    const out = request.fragment[0];
    expect(out.type).toBe('function_call_output');
    expect(out.output.some((p: { type: string }) => p.type === 'input_image')).toBe(true);
  });

  it('gemini 3: inlineData inside functionResponse.parts; --full prints the whole base64', async () => {
    const r = await run('gemini', ['--model', 'gemini-3-pro-preview', '--full']);
    const { request } = JSON.parse(r.stdout);
    const fr = request.fragment[0].parts[0].functionResponse;
    expect(fr.name).toBe('read');
    const inline = fr.parts[0].inlineData;
    expect(inline.mimeType).toBe('image/png');
    expect(Buffer.from(inline.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  it('a text-only model gets an honest placeholder and a warning', async () => {
    const r = await runPanto([
      'tool',
      'read',
      '{"path":"chart.png"}',
      '--workspace',
      workspace,
      '--as',
      'openai-chat',
      '--model',
      'my-local-model',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('does not accept image input');
    expect(r.stdout).not.toContain('image_url');
  });
});

describe('panto image: what processMedia does to one file', () => {
  it('prints the input, output and changes as JSON', async () => {
    const r = await runPanto([
      'image',
      path.join(workspace, 'photo.jpg'),
      '--json',
      '--max-dimension',
      '800',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.output).toMatchObject({ mediaType: 'image/jpeg', width: 800, height: 600 });
    expect(out.changes).toEqual(expect.arrayContaining(['resized', 'oriented']));
  });

  it('a corrupt file exits 1 with the error code', async () => {
    const bad = path.join(tmp, 'broken.png');
    await writeFile(bad, Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(40, 7)]));
    const r = await runPanto(['image', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[ERR_CORRUPT_MEDIA\]/);
    expect(r.stderr).toContain(`panto: ${bad}: `);
  });

  it('a missing file and a bad flag are reported plainly', async () => {
    const missing = await runPanto(['image', path.join(tmp, 'nope.png')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `panto: cannot open ${path.join(tmp, 'nope.png')}: no such file or directory\n`,
    );
    const flag = await runPanto(['image', 'x.png', '--max-dimension', 'big']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--max-dimension expects a positive integer');
  });
});

describe('panto --help', () => {
  it.each(['tool', 'image', 'chat', 'session'])('%s --help prints usage and exits 0', async (cmd) => {
    const r = await runPanto([cmd, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: panto ${cmd}`);
  });

  it('an unknown command exits 2 with the command list', async () => {
    const r = await runPanto(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });
});
