import { createHash, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { getImport, listImportsPage } from '../../db/imports.js';
import { importResource, runImport, undoImport } from '../../imports/imports.js';
import { ImportSchema } from '../../imports/schema.js';
import { makeUploadDir } from '../../imports/uploads.js';
import { ImportCancelledError, ImportInputError, parseSourceName, type ChosenSource } from '../../imports/types.js';
import { isValidTimeZone } from '../../time/tz.js';
import { ApiError, errors } from '../errors.js';
import { defineRoute, HANDLED } from '../route.js';
import { ErrorSchema, listOf } from '../schemas.js';
import { IANA_TIME_ZONE_DESCRIPTION, ianaTimeZones, idString } from '../../fields.js';
import { cursorPosition, queryInt } from '../validation.js';

/** Uploads past this are refused: a ten-year Apple export is ~3 GB zipped much smaller. */
const MAX_UPLOAD_BYTES = 16 * 1024 ** 3;
const MAX_FILES = 50;

interface Upload {
  dir: string;
  files: Array<{ path: string; name: string; sha256?: Hash }>;
  fields: Record<string, string>;
}

/**
 * What was uploaded, as one digest: each file's name and content (sha-256) in order, and the
 * fields. Under an Idempotency-Key, the same files and fields replay the first answer; other
 * content with the same key is a conflict.
 */
function uploadDigest(upload: Upload): string {
  const fields = Object.entries(upload.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const files = upload.files.map((f) => [f.name, f.sha256?.digest('hex') ?? '']);
  return JSON.stringify({ fields, files });
}

/**
 * Streams a multipart upload to a private folder beside the database (never into memory; see
 * uploads.ts); with `hash`, each file's sha-256 is computed on the way.
 */
async function receiveUpload(req: import('node:http').IncomingMessage, dbFile: string, hash: boolean, signal: AbortSignal): Promise<Upload> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    throw new ApiError(415, 'invalid_request_error', 'unsupported_media_type', `Send the files as multipart/form-data${type ? `, not ${type}` : ''}.`);
  }
  // Loaded on the first upload rather than at start: nothing else needs it, and start-up time counts.
  const { default: Busboy } = await import('busboy');
  const dir = await makeUploadDir(dbFile);
  const upload: Upload = { dir, files: [], fields: {} };
  try {
    await new Promise<void>((resolve, reject) => {
      const busboy = Busboy({ headers: req.headers, limits: { files: MAX_FILES, fileSize: MAX_UPLOAD_BYTES, fields: 10, fieldSize: 1024 } });
      const writes: Promise<void>[] = [];
      busboy.on('file', (field, stream, info) => {
        if (field !== 'file') {
          stream.resume();
          reject(errors.parameterUnknown(field));
          return;
        }
        // The client's name is shown back in warnings; only its last segment, never a path, is used.
        const name = (info.filename || `upload-${upload.files.length + 1}`).split(/[\\/]/).pop()!.slice(0, 200);
        const path = join(dir, `${upload.files.length}`);
        const sha256 = hash ? createHash('sha256') : undefined;
        if (sha256) stream.on('data', (chunk: Buffer) => sha256.update(chunk));
        upload.files.push({ path, name, ...(sha256 ? { sha256 } : {}) });
        stream.on('limit', () => reject(errors.bodyTooLarge(MAX_UPLOAD_BYTES)));
        writes.push(pipeline(stream, createWriteStream(path)));
      });
      busboy.on('field', (name, value) => {
        upload.fields[name] = value;
      });
      busboy.on('filesLimit', () => reject(errors.limitExceeded(`At most ${MAX_FILES} files per import.`)));
      busboy.on('error', (err: Error) => reject(errors.parameterInvalid('file', `The multipart body could not be read: ${err.message}`)));
      busboy.on('close', () => {
        Promise.all(writes).then(() => resolve(), reject);
      });
      // A client gone mid-upload: busboy would wait for the rest of the body for ever.
      const gone = () => {
        req.unpipe(busboy);
        busboy.destroy();
        reject(new ImportCancelledError());
      };
      if (signal.aborted) gone();
      else signal.addEventListener('abort', gone, { once: true });
      busboy.on('close', () => signal.removeEventListener('abort', gone));
      req.pipe(busboy);
    });
    return upload;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

function parseFields(fields: Record<string, string>): { chosen?: ChosenSource; timeZone?: string; dryRun: boolean } {
  for (const k of Object.keys(fields)) if (!['source', 'timezone', 'dry_run'].includes(k)) throw errors.parameterUnknown(k);
  const out: { chosen?: ChosenSource; timeZone?: string; dryRun: boolean } = { dryRun: false };
  if (fields.source !== undefined && fields.source !== '') {
    const chosen = parseSourceName(fields.source);
    if (!chosen) throw errors.parameterInvalid('source', 'Invalid source: must be one of apple_health, cronometer, myfitnesspal, oura, fitbit, chyme.');
    out.chosen = chosen;
  }
  if (fields.timezone !== undefined && fields.timezone !== '') {
    if (!isValidTimeZone(fields.timezone)) throw errors.parameterInvalid('timezone', 'Invalid timezone: must be an IANA time zone such as Europe/Berlin.');
    out.timeZone = fields.timezone;
  }
  if (fields.dry_run !== undefined) {
    if (!['true', 'false'].includes(fields.dry_run)) throw errors.parameterInvalid('dry_run', 'Invalid dry_run: must be true or false.');
    out.dryRun = fields.dry_run === 'true';
  }
  return out;
}

const importInvalid = (err: ImportInputError) => new ApiError(400, 'invalid_request_error', 'import_invalid', err.message, err.param);

export const importRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/imports',
    operationId: 'createImport',
    summary: 'Import files exported from another app (or from Chyme)',
    description:
      'multipart/form-data with one or more `file` parts (an export zip, or files from it) and optional fields `source` (apple_health, cronometer, myfitnesspal, oura, fitbit, chyme; detected from the content when absent), `timezone` (IANA zone for formats without offsets; default: the time zone setting) and `dry_run` (true: report what would be added, write nothing). Parsed off the request thread and written in one transaction: all or nothing. Records already imported are skipped. No per-record webhooks. With an `Idempotency-Key`, a retry with the same files (names and content) and fields replays the first answer; the same key with other files is a 409 `idempotency_conflict`, as is a retry sent while the first request is still running.',
    tag: 'Imports',
    access: ['nutrition:write', 'sleep:write'],
    streamsBody: true,
    bodyDoc: {
      contentType: 'multipart/form-data',
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          file: { type: 'array', items: { type: 'string', format: 'binary' } },
          source: { type: 'string', enum: ['apple_health', 'cronometer', 'myfitnesspal', 'oura', 'fitbit', 'chyme'] },
          timezone: {
            type: 'string',
            // Read when the OpenAPI document is made, not at start (fields.ts, ianaTimeZones).
            get enum() {
              return ianaTimeZones();
            },
            description: IANA_TIME_ZONE_DESCRIPTION,
          },
          dry_run: { type: 'string', enum: ['true', 'false'] },
        },
      },
    },
    responses: {
      200: { description: 'Dry run: what would be imported', schema: ImportSchema },
      201: { description: 'The import', schema: ImportSchema },
      400: { description: 'Not an export Chyme reads, or a damaged file; nothing written', schema: ErrorSchema },
      415: { description: 'Not multipart/form-data', schema: ErrorSchema },
    },
    async handler({ app, req, res, idempotency }) {
      // A client that goes away before the answer (the app's Cancel, a closed tab) cancels the
      // import: the parse stops and nothing is written.
      const cancel = new AbortController();
      const onClose = () => {
        if (!res.writableFinished) cancel.abort();
      };
      res.once('close', onClose);
      let upload: Upload;
      try {
        upload = await receiveUpload(req, app.db.name, idempotency !== undefined, cancel.signal);
      } catch (err) {
        res.off('close', onClose);
        if (err instanceof ImportCancelledError) return HANDLED;
        throw err;
      }
      try {
        const replay = idempotency?.settle(uploadDigest(upload));
        if (replay) return replay;
        const options = parseFields(upload.fields);
        if (upload.files.length === 0) throw errors.parameterMissing('file', 'Missing required parameter: file (one or more files of an export).');
        const files = upload.files.map(({ path, name }) => ({ path, name }));
        const result = await runImport(app, { files, chosen: options.chosen, timeZone: options.timeZone, dryRun: options.dryRun }, undefined, cancel.signal);
        return { status: options.dryRun ? 200 : 201, body: importResource(result.record, result) };
      } catch (err) {
        if (err instanceof ImportInputError) throw importInvalid(err);
        // Nobody is left to answer, and nothing is recorded under an Idempotency-Key: a retry runs.
        if (err instanceof ImportCancelledError) return HANDLED;
        throw err;
      } finally {
        res.off('close', onClose);
        await rm(upload.dir, { recursive: true, force: true });
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/imports',
    operationId: 'listImports',
    summary: 'List imports, newest first',
    tag: 'Imports',
    access: ['nutrition:read', 'sleep:read'],
    query: z.object({ limit: queryInt(1, 100).optional(), starting_after: idString('imp').optional() }),
    responses: { 200: { description: 'A page of imports', schema: listOf(ImportSchema, 'ImportList') } },
    handler({ app, query }) {
      const after = cursorPosition((id) => getImport(app.db, id), query.starting_after);
      const page = listImportsPage(app.db, { after, limit: query.limit ?? 20 });
      return { body: { object: 'list', data: page.imports.map((r) => importResource(r)), has_more: page.hasMore } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/imports/{id}',
    operationId: 'getImport',
    summary: 'Retrieve an import',
    tag: 'Imports',
    access: ['nutrition:read', 'sleep:read'],
    params: z.object({ id: idString('imp') }),
    responses: { 200: { description: 'The import', schema: ImportSchema }, 404: { description: 'No such import', schema: ErrorSchema } },
    handler({ app, params }) {
      const r = getImport(app.db, params.id);
      if (!r) throw errors.resourceMissing('import', params.id);
      return { body: importResource(r) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/imports/{id}',
    operationId: 'undoImport',
    summary: 'Undo an import',
    description:
      'Removes the meals and sleep sessions the import added, except those edited since (kept, and listed in `undo.kept`). The import stays listed with status "undone". One transaction.',
    tag: 'Imports',
    access: ['nutrition:write', 'sleep:write'],
    params: z.object({ id: idString('imp') }),
    responses: {
      200: { description: 'The import, undone', schema: ImportSchema },
      404: { description: 'No such import', schema: ErrorSchema },
      409: { description: 'Already undone', schema: ErrorSchema },
    },
    handler({ app, params }) {
      const r = undoImport(app, params.id);
      if (!r) throw errors.resourceMissing('import', params.id);
      return { body: importResource(r) };
    },
  }),
];
