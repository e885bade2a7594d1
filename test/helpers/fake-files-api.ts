/**
 * The three Files APIs as documented (reference: ../shared/reference/files-api.md), served on the fake provider
 * server's port (its `routes` option), for upload tests:
 * - Anthropic: `POST /v1/files` (multipart `file`; `x-api-key`, `anthropic-version` and `anthropic-beta:
 *   files-api-2025-04-14` required), `DELETE /v1/files/{id}` (404 `not_found_error` for an unknown id);
 * - OpenAI: `POST /v1/files` (multipart `purpose` + `file`; `Authorization: Bearer`), `DELETE /v1/files/{id}` (404
 *   "No such File object");
 * - Gemini: the resumable upload (`POST /upload/v1beta/files` start → `x-goog-upload-url` → `upload, finalize`),
 *   `GET` / `DELETE /v1beta/files/{id}` (403 PERMISSION_DENIED for an unknown or expired file, as the API answers),
 *   files expiring `geminiTtlMs` after the upload (48 h by default), PDFs `PROCESSING` until the first GET.
 * Anthropic and OpenAI share the path `/v1/files` on this one port: a request with `anthropic-version` is Anthropic's.
 *
 * Multipart bodies are parsed for real (boundary, part headers, bytes). `refusal(request)` says what the real Messages
 * / Responses / Chat Completions / generateContent endpoint answers to a request that references an unknown, deleted or expired file
 * (or a file reference without the Anthropic beta header); `guard(turn)` wraps a scripted turn with it. `next` makes
 * upload requests misbehave (garbage, oversized, endless or hanging answers, error statuses), for hostile tests.
 */

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedRequest, ScriptedTurn, TurnScript } from './fake-provider-server.js';

export interface StoredFile {
  id: string;
  api: 'anthropic' | 'openai' | 'gemini';
  data: Buffer;
  mediaType: string;
  filename: string;
  purpose?: string;
  sha256: string;
  /** ms since epoch; Gemini only. */
  expiresAt?: number;
  uri?: string;
  state?: 'PROCESSING' | 'ACTIVE';
}

/** How the next upload requests misbehave. */
export type Misbehaviour =
  | { kind: 'status'; status: number; message: string }
  | { kind: 'garbage' }
  | { kind: 'huge' }
  | { kind: 'endless' }
  | { kind: 'hang' }
  | { kind: 'foreign-upload-url' }
  | { kind: 'bad-id' };

export interface FakeFilesApi {
  /** The fake provider server's `routes` option. */
  routes(req: IncomingMessage, res: ServerResponse, body: Buffer): boolean;
  readonly files: Map<string, StoredFile>;
  /** Every upload that reached the server, in order (also those answered with an error). */
  readonly uploads: Array<{ api: StoredFile['api']; bytes: number; filename: string; mediaType: string }>;
  /** Ids deleted through the API. */
  readonly deletes: string[];
  /** Request bodies received on upload routes, in bytes (the multipart or raw bytes as sent). */
  readonly uploadBytes: number;
  /** Make the next `count` upload requests misbehave (`count` Infinity: all of them). */
  misbehave(how: Misbehaviour, count?: number): void;
  /** Drop every queued misbehaviour. */
  behave(): void;
  /** Forget a file on the server side (deleted by someone else, or expired). */
  drop(id: string): void;
  /** Let a Gemini file expire now. */
  expire(id: string): void;
  /** Connections closed by the client while an upload was still unanswered. */
  readonly abandoned: number;
  refusal(request: RecordedRequest): ScriptedTurn | undefined;
  guard(turn: ScriptedTurn): TurnScript;
}

export interface FakeFilesApiOptions {
  /** The credential the APIs accept (`x-api-key`, Bearer, `x-goog-api-key`). Default `test-key`. */
  apiKey?: string;
  geminiTtlMs?: number;
  /** The server's base, `http://127.0.0.1:PORT`, for Gemini's upload URLs and file URIs (set after listening). */
  origin?: () => string;
}

const BETA = 'files-api-2025-04-14';

export function createFakeFilesApi(options: FakeFilesApiOptions = {}): FakeFilesApi {
  const key = options.apiKey ?? 'test-key';
  const ttl = options.geminiTtlMs ?? 48 * 3600 * 1000;
  const files = new Map<string, StoredFile>();
  const uploads: FakeFilesApi['uploads'] = [];
  const deletes: string[] = [];
  const pendingGemini = new Map<string, { mediaType: string; bytes: number; displayName: string }>();
  let uploadBytes = 0;
  let abandoned = 0;
  let seq = 0;
  const misbehaviour: Array<{ how: Misbehaviour; left: number }> = [];
  const origin = () => options.origin?.() ?? 'http://127.0.0.1';

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  /** The misbehaviour for this upload request, if any (consumed). */
  const takeMisbehaviour = (): Misbehaviour | undefined => {
    const first = misbehaviour[0];
    if (first === undefined) return undefined;
    first.left--;
    if (first.left <= 0) misbehaviour.shift();
    return first.how;
  };

  /** Answer as `how` says; true when it answered (or chose never to). */
  const misbehave = (res: ServerResponse, how: Misbehaviour | undefined): boolean => {
    if (how === undefined || how.kind === 'foreign-upload-url' || how.kind === 'bad-id') return false;
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
    switch (how.kind) {
      case 'status':
        json(res, how.status, { error: { message: how.message, type: 'fake_error' } });
        return true;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>definitely not a file object</html>');
        return true;
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"id":"file_${'x'.repeat(8)}","pad":"${'y'.repeat(4 * 1024 * 1024)}"}`);
        return true;
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"file_endless","pad":"');
        const chunk = 'z'.repeat(16 * 1024);
        const timer = setInterval(() => {
          if (res.destroyed) clearInterval(timer);
          else res.write(chunk);
        }, 1);
        res.on('close', () => clearInterval(timer));
        return true;
      }
      case 'hang':
        return true;
    }
  };

  const anthropicUpload = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const how = takeMisbehaviour();
    if (req.headers['x-api-key'] !== key) {
      json(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      });
      return;
    }
    if (
      !String(req.headers['anthropic-beta'] ?? '')
        .split(',')
        .map((s) => s.trim())
        .includes(BETA)
    ) {
      json(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: `the Files API needs anthropic-beta: ${BETA}` },
      });
      return;
    }
    if (req.headers['anthropic-version'] === undefined) {
      json(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'anthropic-version missing' },
      });
      return;
    }
    const parts = parseMultipart(req, body);
    const file = parts.find((p) => p.name === 'file' && p.filename !== undefined);
    if (file === undefined) {
      json(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'file: field required' },
      });
      return;
    }
    uploads.push({
      api: 'anthropic',
      bytes: file.data.length,
      filename: file.filename ?? '',
      mediaType: file.type,
    });
    if (misbehave(res, how)) return;
    const id =
      how?.kind === 'bad-id' ? 'file with spaces; DROP' : `file_011${(++seq).toString(36).padStart(20, 'A')}`;
    files.set(id, stored(id, 'anthropic', file));
    json(res, 200, {
      id,
      type: 'file',
      filename: file.filename,
      mime_type: file.type,
      size_bytes: file.data.length,
      created_at: new Date().toISOString(),
      downloadable: false,
    });
  };

  const openaiUpload = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const how = takeMisbehaviour();
    if (req.headers.authorization !== `Bearer ${key}`) {
      json(res, 401, {
        error: {
          message: 'Incorrect API key provided',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
      return;
    }
    const parts = parseMultipart(req, body);
    const purpose = parts.find((p) => p.name === 'purpose')?.data.toString('utf8');
    const file = parts.find((p) => p.name === 'file' && p.filename !== undefined);
    if (
      file === undefined ||
      purpose === undefined ||
      !['vision', 'user_data', 'assistants'].includes(purpose)
    ) {
      json(res, 400, {
        error: { message: "'purpose' and 'file' are required", type: 'invalid_request_error' },
      });
      return;
    }
    uploads.push({
      api: 'openai',
      bytes: file.data.length,
      filename: file.filename ?? '',
      mediaType: file.type,
    });
    if (misbehave(res, how)) return;
    const id = how?.kind === 'bad-id' ? '../../etc/passwd' : `file-${(++seq).toString(36).padStart(22, 'a')}`;
    files.set(id, { ...stored(id, 'openai', file), purpose });
    json(res, 200, {
      id,
      object: 'file',
      bytes: file.data.length,
      created_at: Math.floor(Date.now() / 1000),
      filename: file.filename,
      purpose,
    });
  };

  const geminiStart = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const how = takeMisbehaviour();
    if (req.headers['x-goog-api-key'] !== key) {
      json(res, 400, { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } });
      return;
    }
    if (
      req.headers['x-goog-upload-protocol'] !== 'resumable' ||
      req.headers['x-goog-upload-command'] !== 'start'
    ) {
      json(res, 400, {
        error: { code: 400, message: 'expected a resumable start', status: 'INVALID_ARGUMENT' },
      });
      return;
    }
    const length = Number(req.headers['x-goog-upload-header-content-length']);
    const mediaType = String(req.headers['x-goog-upload-header-content-type'] ?? '');
    let meta: { file?: { displayName?: string; mimeType?: string } } = {};
    try {
      meta = JSON.parse(body.toString('utf8')) as typeof meta;
    } catch {
      json(res, 400, { error: { code: 400, message: 'bad JSON', status: 'INVALID_ARGUMENT' } });
      return;
    }
    if (misbehave(res, how)) return;
    const token = `u${++seq}`;
    pendingGemini.set(token, { mediaType, bytes: length, displayName: meta.file?.displayName ?? '' });
    const base = how?.kind === 'foreign-upload-url' ? 'http://198.51.100.7:9' : origin();
    res.writeHead(200, {
      'x-goog-upload-url': `${base}/upload/v1beta/files?upload_id=${token}&upload_protocol=resumable`,
      'x-goog-upload-status': 'active',
      'content-type': 'application/json',
    });
    res.end('{}');
  };

  const geminiFinalize = (req: IncomingMessage, res: ServerResponse, body: Buffer, token: string) => {
    const pending = pendingGemini.get(token);
    if (pending === undefined || req.headers['x-goog-api-key'] !== key) {
      json(res, 404, { error: { code: 404, message: 'unknown upload', status: 'NOT_FOUND' } });
      return;
    }
    if (
      req.headers['x-goog-upload-command'] !== 'upload, finalize' ||
      req.headers['x-goog-upload-offset'] !== '0'
    ) {
      json(res, 400, {
        error: { code: 400, message: 'expected upload, finalize at 0', status: 'INVALID_ARGUMENT' },
      });
      return;
    }
    pendingGemini.delete(token);
    uploadBytes += body.length;
    uploads.push({
      api: 'gemini',
      bytes: body.length,
      filename: pending.displayName,
      mediaType: pending.mediaType,
    });
    if (body.length !== pending.bytes) {
      json(res, 400, { error: { code: 400, message: 'length mismatch', status: 'INVALID_ARGUMENT' } });
      return;
    }
    const short = (++seq).toString(36).padStart(12, '0');
    const id = `files/${short}`;
    const file: StoredFile = {
      id,
      api: 'gemini',
      data: body,
      mediaType: pending.mediaType,
      filename: pending.displayName,
      sha256: createHash('sha256').update(body).digest('hex'),
      expiresAt: Date.now() + ttl,
      uri: `${origin()}/v1beta/${id}`,
      state: pending.mediaType === 'application/pdf' ? 'PROCESSING' : 'ACTIVE',
    };
    files.set(id, file);
    json(res, 200, { file: geminiFile(file) }, { 'x-goog-upload-status': 'final' });
  };

  const liveGemini = (id: string): StoredFile | undefined => {
    const f = files.get(id);
    if (f === undefined || f.api !== 'gemini') return undefined;
    if (f.expiresAt !== undefined && f.expiresAt <= Date.now()) {
      files.delete(id);
      return undefined;
    }
    return f;
  };
  const geminiDenied = (res: ServerResponse, id: string) =>
    json(res, 403, {
      error: {
        code: 403,
        message: `You do not have permission to access the File ${id.replace(/^files\//, '')} or it may not exist.`,
        status: 'PERMISSION_DENIED',
      },
    });

  const routes = (req: IncomingMessage, res: ServerResponse, body: Buffer): boolean => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (path === '/v1/files' && method === 'POST') {
      uploadBytes += body.length;
      if (req.headers['anthropic-version'] !== undefined) anthropicUpload(req, res, body);
      else openaiUpload(req, res, body);
      return true;
    }
    const v1 = /^\/v1\/files\/([^/]+)$/.exec(path);
    if (v1 && method === 'DELETE') {
      const id = decodeURIComponent(v1[1] as string);
      const anthropic = req.headers['anthropic-version'] !== undefined;
      const f = files.get(id);
      if (f === undefined || f.api !== (anthropic ? 'anthropic' : 'openai')) {
        if (anthropic)
          json(res, 404, {
            type: 'error',
            error: { type: 'not_found_error', message: `File ${id} not found.` },
          });
        else
          json(res, 404, {
            error: { message: `No such File object: ${id}`, type: 'invalid_request_error', param: 'id' },
          });
        return true;
      }
      files.delete(id);
      deletes.push(id);
      json(res, 200, anthropic ? { id, type: 'file_deleted' } : { id, object: 'file', deleted: true });
      return true;
    }
    if (path === '/upload/v1beta/files' && method === 'POST') {
      const token = url.searchParams.get('upload_id');
      if (token === null) {
        uploadBytes += body.length;
        geminiStart(req, res, body);
      } else geminiFinalize(req, res, body, token);
      return true;
    }
    const gem = /^\/v1beta\/(files\/[^/]+)$/.exec(path);
    if (gem) {
      const id = gem[1] as string;
      if (req.headers['x-goog-api-key'] !== key) {
        json(res, 400, { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } });
        return true;
      }
      const f = liveGemini(id);
      if (f === undefined) {
        geminiDenied(res, id);
        return true;
      }
      if (method === 'GET') {
        const shown = geminiFile(f);
        f.state = 'ACTIVE';
        json(res, 200, shown);
      } else if (method === 'DELETE') {
        files.delete(id);
        deletes.push(id);
        json(res, 200, {});
      } else json(res, 405, { error: { code: 405, message: 'method', status: 'INVALID_ARGUMENT' } });
      return true;
    }
    return false;
  };

  const refusal = (request: RecordedRequest): ScriptedTurn | undefined => {
    const refs = fileRefs(request.body);
    if (refs.length === 0) return undefined;
    if (request.surface === 'anthropic-messages') {
      const beta = String(request.headers['anthropic-beta'] ?? '')
        .split(',')
        .map((s) => s.trim());
      if (!beta.includes(BETA)) {
        return {
          type: 'http-error',
          status: 400,
          message: 'messages.0.content.0.source: file sources need the files-api beta',
        };
      }
      const missing = refs.find((r) => files.get(r)?.api !== 'anthropic');
      if (missing !== undefined)
        return {
          type: 'http-error',
          status: 404,
          errorType: 'not_found_error',
          message: `File ${missing} not found.`,
        };
    } else if (request.surface === 'openai-responses' || request.surface === 'openai-chat') {
      const missing = refs.find((r) => files.get(r)?.api !== 'openai');
      if (missing !== undefined)
        return { type: 'http-error', status: 404, message: `No such File object: ${missing}` };
    } else if (request.surface === 'gemini') {
      const prefix = `${origin()}/v1beta/`;
      for (const uri of refs) {
        const id = uri.startsWith(prefix) ? uri.slice(prefix.length) : uri;
        const f = liveGemini(id);
        if (f === undefined || f.state !== 'ACTIVE') {
          return {
            type: 'http-error',
            status: 403,
            errorType: 'PERMISSION_DENIED',
            message: `You do not have permission to access the File ${id.replace(/^files\//, '')} or it may not exist.`,
          };
        }
      }
    }
    return undefined;
  };

  return {
    routes,
    files,
    uploads,
    deletes,
    get uploadBytes() {
      return uploadBytes;
    },
    get abandoned() {
      return abandoned;
    },
    misbehave(how, count = 1) {
      misbehaviour.push({ how, left: count });
    },
    behave() {
      misbehaviour.length = 0;
    },
    drop(id) {
      files.delete(id);
    },
    expire(id) {
      const f = files.get(id);
      if (f) f.expiresAt = Date.now() - 1;
    },
    refusal,
    guard: (turn) => (request) => refusal(request) ?? turn,
  };
}

function stored(id: string, api: StoredFile['api'], part: MultipartPart): StoredFile {
  return {
    id,
    api,
    data: part.data,
    mediaType: part.type,
    filename: part.filename ?? '',
    sha256: createHash('sha256').update(part.data).digest('hex'),
  };
}

function geminiFile(f: StoredFile): Record<string, unknown> {
  return {
    name: f.id,
    displayName: f.filename,
    mimeType: f.mediaType,
    sizeBytes: String(f.data.length),
    createTime: new Date().toISOString(),
    updateTime: new Date().toISOString(),
    expirationTime: new Date(f.expiresAt ?? Date.now()).toISOString(),
    sha256Hash: Buffer.from(f.sha256, 'hex').toString('base64'),
    uri: f.uri,
    state: f.state,
    source: 'UPLOADED',
  };
}

/** Every file reference in a request body: Anthropic `source.file_id`, Responses `file_id`, Gemini `fileUri`. */
export function fileRefs(body: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    if (typeof o.file_id === 'string') out.push(o.file_id);
    if (typeof o.fileUri === 'string') out.push(o.fileUri);
    for (const x of Object.values(o)) walk(x);
  };
  walk(body);
  return out;
}

export interface MultipartPart {
  name: string;
  filename?: string;
  type: string;
  data: Buffer;
}

/** A `multipart/form-data` body, parsed: each part's name, file name, type and bytes. Throws on a malformed body. */
export function parseMultipart(req: IncomingMessage, body: Buffer): MultipartPart[] {
  const type = String(req.headers['content-type'] ?? '');
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(type);
  if (!/^multipart\/form-data/i.test(type) || boundary === null) return [];
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const chunk = body.subarray(start + 2, next - 2); // after CRLF, before the CRLF of the next delimiter
    const split = chunk.indexOf('\r\n\r\n');
    const head = chunk.subarray(0, split).toString('utf8');
    const data = chunk.subarray(split + 4);
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1] ?? '';
    const filename = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
    const partType = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim() ?? 'text/plain';
    parts.push(
      filename === undefined ? { name, type: partType, data } : { name, filename, type: partType, data },
    );
    at = next;
  }
  return parts;
}

/** A fake provider server with the Files APIs on the same port (Gemini's upload URLs and URIs name it). */
export async function startFilesServer(
  options: Omit<FakeFilesApiOptions, 'origin'> = {},
): Promise<{ server: import('./fake-provider-server.js').FakeProviderServer; files: FakeFilesApi }> {
  const { startFakeProviderServer } = await import('./fake-provider-server.js');
  let url = '';
  const files = createFakeFilesApi({ ...options, origin: () => url });
  const server = await startFakeProviderServer({ routes: files.routes });
  url = server.url;
  return { server, files };
}
