/** /v1/sleep/sessions. */
import { api } from './client';
import type { Deleted, List, SleepInput, SleepSession } from './types';

export const listSleep = (range: { start_date: string; end_date: string }, signal?: AbortSignal) => api.get<List<SleepSession>>('/v1/sleep/sessions', range, signal);
export const createSleep = (body: SleepInput, idempotencyKey?: string) => api.post<SleepSession>('/v1/sleep/sessions', body, idempotencyKey);
export const deleteSleep = (id: string) => api.del<Deleted>(`/v1/sleep/sessions/${encodeURIComponent(id)}`);
