import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImagePart } from '../../../src/conversation.js';
import { McpToolSource } from '../../../src/mcp/mcp-tool-source.js';
import { DEFAULT_PROCESS_OPTIONS } from '../../../src/media/policy.js';
import { dispatchToolCalls } from '../../../src/tools/dispatch.js';
import { imageSize } from '../../agent/dispatch-fixtures.js';
import { GPS_MARKERS, photoWithGps } from './photo-with-gps.js';
import { FILESYSTEM } from './servers.js';

let dir: string;
let photo: Buffer;
let source: McpToolSource;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'panto-mcp-fs-')));
  photo = await photoWithGps();
  await writeFile(join(dir, 'holiday.jpg'), photo);
  // The de-facto config shape, as a host's users already have it.
  source = await McpToolSource.fromConfig({
    mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir], needsApproval: true } },
  });
  expect(await source.start()).toEqual({ started: ['fs'], failed: [] });
});
afterAll(async () => {
  await source?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a server configured with needsApproval', () => {
  it('declares every one of its tools as needing approval', () => {
    const decls = source.list();
    expect(decls.length).toBeGreaterThan(0);
    expect(decls.every((d) => d.needsApproval === true)).toBe(true);
  });
});

describe('server-filesystem over stdio: read_media_file on a large phone photo', () => {
  it('the model-facing image is ≤ 2000 px, under the byte cap, GPS/EXIF gone — not the raw base64 the server sent', async () => {
    // The input really is big and carries GPS.
    expect(imageSize(photo)).toMatchObject({ width: 4000, height: 3000 });
    for (const marker of GPS_MARKERS) expect(photo.includes(marker)).toBe(true);

    const processed: unknown[] = [];
    const [result] = await dispatchToolCalls(
      [
        {
          type: 'tool_call',
          id: 'f1',
          name: 'fs__read_media_file',
          input: { path: join(dir, 'holiday.jpg') },
        },
      ],
      { tools: source, onEvent: (e) => e.type === 'tool_media_processed' && processed.push(e) },
    );
    expect(result?.isError).toBe(false);
    const images = (result?.parts ?? []).filter((p): p is ImagePart => p.type === 'image');
    expect(images).toHaveLength(1);
    const image = images[0] as ImagePart;
    const bytes = Buffer.from(image.data, 'base64');
    expect(imageSize(bytes)).toMatchObject({ width: 2000, height: 1500 });
    expect([image.width, image.height]).toEqual([2000, 1500]);
    expect(bytes.byteLength).toBeLessThanOrEqual(DEFAULT_PROCESS_OPTIONS.maxEncodedBytes);
    for (const marker of GPS_MARKERS) expect(bytes.includes(marker)).toBe(false);
    // structuredContent mirrors the image; it must not come back as a wall of base64 text.
    expect(result?.parts.every((p) => p.type !== 'text' || p.text.length < 1000)).toBe(true);
    expect(processed[0]).toMatchObject({
      original: { mediaType: 'image/jpeg', width: 4000, height: 3000, byteLength: photo.byteLength },
      changes: expect.arrayContaining(['resized']),
    });
  });

  it('a path outside the allowed directory is an error result the model can read', async () => {
    const [result] = await dispatchToolCalls(
      [{ type: 'tool_call', id: 'f2', name: 'fs__read_text_file', input: { path: '/etc/passwd' } }],
      { tools: source },
    );
    expect(result?.isError).toBe(true);
    expect(JSON.stringify(result?.parts)).toMatch(/outside allowed directories|Access denied/i);
  });
});
