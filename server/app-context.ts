import type { Clock } from './clock.js';
import type { Db } from './db/connection.js';
import type { Emit, EventBus } from './events/bus.js';
import type { Logger } from './logger.js';

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
}

export interface AppHooks {
  /**
   * Called inside a write transaction after meals, sleep or settings change (derived-data cache,
   * digestion announcements). Hooks must not assume an order: each reads what it needs.
   */
  afterDataChange: Array<(emit: Emit, change: DataChange) => void>;
}
