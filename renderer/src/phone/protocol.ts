import type { LocalAnswer, LocalRequest } from '../../../server/api/local-types.js';

/**
 * Messages between the phone page and its worker (core-worker.ts): `/v1` requests, answered by the
 * service's own routes (server/api/local.ts), each tagged with an id the answer carries back.
 */
export interface CoreRequest {
  id: number;
  request: LocalRequest;
}

export interface CoreReply {
  id: number;
  answer: LocalAnswer;
}

/** How long opening took, in ms from the worker's start (performance.now() in the worker). */
export interface CoreReady {
  type: 'ready';
  /** True when this open created the database (no file in the pool before). */
  created: boolean;
  schemaVersion: number;
  sqliteVersion: string;
  /** The WASM module fetched, compiled and initialised. */
  wasmMs: number;
  /** The OPFS SAH-pool VFS installed (its files' access handles taken). */
  vfsMs: number;
  /** The database opened and every pending migration run. */
  openMs: number;
  /** The food table fetched and unzipped, and the service's context built: requests are answered from here on. */
  coreMs: number;
}

export type CoreNotice = CoreReady | { type: 'failed'; message: string } | CoreReply;

export type { LocalAnswer, LocalRequest };
