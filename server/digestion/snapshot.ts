import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { Scope } from '../auth/scopes.js';
import { isoDateTime } from '../fields.js';
import { JsonText } from '../json-text.js';
import { MealSchema } from '../nutrition/meals.js';
import { currentSettings } from '../settings.js';
import { addDays, isoUtc } from '../time/tz.js';
import {
  dailyScoreResource,
  DailyScoreSchema,
  DigestiveStateSchema,
  insightResource,
  InsightSchema,
  overnightResource,
  OvernightScoreSchema,
  stateResource,
  timelineResource,
  TimelineEntrySchema,
  windowsResource,
  WindowsSchema,
} from './resources.js';
import {
  currentState,
  currentWindows,
  dailyScoresRange,
  digestionContext,
  insightsRangeFor,
  mealsJsonByDays,
  overnightRange,
  timelineEntries,
  warmRange,
} from './service.js';

/** The snapshot: everything for a review in one read (GET /v1/snapshot, the MCP tool get_snapshot). */

export const SNAPSHOT_SECTIONS = ['meals', 'scores', 'overnight', 'state', 'windows', 'insights', 'timeline'] as const;
export type SnapshotSection = (typeof SNAPSHOT_SECTIONS)[number];

/** The read scope each section needs. */
export const SECTION_SCOPE: Record<SnapshotSection, Scope> = {
  meals: 'nutrition:read',
  scores: 'digestion:read',
  overnight: 'digestion:read',
  state: 'digestion:read',
  windows: 'digestion:read',
  insights: 'digestion:read',
  timeline: 'digestion:read',
};

export const SNAPSHOT_MAX_DAYS = 90;
export const SNAPSHOT_DEFAULT_DAYS = 7;

export const SnapshotSchema = z
  .object({
    object: z.literal('snapshot'),
    days: z.number().int(),
    generated_at: isoDateTime,
    user: z.object({ id: z.string(), timezone: z.string() }),
    nutrition: z.object({ meals: z.array(MealSchema).optional() }),
    digestion: z.object({
      scores: z.object({ daily: z.array(DailyScoreSchema).optional(), overnight: z.array(OvernightScoreSchema).optional() }).optional(),
      state: DigestiveStateSchema.optional(),
      windows: WindowsSchema.optional(),
      timeline: z.array(TimelineEntrySchema).optional(),
      insights: z.array(InsightSchema).optional(),
    }),
  })
  .meta({ id: 'Snapshot' });

/**
 * The last `days` days (today and the days before it) of the sections asked for, as JSON text:
 * the meals section is cached as JSON bytes (mealsJsonByDays) and written as it is. The caller
 * has checked the scopes.
 */
export async function buildSnapshot(app: AppContext, days: number, include: ReadonlySet<SnapshotSection>): Promise<JsonText> {
  // A first 90-day fill is done a slice at a time; the reads below then come from the cache.
  const today = digestionContext(app).today;
  await warmRange(app, addDays(today, -(days - 1)), today, {
    daily: include.has('scores'),
    overnight: include.has('overnight'),
    timeline: include.has('timeline'),
    insights: include.has('insights'),
  });
  const ctx = digestionContext(app);
  const start = addDays(ctx.today, -(days - 1));
  const settings = currentSettings(app);

  const digestion: Record<string, unknown> = {};
  if (include.has('scores') || include.has('overnight')) {
    const scores: Record<string, unknown> = {};
    if (include.has('scores')) scores.daily = dailyScoresRange(app, start, ctx.today, ctx).map(dailyScoreResource);
    if (include.has('overnight')) scores.overnight = overnightRange(app, start, ctx.today, ctx).map(overnightResource);
    digestion.scores = scores;
  }
  if (include.has('state')) digestion.state = stateResource(currentState(app, ctx), ctx.now);
  if (include.has('windows')) digestion.windows = windowsResource(currentWindows(app, ctx));
  if (include.has('timeline')) digestion.timeline = timelineEntries(app, start, ctx.today, ctx).map(timelineResource);
  if (include.has('insights')) digestion.insights = insightsRangeFor(app, start, ctx.today, ctx).map(insightResource);

  const head = JSON.stringify({ object: 'snapshot', days, generated_at: isoUtc(ctx.now), user: { id: settings.userId, timezone: settings.timezone } });
  const rest = `},"digestion":${JSON.stringify(digestion)}}`;
  return include.has('meals')
    ? new JsonText(`${head.slice(0, -1)},"nutrition":{"meals":`, mealsJsonByDays(app, start, ctx.today, ctx), rest)
    : new JsonText(`${head.slice(0, -1)},"nutrition":{${rest}`);
}
