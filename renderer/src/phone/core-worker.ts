/**
 * The phone's Chyme: a Dedicated Worker (the only place OPFS sync access handles exist) that opens
 * Chyme's SQLite database through SQLite-WASM on the OPFS "SAH pool" VFS (no COOP/COEP needed),
 * runs every migration, builds the service's context over it and answers the page's `/v1`
 * requests with the service's own routes (server/api/local.ts): the same features, rules and
 * engine as on a computer. What the service announces (its event bus: the page's own writes and
 * what sync brings) goes to the page as it happens, as `GET /v1/events/stream` does on a computer.
 * The page starts it only while it holds the database's Web Lock (main.ts), so one tab opens it.
 */
import './shims/node-timers.js';
import sqlite3InitModule, { type SAHPoolUtil, type Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { createLocalApi } from '../../../server/api/local.js';
import { digestionRoutes } from '../../../server/api/routes/digestion.js';
import { foodRoutes } from '../../../server/api/routes/foods.js';
import { mealRoutes } from '../../../server/api/routes/meals.js';
import { savedMealRoutes } from '../../../server/api/routes/saved-meals.js';
import { sleepRoutes } from '../../../server/api/routes/sleep.js';
import { snapshotRoutes } from '../../../server/api/routes/snapshot.js';
import { errors } from '../../../server/api/errors.js';
import { syncRoutes } from '../../../server/api/routes/sync.js';
import { systemRoutes } from '../../../server/api/routes/system.js';
import { createAppContext } from '../../../server/app-context.js';
import { SCOPES, type Principal } from '../../../server/auth/scopes.js';
import { systemClock } from '../../../server/clock.js';
import type { Db } from '../../../server/db/connection.js';
import { countMeals } from '../../../server/db/meals.js';
import { schemaVersion } from '../../../server/db/migrate.js';
import { getSyncConfig } from '../../../server/db/sync.js';
import { openWasmChymeDatabase, type WasmDatabase } from '../../../server/db/wasm-database.js';
import { attachDerivedCache } from '../../../server/digestion/cache.js';
import { eventEnvelope } from '../../../server/events/bus.js';
import { mayRead } from '../../../server/events/visibility.js';
import { provideSearchWords, type SearchWordsFile } from '../../../server/foods/search-words.js';
import { loadedTableState } from '../../../server/foods/table.js';
import { foodTableOf, provideShippedFoodTable } from '../../../server/foods/table-file.js';
import { newId } from '../../../server/ids.js';
import type { Logger } from '../../../server/logger.js';
import { initSettings } from '../../../server/settings.js';
import { createSync, type SyncSubsystem } from '../../../server/sync/index.js';
import searchWordsFile from '../../../server/foods/data/search-words.json';
import type { ServiceEvent } from '../api/types.js';
import { coalesceSyncAccessHandles } from './coalesced-writes.js';
import type { ControlResults, CoreControl, CoreNotice, CoreRequest } from './protocol.js';
import { registerWasmMemory, wasmMemoryBytes } from './wasm-memory.js';

/** The worker's global scope, as far as it is used (the renderer's types are the DOM's, not a worker's). */
const scope = self as unknown as {
  postMessage(message: CoreNotice): void;
  onmessage: ((event: MessageEvent<CoreRequest>) => void) | null;
};

const DB_FILE = '/chyme.db';
const VFS_ATTEMPTS = 8;

/**
 * The routes the phone's screens call (Today, Log meal, Score with sleep, Timeline, the sync card);
 * any other path answers 404.
 */
/** How long the phone waits before trying the relay again after losing it, or failing to reach it. */
const PHONE_RELAY_RETRY_MS = 1000;

const phoneRoutes = (sync: SyncSubsystem) => [
  ...systemRoutes,
  ...mealRoutes,
  ...foodRoutes,
  ...savedMealRoutes,
  ...sleepRoutes,
  ...digestionRoutes,
  ...snapshotRoutes,
  // A phone joins a history (set-up, which needs the relay's token, stays on a computer), and never
  // sends webhooks or MQTT, so it cannot become their host.
  ...syncRoutes({ sync }).filter((route) => !PHONE_EXCLUDED_SYNC_ROUTES.has(route.path)),
];
const PHONE_EXCLUDED_SYNC_ROUTES = new Set(['/v1/sync/setup', '/v1/sync/webhook-host']);

/** The page that started the worker is the phone's owner: no keys, every scope. */
const OWNER: Principal = { kind: 'session', id: 'phone', scopes: new Set(SCOPES) };

/** The service's records, as console lines of the worker. */
const log: Logger = {
  info: (msg, fields) => console.info(msg, fields ?? ''),
  warn: (msg, fields) => console.warn(msg, fields ?? ''),
  error: (msg, fields) => console.error(msg, fields ?? ''),
};

/**
 * Installs the VFS, its files' writes coalesced. It takes an exclusive access handle on each file of its pool, so it fails
 * while the worker of a page just reloaded still holds them (they are released when that worker
 * is torn down, shortly after the page's lock): wait a little and try again.
 * `preserveOnInitFailure` is essential: without it a failed install deletes the pool, the whole
 * history with it.
 */
async function installVfs(sqlite3: Sqlite3Static): Promise<SAHPoolUtil> {
  // Before the pool opens its files: their writes are gathered until SQLite syncs (coalesced-writes.ts).
  coalesceSyncAccessHandles(FileSystemFileHandle);
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

/** The shipped table's version (its file's hash, as table-file.ts computes it), put in at build time. */
declare const __FOOD_TABLE_VERSION__: string;

/**
 * The shipped food table, the same file the service reads from its package (its hash is the
 * table's version on both): fetched and unzipped here, since ensureFoods reads it synchronously.
 * A database that already holds this version never reads the file, so it is not fetched then.
 */
async function provideFoodTable(db: Db): Promise<void> {
  if (loadedTableState(db)?.version === __FOOD_TABLE_VERSION__) {
    provideShippedFoodTable({
      version: __FOOD_TABLE_VERSION__,
      read: () => {
        throw new Error('the food table of this version is already loaded');
      },
    });
    return;
  }
  const res = await fetch(new URL('../../../server/foods/data/usda-sr.json.gz', import.meta.url));
  if (!res.ok) throw new Error(`the food table could not be loaded (${res.status})`);
  const gz = new Uint8Array(await res.arrayBuffer());
  const text = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
  provideShippedFoodTable(foodTableOf(gz, () => text));
}

interface Core {
  answer: ReturnType<typeof createLocalApi>;
  control<C extends CoreControl>(control: C): Promise<ControlResults[C]>;
}

async function open(): Promise<Core> {
  const start = performance.now();
  const sqlite3 = await sqlite3InitModule();
  registerWasmMemory('sqlite', () => sqlite3.wasm.heap8u().byteLength);
  const wasmMs = performance.now() - start;
  const pool = await installVfs(sqlite3);
  const vfsMs = performance.now() - start;
  const created = !pool.getFileNames().includes(DB_FILE);
  const db: WasmDatabase = openWasmChymeDatabase(sqlite3, new pool.OpfsSAHPoolDb(DB_FILE));
  const openMs = performance.now() - start;
  // The phone's own time zone on first open (the settings keep it after that, as on a computer).
  initSettings(db as unknown as Db, systemClock.now());
  provideSearchWords(searchWordsFile as SearchWordsFile);
  await provideFoodTable(db as unknown as Db);
  // better-sqlite3's Database is the service's type; the WASM connection implements the part of it the features use (sql-api.ts).
  const app = createAppContext(db as unknown as Db, systemClock, log);
  attachDerivedCache(app);
  // After each commit, as the event stream sends them: the screens refresh on what they show.
  const stopEvents = app.bus.subscribe((event) => {
    if (mayRead(OWNER, event.type)) scope.postMessage({ type: 'event', event: eventEnvelope(event) as unknown as ServiceEvent });
  });
  // The same sync as `chyme serve`'s: the engine (with Automerge) loads only once sync is set up.
  // A phone loses and finds its network often (a lift, a Wi-Fi handover) while a person waits for
  // the meal to reach the computers: it tries the relay again every second rather than a
  // computer's 5 s, so what waited goes out within about a second of the relay being reachable
  // again (issue 29: within 5 s). A failed try is one WebSocket open.
  const sync = createSync(app, { dbPath: DB_FILE, retryMs: PHONE_RELAY_RETRY_MS });
  sync.start();
  const api = createLocalApi(app, phoneRoutes(sync), OWNER);
  const coreMs = performance.now() - start;
  scope.postMessage({ type: 'ready', created, schemaVersion: schemaVersion(db), sqliteVersion: sqlite3.version.libVersion, wasmMs, vfsMs, openMs, coreMs });
  let erased = false;
  const controls: { [C in CoreControl]: () => Promise<ControlResults[C]> } = {
    progress: () => Promise.resolve({ meals: countMeals(app.db), join: sync.joinProgress() }),
    memory: () => Promise.resolve({ wasmBytes: wasmMemoryBytes() }),
    async forget() {
      // Told to the relay as `chyme sync leave` does (the other devices list this phone as gone);
      // an unreachable relay does not keep the phone from forgetting.
      let leftRelay = false;
      if (getSyncConfig(app.db)) {
        leftRelay = await sync.leave().then(
          () => true,
          (err: unknown) => {
            log.warn('sync: leaving on the relay failed; the phone forgets its history anyway', { error: String(err) });
            return false;
          },
        );
      }
      await sync.stop();
      stopEvents();
      erased = true;
      db.close();
      await pool.wipeFiles();
      // The pool's files and folder too (removeVfs releases their handles first), then anything
      // else in the origin's private file system: the relay's origin serves only this app.
      await pool.removeVfs();
      const root = await navigator.storage.getDirectory();
      const names: string[] = [];
      for await (const name of (root as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
      for (const name of names) await root.removeEntry(name, { recursive: true });
      return { erased: true, leftRelay };
    },
  };
  return {
    answer: (request) => (erased ? Promise.resolve(goneAnswer()) : api(request)),
    control: (control) => controls[control]() as Promise<ControlResults[typeof control]>,
  };
}

/** After "Forget this phone": the page reloads onto a new, empty database; nothing is served meanwhile. */
function goneAnswer() {
  const e = errors.unavailable('storage_erased', 'This phone\'s data was erased; reload the page.');
  return { status: e.status, headers: e.headers, body: JSON.stringify(e.toBody(newId('req'))) };
}

const opened = open();
opened.catch((err: unknown) => scope.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) }));

scope.onmessage = (event) => {
  const message = event.data;
  const { id } = message;
  void opened.then(async (core) => {
    if ('request' in message) {
      scope.postMessage({ id, answer: await core.answer(message.request) });
      return;
    }
    await core.control(message.control).then(
      (result) => scope.postMessage({ id, result }),
      (err: unknown) => scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
};
