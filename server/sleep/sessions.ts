import { z } from 'zod';
import { notifyDataChanged, type AppContext } from '../app-context.js';
import { deleteSleep, findOverlappingSleep, getSleep, insertSleep, type SleepRecord } from '../db/sleep.js';
import { ConflictError, InvalidInputError } from '../domain-errors.js';
import { boundedDateTime, dateTimeString, isoDateTime, nonBlankText, parseDateTime, type FutureBound } from '../fields.js';
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
  nap?: boolean | undefined;
}

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
export const SleepSessionSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('sleep.session'),
      id: z.string(),
      start: isoDateTime,
      end: isoDateTime,
      date: z.string().meta({ format: 'date', description: 'The day the sleep ended (its overnight score date).' }),
      duration_min: z.number().int(),
      efficiency: z.number().nullable(),
      awakenings: z.number().int().nullable(),
      source: z.string().meta({ description: 'Where the session came from: manual, an importer (apple_health, oura, fitbit), or what an API client set.' }),
      nap: z.boolean().meta({ description: 'A nap: kept and listed, but it makes no overnight score.' }),
      created_at: isoDateTime,
    })
    .meta({ id: 'SleepSession' }),
);

/** A session may end a little ahead of the service clock (a tracker's clock runs fast), not more. */
const SLEEP_END_MAX_FUTURE: FutureBound = { iso: 'PT5M', ms: 5 * 60_000, words: '5 minutes' };

export const SleepCreateSchema = z.lazy(() =>
  z
    .strictObject({
      start: dateTimeString,
      end: boundedDateTime({ maxFuture: SLEEP_END_MAX_FUTURE }),
      efficiency: z.number().min(0).max(1, { message: 'must be a fraction from 0 to 1' }).nullable().optional(),
      awakenings: z.number().int().min(0).max(100).nullable().optional(),
      source: nonBlankText(50).optional(),
      nap: z.boolean().optional(),
    })
    .meta({ id: 'SleepCreate' }),
);

const MAX_SLEEP_MS = 24 * 3600_000;

/** A validated create body as a sleep input: it ends after it starts, within 24 h, not in the future. */
export function sleepInputFrom(body: z.output<typeof SleepCreateSchema>, nowMs: number): SleepInput {
  const startMs = parseDateTime(body.start).ms;
  const endMs = parseDateTime(body.end).ms;
  if (endMs <= startMs) throw new InvalidInputError('end', 'Invalid end: must be after start.');
  if (endMs - startMs > MAX_SLEEP_MS) throw new InvalidInputError('end', 'Invalid end: a sleep session may last at most 24 hours.');
  if (endMs > nowMs + SLEEP_END_MAX_FUTURE.ms) throw new InvalidInputError('end', 'Invalid end: a sleep session cannot end in the future.');
  return { startMs, endMs, efficiency: body.efficiency, awakenings: body.awakenings, source: body.source, nap: body.nap };
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
    nap: s.nap,
    created_at: isoUtc(s.createdMs),
  };
}

export class SleepOverlapError extends ConflictError {
  constructor(readonly existing: SleepRecord) {
    super(
      'sleep_overlap',
      `This sleep overlaps session ${existing.id} (${isoUtc(existing.startMs)} to ${isoUtc(existing.endMs)}); delete that one first.`,
      'start',
    );
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
    nap: input.nap ?? false,
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
    if (!session.nap) announceOvernightScore(app, emit, session.id);
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
