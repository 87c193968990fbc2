import { createHash } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { Principal } from '../auth/scopes.js';
import { canonicalJson } from '../canonical-json.js';
import { findIdempotentResponse, saveIdempotentResponse } from '../db/idempotency.js';
import { ConflictError, InvalidCursorError, InvalidInputError, LimitExceededError, NotFoundError, ReadOnlyError } from '../domain-errors.js';
import { describeIssue, firstIssue } from '../fields.js';
import { toolJsonSchema } from './json-schema.js';
import { DAILY_REVIEW, dailyReviewMessages } from './prompts.js';
import { readResource, RESOURCES, resourcesChangedBy } from './resources.js';
import { invalidParams, mcpSdk } from './sdk.js';
import { allTools, missingScope, ToolError, type ToolDef, type ToolResult } from './tools.js';

/**
 * One MCP session: a protocol server bound to the key that opened it. It lists only what the
 * key's scopes allow, validates arguments with the tools' zod schemas (a bad argument is a tool
 * error naming the field, never a protocol error), records writes under their idempotency key,
 * and tells a subscribed client when a resource changed. The transport is the caller's: the HTTP
 * endpoint (api/mcp.ts) gives each session a Streamable HTTP transport.
 */

const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;

/** The tool list as MCP shows it, made once (JSON Schema generation is not free). */
let toolList: Map<string, Tool> | undefined;
function listedTool(tool: ToolDef): Tool {
  toolList ??= new Map(
    allTools().map((t) => [
      t.name,
      {
        name: t.name,
        title: t.annotations.title,
        description: `${t.description} Needs the scope ${t.scope}.`,
        inputSchema: toolJsonSchema(t.input, 'input') as Tool['inputSchema'],
        outputSchema: toolJsonSchema(t.output, 'output') as Tool['outputSchema'],
        annotations: t.annotations,
      },
    ]),
  );
  return toolList.get(tool.name)!;
}

export const SERVER_INFO = { name: 'chyme', title: 'Chyme', version: '' };

const INSTRUCTIONS =
  'Chyme is the person\'s own meal log and digestion model, on their computer. To log food, search_foods first and log_meal with {food_id, quantity, unit}; ' +
  'for a food not in the table give {name, calories}. Times are ISO 8601; days are YYYY-MM-DD in the person\'s time zone. ' +
  'Pass an idempotency_key on writes so a retry never logs twice.';

export interface McpSession {
  server: Server;
  /** Stops listening for changes (the transport closed). */
  dispose(): void;
}

/** A session for this key; the SDK must be loaded (loadMcpSdk). */
export function createMcpSession(app: AppContext, principal: Principal): McpSession {
  const {
    Server,
    CallToolRequestSchema,
    GetPromptRequestSchema,
    ListPromptsRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ListToolsRequestSchema,
    ReadResourceRequestSchema,
    SubscribeRequestSchema,
    UnsubscribeRequestSchema,
  } = mcpSdk();
  const server = new Server(
    { ...SERVER_INFO, version: app.version },
    {
      capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
      instructions: INSTRUCTIONS,
    },
  );
  const allowed = (scope: string) => principal.scopes.has(scope as never);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: allTools().filter((t) => allowed(t.scope)).map(listedTool) }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = allTools().find((t) => t.name === request.params.name);
    if (!tool) throw invalidParams(`Unknown tool: ${request.params.name}. tools/list shows the tools this key may use.`);
    try {
      if (!allowed(tool.scope)) throw missingScope(tool.scope);
      const input: unknown = request.params.arguments ?? {};
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        const d = describeIssue(firstIssue(parsed.error as z.ZodError, input));
        throw new ToolError(d.code, d.message, d.param);
      }
      const args = parsed.data as Record<string, unknown>;
      const result = tool.writes ? runWrite(app, principal, tool, args) : await tool.run(app, args as never, principal);
      return { content: [{ type: 'text', text: result.text }], structuredContent: result.structured };
    } catch (err) {
      return toolError(app, tool, err);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: RESOURCES.filter((r) => allowed(r.scope)).map(({ uri, name, title, description, mimeType }) => ({ uri, name, title, description, mimeType })),
  }));
  // The resources capability is advertised, so its template list answers too: Chyme has no templates.
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => ({ contents: [readResource(app, principal, request.params.uri)] }));

  const subscribed = new Set<string>();
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    const resource = RESOURCES.find((r) => r.uri === request.params.uri);
    if (!resource) throw invalidParams(`No such resource: ${request.params.uri}`);
    if (!allowed(resource.scope)) throw invalidParams(missingScope(resource.scope).message);
    subscribed.add(resource.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  // After a write commits, every subscribed resource it changed is announced (the client reads it again).
  const unsubscribe = app.bus.subscribe((event) => {
    for (const uri of resourcesChangedBy(event.type)) {
      if (subscribed.has(uri)) void server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [DAILY_REVIEW] }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    if (request.params.name !== DAILY_REVIEW.name) throw invalidParams(`Unknown prompt: ${request.params.name}`);
    return dailyReviewMessages(app, principal, request.params.arguments ?? {});
  });

  return { server, dispose: unsubscribe };
}

/**
 * A write under its idempotency key: the look-up, the write and the record of its answer are one
 * transaction, so a retry after a lost answer (or a crash) returns the first answer and never
 * writes twice. The same key with other arguments is refused.
 */
function runWrite(app: AppContext, principal: Principal, tool: ToolDef, args: Record<string, unknown>): ToolResult {
  const run = (): ToolResult => {
    const result = tool.run(app, args as never, principal);
    if (result instanceof Promise) throw new Error(`the write tool ${tool.name} must be synchronous`);
    return result;
  };
  const key = args.idempotency_key;
  if (typeof key !== 'string') return run();
  const { idempotency_key: _key, ...rest } = args;
  const requestHash = createHash('sha256').update(`tool ${tool.name}\n${canonicalJson(rest)}`).digest('hex');
  // Kept apart from REST keys: the same string sent to both is two requests, not a conflict.
  const storedKey = `mcp:${key}`;
  const now = app.clock.now();
  let previous: ReturnType<typeof findIdempotentResponse>;
  const result = app.bus.write(() => {
    previous = findIdempotentResponse(app.db, principal.id, storedKey, now - IDEMPOTENCY_WINDOW_MS);
    if (previous) return undefined;
    const r = run();
    saveIdempotentResponse(app.db, principal.id, storedKey, requestHash, 200, r, now);
    return r;
  });
  if (previous) {
    if (previous.requestHash !== requestHash) {
      throw new ToolError('idempotency_conflict', 'This idempotency_key was already used with different arguments. Use a new key for a new request.', 'idempotency_key');
    }
    return previous.body as ToolResult;
  }
  return result!;
}

/** A failure as a tool error: the code, the sentence and the field, as the REST API names them. */
function toolError(app: AppContext, tool: ToolDef, err: unknown): CallToolResult {
  const e = asToolError(err);
  if (!e) app.log.error('MCP tool failed', { tool: tool.name, error: String((err as Error)?.stack ?? err) });
  const error = e ?? new ToolError('internal_error', 'An unexpected error occurred; nothing was changed. The service log has the details.');
  const field = error.param === undefined ? '' : ` (field: ${error.param})`;
  return { content: [{ type: 'text', text: `${error.code}${field}: ${error.message}` }], isError: true };
}

function asToolError(err: unknown): ToolError | undefined {
  if (err instanceof ToolError) return err;
  if (err instanceof InvalidInputError) return new ToolError('parameter_invalid', err.message, err.param);
  if (err instanceof NotFoundError) return new ToolError('resource_missing', err.message);
  if (err instanceof ConflictError) return new ToolError(err.code, err.message, err.param);
  if (err instanceof LimitExceededError) return new ToolError('limit_exceeded', err.message);
  if (err instanceof ReadOnlyError) return new ToolError('resource_read_only', err.message, err.param);
  if (err instanceof InvalidCursorError) return new ToolError('invalid_cursor', err.message, err.param);
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new ToolError('storage_unavailable', `The database could not be used (${code}), so nothing was written. Retry in a moment.`);
  }
  return undefined;
}
