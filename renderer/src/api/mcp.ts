/** /v1/mcp: where an AI assistant reaches the MCP server. */
import { api } from './client';
import type { McpServer } from './types';

export const getMcpServer = (signal?: AbortSignal) => api.get<McpServer>('/v1/mcp', undefined, signal);
