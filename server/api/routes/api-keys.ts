import { z } from 'zod';
import { ApiKeyCreateSchema, apiKeyResource, ApiKeySchema, createApiKey, revokeKey } from '../../auth/keys.js';
import { listApiKeys } from '../../db/api-keys.js';
import { idString } from '../../fields.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';

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
    body: ApiKeyCreateSchema,
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
      revokeKey(app.db, params.id, app.clock.now());
      return { body: { id: params.id, object: 'api_key', deleted: true } };
    },
  }),
];
