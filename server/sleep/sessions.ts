import { notifyDataChanged, type AppContext } from '../app-context.js';
import { deleteSleep, findOverlappingSleep, getSleep, insertSleep, type SleepRecord } from '../db/sleep.js';
import { newId } from '../ids.js';
import { currentSettings } from '../settings.js';
import { announceOvernightScore } from '../scheduler/announcer.js';
import { dayOf, isoUtc, parseClock } from '../time/tz.js';

export interface SleepInput {
  startMs: number;
  endMs: number;
  efficiency?: number | null | undefined;
  awakenings?: number | null | undefined;
  source?: string | undefined;
}

export function sleepResource(s: SleepRecord): Record<string, unknown> {
  return {
    object: 'sleep.session',
    id: s.id,
    start: isoUtc(s.startMs),
    end: isoUtc(s.endMs),
    date: s.day,
    duration_min: Math.round((s.endMs - s.startMs) / 60_000),
    efficiency: s.efficiency,
    awakenings: s.awakenings,
    source: s.source,
    created_at: isoUtc(s.createdMs),
  };
}

export class SleepOverlapError extends Error {
  constructor(readonly existing: SleepRecord) {
    super(`This sleep overlaps session ${existing.id} (${isoUtc(existing.startMs)} to ${isoUtc(existing.endMs)}); delete that one first.`);
  }
}

/** The user's day a sleep belongs to: the day it ended on (zone and day start, as for meals). */
export function sleepDay(app: AppContext, endMs: number): string {
  const settings = currentSettings(app);
  return dayOf(endMs, settings.timezone, parseClock(settings.dayStart));
}

export function buildSleep(app: AppContext, input: SleepInput, id: string, nowMs: number): SleepRecord {
  return {
    id,
    startMs: input.startMs,
    endMs: input.endMs,
    day: sleepDay(app, input.endMs),
    efficiency: input.efficiency ?? null,
    awakenings: input.awakenings ?? null,
    source: input.source ?? 'manual',
    createdMs: nowMs,
  };
}

/** Logs a sleep session; its overnight score is announced by the digestion hooks. */
export function createSleep(app: AppContext, input: SleepInput): SleepRecord {
  return app.bus.write((emit) => {
    const overlap = findOverlappingSleep(app.db, input.startMs, input.endMs);
    if (overlap) throw new SleepOverlapError(overlap);
    const session = buildSleep(app, input, newId('sleep'), app.clock.now());
    insertSleep(app.db, session);
    announceOvernightScore(app, emit, session.id);
    notifyDataChanged(app, emit, { sleepEnds: [session.endMs] });
    return session;
  });
}

export function removeSleep(app: AppContext, id: string): SleepRecord | undefined {
  return app.bus.write((emit) => {
    const session = getSleep(app.db, id);
    if (!session) return undefined;
    deleteSleep(app.db, id);
    notifyDataChanged(app, emit, { sleepEnds: [session.endMs] });
    return session;
  });
}
