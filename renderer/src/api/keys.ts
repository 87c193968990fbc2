/** /v1/api_keys. */
import { api } from './client';
import type { ApiKey, ApiKeyInput, Deleted, List } from './types';

export const listApiKeys = (signal?: AbortSignal) => api.get<List<ApiKey>>('/v1/api_keys', undefined, signal);
/** The created key carries its secret, shown once. */
export const createApiKey = (body: ApiKeyInput, idempotencyKey?: string) => api.post<ApiKey>('/v1/api_keys', body, idempotencyKey);
export const revokeApiKey = (id: string) => api.del<Deleted>(`/v1/api_keys/${encodeURIComponent(id)}`);
