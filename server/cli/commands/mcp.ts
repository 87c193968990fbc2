import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { KEY_PREFIX } from '../../auth/keys.js';
import { runningServer } from '../../backups/instance.js';
import { withExistingDatabase } from '../context.js';
import { CommandFailed, dbPathFrom, EXIT, parseFlags, type Command } from '../usage.js';

export const mcpCommand: Command = {
  name: 'mcp',
  usage: ['chyme mcp [--url URL | --db FILE] [--key KEY]   (the key defaults to $CHYME_API_KEY)'],
  run: mcp,
};

/** How long to wait for the running service to answer before saying it does not. */
const REACH_TIMEOUT_MS = 5000;

/**
 * `chyme mcp`: an MCP server on stdin/stdout for clients that start a process (Claude Desktop,
 * Claude Code, VS Code…). It holds no data of its own: every message goes to the running Chyme's
 * /mcp (the desktop app or `chyme serve`, found as `chyme link` finds it, or --url) with the key,
 * so the tools, scopes and events are the service's. stdout carries MCP messages only; anything
 * for a person goes to stderr.
 */
async function mcp(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { url: { type: 'string' }, db: { type: 'string' }, key: { type: 'string' } });
  const key = values.key ?? process.env.CHYME_API_KEY;
  if (!key) {
    throw new CommandFailed('No API key: pass --key chy_… or set CHYME_API_KEY (create one in the app under Integrations → AI assistants, or with chyme keys create).', EXIT.failed);
  }
  if (!key.startsWith(KEY_PREFIX)) throw new CommandFailed(`That is not a Chyme API key: keys start with ${KEY_PREFIX}.`, EXIT.failed);
  const base = values.url ? values.url.replace(/\/+$/, '') : await runningUrl(dbPathFrom(values));
  await checkService(base, key);
  await proxy(base, key);
}

/** The URL the running service on this database recorded. */
async function runningUrl(dbPath: string): Promise<string> {
  return withExistingDatabase(dbPath, (db) => {
    const server = runningServer(db);
    if (!server) throw new CommandFailed(`No Chyme is running on ${dbPath}: open the app or run chyme serve --db ${dbPath}, then start chyme mcp again.`, EXIT.failed);
    return server.url;
  });
}

/** The service answers, and takes the key: said now in one sentence rather than at the client's first call. */
async function checkService(base: string, key: string): Promise<void> {
  let status: number;
  try {
    status = (await fetch(`${base}/v1/settings`, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(REACH_TIMEOUT_MS) })).status;
  } catch (err) {
    const reason = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new CommandFailed(`No Chyme is running at ${base} (${reason}): open the app or run chyme serve, then start chyme mcp again.`, EXIT.failed);
  }
  if (status === 401) throw new CommandFailed(`Chyme at ${base} does not accept this API key (revoked, or from another database).`, EXIT.failed);
  if (status !== 200) throw new CommandFailed(`Chyme at ${base} answered ${status} where it should answer 200; is it a Chyme?`, EXIT.failed);
}

/**
 * Passes messages both ways until the client closes stdin. A request the service cannot take (it
 * stopped, the key was revoked) is answered with a JSON-RPC error, so the client never waits on it.
 */
async function proxy(base: string, key: string): Promise<void> {
  // Loaded here, not at the top: every other command starts without the SDK (see mcp/sdk.ts).
  const [{ StreamableHTTPClientTransport }, { StdioServerTransport }, { isJSONRPCRequest }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const stdio = new StdioServerTransport();
  const http = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const closed = new Promise<void>((resolve) => {
    stdio.onclose = () => resolve();
  });

  http.onmessage = (message) => {
    // The protocol version the service chose travels on every later request, as the SDK's own client sends it.
    const result = (message as { result?: { protocolVersion?: unknown } }).result;
    if (typeof result?.protocolVersion === 'string') http.setProtocolVersion(result.protocolVersion);
    void stdio.send(message).catch(() => undefined);
  };
  http.onerror = (err) => process.stderr.write(`chyme mcp: ${err.message}\n`);
  stdio.onmessage = (message: JSONRPCMessage) => {
    http.send(message).catch((err: unknown) => {
      const text = `Chyme at ${base} could not take this request: ${(err as Error).message}`;
      process.stderr.write(`chyme mcp: ${text}\n`);
      if (isJSONRPCRequest(message)) void stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: text } }).catch(() => undefined);
    });
  };
  stdio.onerror = (err) => process.stderr.write(`chyme mcp: ${err.message}\n`);

  await http.start();
  await stdio.start();
  // The SDK's stdio transport does not end when stdin does: a client that goes away closes it.
  process.stdin.once('end', () => void stdio.close());
  await closed;
  // Ends the session on the service (DELETE /mcp) before leaving.
  await http.terminateSession().catch(() => undefined);
  await http.close();
}
