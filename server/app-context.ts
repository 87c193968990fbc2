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

/** Runs the after-change hooks inside a write (meals, sleep, settings, import changed). */
export function notifyDataChanged(app: AppContext, emit: Emit): void {
  for (const hook of app.hooks.afterDataChange) hook(emit);
}

/** A part of the service with its own lifecycle (webhook dispatcher, scheduler). */
export interface Subsystem {
  name: string;
  start(): void;
  stop(): Promise<void>;
}

export interface AppHooks {
  /** Called inside a write transaction after meals, sleep or settings change (digestion announcements). */
  afterDataChange: Array<(emit: Emit) => void>;
}
