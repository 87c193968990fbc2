import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AppContext, Subsystem } from '../app-context.js';
import { onKeyRevoked } from '../auth/revocation.js';
import { loadMcpSdk, type McpSdk } from '../mcp/sdk.js';
import { createMcpSession, type McpSession } from '../mcp/session.js';
import { packageRoot } from '../paths.js';
import { errors } from './errors.js';
import { MAX_BODY_BYTES } from './pipeline.js';
import { defineRoute, HANDLED, type RouteDef } from './route.js';

/**
 * `/mcp`: the MCP server over Streamable HTTP, on the same listener as /v1. Its routes go through
 * the same pipeline as every /v1 route (Host/Origin check, bearer key or session cookie, the rate
 * limit, the body limit), then the session's transport answers (SessionTransport below).
 *
 * Sessions: an `initialize` with a valid key opens a session (Mcp-Session-Id), bound to that key:
 * its tool list follows the key's scopes and its resource subscriptions live in it. Every later
 * request must carry the same key (another key gets 404, as an unknown session does) and is
 * authenticated again, so a revoked key stops at once, and its sessions (with their GET streams)
 * are closed within a second (auth/revocation.ts). POST answers are plain JSON; the
 * optional GET stream carries resource-update notifications. Sessions idle for an hour are closed,
 * and at most MAX_SESSIONS are kept (the least recently used goes first); a client whose session
 * is gone gets 404 and, as the MCP specification says, initializes again.
 */

export const MCP_PATH = '/mcp';
const MAX_SESSIONS = 64;
const IDLE_MS = 3600_000;

/**
 * The session's transport: the SDK's web-standard Streamable HTTP transport for everything
 * (initialize, the GET stream, DELETE, notifications, batches, every error case), plus a direct
 * path for the one message a client sends most: a single request in an open session. That one is
 * handed to the protocol server as the SDK's transport would hand it, and its response is written
 * straight to Node's response, without a web Request, Response and stream per call: those were
 * most of the cost of a tool call over the REST call (bench/mcp.ts).
 */
class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly direct = new Map<RequestId, (message: JSONRPCMessage) => void>();

  constructor(readonly web: WebStandardStreamableHTTPServerTransport) {
    web.onmessage = (message, extra) => this.receive(message, extra);
    web.onclose = () => {
      // A call under way when the session ends gets an answer rather than hanging until the client gives up.
      for (const [id, answer] of this.direct) answer({ jsonrpc: '2.0', id, error: { code: -32000, message: 'The session ended before this request was answered.' } });
      this.direct.clear();
      this.onclose?.();
    };
    web.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.web.sessionId;
  }

  start(): Promise<void> {
    return this.web.start();
  }

  close(): Promise<void> {
    return this.web.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = 'id' in message && ('result' in message || 'error' in message) ? message.id : undefined;
    const answer = id === undefined ? undefined : this.direct.get(id);
    if (id === undefined || !answer) return this.web.send(message, options);
    this.direct.delete(id);
    answer(message);
    return Promise.resolve();
  }

  /** Runs one request through the protocol server and resolves with its response. */
  call(request: JSONRPCRequest, extra: MessageExtraInfo): Promise<JSONRPCMessage> {
    return new Promise((resolve) => {
      this.direct.set(request.id, resolve);
      this.receive(request, extra);
    });
  }

  /**
   * Hands a message to the protocol server, except a tools/call whose arguments are not an
   * object: the SDK's own check answers that with -32603 and its schema's issues as JSON, which
   * tells a model nothing. It gets -32602 (invalid params) and a sentence instead.
   */
  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const refusal = notAnObject(message);
    if (refusal) void this.send(refusal).catch((error: unknown) => this.onerror?.(error as Error));
    else this.onmessage?.(message, extra);
  }
}

/** The answer to a tools/call whose params or arguments are not an object, else undefined. */
function notAnObject(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return undefined;
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  const params: unknown = message.params;
  const args = isObject(params) ? (params as { arguments?: unknown }).arguments : undefined;
  if (isObject(params) && (args === undefined || isObject(args))) return undefined;
  const got = Array.isArray(args) ? 'an array' : args === null ? 'null' : `a ${typeof args}`;
  const what = isObject(params) ? `arguments must be an object of the tool's named arguments (here it is ${got}), such as {"query": "banana"} for search_foods` : 'params must be an object with the tool\'s name and its arguments';
  return { jsonrpc: '2.0', id: message.id, error: { code: -32602, message: `tools/call ${what}.` } };
}

/** A request the direct path may take: what the SDK's transport would accept and answer with JSON. */
function directRequest(sdk: McpSdk, req: IncomingMessage, body: unknown, transport: SessionTransport): JSONRPCRequest | undefined {
  const accept = req.headers.accept ?? '';
  const version = req.headers['mcp-protocol-version'];
  if (
    req.method !== 'POST' ||
    !accept.includes('application/json') ||
    !accept.includes('text/event-stream') ||
    !/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '') ||
    (version !== undefined && !sdk.SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) ||
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    (body as { method?: unknown }).method === 'initialize' ||
    !sdk.isJSONRPCRequest(body) ||
    transport.sessionId === undefined
  ) {
    return undefined;
  }
  return body;
}

interface Entry {
  transport: SessionTransport;
  session: McpSession;
  principalId: string;
  lastUsedMs: number;
  /** Stops watching the key for revocation. */
  offRevoked: () => void;
}

export interface McpEndpoint extends Subsystem {
  /** POST, GET and DELETE /mcp (not part of the REST API's OpenAPI document). */
  routes: RouteDef[];
  /** GET /v1/mcp: where an assistant reaches this service (a /v1 route like any other). */
  setupRoute: RouteDef;
  /** Open sessions (tests and the log read it). */
  sessionCount(): number;
}

/**
 * The request as the SDK's web-standard transport reads it (method, url, and headers through
 * get() and entries()), over Node's own request: no Request object is built. The SDK's Node
 * wrapper converts every request and response through @hono/node-server, which cost more than
 * the tool call itself (bench/mcp.ts); the transport's logic is the SDK's either way.
 */
function webRequestOf(req: IncomingMessage): Request {
  const headers = req.headers;
  const view = {
    get: (name: string) => headerValue(headers, name.toLowerCase()),
    has: (name: string) => headers[name.toLowerCase()] !== undefined,
    *entries(): IterableIterator<[string, string]> {
      for (const name of Object.keys(headers)) yield [name, headerValue(headers, name)!];
    },
  };
  return { method: req.method, url: `http://${headers.host ?? 'localhost'}${req.url ?? '/'}`, headers: view } as unknown as Request;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/** Writes the transport's answer: JSON in one write, or an SSE stream passed on as it comes. */
async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    const body = await response.text();
    res.writeHead(response.status, { ...headers, 'content-length': String(Buffer.byteLength(body)) }).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) break;
    res.write(value);
  }
  res.end();
}

/** The JSON-RPC body of a POST, read here (the route streams its body) within the API's body limit. */
function readJsonBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(errors.bodyTooLarge(MAX_BODY_BYTES));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? undefined : JSON.parse(text));
      } catch (err) {
        reject(errors.invalidJson((err as Error).message));
      }
    });
    req.once('error', reject);
  });
}

export const McpSetupSchema = z
  .object({
    object: z.literal('mcp_server'),
    url: z.string().meta({ description: 'The Streamable HTTP endpoint, on the address this request came to.' }),
    stdio: z
      .object({ command: z.string(), args: z.array(z.string()) })
      .meta({ description: 'How a client that starts a process runs `chyme mcp` against this service (the key goes in CHYME_API_KEY).' }),
    protocol_versions: z.array(z.string()),
  })
  .meta({ id: 'McpServer' });

/**
 * GET /v1/mcp, for the app's "AI assistants" card: the stdio command is this Node running this
 * installation's CLI; inside the desktop app (Electron is not Node) it is `node` from PATH.
 */
const setupRoute = defineRoute({
  method: 'GET',
  path: '/v1/mcp',
  operationId: 'getMcpServer',
  summary: 'Where an AI assistant reaches the MCP server',
  description: 'The /mcp address (Streamable HTTP, the same keys and scopes) and the stdio command (`chyme mcp`) for clients that start a process. See docs/mcp.md.',
  tag: 'System',
  access: 'authenticated',
  responses: { 200: { description: 'The MCP server', schema: McpSetupSchema } },
  async handler({ req }) {
    const { SUPPORTED_PROTOCOL_VERSIONS } = await loadMcpSdk();
    const origin = `http://${req.headers.host ?? '127.0.0.1:7650'}`;
    return {
      body: {
        object: 'mcp_server',
        url: `${origin}${MCP_PATH}`,
        stdio: { command: process.versions.electron ? 'node' : process.execPath, args: [join(packageRoot(), 'build', 'server', 'cli', 'main.js'), 'mcp', '--url', origin] },
        protocol_versions: [...SUPPORTED_PROTOCOL_VERSIONS],
      },
    };
  },
});

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
    entry.offRevoked();
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
    // Read by the handler: the JSON-RPC body is parsed once, here, and handed to the transport.
    streamsBody: true,
    async handler({ req, res, principal }): Promise<typeof HANDLED> {
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      const sdk = await loadMcpSdk();
      const answer = async (transport: SessionTransport) => {
        const request = directRequest(sdk, req, body, transport);
        if (!request) return writeResponse(res, await transport.web.handleRequest(webRequestOf(req), body === undefined ? {} : { parsedBody: body }));
        const response = JSON.stringify(await transport.call(request, { requestInfo: { headers: req.headers } }));
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(response)),
          'mcp-session-id': transport.sessionId!,
          'cache-control': 'no-store',
        });
        res.end(response);
      };
      const sessionId = req.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const entry = sessions.get(sessionId);
        if (!entry || entry.principalId !== principal!.id) return jsonRpcError(res, 404, -32001, 'Session not found: initialize a new one.');
        entry.lastUsedMs = now();
        await answer(entry.transport);
        return HANDLED;
      }
      if (req.method !== 'POST' || !sdk.isInitializeRequest(body)) {
        return jsonRpcError(res, 400, -32000, 'Bad request: send initialize first, then the Mcp-Session-Id header it returns.');
      }
      makeRoom();
      const session = createMcpSession(app, principal!);
      const entry: Entry = { transport: undefined as never, session, principalId: principal!.id, lastUsedMs: now(), offRevoked: () => {} };
      entry.transport = new SessionTransport(
        new sdk.WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          enableJsonResponse: true,
          onsessioninitialized: (id) => {
            sessions.set(id, entry);
            // Later requests authenticate again; the open notification stream must end too.
            entry.offRevoked = onKeyRevoked(app, principal!, () => close(id));
          },
          onsessionclosed: (id) => close(id),
        }),
      );
      entry.transport.onclose = () => {
        const id = entry.transport.sessionId;
        if (id) close(id);
      };
      await session.server.connect(entry.transport);
      try {
        await answer(entry.transport);
      } finally {
        // An initialize the transport refused (a header missing, a bad message) opened no session:
        // nothing of it may stay listening to the bus.
        const id = entry.transport.sessionId;
        if (id === undefined || sessions.get(id) !== entry) {
          session.dispose();
          void session.server.close().catch(() => undefined);
        }
      }
      return HANDLED;
    },
    responses: {},
  });

  return {
    name: 'mcp',
    setupRoute,
    routes: [handle, { ...handle, method: 'GET' }, { ...handle, method: 'DELETE' }],
    sessionCount: () => sessions.size,
    start() {},
    stop() {
      for (const id of [...sessions.keys()]) close(id);
      return Promise.resolve();
    },
  };
}
