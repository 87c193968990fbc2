import { z } from 'zod';
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
} from '../../digestion/resources.js';
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
} from '../../digestion/service.js';
import { MealSchema } from '../../nutrition/meals.js';
import type { Scope } from '../../auth/scopes.js';
import { isoDateTime } from '../../fields.js';
import { JsonText } from '../../json-text.js';
import { currentSettings } from '../../settings.js';
import { addDays, isoUtc } from '../../time/tz.js';
import { defineRoute } from '../route.js';
import { ErrorSchema } from '../schemas.js';
import { queryInt } from '../validation.js';

export const SNAPSHOT_SECTIONS = ['meals', 'scores', 'overnight', 'state', 'windows', 'insights', 'timeline'] as const;
type Section = (typeof SNAPSHOT_SECTIONS)[number];

const SECTION_SCOPE: Record<Section, Scope> = {
  meals: 'nutrition:read',
  scores: 'digestion:read',
  overnight: 'digestion:read',
  state: 'digestion:read',
  windows: 'digestion:read',
  insights: 'digestion:read',
  timeline: 'digestion:read',
};

const SECTION_NAME = `(${SNAPSHOT_SECTIONS.join('|')})`;
/** Section names separated by commas (spaces and empty items are tolerated). */
const INCLUDE_PATTERN = new RegExp(`^[ ,]*${SECTION_NAME}( *,[ ,]*${SECTION_NAME})*[ ,]*$`);

const includeList = z
  .string()
  .regex(INCLUDE_PATTERN, { message: `must be a comma-separated list of ${SNAPSHOT_SECTIONS.join(', ')}` })
  .transform((s, ctx) => {
    const parts = s.split(',').map((p) => p.trim()).filter(Boolean);
    if (parts.length === 0) {
      ctx.addIssue({ code: 'custom', message: `must list at least one of ${SNAPSHOT_SECTIONS.join(', ')}` });
      return z.NEVER;
    }
    for (const p of parts) {
      if (!(SNAPSHOT_SECTIONS as readonly string[]).includes(p)) {
        ctx.addIssue({ code: 'custom', message: `unknown section "${p}"; known: ${SNAPSHOT_SECTIONS.join(', ')}` });
        return z.NEVER;
      }
    }
    return [...new Set(parts)] as Section[];
  })
  .meta({ description: `Comma-separated sections: ${SNAPSHOT_SECTIONS.join(', ')} (default: all).`, example: 'meals,state' });

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

export const snapshotRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/snapshot',
    operationId: 'getSnapshot',
    summary: 'Everything in one call',
    description:
      'The last `days` days (today and the days before it): meals (newest first) under nutrition.meals; daily scores under digestion.scores.daily and overnight scores under digestion.scores.overnight (ascending); state, windows, timeline (newest first) and insights under digestion. A section not included is absent. Each section needs its read scope: meals → nutrition:read, the others → digestion:read.',
    tag: 'Snapshot',
    access: 'authenticated',
    query: z.object({ days: queryInt(1, 90).optional(), include: includeList.optional() }),
    responses: { 200: { description: 'The snapshot', schema: SnapshotSchema }, 400: { description: 'Invalid parameters', schema: ErrorSchema }, 403: { description: 'A section needs a scope the key lacks', schema: ErrorSchema } },
    async handler({ app, query, requireScope }) {
      const include = new Set<Section>(query.include ?? SNAPSHOT_SECTIONS);
      for (const section of include) requireScope(SECTION_SCOPE[section]);
      const days = query.days ?? 7;
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

      // The meals section is cached as JSON bytes (mealsJsonByDays) and written as it is.
      const head = JSON.stringify({ object: 'snapshot', days, generated_at: isoUtc(ctx.now), user: { id: settings.userId, timezone: settings.timezone } });
      const rest = `},"digestion":${JSON.stringify(digestion)}}`;
      return {
        body: include.has('meals')
          ? new JsonText(`${head.slice(0, -1)},"nutrition":{"meals":`, mealsJsonByDays(app, start, ctx.today, ctx), rest)
          : new JsonText(`${head.slice(0, -1)},"nutrition":{${rest}`),
      };
    },
  }),
];
