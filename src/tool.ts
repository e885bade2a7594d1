/**
 * The tool contract: what a tool declares and what it returns.
 *
 * Module-graph rule: this file imports only the leaf `errors.ts` (in particular never `conversation.ts`).
 */

import { PantoError } from './errors.js';

/** A JSON Schema object (draft 2020-12 / draft-07 subset that Ajv accepts). */
export type JsonSchema = { [key: string]: unknown };

/**
 * What the model is told about a tool (`name`, `description`, `inputSchema`, which must describe an object), and what
 * a host is told about it besides (never sent to a model).
 */
export interface ToolDecl {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /**
   * Each call must be approved before it runs (`approveToolCall` of the Agent, `approve` of `dispatchToolCalls`);
   * without an approver such calls run as any other.
   */
  needsApproval?: boolean;
  /**
   * What the tool may do that changes the world or reaches out of it (a Lua tool's declared `write_file`, `make_dir`,
   * `exec`, `fetch`), for a host deciding on approval (`panto chat --allow exec`).
   */
  capabilities?: readonly string[];
}

/** A text part of a tool result. */
export interface TextResultPart {
  type: 'text';
  text: string;
}

/**
 * A media part of a tool result: RAW file bytes (not base64). `mediaType` is only a hint — the agent sniffs the
 * bytes and corrects a wrong hint. Ownership of `data` passes to the agent; the tool must not mutate it afterwards.
 */
export interface MediaResultPart {
  type: 'media';
  data: Uint8Array;
  mediaType?: string;
  /** A file name shown to the model for documents (e.g. `report.pdf`). */
  name?: string;
}

/** What a tool returns, in order. */
export type ResultPart = TextResultPart | MediaResultPart;

/** A progress update a running tool may report (shown by hosts, never sent to a model). */
export interface ToolUpdate {
  message?: string;
  /** 0..1 when known. */
  progress?: number;
  [key: string]: unknown;
}

/** What a tool receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the turn is cancelled; a tool should stop promptly. */
  signal: AbortSignal;
  /** Absolute path of the workspace root that file access is confined to. */
  workspaceRoot: string;
  /** The id of the tool call being run. */
  toolCallId: string;
  /** Report progress; cheap, may be called any number of times. */
  update: (update: ToolUpdate) => void;
}

/**
 * What a tool's invoke may resolve to: parts, a plain string (one text part), or an object carrying parts plus
 * host-facing `meta` (persisted on the result, never sent to a model).
 */
export type ToolOutput = string | ResultPart[] | { parts: ResultPart[]; meta?: Record<string, unknown> };

export interface Tool extends ToolDecl {
  /**
   * Run the tool. `args` has been validated against `inputSchema` and is the call's own input object (stored in the
   * conversation): read it, do not mutate it. Throwing/rejecting turns into an error result the model can read.
   */
  invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> | ToolOutput;
}

/** Normalised output of a tool: parts plus optional meta. */
export interface NormalizedToolOutput {
  parts: ResultPart[];
  meta?: Record<string, unknown>;
}

/** Turn any `ToolOutput` into parts + meta. Throws `TypeError` for a value that is not a valid output. */
export function normalizeToolOutput(output: ToolOutput): NormalizedToolOutput {
  if (typeof output === 'string') return { parts: [{ type: 'text', text: output }] };
  if (Array.isArray(output)) return { parts: checkParts(output) };
  if (output !== null && typeof output === 'object' && Array.isArray(output.parts)) {
    const parts = checkParts(output.parts);
    if (output.meta === undefined) return { parts };
    if (!isPlainObject(output.meta)) {
      throw new TypeError(`tool returned meta as ${describe(output.meta)}; expected a plain object`);
    }
    return { parts, meta: output.meta };
  }
  throw new TypeError(
    `tool returned ${describe(output)}; expected a string, an array of parts or {parts, meta}`,
  );
}

function checkParts(parts: unknown[]): ResultPart[] {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const part = p as Partial<ResultPart> | null | undefined;
    if (part?.type === 'text' && typeof part.text === 'string') continue;
    if (part?.type === 'media' && part.data instanceof Uint8Array) {
      if (part.mediaType !== undefined && typeof part.mediaType !== 'string') {
        throw new TypeError(
          `part ${i} has mediaType ${describe(part.mediaType)}; expected a string such as 'image/png'`,
        );
      }
      if (part.name !== undefined && typeof part.name !== 'string') {
        throw new TypeError(
          `part ${i} has name ${describe(part.name)}; expected a string such as 'report.pdf'`,
        );
      }
      continue;
    }
    throw new TypeError(
      `part ${i} is ${describe(p)}; expected {type:'text', text} or {type:'media', data: Uint8Array}`,
    );
  }
  return parts as ResultPart[];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return `an object with keys [${Object.keys(v as object).join(', ')}]`;
  return `a ${typeof v}`;
}

/**
 * Define a tool in TypeScript. Returns the same object, typed. Throws `PantoError` `ERR_INVALID_ARGUMENT` when the
 * name is not one every provider accepts (`^[a-zA-Z0-9_-]{1,64}$`), the description is not a string, `inputSchema`
 * is not an object schema (`type: 'object'`, what every provider requires of tool parameters) or `invoke` is not a
 * function.
 */
export function defineTool<A extends Record<string, unknown> = Record<string, unknown>>(tool: {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** Each call must be approved before it runs (see `ToolDecl.needsApproval`). */
  needsApproval?: boolean;
  /** What the tool may change or reach (see `ToolDecl.capabilities`). */
  capabilities?: readonly string[];
  invoke: (args: A, ctx: ToolContext) => Promise<ToolOutput> | ToolOutput;
}): Tool {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `tool name '${tool.name}' must match ^[a-zA-Z0-9_-]{1,64}$ (what every provider accepts)`,
    );
  }
  if (typeof tool.description !== 'string') {
    throw new PantoError('ERR_INVALID_ARGUMENT', `tool '${tool.name}': description must be a string`);
  }
  if (!isPlainObject(tool.inputSchema) || tool.inputSchema.type !== 'object') {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `tool '${tool.name}': inputSchema must be a JSON Schema object with type 'object' (providers require it), got ${describe(tool.inputSchema)}`,
    );
  }
  if (typeof tool.invoke !== 'function') {
    throw new PantoError('ERR_INVALID_ARGUMENT', `tool '${tool.name}': invoke must be a function`);
  }
  if (tool.needsApproval !== undefined && typeof tool.needsApproval !== 'boolean') {
    throw new PantoError('ERR_INVALID_ARGUMENT', `tool '${tool.name}': needsApproval must be a boolean`);
  }
  if (
    tool.capabilities !== undefined &&
    (!Array.isArray(tool.capabilities) || tool.capabilities.some((c) => typeof c !== 'string'))
  ) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `tool '${tool.name}': capabilities must be a list of strings`,
    );
  }
  return tool as Tool;
}
