/**
 * The official MCP SDK (v2: `@modelcontextprotocol/client`, `@modelcontextprotocol/server`), loaded when an MCP
 * feature is first used instead of when libpanto is imported.
 *
 * The SDK with zod costs ~15 MB of heap and ~250 ms to load; a host that only serializes requests or processes media
 * must not pay that. `McpConnection.start`, `serveMcpStdio` and `serveMcpHttp` are asynchronous and `await` the SDK
 * here (`import()`). `createMcpServer` is synchronous (it returns an SDK `Server`), so it takes the server half
 * synchronously: already loaded → that module; otherwise `require()` of the SDK's ESM file (Node ≥ 20.19 / 22.12,
 * `process.features.require_module`), which shares the module instance `import()` gives; on a Node without
 * require(esm) (22.0–22.11) the package's CommonJS build (same API; its classes are then distinct from the ESM ones).
 *
 * Each loader resolves once; later calls return the same modules.
 */

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as ClientPackage from '@modelcontextprotocol/client';
import type * as ServerPackage from '@modelcontextprotocol/server';
import type * as ServerStdioPackage from '@modelcontextprotocol/server/stdio';
import type * as ClientStdio from './stdio-client-transport.js';
import type * as ServerStdio from './stdio-server-transport.js';

/** What the client side (`McpConnection`) uses. */
export interface ClientSdk {
  Client: typeof ClientPackage.Client;
  StdioClientTransport: typeof ClientStdio.StdioClientTransport;
  StreamableHTTPClientTransport: typeof ClientPackage.StreamableHTTPClientTransport;
  ProtocolError: typeof ClientPackage.ProtocolError;
  SdkError: typeof ClientPackage.SdkError;
  SdkErrorCode: typeof ClientPackage.SdkErrorCode;
  parseJSONRPCMessage: typeof ClientPackage.parseJSONRPCMessage;
}

/** What `createMcpServer` uses. */
export interface ServerSdk {
  Server: typeof ServerPackage.Server;
  ProtocolError: typeof ServerPackage.ProtocolError;
  ProtocolErrorCode: typeof ServerPackage.ProtocolErrorCode;
}

/** What `serveMcpStdio` / `serveMcpHttp` use besides the server. */
export interface ServeSdk {
  StdioServerTransport: typeof ServerStdio.StdioServerTransport;
  serveStdio: typeof ServerStdioPackage.serveStdio;
  createMcpHandler: typeof ServerPackage.createMcpHandler;
  isLegacyRequest: typeof ServerPackage.isLegacyRequest;
  isInitializeRequest: typeof ServerPackage.isInitializeRequest;
  parseJSONRPCMessage: typeof ServerPackage.parseJSONRPCMessage;
  /** The 2025-era versions a session may negotiate. */
  SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
}

let clientLoading: Promise<ClientSdk> | undefined;
let clientLoaded: ClientSdk | undefined;
let serverLoading: Promise<ServerSdk> | undefined;
let serverLoaded: ServerSdk | undefined;
let serveLoading: Promise<ServeSdk> | undefined;

/** The client package (and our stdio transport). */
export function clientSdk(): Promise<ClientSdk> {
  clientLoading ??= Promise.all([
    import('@modelcontextprotocol/client'),
    import('./stdio-client-transport.js'),
  ]).then(([client, stdio]) => {
    clientLoaded = {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
      ProtocolError: client.ProtocolError,
      SdkError: client.SdkError,
      SdkErrorCode: client.SdkErrorCode,
      parseJSONRPCMessage: client.parseJSONRPCMessage,
    };
    return clientLoaded;
  });
  return clientLoading;
}

/** The client half when it is already loaded (after a `clientSdk()` resolved), else undefined. */
export function loadedClientSdk(): ClientSdk | undefined {
  return clientLoaded;
}

function toServerSdk(server: typeof ServerPackage): ServerSdk {
  return {
    Server: server.Server,
    ProtocolError: server.ProtocolError,
    ProtocolErrorCode: server.ProtocolErrorCode,
  };
}

/** The server package, loaded with `import()`. */
export function serverSdk(): Promise<ServerSdk> {
  serverLoading ??= import('@modelcontextprotocol/server').then((server) => {
    serverLoaded ??= toServerSdk(server);
    return serverLoaded;
  });
  return serverLoading;
}

/** The server package, synchronously (see the module comment for how). */
export function serverSdkSync(): ServerSdk {
  if (serverLoaded) return serverLoaded;
  const require = createRequire(import.meta.url);
  const specifier = '@modelcontextprotocol/server';
  const server = (
    process.features.require_module
      ? require(fileURLToPath(import.meta.resolve(specifier)))
      : require(specifier)
  ) as typeof ServerPackage;
  serverLoaded = toServerSdk(server);
  return serverLoaded;
}

/** The serving entries and our transports, with the server half. */
export function serveSdk(): Promise<ServeSdk> {
  serveLoading ??= Promise.all([
    import('./stdio-server-transport.js'),
    import('@modelcontextprotocol/server/stdio'),
    import('@modelcontextprotocol/server'),
    serverSdk(),
  ]).then(([stdio, serverStdio, server]) => ({
    StdioServerTransport: stdio.StdioServerTransport,
    serveStdio: serverStdio.serveStdio,
    createMcpHandler: server.createMcpHandler,
    isLegacyRequest: server.isLegacyRequest,
    isInitializeRequest: server.isInitializeRequest,
    parseJSONRPCMessage: server.parseJSONRPCMessage,
    SUPPORTED_PROTOCOL_VERSIONS: server.SUPPORTED_PROTOCOL_VERSIONS,
  }));
  return serveLoading;
}
