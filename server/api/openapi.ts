import { z } from 'zod';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../auth/scopes.js';
import type { PayloadDocs } from '../webhooks/payloads.js';
import type { RouteDef } from './route.js';
import { ErrorSchema } from './schemas.js';

type JsonSchema = Record<string, unknown>;

/** Extra documents other subsystems contribute (webhook payloads). */
export interface OpenApiExtras {
  webhooks?: PayloadDocs;
}

/**
 * The scope table, made from the route table itself so that it cannot say other than what the
 * server checks: per scope, what it grants and the operations that need it.
 */
function scopeTable(routes: readonly RouteDef[]): string {
  const needs = (r: RouteDef): readonly string[] => (Array.isArray(r.access) ? r.access : [r.access]);
  const ops = (keep: (r: RouteDef) => boolean) =>
    routes
      .filter(keep)
      .map((r) => `${r.method} ${r.path}`)
      .join(', ');
  return [
    'An API key, chy_…. Scopes (an operation lists those it needs under x-required-scopes; it needs all of them):',
    '',
    '| scope | grants | operations |',
    '| --- | --- | --- |',
    ...SCOPES.map((scope) => `| ${scope} | ${SCOPE_DESCRIPTIONS[scope]} | ${ops((r) => needs(r).includes(scope))} |`),
    '',
    `Any valid key, whatever its scopes: ${ops((r) => r.access === 'authenticated')} (the snapshot then needs the read scope of each section it returns; the event stream sends only the events the key's scopes may read). No key: ${ops((r) => r.access === 'public')}.`,
  ].join('\n');
}

/**
 * Builds the OpenAPI 3.1 document from the route table: the same zod schemas that validate
 * requests describe them here. Schemas with a meta id become named components.
 */
export function buildOpenApi(routes: RouteDef[], version: string, extras: OpenApiExtras = {}): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};

  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
    // Named schemas (meta id) come back under $defs: hoist them into components and point there.
    const text = JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/');
    const json = JSON.parse(text, (_key, value: unknown) => {
      // Query integers are parsed from strings; document them as the integers the client sends.
      if (value && typeof value === 'object' && (value as JsonSchema).type === 'integer') delete (value as JsonSchema).pattern;
      return value;
    }) as JsonSchema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    for (const [id, def] of Object.entries(defs)) components[id] = def;
    delete json.$defs;
    delete json.$schema;
    return json;
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters: JsonSchema[] = [];
    if (route.params instanceof z.ZodObject) {
      for (const [name, field] of Object.entries(route.params.shape as Record<string, z.ZodType>)) {
        parameters.push({ name, in: 'path', required: true, schema: toSchema(field, 'input') });
      }
    }
    // Rules between query parameters (JSON Schema's dependentRequired on the query object) have
    // no place among OpenAPI's one-by-one parameters: they go on the operation as an extension.
    let dependentRequired: unknown;
    if (route.query instanceof z.ZodObject) {
      for (const [name, field] of Object.entries(route.query.shape as Record<string, z.ZodType>)) {
        parameters.push({ name, in: 'query', required: !field.safeParse(undefined).success, schema: toSchema(field, 'input') });
      }
      dependentRequired = route.query.meta()?.dependentRequired;
    }
    for (const h of route.requestHeaders ?? []) {
      parameters.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      responses[status] = {
        description: doc.description,
        ...(doc.headers
          ? { headers: Object.fromEntries(Object.entries(doc.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) }
          : {}),
        ...(doc.schema ? { content: { [doc.contentType ?? 'application/json']: { schema: toSchema(doc.schema, 'output') } } } : {}),
      };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: toSchema(ErrorSchema, 'output') } } };
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.access === 'public' ? { security: [] } : {}),
      ...(typeof route.access !== 'string' || !['public', 'authenticated'].includes(route.access)
        ? { 'x-required-scopes': Array.isArray(route.access) ? route.access : [route.access] }
        : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(dependentRequired ? { 'x-dependent-required': dependentRequired } : {}),
      ...(route.bodyDoc ? { requestBody: { required: true, content: { [route.bodyDoc.contentType]: { schema: route.bodyDoc.schema } } } } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(route.body, 'input') } } } }
        : {}),
      responses,
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  const webhooks: Record<string, unknown> = {};
  for (const [name, hook] of Object.entries(extras.webhooks ?? {})) {
    webhooks[name] = {
      post: {
        summary: hook.summary,
        parameters: [
          {
            name: 'X-Service-Signature',
            in: 'header',
            required: true,
            schema: { type: 'string', example: 't=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd' },
          },
          { name: 'X-Webhook-Delivery-Id', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'X-Webhook-Event', in: 'header', required: true, schema: { type: 'string' } },
        ],
        requestBody: { content: { 'application/json': { schema: toSchema(hook.schema, 'output') } } },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery; anything else is retried.' } },
      },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Chyme API',
      version,
      description:
        'Local-first meal logging and digestion insight. Authenticate with "Authorization: Bearer <API_KEY>". Errors are {"error": {type, code, message, param?, request_id}}.',
    },
    servers: [{ url: 'http://127.0.0.1:7650' }],
    security: [{ bearerAuth: [] }],
    paths,
    ...(Object.keys(webhooks).length ? { webhooks } : {}),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: scopeTable(routes) } },
      schemas: components,
    },
  };
}
