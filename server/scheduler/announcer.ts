import type { AppContext } from '../app-context.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { MAX_DIGESTION_LOOKBACK_MS, type DigestionWindows, type DigestiveState } from '../engine/index.js';
import type { Emit } from '../events/bus.js';
import { addDays, isoUtc } from '../time/tz.js';
import { dailyScoreResource, overnightResource, stateResource, windowsResource } from '../digestion/resources.js';
import {
  currentStateAndWindows,
  dailyScoresRange,
  digestionContext,
  overnightForSleep,
  type DigestionContext,
} from '../digestion/service.js';

/**
 * Notices changes of derived digestion data and announces each once, whether a request caused it
 * (a meal logged) or time passing did (the scheduler). What was last announced is stored in the
 * same transaction as the event, so a restart never announces the same change twice.
 */

const STATE_KEY = 'announced.digestion_state';
const WINDOWS_KEY = 'announced.windows';
const SCORED_THROUGH_KEY = 'announced.daily_scores_through';

/** How far back finished days are announced after downtime (older ones are history, not news). */
const MAX_CATCH_UP_DAYS = 7;

interface AnnouncedState {
  state: DigestiveState['state'];
  since: number;
}

/**
 * What identifies a recalculation of the windows: the instants derived from meals and sleep. A
 * sleep_ready_at that is simply "now", or a fasted_at that is simply the look-back before now (no
 * recent meal), moves every second and is not a change.
 */
function windowsFingerprint(w: DigestionWindows, now: number): string {
  return JSON.stringify({
    sleepReadyAt: w.sleepReadyAt === now ? null : w.sleepReadyAt,
    fastedAt: w.fastedAt === now - MAX_DIGESTION_LOOKBACK_MS ? null : w.fastedAt,
    suggestions: w.nextMealSuggestions.map((s) => [s.kind, s.at]),
    // Getting up (the usual wake time passing) is a recalculation too: the windows now speak of tonight.
    tonight: w.tonight && [w.tonight.wokeAt, w.tonight.bedtimeAt, w.tonight.sleepReadyAt],
  });
}

export interface PendingAnnouncements {
  state?: DigestiveState;
  previousState?: AnnouncedState | undefined;
  windows?: DigestionWindows;
  finishedDays?: { from: string; to: string };
}

/** Reads what would be announced now; empty when nothing changed. No writes. */
export function pendingAnnouncements(app: AppContext, ctx: DigestionContext = digestionContext(app)): PendingAnnouncements {
  const out: PendingAnnouncements = {};
  const { state, windows } = currentStateAndWindows(app, ctx);
  const previous = readServiceState<AnnouncedState>(app.db, STATE_KEY);
  if (!previous || previous.state !== state.state) {
    out.state = state;
    out.previousState = previous;
  }
  if (readServiceState<string>(app.db, WINDOWS_KEY) !== windowsFingerprint(windows, ctx.now)) out.windows = windows;
  const yesterday = addDays(ctx.today, -1);
  const through = readServiceState<string>(app.db, SCORED_THROUGH_KEY);
  if (through === undefined || through < yesterday) {
    const catchUpFrom = addDays(yesterday, -(MAX_CATCH_UP_DAYS - 1));
    const from = through === undefined ? ctx.today : addDays(through, 1) > catchUpFrom ? addDays(through, 1) : catchUpFrom;
    out.finishedDays = { from, to: yesterday };
  }
  return out;
}

/**
 * Announces pending changes; call inside EventBus.write. The first run on a database records the
 * current state, windows and day as known without announcing them (they are not changes).
 */
export function announceDigestionChanges(app: AppContext, emit: Emit): void {
  const ctx = digestionContext(app);
  const pending = pendingAnnouncements(app, ctx);
  if (pending.state) {
    const prev = pending.previousState;
    if (prev) {
      emit('digestion.state_changed', stateResource(pending.state, ctx.now), {
        previousAttributes: { state: prev.state, since: isoUtc(prev.since) },
      });
    }
    writeServiceState(app.db, STATE_KEY, { state: pending.state.state, since: pending.state.since } satisfies AnnouncedState);
  }
  if (pending.windows) {
    const firstRun = readServiceState<string>(app.db, WINDOWS_KEY) === undefined;
    if (!firstRun) emit('windows.updated', windowsResource(pending.windows));
    writeServiceState(app.db, WINDOWS_KEY, windowsFingerprint(pending.windows, ctx.now));
  }
  if (pending.finishedDays) {
    const { from, to } = pending.finishedDays;
    if (from <= to) {
      for (const score of dailyScoresRange(app, from, to, ctx)) {
        if (score.scoreState === 'SCORED') emit('gut_score.created', dailyScoreResource(score));
      }
    }
    writeServiceState(app.db, SCORED_THROUGH_KEY, to);
  }
}

/** Announces the overnight score of a sleep session just logged; call inside EventBus.write. */
export function announceOvernightScore(app: AppContext, emit: Emit, sleepId: string): void {
  const score = overnightForSleep(app, sleepId);
  if (score) emit('overnight_score.created', overnightResource(score));
}

export function hasPending(p: PendingAnnouncements): boolean {
  return p.state !== undefined || p.windows !== undefined || p.finishedDays !== undefined;
}
