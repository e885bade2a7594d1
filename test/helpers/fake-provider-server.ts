/**
 * A real HTTP server on 127.0.0.1 (port 0) that speaks the streaming protocol of each provider surface from scripted
 * turns, for transport and agent tests. It records every request (path, headers, parsed JSON body).
 *
 * The surface is chosen by the request path, as the real services route it:
 * - `POST …/v1/messages` → Anthropic Messages SSE (events typed against @anthropic-ai/sdk `RawMessageStreamEvent`);
 * - `POST …/chat/completions` → OpenAI Chat SSE (`ChatCompletionChunk`, `data: [DONE]`);
 * - `POST …/responses` → OpenAI Responses SSE (`ResponseStreamEvent`);
 * - `POST …/models/{model}:streamGenerateContent?alt=sse` → Gemini SSE (`GenerateContentResponse` chunks, CRLF
 *   line endings like the real service).
 *
 * Each request consumes the next scripted turn (a value or a function of the recorded request). With no turn left the
 * server answers 500 naming the problem, so a test that loops fails loudly instead of hanging.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import type { GenerateContentResponse } from '@google/genai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions/completions';
import type { Response as OpenAIResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';

export type Surface = 'anthropic-messages' | 'openai-chat' | 'openai-responses' | 'gemini';

export interface ScriptedCall {
  /** Call id; generated when absent (Gemini: omitted from the wire unless given). */
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

export type ScriptedTurn =
  /** A streamed answer: thinking, then text, then tool calls. */
  | {
      type: 'reply';
      text?: string;
      thinking?: string;
      toolCalls?: ScriptedCall[];
      /** Stop reason in surface-neutral words. Default `end`, or `tool_use` when there are calls. */
      stop?: 'end' | 'tool_use' | 'max_tokens';
      /**
       * Token counts. `input` is the uncached input; `cacheRead` / `cacheWrite` are reported in each surface's
       * fields (Anthropic `cache_read_input_tokens` / `cache_creation_input_tokens`; OpenAI and Gemini cached tokens,
       * which they count inside their prompt total).
       */
      usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
      /** Split the body into writes of this many bytes (exercises chunk boundaries). Default: one write per event. */
      chunkBytes?: number;
      /**
       * Cut the connection mid-stream: write only the first `cut` frames (a negative number: all but the last
       * `-cut`), then end the response without the rest, as a dropped connection looks to the client.
       */
      cut?: number;
    }
  /** An HTTP error with the surface's error body. */
  | {
      type: 'http-error';
      status: number;
      message: string;
      errorType?: string;
      headers?: Record<string, string>;
    }
  /** A 200 stream that starts, sends `text`, then carries the surface's in-stream error event. */
  | { type: 'stream-error'; message: string; errorType?: string; text?: string }
  /** A 200 stream that starts, sends `text`, then sends nothing more and never ends (until the client leaves). */
  | { type: 'stall'; text?: string }
  /** Any raw response. */
  | { type: 'raw'; status?: number; headers?: Record<string, string>; body: string };

export interface RecordedRequest {
  surface: Surface;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body (or undefined when it was not JSON). */
  body: Record<string, unknown>;
  /** Model id: the body's `model`, or the Gemini path segment. */
  model: string;
}

export type TurnScript = ScriptedTurn | ((request: RecordedRequest) => ScriptedTurn);

export interface FakeProviderServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Base URL a provider of `surface` should be given (OpenAI surfaces include `/v1`). */
  baseUrl(surface: Surface): string;
  readonly requests: RecordedRequest[];
  /** Connections the client closed before the response ended (abort, cancel). */
  readonly clientDisconnects: number;
  enqueue(...turns: TurnScript[]): void;
  /** Turns still queued. */
  readonly pending: number;
  /** Drop the queued turns; returns how many there were. */
  reset(): number;
  close(): Promise<void>;
}

export interface FakeProviderServerOptions {
  /**
   * Other routes (e.g. a Files API, test/helpers/fake-files-api.ts): called with every request's whole body before
   * the surface routes; true when it answered.
   */
  routes?: (req: IncomingMessage, res: ServerResponse, body: Buffer) => boolean;
}

export async function startFakeProviderServer(
  options: FakeProviderServerOptions = {},
): Promise<FakeProviderServer> {
  const queue: TurnScript[] = [];
  const requests: RecordedRequest[] = [];
  const open = new Set<ServerResponse>();
  let disconnects = 0;
  let seq = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      if (options.routes?.(req, res, bytes)) return;
      const raw = bytes.toString('utf8');
      const path = req.url ?? '/';
      const surface = surfaceOf(path);
      if (surface === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake server: no route for ${path}` } }));
        return;
      }
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        // leave empty; a test can inspect `raw` via headers if ever needed
      }
      const gemModel = /\/models\/([^/:]+):streamGenerateContent/.exec(path)?.[1];
      const model = typeof body.model === 'string' ? body.model : decodeURIComponent(gemModel ?? '');
      const recorded: RecordedRequest = {
        surface,
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body,
        model,
      };
      requests.push(recorded);
      const script = queue.shift();
      if (script === undefined) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: 'fake server: no scripted turn left', type: 'test_error' } }),
        );
        return;
      }
      const turn = typeof script === 'function' ? script(recorded) : script;
      open.add(res);
      res.on('close', () => {
        if (!res.writableFinished) disconnects++;
        open.delete(res);
      });
      respond(res, surface, model, turn, ++seq);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseUrl: (surface) =>
      surface === 'openai-chat' || surface === 'openai-responses'
        ? `${url}/v1`
        : surface === 'gemini'
          ? `${url}/v1beta`
          : url,
    requests,
    get clientDisconnects() {
      return disconnects;
    },
    enqueue: (...turns) => {
      queue.push(...turns);
    },
    get pending() {
      return queue.length;
    },
    reset: () => queue.splice(0).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function surfaceOf(path: string): Surface | undefined {
  const p = path.split('?')[0] ?? '';
  if (p.endsWith('/v1/messages')) return 'anthropic-messages';
  if (p.endsWith('/chat/completions')) return 'openai-chat';
  if (p.endsWith('/responses')) return 'openai-responses';
  if (/\/models\/[^/]+:streamGenerateContent$/.test(p)) return 'gemini';
  return undefined;
}

function respond(res: ServerResponse, surface: Surface, model: string, turn: ScriptedTurn, n: number): void {
  switch (turn.type) {
    case 'raw':
      res.writeHead(turn.status ?? 200, { 'content-type': 'text/event-stream', ...turn.headers });
      res.end(turn.body);
      return;
    case 'http-error':
      res.writeHead(turn.status, { 'content-type': 'application/json', ...turn.headers });
      res.end(JSON.stringify(errorBody(surface, turn.status, turn.message, turn.errorType)));
      return;
    case 'reply': {
      let frames = renderReply(surface, model, turn, n);
      startStream(res);
      if (turn.cut !== undefined) {
        frames = frames.slice(0, turn.cut >= 0 ? turn.cut : frames.length + turn.cut);
        for (const f of frames) res.write(f);
        // Abrupt end: no terminal event; destroy so the client sees the connection go.
        setTimeout(() => res.destroy(), 20);
        return;
      }
      const body = frames.join('');
      const size = turn.chunkBytes;
      if (size === undefined) {
        for (const f of frames) res.write(f);
      } else {
        const bytes = Buffer.from(body, 'utf8');
        for (let i = 0; i < bytes.length; i += size) res.write(bytes.subarray(i, i + size));
      }
      res.end();
      return;
    }
    case 'stream-error': {
      startStream(res);
      for (const f of openingFrames(surface, model, n, turn.text)) res.write(f);
      res.end(streamErrorFrame(surface, turn.message, turn.errorType));
      return;
    }
    case 'stall': {
      startStream(res);
      for (const f of openingFrames(surface, model, n, turn.text)) res.write(f);
      // Never end: the client must abort (or time out).
      return;
    }
  }
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

// ---- frames -------------------------------------------------------------------------------------------------------

const sse = (event: string | undefined, data: unknown, eol = '\n') =>
  `${event === undefined ? '' : `event: ${event}${eol}`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}${eol}${eol}`;

const anthropicFrame = (e: RawMessageStreamEvent) => sse(e.type, e);
const chatFrame = (c: ChatCompletionChunk) => sse(undefined, c);
const responsesFrame = (e: ResponseStreamEvent) => sse(e.type, e);
const geminiFrame = (c: GenerateContentResponse) => sse(undefined, c, '\r\n');

/** Split a string into a few pieces, as providers stream it. */
function pieces(s: string, n = 3): string[] {
  if (s.length <= 1) return [s];
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function callId(surface: Surface, n: number, i: number, call: ScriptedCall): string {
  if (call.id !== undefined) return call.id;
  return surface === 'anthropic-messages' ? `toolu_${n}_${i}` : `call_${n}_${i}`;
}

function renderReply(
  surface: Surface,
  model: string,
  turn: Extract<ScriptedTurn, { type: 'reply' }>,
  n: number,
): string[] {
  const calls = turn.toolCalls ?? [];
  const stop = turn.stop ?? (calls.length > 0 ? 'tool_use' : 'end');
  const usage = turn.usage ?? { input: 100, output: 20 };
  const input: ReplyInput = { model, turn, calls, stop, usage, n };
  switch (surface) {
    case 'anthropic-messages':
      return renderAnthropic(input);
    case 'openai-chat':
      return renderChat(input);
    case 'openai-responses':
      return renderResponses(input);
    case 'gemini':
      return renderGemini(input);
  }
}

type Stop = 'end' | 'tool_use' | 'max_tokens';
type Reply = Extract<ScriptedTurn, { type: 'reply' }>;
type U = { input: number; output: number; cacheRead?: number; cacheWrite?: number };

/** A scripted reply with its defaults filled in (calls, stop reason, usage), as every surface's renderer takes it. */
interface ReplyInput {
  model: string;
  turn: Reply;
  calls: ScriptedCall[];
  stop: Stop;
  usage: U;
  /** Request number, for ids. */
  n: number;
}

function anthropicStart(model: string, n: number, input: number, usage?: U): RawMessageStreamEvent {
  return {
    type: 'message_start',
    message: {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      content: [],
      model,
      container: null,
      diagnostics: null,
      stop_details: null,
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: input,
        output_tokens: 1,
        cache_creation: null,
        cache_creation_input_tokens: usage?.cacheWrite ?? null,
        cache_read_input_tokens: usage?.cacheRead ?? null,
        inference_geo: null,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: 'standard',
        speed: null,
      },
    },
  };
}

function renderAnthropic({ model, turn, calls, stop, usage, n }: ReplyInput): string[] {
  const out = [anthropicFrame(anthropicStart(model, n, usage.input, usage)), sse('ping', { type: 'ping' })];
  let index = 0;
  if (turn.thinking !== undefined) {
    out.push(
      anthropicFrame({
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
    );
    for (const p of pieces(turn.thinking)) {
      out.push(
        anthropicFrame({
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking: p },
        }),
      );
    }
    out.push(
      anthropicFrame({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: `sig_${n}` },
      }),
    );
    out.push(anthropicFrame({ type: 'content_block_stop', index }));
    index++;
  }
  if (turn.text !== undefined) {
    out.push(
      anthropicFrame({
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '', citations: null },
      }),
    );
    for (const p of pieces(turn.text)) {
      out.push(
        anthropicFrame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } }),
      );
    }
    out.push(anthropicFrame({ type: 'content_block_stop', index }));
    index++;
  }
  calls.forEach((call, i) => {
    out.push(
      anthropicFrame({
        type: 'content_block_start',
        index,
        content_block: {
          type: 'tool_use',
          id: callId('anthropic-messages', n, i, call),
          name: call.name,
          input: {},
          caller: { type: 'direct' },
        },
      }),
    );
    // The docs' example starts with an empty partial_json.
    for (const p of ['', ...pieces(JSON.stringify(call.args), 4)]) {
      out.push(
        anthropicFrame({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: p },
        }),
      );
    }
    out.push(anthropicFrame({ type: 'content_block_stop', index }));
    index++;
  });
  out.push(
    anthropicFrame({
      type: 'message_delta',
      delta: {
        stop_reason: stop === 'end' ? 'end_turn' : stop,
        stop_sequence: null,
        container: null,
        stop_details: null,
      },
      usage: {
        output_tokens: usage.output,
        input_tokens: null,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        output_tokens_details: null,
        server_tool_use: null,
      },
    }),
  );
  out.push(anthropicFrame({ type: 'message_stop' }));
  return out;
}

function chatChunk(
  model: string,
  n: number,
  choices: ChatCompletionChunk['choices'],
  usage?: U,
): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = {
    id: `chatcmpl-${n}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices,
  };
  if (usage !== undefined) {
    const cached = usage.cacheRead ?? 0;
    chunk.usage = {
      prompt_tokens: usage.input + cached,
      completion_tokens: usage.output,
      total_tokens: usage.input + cached + usage.output,
      ...(cached > 0 ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    };
  }
  return chunk;
}

function renderChat({ model, turn, calls, stop, usage, n }: ReplyInput): string[] {
  const out = [
    chatFrame(
      chatChunk(model, n, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    ),
  ];
  if (turn.thinking !== undefined) {
    // reasoning_content: the field DeepSeek, llama.cpp and vLLM stream (not in the OpenAI types).
    for (const p of pieces(turn.thinking)) {
      const delta = { reasoning_content: p } as ChatCompletionChunk.Choice.Delta;
      out.push(chatFrame(chatChunk(model, n, [{ index: 0, delta, finish_reason: null }])));
    }
  }
  for (const p of turn.text === undefined ? [] : pieces(turn.text)) {
    out.push(chatFrame(chatChunk(model, n, [{ index: 0, delta: { content: p }, finish_reason: null }])));
  }
  calls.forEach((call, i) => {
    out.push(
      chatFrame(
        chatChunk(model, n, [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: i,
                  id: callId('openai-chat', n, i, call),
                  type: 'function',
                  function: { name: call.name, arguments: '' },
                },
              ],
            },
            finish_reason: null,
          },
        ]),
      ),
    );
    for (const p of pieces(JSON.stringify(call.args), 4)) {
      out.push(
        chatFrame(
          chatChunk(model, n, [
            {
              index: 0,
              delta: { tool_calls: [{ index: i, function: { arguments: p } }] },
              finish_reason: null,
            },
          ]),
        ),
      );
    }
  });
  const finish = stop === 'tool_use' ? 'tool_calls' : stop === 'max_tokens' ? 'length' : 'stop';
  out.push(chatFrame(chatChunk(model, n, [{ index: 0, delta: {}, finish_reason: finish }])));
  out.push(chatFrame(chatChunk(model, n, [], usage)));
  out.push(sse(undefined, '[DONE]'));
  return out;
}

function responseObject(
  model: string,
  n: number,
  status: NonNullable<OpenAIResponse['status']>,
  output: OpenAIResponse['output'],
  usage?: U,
): OpenAIResponse {
  const r: OpenAIResponse = {
    id: `resp_${n}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    access_programs: null,
    output_text: '',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    model,
    output,
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
  };
  if (usage !== undefined) {
    r.usage = {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    };
  }
  return r;
}

function renderResponses({ model, turn, calls, stop, usage, n }: ReplyInput): string[] {
  let seqNo = 0;
  const s = () => seqNo++;
  const out = [
    responsesFrame({
      type: 'response.created',
      sequence_number: s(),
      response: responseObject(model, n, 'in_progress', []),
    }),
    responsesFrame({
      type: 'response.in_progress',
      sequence_number: s(),
      response: responseObject(model, n, 'in_progress', []),
    }),
  ];
  const output: OpenAIResponse['output'] = [];
  let oi = 0;
  if (turn.thinking !== undefined) {
    const id = `rs_${n}`;
    out.push(
      responsesFrame({
        type: 'response.output_item.added',
        sequence_number: s(),
        output_index: oi,
        item: { type: 'reasoning', id, summary: [] },
      }),
    );
    out.push(
      responsesFrame({
        type: 'response.reasoning_summary_part.added',
        sequence_number: s(),
        item_id: id,
        output_index: oi,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      }),
    );
    for (const p of pieces(turn.thinking)) {
      out.push(
        responsesFrame({
          type: 'response.reasoning_summary_text.delta',
          sequence_number: s(),
          item_id: id,
          output_index: oi,
          summary_index: 0,
          delta: p,
        }),
      );
    }
    const item = {
      type: 'reasoning' as const,
      id,
      summary: [{ type: 'summary_text' as const, text: turn.thinking }],
      encrypted_content: `enc_${n}`,
    };
    out.push(
      responsesFrame({ type: 'response.output_item.done', sequence_number: s(), output_index: oi, item }),
    );
    output.push(item);
    oi++;
  }
  if (turn.text !== undefined) {
    const id = `msg_${n}`;
    out.push(
      responsesFrame({
        type: 'response.output_item.added',
        sequence_number: s(),
        output_index: oi,
        item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
      }),
    );
    out.push(
      responsesFrame({
        type: 'response.content_part.added',
        sequence_number: s(),
        item_id: id,
        output_index: oi,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    );
    for (const p of pieces(turn.text)) {
      out.push(
        responsesFrame({
          type: 'response.output_text.delta',
          sequence_number: s(),
          item_id: id,
          output_index: oi,
          content_index: 0,
          delta: p,
          logprobs: [],
        }),
      );
    }
    out.push(
      responsesFrame({
        type: 'response.output_text.done',
        sequence_number: s(),
        item_id: id,
        output_index: oi,
        content_index: 0,
        text: turn.text,
        logprobs: [],
      }),
    );
    const item = {
      type: 'message' as const,
      id,
      status: 'completed' as const,
      role: 'assistant' as const,
      content: [{ type: 'output_text' as const, text: turn.text, annotations: [] }],
    };
    out.push(
      responsesFrame({ type: 'response.output_item.done', sequence_number: s(), output_index: oi, item }),
    );
    output.push(item);
    oi++;
  }
  calls.forEach((call, i) => {
    const id = `fc_${n}_${i}`;
    const args = JSON.stringify(call.args);
    const callIdStr = callId('openai-responses', n, i, call);
    out.push(
      responsesFrame({
        type: 'response.output_item.added',
        sequence_number: s(),
        output_index: oi,
        item: {
          type: 'function_call',
          id,
          call_id: callIdStr,
          name: call.name,
          arguments: '',
          status: 'in_progress',
        },
      }),
    );
    for (const p of pieces(args, 4)) {
      out.push(
        responsesFrame({
          type: 'response.function_call_arguments.delta',
          sequence_number: s(),
          item_id: id,
          output_index: oi,
          delta: p,
        }),
      );
    }
    out.push(
      responsesFrame({
        type: 'response.function_call_arguments.done',
        sequence_number: s(),
        item_id: id,
        output_index: oi,
        arguments: args,
      }),
    );
    const item = {
      type: 'function_call' as const,
      id,
      call_id: callIdStr,
      name: call.name,
      arguments: args,
      status: 'completed' as const,
    };
    out.push(
      responsesFrame({ type: 'response.output_item.done', sequence_number: s(), output_index: oi, item }),
    );
    output.push(item);
    oi++;
  });
  if (stop === 'max_tokens') {
    const r = responseObject(model, n, 'incomplete', output, usage);
    r.incomplete_details = { reason: 'max_output_tokens' };
    out.push(responsesFrame({ type: 'response.incomplete', sequence_number: s(), response: r }));
  } else {
    out.push(
      responsesFrame({
        type: 'response.completed',
        sequence_number: s(),
        response: responseObject(model, n, 'completed', output, usage),
      }),
    );
  }
  return out;
}

function geminiChunk(
  model: string,
  parts: NonNullable<NonNullable<GenerateContentResponse['candidates']>[number]['content']>['parts'],
  finish?: string,
  usage?: U,
): GenerateContentResponse {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  if (finish !== undefined) candidate.finishReason = finish;
  const chunk: Record<string, unknown> = {
    candidates: [candidate],
    modelVersion: model,
    responseId: 'gem_resp',
  };
  if (usage !== undefined) {
    chunk.usageMetadata = {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      totalTokenCount: usage.input + usage.output,
    };
  }
  return chunk as unknown as GenerateContentResponse;
}

function renderGemini({ model, turn, calls, stop, usage, n }: ReplyInput): string[] {
  const out: string[] = [];
  if (turn.thinking !== undefined) {
    for (const p of pieces(turn.thinking))
      out.push(geminiFrame(geminiChunk(model, [{ text: p, thought: true }])));
  }
  for (const p of turn.text === undefined ? [] : pieces(turn.text))
    out.push(geminiFrame(geminiChunk(model, [{ text: p }])));
  const finish = stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
  const parts = calls.map((call, i) => ({
    functionCall: { ...(call.id === undefined ? {} : { id: call.id }), name: call.name, args: call.args },
    ...(i === 0 ? { thoughtSignature: `gsig_${n}` } : {}),
  }));
  out.push(geminiFrame(geminiChunk(model, parts.length > 0 ? parts : [{ text: '' }], finish, usage)));
  return out;
}

/** The first frames of a stream (message start, optional text), for stall and in-stream error turns. */
function openingFrames(surface: Surface, model: string, n: number, text: string | undefined): string[] {
  switch (surface) {
    case 'anthropic-messages': {
      const out = [anthropicFrame(anthropicStart(model, n, 10))];
      if (text !== undefined) {
        out.push(
          anthropicFrame({
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'text', text: '', citations: null },
          }),
        );
        out.push(
          anthropicFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
        );
      }
      return out;
    }
    case 'openai-chat': {
      const out = [
        chatFrame(
          chatChunk(model, n, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
        ),
      ];
      if (text !== undefined)
        out.push(
          chatFrame(chatChunk(model, n, [{ index: 0, delta: { content: text }, finish_reason: null }])),
        );
      return out;
    }
    case 'openai-responses': {
      const out = [
        responsesFrame({
          type: 'response.created',
          sequence_number: 0,
          response: responseObject(model, n, 'in_progress', []),
        }),
      ];
      if (text !== undefined) {
        out.push(
          responsesFrame({
            type: 'response.output_item.added',
            sequence_number: 1,
            output_index: 0,
            item: { type: 'message', id: `msg_${n}`, status: 'in_progress', role: 'assistant', content: [] },
          }),
        );
        out.push(
          responsesFrame({
            type: 'response.output_text.delta',
            sequence_number: 2,
            item_id: `msg_${n}`,
            output_index: 0,
            content_index: 0,
            delta: text,
            logprobs: [],
          }),
        );
      }
      return out;
    }
    case 'gemini':
      return text === undefined ? [] : [geminiFrame(geminiChunk(model, [{ text }]))];
  }
}

function streamErrorFrame(surface: Surface, message: string, errorType?: string): string {
  switch (surface) {
    case 'anthropic-messages':
      return sse('error', { type: 'error', error: { type: errorType ?? 'overloaded_error', message } });
    case 'openai-chat':
      return sse(undefined, { error: { message, type: errorType ?? 'server_error' } });
    case 'openai-responses':
      return sse('error', {
        type: 'error',
        code: errorType ?? 'server_error',
        message,
        param: null,
        sequence_number: 9,
      });
    case 'gemini':
      return sse(undefined, { error: { code: 503, message, status: errorType ?? 'UNAVAILABLE' } }, '\r\n');
  }
}

/** The error body each surface returns with a 4xx/5xx. */
export function errorBody(surface: Surface, status: number, message: string, errorType?: string): unknown {
  switch (surface) {
    case 'anthropic-messages': {
      const type =
        errorType ??
        (status === 429
          ? 'rate_limit_error'
          : status === 529
            ? 'overloaded_error'
            : status === 401
              ? 'authentication_error'
              : status >= 500
                ? 'api_error'
                : 'invalid_request_error');
      return { type: 'error', error: { type, message }, request_id: 'req_fake' };
    }
    case 'openai-chat':
    case 'openai-responses':
      return {
        error: {
          message,
          type: errorType ?? (status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error'),
          param: null,
          code: null,
        },
      };
    case 'gemini':
      return {
        error: {
          code: status,
          message,
          status: errorType ?? (status === 429 ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARGUMENT'),
        },
      };
  }
}
