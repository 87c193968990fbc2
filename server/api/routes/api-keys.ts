import { z } from 'zod';
import { createApiKey } from '../../auth/keys.js';
import { getApiKey, listApiKeys, revokeApiKey, type ApiKeyRecord } from '../../db/api-keys.js';
import { isoUtc } from '../../time/tz.js';
import { errors } from '../errors.js';
import { defineRoute, SCOPES, type Scope } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { idString, nonBlankText } from '../validation.js';

export const ApiKeySchema = z
  .object({
    object: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES as [Scope, ...Scope[]])),
    prefix: z.string().meta({ description: 'The first characters of the secret, to recognise it.' }),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    secret: z.string().optional().meta({ description: 'Only in the response that creates the key.' }),
  })
  .meta({ id: 'ApiKey' });

export const scopeList = z
  .array(z.enum(SCOPES as [Scope, ...Scope[]], { message: `must be one of ${SCOPES.join(', ')}` }))
  .min(1, { message: 'must name at least one scope' });

export const keyName = nonBlankText(100);

export function apiKeyResource(k: ApiKeyRecord, secret?: string): Record<string, unknown> {
  return {
    object: 'api_key',
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    prefix: k.prefix,
    created_at: isoUtc(k.createdMs),
    last_used_at: k.lastUsedMs === null ? null : isoUtc(k.lastUsedMs),
    ...(secret ? { secret } : {}),
  };
}

export const apiKeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/api_keys',
    operationId: 'listApiKeys',
    summary: 'List API keys',
    tag: 'API keys',
    access: 'admin',
    responses: { 200: { description: 'Live keys, oldest first', schema: listOf(ApiKeySchema, 'ApiKeyList') } },
    handler: ({ app }) => ({ body: { object: 'list', data: listApiKeys(app.db).map((k) => apiKeyResource(k)), has_more: false } }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/api_keys',
    operationId: 'createApiKey',
    summary: 'Create an API key (the secret is in this response only)',
    tag: 'API keys',
    access: 'admin',
    body: z.strictObject({ name: keyName, scopes: scopeList }).meta({ id: 'ApiKeyCreate' }),
    responses: { 201: { description: 'The key with its secret', schema: ApiKeySchema }, 400: { description: 'Invalid', schema: ErrorSchema } },
    handler({ app, body }) {
      const { key, secret } = createApiKey(app.db, { name: body.name, scopes: body.scopes, nowMs: app.clock.now() });
      return { status: 201, body: apiKeyResource(key, secret) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/api_keys/{id}',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    tag: 'API keys',
    access: 'admin',
    params: z.object({ id: idString('key') }),
    responses: { 200: { description: 'Revoked', schema: DeletedSchema }, 404: { description: 'No such key', schema: ErrorSchema } },
    handler({ app, params }) {
      const key = getApiKey(app.db, params.id);
      if (!key || key.internal || !revokeApiKey(app.db, params.id, app.clock.now())) throw errors.resourceMissing('api_key', params.id);
      return { body: { id: params.id, object: 'api_key', deleted: true } };
    },
  }),
];
