/**
 * The phone's storage: a Dedicated Worker (the only place OPFS sync access handles exist) that
 * opens Chyme's SQLite database through SQLite-WASM on the OPFS "SAH pool" VFS (no COOP/COEP
 * needed) and runs every migration, with the server's table modules over wasm-database.ts. The
 * page starts it only while it holds the database's Web Lock (main.ts), so one tab opens it.
 */
import sqlite3InitModule, { type SAHPoolUtil, type Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { insertFood, matchFoodSeqs } from '../../../server/db/foods.js';
import { getMeal, insertMeal } from '../../../server/db/meals.js';
import { schemaVersion } from '../../../server/db/migrate.js';
import { openWasmChymeDatabase, type WasmDatabase } from '../../../server/db/wasm-database.js';
import type { StorageNotice, StorageOps, StorageRequest } from './protocol.js';

/** The worker's global scope, as far as it is used (the renderer's types are the DOM's, not a worker's). */
const scope = self as unknown as {
  postMessage(message: StorageNotice): void;
  onmessage: ((event: MessageEvent<StorageRequest>) => void) | null;
};

const DB_FILE = '/chyme.db';
const VFS_ATTEMPTS = 8;

/**
 * Installs the VFS. It takes an exclusive access handle on each file of its pool, so it fails
 * while the worker of a page just reloaded still holds them (they are released when that worker
 * is torn down, shortly after the page's lock): wait a little and try again.
 * `preserveOnInitFailure` is essential: without it a failed install deletes the pool, the whole
 * history with it.
 */
async function installVfs(sqlite3: Sqlite3Static): Promise<SAHPoolUtil> {
  for (let attempt = 1; ; attempt++) {
    // forceReinitIfPreviouslyFailed is missing from the package's types; a retry needs it.
    const options = { name: 'chyme-sahpool', preserveOnInitFailure: true, forceReinitIfPreviouslyFailed: attempt > 1 };
    try {
      return await sqlite3.installOpfsSAHPoolVfs(options);
    } catch (err) {
      if (attempt >= VFS_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function open(): Promise<WasmDatabase> {
  const start = performance.now();
  const sqlite3 = await sqlite3InitModule();
  const wasmMs = performance.now() - start;
  const pool = await installVfs(sqlite3);
  const vfsMs = performance.now() - start;
  const created = !pool.getFileNames().includes(DB_FILE);
  const db = openWasmChymeDatabase(sqlite3, new pool.OpfsSAHPoolDb(DB_FILE));
  const openMs = performance.now() - start;
  scope.postMessage({ type: 'ready', created, schemaVersion: schemaVersion(db), sqliteVersion: sqlite3.version.libVersion, wasmMs, vfsMs, openMs });
  return db;
}

function operations(db: WasmDatabase): StorageOps {
  return {
    insertMeal: (meal) => insertMeal(db, meal),
    getMeal: (id) => getMeal(db, id),
    insertFood: (food) => insertFood(db, food),
    matchFoods: (match) => matchFoodSeqs(db, match),
  };
}

const opened = open();
opened.catch((err: unknown) => scope.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) }));

scope.onmessage = (event) => {
  const { id, op, arg } = event.data;
  opened
    .then((db) => {
      const fn = operations(db)[op] as (a: typeof arg) => unknown;
      scope.postMessage({ id, ok: true, value: fn(arg) });
    })
    .catch((err: unknown) => scope.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) }));
};
