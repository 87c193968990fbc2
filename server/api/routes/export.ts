import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { exportDocument, ImportDocumentSchema, mealsCsv } from '../../export/export.js';
import { importDocumentBytes } from '../../imports/imports.js';
import { ImportDocumentInvalid } from '../../imports/types.js';
import { errors } from '../errors.js';
import { loadExpress } from '../express.js';
import { bodyError, hasNonEmptyBody } from '../pipeline.js';
import { issueError } from '../validation.js';
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
    // The body is read here, as bytes, and parsed, checked and written in a worker thread: for
    // ten years of records each of those takes tenths of a second this thread must not wait.
    // `body` above documents what it must be; the schema is applied in the worker.
    streamsBody: true,
    async handler({ app, req, res, idempotency }) {
      const bytes = await readImportBody(req, res);
      const replay = idempotency?.settle(createHash('sha256').update(bytes).digest('hex'));
      if (replay) return replay;
      try {
        return { body: { object: 'import_result', ...(await importDocumentBytes(app, bytes)) } };
      } catch (err) {
        if (!(err instanceof ImportDocumentInvalid)) throw err;
        const reason = err.reason;
        throw reason.kind === 'json' ? errors.invalidJson(reason.message) : issueError(reason.issue);
      }
    },
  }),
];

/** body-parser's raw reader (inflating gzip and deflate), whatever the type: the type is checked first. */
let rawImportBody: RequestHandler | undefined;

/**
 * The raw bytes of an import's JSON body, up to IMPORT_MAX_BYTES, with the API's usual answers for a body that is
 * too large (413), not JSON by its type or in an encoding it cannot read (415). Gzip and deflate
 * bodies are inflated, as for every JSON route. No body reads as empty.
 */
async function readImportBody(req: Request, res: Response): Promise<Uint8Array> {
  const type = req.headers['content-type'];
  if (hasNonEmptyBody(req) && (type === undefined || !/^application\/json\s*(;|$)/i.test(type))) throw errors.unsupportedMediaType(type);
  rawImportBody ??= (await loadExpress()).raw({ type: () => true, limit: IMPORT_MAX_BYTES });
  const read = rawImportBody;
  await new Promise<void>((resolve, reject) =>
    read(req, res, (err?: unknown) => (err ? reject(bodyError(err as { type?: string; message: string }, IMPORT_MAX_BYTES, req)) : resolve())),
  );
  return Buffer.isBuffer(req.body) ? new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.length) : new Uint8Array(0);
}
