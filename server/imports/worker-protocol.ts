import { ConflictError, InvalidInputError, LimitExceededError } from '../domain-errors.js';
import type { ImportResult } from './types.js';
import type { ParseOutcome, ParseRequest } from './parse.js';
import { ImportInputError } from './types.js';

/** The messages between an import's worker (worker.ts) and the thread that started it (run-worker.ts). */

/** Where and how to write; absent: parse only and post the records back. */
export interface WriteRequest {
  dbPath: string;
  nativeBinding: string | undefined;
  timezone: string;
  dryRun: boolean;
}

export interface ImportWorkerData {
  parse: ParseRequest;
  write?: WriteRequest;
}

/** A rule an import broke, carried across the thread boundary and thrown again as its own class. */
export type WorkerError =
  | { kind: 'import_input'; message: string; param: string }
  | { kind: 'invalid_input'; message: string; param: string }
  | { kind: 'limit'; message: string }
  | { kind: 'conflict'; message: string; code: string; param: string | undefined }
  | { kind: 'internal'; message: string };

export type WorkerMessage =
  | { type: 'progress'; bytesDone: number; bytesTotal: number }
  /** Parse only: the records. */
  | { type: 'done'; outcome: ParseOutcome }
  /** Parsed; waiting for 'write' (or 'cancel') before it takes the write lock. */
  | { type: 'parsed' }
  /** The write's transaction committed (or, for a dry run, rolled back). */
  | { type: 'written'; result: ImportResult }
  | { type: 'error'; error: WorkerError };

export type MainMessage = { type: 'write'; nowMs: number } | { type: 'cancel' };

export function toWorkerError(err: unknown): WorkerError {
  if (err instanceof ImportInputError) return { kind: 'import_input', message: err.message, param: err.param };
  if (err instanceof InvalidInputError) return { kind: 'invalid_input', message: err.message, param: err.param };
  if (err instanceof LimitExceededError) return { kind: 'limit', message: err.message };
  if (err instanceof ConflictError) return { kind: 'conflict', message: err.message, code: err.code, param: err.param };
  return { kind: 'internal', message: String((err as Error)?.stack ?? err) };
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
    case 'internal':
      return new Error(e.message);
  }
}
