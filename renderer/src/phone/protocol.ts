import type { FoodRecord, NewFood } from '../../../server/db/foods.js';
import type { MealRecord } from '../../../server/db/meals.js';

/**
 * Messages between the phone page and its storage worker (storage-worker.ts). The spike's
 * operations only: the table modules' reads and writes the storage test drives. The phone's /v1
 * transport (PHONE-PEER.md §E1) replaces them with requests to the features.
 */
export interface StorageOps {
  insertMeal(meal: MealRecord): void;
  getMeal(id: string): MealRecord | undefined;
  insertFood(food: NewFood): FoodRecord;
  /** Seqs of the foods an FTS5 expression matches. */
  matchFoods(match: string): number[];
}
export type StorageOp = keyof StorageOps;

export interface StorageRequest<K extends StorageOp = StorageOp> {
  id: number;
  op: K;
  arg: Parameters<StorageOps[K]>[0];
}

export type StorageReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** How long opening took, in ms from the worker's start (performance.now() in the worker). */
export interface StorageReady {
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
}

export type StorageNotice = StorageReady | { type: 'failed'; message: string } | StorageReply;
