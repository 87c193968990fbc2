import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext, Subsystem } from '../app-context.js';
import { createMcpSession, type McpSession } from '../mcp/session.js';
import { defineRoute, HANDLED, type RouteDef } from './route.js';

/**
 * `/mcp`: the MCP server over Streamable HTTP, on the same listener as /v1. Its routes go through
 * the same pipeline as every /v1 route (Host/Origin check, bearer key or session cookie, the rate
 * limit, the body limit), then the SDK's transport answers.
 *
 * Sessions: an `initialize` with a valid key opens a session (Mcp-Session-Id), bound to that key:
 * its tool list follows the key's scopes and its resource subscriptions live in it. Every later
 * request must carry the same key (another key gets 404, as an unknown session does) and is
 * authenticated again, so a revoked key stops at once. POST answers are plain JSON; the
 * optional GET stream carries resource-update notifications. Sessions idle for an hour are closed,
 * and at most MAX_SESSIONS are kept (the least recently used goes first); a client whose session
 * is gone gets 404 and, as the MCP specification says, initializes again.
 */

export const MCP_PATH = '/mcp';
const MAX_SESSIONS = 64;
const IDLE_MS = 3600_000;

interface Entry {
  transport: StreamableHTTPServerTransport;
  session: McpSession;
  principalId: string;
  lastUsedMs: number;
}

export interface McpEndpoint extends Subsystem {
  routes: RouteDef[];
  /** Open sessions (tests and the log read it). */
  sessionCount(): number;
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): typeof HANDLED {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
  return HANDLED;
}

export function createMcpEndpoint(app: AppContext): McpEndpoint {
  const sessions = new Map<string, Entry>();
  // Real elapsed time, as the rate limit uses: idleness is about the client, not the service clock.
  const now = () => performance.now();

  const close = (id: string) => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    entry.session.dispose();
    void entry.session.server.close().catch(() => undefined);
  };

  const makeRoom = () => {
    const t = now();
    for (const [id, e] of sessions) if (t - e.lastUsedMs > IDLE_MS) close(id);
    while (sessions.size >= MAX_SESSIONS) {
      let oldest: [string, Entry] | undefined;
      for (const pair of sessions) if (!oldest || pair[1].lastUsedMs < oldest[1].lastUsedMs) oldest = pair;
      close(oldest![0]);
    }
  };

  const handle = defineRoute({
    method: 'POST',
    path: MCP_PATH,
    operationId: 'mcp',
    summary: 'MCP (Streamable HTTP)',
    tag: 'MCP',
    access: 'authenticated',
    async handler({ req, res, principal }): Promise<typeof HANDLED> {
      const body = (req as { body?: unknown }).body;
      const sessionId = req.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const entry = sessions.get(sessionId);
        if (!entry || entry.principalId !== principal!.id) return jsonRpcError(res, 404, -32001, 'Session not found: initialize a new one.');
        entry.lastUsedMs = now();
        await entry.transport.handleRequest(req, res, body);
        return HANDLED;
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return jsonRpcError(res, 400, -32000, 'Bad request: send initialize first, then the Mcp-Session-Id header it returns.');
      }
      makeRoom();
      const session = createMcpSession(app, principal!);
      const entry: Entry = { transport: undefined as never, session, principalId: principal!.id, lastUsedMs: now() };
      entry.transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          sessions.set(id, entry);
        },
        onsessionclosed: (id) => close(id),
      });
      entry.transport.onclose = () => {
        const id = entry.transport.sessionId;
        if (id) close(id);
      };
      await session.server.connect(entry.transport);
      await entry.transport.handleRequest(req, res, body);
      return HANDLED;
    },
    responses: {},
  });

  return {
    name: 'mcp',
    routes: [handle, { ...handle, method: 'GET' }, { ...handle, method: 'DELETE' }],
    sessionCount: () => sessions.size,
    start() {},
    stop() {
      for (const id of [...sessions.keys()]) close(id);
      return Promise.resolve();
    },
  };
}
