/**
 * `MCP error <code>: ` said once. The SDK's `McpError` puts it in front of its message; a server built on the SDK sends
 * that message as its error text, and the client's `McpError` adds its own: `MCP error -32602: MCP error -32602: …`.
 * Our server sends the bare text (`plainError`); our client says the code once whatever the server sent
 * (`onceCoded`).
 */

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** `message` with a repeated `MCP error <code>: ` prefix said once. */
export function onceCoded(message: string): string {
  return message.replace(/^(MCP error (-?\d+): )(?:MCP error \2: )+/, '$1');
}

/** An error response whose text starts with `MCP error <its code>: ` without that prefix; anything else as it is. */
export function plainError(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || typeof message.error?.message !== 'string') return message;
  const prefix = `MCP error ${message.error.code}: `;
  if (!message.error.message.startsWith(prefix)) return message;
  return { ...message, error: { ...message.error, message: message.error.message.slice(prefix.length) } };
}
