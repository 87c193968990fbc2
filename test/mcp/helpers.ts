import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** An MCP client (the SDK's own) connected to a running service's /mcp with a key. */
export async function httpClient(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'chyme-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return client;
}

/** The tools of issue 20's table, with the scope each needs. */
export const TOOL_TABLE: Record<string, string> = {
  search_foods: 'nutrition:read',
  log_meal: 'nutrition:write',
  list_meals: 'nutrition:read',
  update_meal: 'nutrition:write',
  delete_meal: 'nutrition:write',
  list_saved_meals: 'nutrition:read',
  log_saved_meal: 'nutrition:write',
  log_sleep: 'sleep:write',
  get_digestive_state: 'digestion:read',
  get_daily_scores: 'digestion:read',
  get_snapshot: 'digestion:read',
};
