import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/**
 * The MCP SDK, loaded on first use. Importing its server side (its protocol, transport, zod
 * schemas and ajv) takes longer than Chyme's whole cold start (spawn → first answer, < 300 ms;
 * docs/performance.md), so `chyme serve`, the desktop app and every CLI command start without it
 * and the first /mcp request loads it. Only `import type` of the SDK appears elsewhere in the
 * service: a value import would be loaded at start (the CLI bundle hoists them).
 */
export type McpSdk = typeof import('@modelcontextprotocol/sdk/types.js') & {
  Server: typeof Server;
  WebStandardStreamableHTTPServerTransport: typeof WebStandardStreamableHTTPServerTransport;
};

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]).then(([types, server, web]) => (loaded = { ...types, Server: server.Server, WebStandardStreamableHTTPServerTransport: web.WebStandardStreamableHTTPServerTransport }));
  return loading;
}

/** The SDK once loadMcpSdk has resolved (every MCP session is made after it). */
export function mcpSdk(): McpSdk {
  if (!loaded) throw new Error('the MCP SDK is used before loadMcpSdk() resolved');
  return loaded;
}

/** A JSON-RPC "invalid params" error: an unknown resource, prompt or tool, a scope a resource needs. */
export function invalidParams(message: string): Error {
  const sdk = mcpSdk();
  return new sdk.McpError(sdk.ErrorCode.InvalidParams, message);
}
