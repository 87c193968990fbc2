import type { DataChange } from '../app-context.js';
import { ConflictError, InvalidInputError, LimitExceededError } from '../domain-errors.js';
import type { DocumentImportCounts } from '../export/export.js';
import type { ParseOutcome, ParseRequest } from './parse.js';
import { ImportDocumentInvalid, ImportInputError, type DocumentProblem, type ImportResult } from './types.js';

/** The messages between an import's worker (worker.ts) and the thread that started it (run-worker.ts). */

/** Where and how to write; absent: parse only and post the records back. */
export interface WriteRequest {
  dbPath: string;
  nativeBinding: string | undefined;
  timezone: string;
  dryRun: boolean;
}

/**
 * What the worker does: parse an app's files (then, with `write`, write them as an import), or
 * read a Chyme export document posted to the API (`document`, its JSON bytes) and write it.
 */
export type ImportWorkerData = { parse: ParseRequest; write?: WriteRequest } | { document: Uint8Array; write: WriteRequest };

/** A rule an import broke, carried across the thread boundary and thrown again as its own class. */
export type WorkerError =
  | { kind: 'import_input'; message: string; param: string }
  | { kind: 'invalid_input'; message: string; param: string }
  | { kind: 'limit'; message: string }
  | { kind: 'conflict'; message: string; code: string; param: string | undefined }
  | { kind: 'document'; reason: DocumentProblem }
  /** message: the stack, for the log; code and text: a storage fault's (SQLITE_BUSY…), so it is answered as one. */
  | { kind: 'internal'; message: string; code?: string; text?: string };

export type WorkerMessage =
  | { type: 'progress'; bytesDone: number; bytesTotal: number }
  /** Parse only: the records. */
  | { type: 'done'; outcome: ParseOutcome }
  /** Parsed; waiting for 'write' (or 'cancel') before it takes the write lock. */
  | { type: 'parsed' }
  /** One of the write's transactions committed, with what it changed that derived data reads; more to come (after 'continue'). */
  | { type: 'committed'; change: DataChange }
  /** The write's last transaction committed (or, for a dry run, its one rolled back): an ImportResult, or a document's counts. */
  | { type: 'written'; result: ImportResult | DocumentImportCounts }
  | { type: 'error'; error: WorkerError };

/** 'write': the first transaction, at the main thread's time; 'continue': the next one. */
export type MainMessage = { type: 'write'; nowMs: number } | { type: 'continue' } | { type: 'cancel' };

export function toWorkerError(err: unknown): WorkerError {
  if (err instanceof ImportInputError) return { kind: 'import_input', message: err.message, param: err.param };
  if (err instanceof InvalidInputError) return { kind: 'invalid_input', message: err.message, param: err.param };
  if (err instanceof LimitExceededError) return { kind: 'limit', message: err.message };
  if (err instanceof ImportDocumentInvalid) return { kind: 'document', reason: err.reason };
  if (err instanceof ConflictError) return { kind: 'conflict', message: err.message, code: err.code, param: err.param };
  const code = (err as { code?: unknown } | null)?.code;
  return {
    kind: 'internal',
    message: String((err as Error)?.stack ?? err),
    ...(typeof code === 'string' ? { code, text: (err as Error).message } : {}),
  };
}

export function fromWorkerError(e: WorkerError): Error {
  switch (e.kind) {
    case 'import_input':
      return new ImportInputError(e.message, e.param);
    case 'invalid_input':
      return new InvalidInputError(e.param, e.message);
    case 'limit':
      return new LimitExceededError(e.message);
    case 'conflict':
      return new ConflictError(e.code, e.message, e.param);
    case 'document':
      return new ImportDocumentInvalid(e.reason);
    case 'internal':
      return e.code === undefined ? new Error(e.message) : Object.assign(new Error(e.text ?? e.message), { code: e.code });
  }
}
