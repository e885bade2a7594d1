export {
  loadMcpConfig,
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpStdioServerConfig,
  parseMcpConfig,
} from './mcp-config.js';
export type { McpLogEntry, McpLogger } from './mcp-connection.js';
export {
  MCP_HTTP_DEFAULTS,
  type McpHttpServer,
  type McpHttpServerOptions,
  serveMcpHttp,
} from './mcp-http-server.js';
export {
  type McpCallToolResult,
  type McpResourceContents,
  type McpResultOptions,
  mcpResultToCallResult,
} from './mcp-result.js';
export {
  createMcpServer,
  DEFAULT_MCP_MAX_PENDING_CALLS,
  DEFAULT_MCP_MAX_RESULT_BYTES,
  type McpServerOptions,
  toMcpContent,
} from './mcp-server.js';
export {
  DEFAULT_MCP_STDIO_MAX_MESSAGE_BYTES,
  type McpStdioServer,
  type McpStdioServerOptions,
  serveMcpStdio,
} from './mcp-stdio-server.js';
export {
  MCP_DEFAULTS,
  type McpLeftOutTool,
  type McpStartReport,
  McpToolSource,
  type McpToolSourceOptions,
  namespacedName,
} from './mcp-tool-source.js';
