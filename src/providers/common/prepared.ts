/**
 * A conversation as one request will carry it (the output of `prepareConversation`, the input of every surface's
 * request builder): turns with their parts as they go out — stored parts, or text placeholders that replaced them.
 */

import type { AssistantMessage, DocumentPart, ImagePart } from '../../conversation.js';
import type { SerializeWarning } from './serialize-options.js';

export interface PreparedText {
  kind: 'text';
  text: string;
}

export interface PreparedImage {
  kind: 'image';
  part: ImagePart;
  key: string;
}

export interface PreparedDocument {
  kind: 'document';
  part: DocumentPart;
  key: string;
}

/** A stored part as it goes into this request: itself, or a text placeholder that replaced an image/PDF. */
export type PreparedPart = PreparedText | PreparedImage | PreparedDocument;

export interface PreparedResult {
  toolUseId: string;
  toolName: string;
  isError: boolean;
  parts: PreparedPart[];
  /** True for the error result sent in place of a missing one. */
  synthetic: boolean;
}

export type PreparedTurn =
  | { role: 'user'; parts: PreparedPart[] }
  | {
      role: 'assistant';
      message: AssistantMessage;
      /** The message came from the same wire API: its reasoning signatures and provider data may be echoed. */
      sameApi: boolean;
    }
  /** The results of one assistant turn's tool calls, in call order, one per call. */
  | { role: 'tool'; results: PreparedResult[] };

export interface PreparedConversation {
  /** The options' system prompt and every system message, joined by blank lines; undefined when there is none. */
  system: string | undefined;
  turns: PreparedTurn[];
  warnings: SerializeWarning[];
}
