/**
 * A history handed to `new Agent({ messages })` as the agent takes it. Its images/PDFs did not come through the media
 * pipeline or a session file's entry checks, so each is checked against its bytes once, here (media/stored-media.ts):
 * a part whose `mediaType`, `width`/`height` or base64 form is wrong is replaced by what its bytes say; a part whose
 * data is no image/PDF at all (or not base64, or empty) becomes a `[image omitted: …]` text part, reported as one
 * `unsupported-input` warning per reason. Messages without such parts are kept as they are (the same objects).
 */

import type { DocumentPart, ImagePart, Message, StoredPart } from '../conversation.js';
import { checkStoredMedia } from '../media/stored-media.js';
import type { AgentWarning } from './agent-events.js';

/** `messages` with their image/PDF parts checked, and the warnings for the parts replaced by a placeholder. */
export function takeHandedInHistory(messages: readonly Message[]): {
  messages: Message[];
  warnings: AgentWarning[];
} {
  const omitted = new Map<string, string[]>();
  const checkParts = (parts: readonly StoredPart[], at: string): StoredPart[] | undefined => {
    let out: StoredPart[] | undefined;
    parts.forEach((part, i) => {
      if (part?.type !== 'image' && part?.type !== 'document') return;
      const verdict = checkStoredMedia(part as ImagePart | DocumentPart);
      if (verdict.kind === 'ok') return;
      out ??= [...parts];
      if (verdict.kind === 'repaired') {
        out[i] = verdict.part;
        return;
      }
      out[i] = { type: 'text', text: `[${part.type} omitted: ${verdict.rejected}]` };
      const reason = `${part.type}: ${verdict.rejected}`;
      omitted.set(reason, [...(omitted.get(reason) ?? []), `${at}:${i}`]);
    });
    return out;
  };
  const out = messages.map((message, m): Message => {
    if (message?.role === 'user' && Array.isArray(message.content)) {
      const content = checkParts(message.content, `${m}:0`);
      return content === undefined ? message : { ...message, content };
    }
    if (message?.role === 'tool' && Array.isArray(message.results)) {
      let results: typeof message.results | undefined;
      message.results.forEach((result, r) => {
        if (!Array.isArray(result?.parts)) return;
        const parts = checkParts(result.parts, `${m}:${r}`);
        if (parts === undefined) return;
        results ??= [...message.results];
        results[r] = { ...result, parts };
      });
      return results === undefined ? message : { ...message, results };
    }
    return message;
  });
  const warnings = [...omitted].map(
    ([reason, parts]): AgentWarning => ({
      code: 'unsupported-input',
      message: `${parts.length} part${parts.length === 1 ? '' : 's'} of the handed-in history replaced by a placeholder: ${reason}`,
      parts,
    }),
  );
  return { messages: out, warnings };
}
