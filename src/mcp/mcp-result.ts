/**
 * Client side: an MCP `tools/call` result → a `CallResult` of `ResultPart`s.
 *
 * Images and audio arrive base64-encoded; they are decoded to RAW bytes and handed on as media parts, so they go
 * through the same media pipeline as every other tool's output (sniffed, capped, oriented, re-encoded, metadata
 * stripped — or replaced by a note when a provider could not take them). Nothing here decodes pixels.
 *
 * - `text` → a text part.
 * - `image` / `audio` → a media part (the server's `mimeType` is only a hint; the pipeline sniffs the bytes).
 * - `resource` (embedded): `text` → a text part headed by its URI; `blob` → a media part named after the URI.
 * - `resource_link` → read with `resources/read` (when a reader is given, up to `maxLinkedResources` per result) and
 *   mapped like an embedded resource; otherwise, or when reading fails, a text line naming the link.
 * - `structuredContent` → JSON text for the model when the content carries no text and no media of its own, and
 *   always, as the value, in `meta.structuredContent` for the host (never sent to a model).
 * - `isError: true` → `{ok: false}` with the result's text; its media is left out (and the error says so).
 * - At most `maxMediaParts` media parts per result; the rest become one note.
 */

import type { ResultPart } from '../tool.js';
import type { CallResult } from '../tool-source.js';
import { errorMessage } from '../tool-source.js';

/** One item of `resources/read` contents. */
export type McpResourceContents = {
  uri: string;
  mimeType?: string | undefined;
  text?: string | undefined;
  blob?: string | undefined;
};

/** The fields of a `tools/call` result this module reads (the rest is ignored). */
export interface McpCallToolResult {
  content?: unknown[] | undefined;
  structuredContent?: unknown;
  isError?: boolean | undefined;
}

export interface McpResultOptions {
  /** Reads a linked resource (`resources/read`). Without it, links stay text. */
  readResource?: ((uri: string) => Promise<McpResourceContents[]>) | undefined;
  /** Most `resource_link`s read per result. Default 8; further links stay text. */
  maxLinkedResources?: number | undefined;
  /**
   * Most media parts (images, audio, binary resources) kept per result. Default 20; further ones are left out with
   * one note saying how many. A server sending 20 000 tiny images would otherwise have each one processed, stored
   * in the conversation and sent with every later request (providers refuse requests with more than ~100 images).
   */
  maxMediaParts?: number | undefined;
  /** Host-facing meta put on the result. */
  meta?: Record<string, unknown> | undefined;
}

/** Map one MCP tool result. Never rejects: malformed content becomes notes the model can read. */
export async function mcpResultToCallResult(
  result: McpCallToolResult,
  options: McpResultOptions = {},
): Promise<CallResult> {
  const parts: ResultPart[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  let linksRead = 0;
  const maxLinks = options.maxLinkedResources ?? 8;
  for (const item of content) {
    if (typeof item !== 'object' || item === null) {
      parts.push(note(`content item ${describe(item)} is not an MCP content block; left out`));
      continue;
    }
    const block = item as Record<string, unknown>;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: typeof block.text === 'string' ? block.text : String(block.text) });
        break;
      case 'image':
      case 'audio':
        parts.push(base64Part(block.data, str(block.mimeType), block.type));
        break;
      case 'resource': {
        const r = block.resource as McpResourceContents | undefined;
        if (typeof r !== 'object' || r === null || typeof r.uri !== 'string') {
          parts.push(note('an embedded resource without a URI was left out'));
        } else {
          parts.push(...resourceParts(r));
        }
        break;
      }
      case 'resource_link': {
        const uri = str(block.uri);
        const label = linkLabel(block);
        if (uri === undefined) {
          parts.push(note('a resource link without a URI was left out'));
        } else if (options.readResource && linksRead < maxLinks) {
          linksRead++;
          try {
            const contents = await options.readResource(uri);
            if (contents.length === 0) parts.push({ type: 'text', text: `${label} (empty)` });
            for (const c of contents) parts.push(...resourceParts(c));
          } catch (err) {
            parts.push({ type: 'text', text: `${label} (could not be read: ${errorMessage(err)})` });
          }
        } else {
          parts.push({ type: 'text', text: label });
        }
        break;
      }
      default:
        parts.push(note(`content of type ${JSON.stringify(block.type)} is not supported; left out`));
    }
  }

  // Only when the content says nothing itself: a server that mirrors its image content into structuredContent
  // (server-filesystem's read_media_file does) must not turn the picture into base64 text.
  const substantive = parts.some((p) => p.type === 'media' || !p.text.startsWith('[MCP '));
  if (!substantive && result.structuredContent !== undefined) {
    parts.push({ type: 'text', text: safeJson(result.structuredContent) });
  }

  if (result.isError === true) {
    const text = parts
      .map((p) => (p.type === 'text' ? p.text : `[${p.mediaType ?? 'media'} left out of an error result]`))
      .join('\n');
    return {
      ok: false,
      error: text.length > 0 ? text : 'the MCP tool reported an error without a message',
      ...(options.meta ? { meta: options.meta } : {}),
    };
  }
  if (parts.length === 0) parts.push({ type: 'text', text: '(the MCP tool returned no content)' });
  const meta =
    result.structuredContent === undefined
      ? options.meta
      : { ...options.meta, structuredContent: result.structuredContent };
  return {
    ok: true,
    parts: capMedia(parts, options.maxMediaParts ?? 20),
    ...(meta ? { meta } : {}),
  };
}

/** `parts` with media parts after the first `max` left out, and one note saying how many were. */
function capMedia(parts: ResultPart[], max: number): ResultPart[] {
  let media = 0;
  const kept = parts.filter((p) => p.type !== 'media' || ++media <= max);
  if (media > max) kept.push(note(`${media - max} more media items left out (at most ${max} per result)`));
  return kept;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decode base64 media. Bad base64 becomes a note (never garbage bytes handed to the pipeline). */
function base64Part(data: unknown, mediaType: string | undefined, kind: string, name?: string): ResultPart {
  if (typeof data !== 'string' || data.length === 0) return note(`${kind} without data left out`);
  const compact = /\s/.test(data) ? data.replace(/\s+/g, '') : data;
  if (!BASE64.test(compact) || compact.length % 4 === 1) {
    return note(`${kind}${mediaType ? ` (${mediaType})` : ''} whose data is not valid base64 left out`);
  }
  const bytes = Buffer.from(compact, 'base64');
  const part: ResultPart = {
    type: 'media',
    data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  };
  if (mediaType !== undefined) part.mediaType = mediaType;
  if (name !== undefined) part.name = name;
  return part;
}

function resourceParts(r: McpResourceContents): ResultPart[] {
  const mime = str(r.mimeType);
  if (typeof r.blob === 'string') {
    if (mime !== undefined && isTextType(mime)) {
      const decoded = base64Part(r.blob, mime, `resource ${r.uri}`);
      if (decoded.type === 'media') {
        return [
          {
            type: 'text',
            text: `[resource ${r.uri} (${mime})]\n${Buffer.from(decoded.data).toString('utf8')}`,
          },
        ];
      }
      return [decoded];
    }
    return [base64Part(r.blob, mime, `resource ${r.uri}`, fileName(r.uri))];
  }
  if (typeof r.text === 'string') {
    return [{ type: 'text', text: `[resource ${r.uri}${mime ? ` (${mime})` : ''}]\n${r.text}` }];
  }
  return [note(`resource ${r.uri} has neither text nor blob; left out`)];
}

/** Media types whose bytes are text (a blob of these becomes a text part, not an attachment). */
function isTextType(mime: string): boolean {
  const m = mime.toLowerCase().split(';')[0]?.trim() ?? '';
  return (
    m.startsWith('text/') ||
    /^application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml)$/.test(m) ||
    m.endsWith('+json') ||
    m.endsWith('+xml')
  );
}

function linkLabel(block: Record<string, unknown>): string {
  const name = str(block.name) ?? str(block.title);
  const mime = str(block.mimeType);
  const desc = str(block.description);
  return `[resource link${name ? ` ${name}` : ''}: ${str(block.uri) ?? '?'}${mime ? ` (${mime})` : ''}${desc ? ` — ${desc}` : ''}]`;
}

/** The last path segment of a URI, for a document's name. */
function fileName(uri: string): string | undefined {
  try {
    const seg = new URL(uri).pathname.split('/').filter(Boolean).pop();
    return seg ? decodeURIComponent(seg) : undefined;
  } catch {
    return undefined;
  }
}

function note(text: string): ResultPart {
  return { type: 'text', text: `[MCP ${text}]` };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** `v` as JSON, or a note saying why it could not be serialized (never "[object Object]"). */
function safeJson(v: unknown): string {
  try {
    const json = JSON.stringify(v);
    if (json !== undefined) return json;
    return `[structuredContent could not be serialized: it is ${typeof v}]`;
  } catch (err) {
    return `[structuredContent could not be serialized: ${(err as Error)?.message ?? String(err)}]`;
  }
}

function describe(v: unknown): string {
  return v === null ? 'null' : typeof v;
}
