import type { Clock } from './clock.js';
import type { Db } from './db/connection.js';
import { EventBus, type Emit } from './events/bus.js';
import type { Logger } from './logger.js';
import { packageVersion } from './paths.js';
import { WriteGate } from './write-gate.js';

/**
 * What every part of the running service shares: one database, one clock, one event bus.
 * Built once by createService and handed to routers, the scheduler and the dispatcher.
 */
export interface AppContext {
  db: Db;
  clock: Clock;
  bus: EventBus;
  log: Logger;
  version: string;
  /** Hook points other subsystems fill in at start-up (kept optional so each can be absent in unit tests). */
  hooks: AppHooks;
  /**
   * Set while the service cannot serve (a restore is swapping the database file): the API answers
   * 503 with this code and message until it is cleared.
   */
  unavailable: { code: string; message: string } | null;
  /** Closed while an import's worker writes on its own connection: this thread's writers wait (write-gate.ts). */
  writes: WriteGate;
  /**
   * The better-sqlite3 addon this database was opened with (the desktop app's, built for
   * Electron), for the connections other threads open to the same file (an import's worker).
   */
  nativeBinding: string | undefined;
  /** This device's part in sync: whether it is the one that sends webhooks and MQTT (always, without sync). */
  role: DeviceRole;
}

export interface DeviceRole {
  /** True on the webhook host, and on every device without sync. */
  sendsWebhooks(): boolean;
  /** The device that sends them when it is another one (for messages), else null. */
  webhookHostName(): string | null;
}

const STANDALONE: DeviceRole = { sendsWebhooks: () => true, webhookHostName: () => null };

/** The context over an open database: the running service builds one, and so does each CLI command. */
export function createAppContext(db: Db, clock: Clock, log: Logger, nativeBinding?: string): AppContext {
  const bus = new EventBus(db, clock, (err) => log.error('event listener failed', { error: String(err) }));
  return { db, clock, bus, log, version: packageVersion(), hooks: { afterDataChange: [], databaseReplaced: [], savedMealsChanged: [], roleChanged: [] }, unavailable: null, writes: new WriteGate(), nativeBinding, role: STANDALONE };
}

/**
 * Points the whole service at a freshly opened database (after a restore): the shared context and
 * the event bus switch over, then every databaseReplaced hook drops what it derived from the old one.
 */
export function replaceDatabase(app: AppContext, db: Db): void {
  app.db = db;
  app.bus.useDatabase(db);
  for (const hook of app.hooks.databaseReplaced) hook();
}

/**
 * What a write changed, as far as derived digestion data is concerned. Every writer of meals,
 * sleep or settings says it through notifyDataChanged; the derived-data cache
 * (server/digestion/cache.ts) drops exactly the results whose declared input windows contain a
 * changed instant, and everything on 'everything'.
 *
 * - mealTimes: the timestamp of every meal inserted, deleted or edited (an edit gives both its old
 *   and its new timestamp, even when only its calories changed);
 * - sleepEnds: the end of every sleep session inserted, deleted or edited (old and new);
 * - 'everything': settings that re-date days (time zone, day start), imports, restores, or any
 *   write that cannot cheaply list its instants. Always correct, only slower to re-derive.
 *
 * A writer that touches none of meals, sleep, time zone or day start passes {}.
 */
export type DataChange = 'everything' | { mealTimes?: readonly number[]; sleepEnds?: readonly number[] };

/**
 * Runs the after-change hooks inside a write (meals, sleep, settings, import changed). `change`
 * defaults to 'everything', so a writer that does not say what it changed is still correct.
 */
export function notifyDataChanged(app: AppContext, emit: Emit, change: DataChange = 'everything'): void {
  for (const hook of app.hooks.afterDataChange) hook(emit, change);
}

/** A part of the service with its own lifecycle (webhook dispatcher, scheduler). */
export interface Subsystem {
  name: string;
  start(): void;
  stop(): Promise<void>;
  /** Holds its work while a restore swaps the database; resume() picks up the new one. */
  pause?(): Promise<void>;
  resume?(): void;
}

export interface AppHooks {
  /**
   * Called inside a write transaction after meals, sleep or settings change (derived-data cache,
   * digestion announcements). Hooks must not assume an order: each reads what it needs.
   */
  afterDataChange: Array<(emit: Emit, change: DataChange) => void>;
  /**
   * Called after a restore replaced the database under the running service: anything cached from
   * the old database (derived data, remembered ids) must be dropped here.
   */
  databaseReplaced: Array<() => void>;
  /** Called after a saved meal was created, changed or deleted (committed): Home Assistant's buttons follow. */
  savedMealsChanged: Array<() => void>;
  /** Called when this device became or stopped being the one that sends webhooks and MQTT. */
  roleChanged: Array<() => void>;
}
