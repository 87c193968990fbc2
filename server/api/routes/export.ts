import { z } from 'zod';
import { exportDocument, ImportDocumentSchema, importDocument, mealsCsv } from '../../export/export.js';
import { isoUtc } from '../../time/tz.js';
import { defineRoute, HANDLED } from '../route.js';
import { ErrorSchema } from '../schemas.js';

export const ImportResultSchema = z
  .object({
    object: z.literal('import_result'),
    foods: z.object({ imported: z.number().int(), skipped: z.number().int() }),
    saved_meals: z.object({ imported: z.number().int(), skipped: z.number().int() }),
    meals: z.object({ imported: z.number().int(), skipped: z.number().int() }),
    sleep_sessions: z.object({ imported: z.number().int(), skipped: z.number().int() }),
    webhook_subscriptions: z.object({ imported: z.number().int(), skipped: z.number().int() }),
    settings: z.enum(['applied', 'kept']),
  })
  .meta({ id: 'ImportResult' });

export const IMPORT_MAX_BYTES = 64 * 1024 * 1024;

export const exportRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/export',
    operationId: 'exportAll',
    summary: 'Export everything as one JSON document',
    description: 'Custom foods, saved meals, meals, sleep sessions, webhook subscriptions (without secrets) and settings, with a format version. POST it to /v1/import to restore.',
    tag: 'Export',
    access: 'admin',
    responses: { 200: { description: 'The export document' } },
    handler({ app }) {
      const day = isoUtc(app.clock.now()).slice(0, 10);
      return { body: exportDocument(app), headers: { 'Content-Disposition': `attachment; filename="chyme-export-${day}.json"` } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/export/meals.csv',
    operationId: 'exportMealsCsv',
    summary: 'Export meals as CSV',
    tag: 'Export',
    access: 'admin',
    responses: { 200: { description: 'One row per meal, oldest first', contentType: 'text/csv' } },
    handler({ app, res }) {
      const csv = mealsCsv(app);
      const day = isoUtc(app.clock.now()).slice(0, 10);
      res.writeHead(200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="chyme-meals-${day}.csv"`,
        'Content-Length': Buffer.byteLength(csv),
        'Cache-Control': 'no-store',
      });
      res.end(csv);
      return HANDLED;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/import',
    operationId: 'importAll',
    summary: 'Import a JSON export',
    description:
      'Validates the whole document before writing any of it, then writes it in one transaction. Records whose id exists are skipped. Settings are restored only into an empty database. Bodies up to 64 MiB.',
    tag: 'Export',
    access: 'admin',
    body: ImportDocumentSchema,
    maxBodyBytes: IMPORT_MAX_BYTES,
    responses: { 200: { description: 'What was imported and skipped', schema: ImportResultSchema }, 400: { description: 'Invalid document; nothing written', schema: ErrorSchema } },
    handler({ app, body }) {
      return { body: { object: 'import_result', ...importDocument(app, body) } };
    },
  }),
];
