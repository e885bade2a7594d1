/**
 * The official MCP SDK, loaded when an MCP feature is first used instead of when libpanto is imported.
 *
 * The SDK with zod costs ~25 MB of heap and ~300 ms to load; a host that only serializes requests or processes media
 * must not pay that. `McpConnection.start`, `serveMcpStdio` and `serveMcpHttp` are asynchronous and `await` the SDK
 * here (`import()`). `createMcpServer` is synchronous (it returns an SDK `Server`), so it takes the server half
 * synchronously: already loaded → that module; otherwise `require()` of the SDK's ESM files (Node ≥ 20.19 / 22.12,
 * `process.features.require_module`), which shares the module instances `import()` gives; on a Node without
 * require(esm) (22.0–22.11) the SDK's CommonJS build (same API; its classes are then distinct from the ESM ones).
 *
 * Each loader resolves once; later calls return the same modules.
 */

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as ClientIndex from '@modelcontextprotocol/sdk/client/index.js';
import type * as ClientHttp from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as ServerIndex from '@modelcontextprotocol/sdk/server/index.js';
import type * as Types from '@modelcontextprotocol/sdk/types.js';
import type * as ClientStdio from './stdio-client-transport.js';
import type * as ServerStdio from './stdio-server-transport.js';

/** What the client side (`McpConnection`) uses. */
export interface ClientSdk {
  Client: typeof ClientIndex.Client;
  StdioClientTransport: typeof ClientStdio.StdioClientTransport;
  StreamableHTTPClientTransport: typeof ClientHttp.StreamableHTTPClientTransport;
  ErrorCode: typeof Types.ErrorCode;
  McpError: typeof Types.McpError;
  LoggingMessageNotificationSchema: typeof Types.LoggingMessageNotificationSchema;
  ToolListChangedNotificationSchema: typeof Types.ToolListChangedNotificationSchema;
}

/** What `createMcpServer` uses. */
export interface ServerSdk {
  Server: typeof ServerIndex.Server;
  CallToolRequestSchema: typeof Types.CallToolRequestSchema;
  ListToolsRequestSchema: typeof Types.ListToolsRequestSchema;
  ErrorCode: typeof Types.ErrorCode;
  McpError: typeof Types.McpError;
}

/** What `serveMcpStdio` / `serveMcpHttp` use besides the server. */
export interface ServeSdk {
  StdioServerTransport: typeof ServerStdio.StdioServerTransport;
  isInitializeRequest: typeof Types.isInitializeRequest;
  JSONRPCMessageSchema: typeof Types.JSONRPCMessageSchema;
  SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
}

let clientLoading: Promise<ClientSdk> | undefined;
let clientLoaded: ClientSdk | undefined;
let serverLoading: Promise<ServerSdk> | undefined;
let serverLoaded: ServerSdk | undefined;
let serveLoading: Promise<ServeSdk> | undefined;

/** The client half of the SDK (and our stdio transport, whose framing imports the SDK's message schema). */
export function clientSdk(): Promise<ClientSdk> {
  clientLoading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('./stdio-client-transport.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, stdio, http, types]) => {
    clientLoaded = {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      ErrorCode: types.ErrorCode,
      McpError: types.McpError,
      LoggingMessageNotificationSchema: types.LoggingMessageNotificationSchema,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    };
    return clientLoaded;
  });
  return clientLoading;
}

/** The client half when it is already loaded (after a `clientSdk()` resolved), else undefined. */
export function loadedClientSdk(): ClientSdk | undefined {
  return clientLoaded;
}

function toServerSdk(server: typeof ServerIndex, types: typeof Types): ServerSdk {
  return {
    Server: server.Server,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
  };
}

/** The server half of the SDK, loaded with `import()`. */
export function serverSdk(): Promise<ServerSdk> {
  serverLoading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, types]) => {
    serverLoaded ??= toServerSdk(server, types);
    return serverLoaded;
  });
  return serverLoading;
}

/** The server half of the SDK, synchronously (see the module comment for how). */
export function serverSdkSync(): ServerSdk {
  if (serverLoaded) return serverLoaded;
  const require = createRequire(import.meta.url);
  const load = <T>(specifier: string): T =>
    process.features.require_module
      ? (require(fileURLToPath(import.meta.resolve(specifier))) as T)
      : (require(specifier) as T);
  serverLoaded = toServerSdk(
    load<typeof ServerIndex>('@modelcontextprotocol/sdk/server/index.js'),
    load<typeof Types>('@modelcontextprotocol/sdk/types.js'),
  );
  return serverLoaded;
}

/** The server transports, with the server half. */
export function serveSdk(): Promise<ServeSdk> {
  serveLoading ??= Promise.all([
    import('./stdio-server-transport.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    serverSdk(),
  ]).then(([stdio, types]) => ({
    StdioServerTransport: stdio.StdioServerTransport,
    isInitializeRequest: types.isInitializeRequest,
    JSONRPCMessageSchema: types.JSONRPCMessageSchema,
    SUPPORTED_PROTOCOL_VERSIONS: types.SUPPORTED_PROTOCOL_VERSIONS,
  }));
  return serveLoading;
}
