import type { AppContext, Subsystem } from '../app-context.js';
import { announceDigestionChanges, hasPending, pendingAnnouncements } from './announcer.js';

/** How often the scheduler looks for changes caused by time passing (the contract allows 5 s). */
export const SCHEDULER_INTERVAL_MS = 1000;

/**
 * Notices what time passing changes — a digestive state ending, windows recalculated, a day
 * finishing and being scored — and announces it without any request. Each tick reads a day's
 * worth of rows; it opens a write transaction only when something is due.
 */
export function createScheduler(app: AppContext, options: { intervalMs?: number } = {}): Subsystem & { tick(): boolean } {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  // Changes made by requests are announced in the same transaction as the change itself.
  app.hooks.afterDataChange.push((emit) => announceDigestionChanges(app, emit));

  /** One check; returns true when it announced something. */
  function tick(): boolean {
    if (!hasPending(pendingAnnouncements(app))) return false;
    app.bus.write((emit) => announceDigestionChanges(app, emit));
    return true;
  }

  function startTimer(): void {
    timer = setInterval(() => {
      // While an import's worker or another program holds the write lock, the next tick (a second
      // later) announces: this one must not wait for it on the only thread.
      if (running || app.writes.blocked) return;
      running = true;
      try {
        tick();
      } catch (err) {
        app.log.error('scheduler tick failed', { error: String((err as Error)?.stack ?? err) });
      } finally {
        running = false;
      }
    }, options.intervalMs ?? SCHEDULER_INTERVAL_MS);
    timer.unref();
  }

  return {
    name: 'scheduler',
    tick,
    start() {
      startTimer();
      try {
        tick();
      } catch (err) {
        // A locked or full database: the timer tries again within a second.
        app.log.error('scheduler tick failed', { error: String((err as Error)?.stack ?? err) });
      }
    },
    async stop() {
      if (timer) clearInterval(timer);
    },
    async pause() {
      if (timer) clearInterval(timer);
    },
    resume() {
      startTimer();
    },
  };
}
