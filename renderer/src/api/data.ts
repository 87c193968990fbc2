/** /v1/export and /v1/import: all of the user's data out, and back in. */
import { api } from './client';
import type { ImportResult } from './types';

/** Everything as one JSON document (a download). */
export const exportAll = () => api.blob('/v1/export');
/** The meals as CSV (a download). */
export const exportMealsCsv = () => api.blob('/v1/export/meals.csv');
/** Imports a document made by exportAll; records already present are skipped. */
export const importAll = (doc: unknown, idempotencyKey?: string) => api.post<ImportResult>('/v1/import', doc, idempotencyKey);
