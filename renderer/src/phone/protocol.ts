import type { LocalAnswer, LocalRequest } from '../../../server/api/local-types.js';
import type { ServiceEvent } from '../api/types.js';

/**
 * Messages between the phone page and its worker (core-worker.ts): `/v1` requests, answered by the
 * service's own routes (server/api/local.ts), each tagged with an id the answer carries back.
 */
export type CoreRequest = { id: number; request: LocalRequest } | { id: number; control: CoreControl };

/**
 * What the page asks the worker besides `/v1`: `progress`, how many meals the database holds and how far
 * the join under way has come (the sync card and the note beside Today show them); `forget`, leave sync (the relay is
 * told, as `chyme sync leave` does) and erase the phone's storage: the worker closes the database
 * and removes its OPFS pool (and whatever else the origin's private file system holds), and
 * answers nothing after that; `memory`, the size of the worker's WebAssembly memories (wasm-memory.ts;
 * bench/phone.ts samples it).
 */
export type CoreControl = 'progress' | 'forget' | 'memory';

/** A join's progress (server/sync/engine.ts JoinProgress): `older` once the current weeks are in. */
export interface JoinProgressView {
  phase: 'recent' | 'older' | 'done';
  appliedBytes: number;
  totalBytes: number;
}

export interface ControlResults {
  progress: { meals: number; join: JoinProgressView | null };
  forget: { erased: true; leftRelay: boolean };
  /** Bytes, by memory: `sqlite`, and `automerge` once sync has loaded it. */
  memory: { wasmBytes: Record<string, number> };
}

export type CoreReply = { id: number; answer: LocalAnswer } | { id: number; result: ControlResults[CoreControl] } | { id: number; error: string };

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

/**
 * A change the worker's service announced (its event bus, which also feeds `GET /v1/events/stream`
 * on a computer): the envelope the stream's `data:` carries, for every event the page's owner may
 * read. Changes that sync brings from the computers are announced like the page's own.
 */
export interface CoreEvent {
  type: 'event';
  event: ServiceEvent;
}

export type CoreNotice = CoreReady | { type: 'failed'; message: string } | CoreEvent | CoreReply;

export type { LocalAnswer, LocalRequest };
