import { z } from 'zod';
import { mealPosition } from '../../db/meals.js';
import {
  dailyScoreResource,
  insightResource,
  overnightResource,
  stateResource,
  timelineResource,
  windowsResource,
} from '../../digestion/resources.js';
import {
  currentState,
  currentWindows,
  dailyScoresRange,
  digestionContext,
  insightsRangeFor,
  overnightRange,
  timelineEntries,
  warmRange,
} from '../../digestion/service.js';
import { addDays } from '../../time/tz.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { ErrorSchema, isoDateTime, listOf } from '../schemas.js';
import { checkDateRange, cursorPosition, dateString, idString, queryInt } from '../validation.js';

const contribution = z.enum(['positive', 'neutral', 'attention']);
const componentSchema = z.object({ value: z.number(), contribution });
const levelSchema = z.enum(['optimal', 'good', 'fair', 'pay_attention']).nullable();
const scoreState = z.enum(['SCORED', 'PENDING', 'UNSCORABLE']);

export const DigestiveStateSchema = z
  .object({
    object: z.literal('digestion.state'),
    state: z.enum(['fasted', 'processing', 'settling']),
    minutes_remaining: z.number().int().meta({ description: 'Minutes to the next change of state; 0 when fasted.' }),
    confidence: z.number(),
    active_meals: z.number().int(),
    since: isoDateTime,
    fasted_at: isoDateTime.meta({ description: 'When fasting began (fasted) or will begin if nothing more is eaten.' }),
    next_change_at: isoDateTime.nullable(),
    calculated_at: isoDateTime,
  })
  .meta({ id: 'DigestiveState' });

export const TimelineEntrySchema = z
  .object({
    object: z.literal('digestion.timeline'),
    meal_id: z.string(),
    meal_time: isoDateTime,
    meal_type: z.enum(['breakfast', 'lunch', 'dinner', 'snack']),
    total_processing_min: z.number().int(),
    phases: z.object({ fed_end_min: z.number().int(), processing_end_min: z.number().int(), settling_end_min: z.number().int() }),
    confidence: z.number(),
    kcal: z.number(),
    energy_source: z.enum(['logged', 'macros', 'foods', 'assumed', 'zero_calorie_drink']),
    form: z.enum(['solid', 'liquid']),
    shared_with_meals: z.number().int().meta({ description: 'Other meals that shared the stomach with this one.' }),
  })
  .meta({ id: 'TimelineEntry' });

export const DailyScoreSchema = z
  .object({
    object: z.literal('digestion.score'),
    date: z.string().meta({ format: 'date' }),
    score: z.number().int().min(0).max(100).nullable(),
    score_state: scoreState,
    level: levelSchema,
    components: z.object({
      overnight: componentSchema.extend({ source: z.enum(['sleep', 'estimated']) }),
      fasted_ratio: componentSchema,
      regularity: componentSchema,
      circadian: componentSchema,
    }),
    calibrating: z.boolean(),
    confidence: z.number(),
  })
  .meta({ id: 'DailyScore' });

export const OvernightScoreSchema = z
  .object({
    object: z.literal('digestion.overnight_score'),
    id: z.string(),
    sleep_session_id: z.string(),
    date: z.string().meta({ format: 'date' }),
    score: z.number().int().min(0).max(100).nullable(),
    score_state: scoreState,
    level: levelSchema,
    sleep: z.object({ start: isoDateTime, end: isoDateTime, duration_min: z.number().int() }),
    last_meal_at: isoDateTime.nullable(),
    features: z.record(z.string(), z.object({ value: z.number(), contribution, score: z.number() })),
    baseline: z.object({ score: z.number().nullable(), days: z.number().int() }),
    deviation: z.number().nullable(),
    confidence: z.number(),
  })
  .meta({ id: 'OvernightScore' });

export const WindowsSchema = z
  .object({
    object: z.literal('digestion.windows'),
    sleep_ready_at: isoDateTime,
    fasted_at: isoDateTime,
    next_meal_suggestions: z.array(z.object({ kind: z.string(), at: isoDateTime, reason: z.string() })),
    calculated_at: isoDateTime,
  })
  .meta({ id: 'Windows' });

export const InsightSchema = z
  .object({
    object: z.literal('digestion.insight'),
    id: z.string(),
    date: z.string().meta({ format: 'date' }),
    kind: z.string(),
    severity: z.enum(['info', 'positive', 'warning']),
    title: z.string(),
    detail: z.string(),
    basis: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])),
  })
  .meta({ id: 'Insight' });

const dayRangeQuery = z.object({ start_date: dateString.optional(), end_date: dateString.optional() });
const DEFAULT_SERIES_DAYS = 7;

/** start_date/end_date for day series: both, or neither for the last 7 days ending today. */
function seriesRange(query: { start_date?: string | undefined; end_date?: string | undefined }, today: string): { start: string; end: string } {
  if (query.start_date === undefined && query.end_date !== undefined) throw errors.parameterMissing('start_date');
  const end = query.end_date ?? (query.start_date === undefined ? today : addDays(query.start_date, DEFAULT_SERIES_DAYS - 1));
  const start = query.start_date ?? addDays(end, -(DEFAULT_SERIES_DAYS - 1));
  checkDateRange(start, end);
  return { start, end };
}

const readErrors = { 400: { description: 'Invalid parameters', schema: ErrorSchema }, 403: { description: 'Missing digestion:read', schema: ErrorSchema } };

export const digestionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/digestion/state',
    operationId: 'getDigestiveState',
    summary: 'Current digestive state',
    description: 'fasted → processing → settling → fasted. Computed from the last 24 h of meals at the moment of the request.',
    tag: 'Digestion',
    access: 'digestion:read',
    responses: { 200: { description: 'The state now', schema: DigestiveStateSchema } },
    handler({ app }) {
      const ctx = digestionContext(app);
      return { body: stateResource(currentState(app, ctx), ctx.now) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/digestion/timeline',
    operationId: 'listTimeline',
    summary: 'Per-meal digestion phases',
    description:
      'One entry per meal whose day lies in [start_date, end_date] (YYYY-MM-DD), newest first, paged like meals (starting_after = a meal id). Meals under 15 kcal do not start digestion and have no entry.',
    tag: 'Digestion',
    access: 'digestion:read',
    query: z.object({
      start_date: dateString,
      end_date: dateString,
      limit: queryInt(1, 100).optional(),
      starting_after: idString('meal').optional(),
    }),
    responses: { 200: { description: 'A page of timeline entries', schema: listOf(TimelineEntrySchema, 'TimelineList') }, ...readErrors },
    async handler({ app, query }) {
      checkDateRange(query.start_date, query.end_date);
      await warmRange(app, query.start_date, query.end_date, { timeline: true });
      let entries = timelineEntries(app, query.start_date, query.end_date);
      const at = cursorPosition((id) => mealPosition(app.db, id), query.starting_after);
      if (at) entries = entries.filter((e) => e.mealTime < at.timestampMs || (e.mealTime === at.timestampMs && e.mealId < at.id));
      const limit = query.limit ?? 50;
      return { body: { object: 'list', data: entries.slice(0, limit).map(timelineResource), has_more: entries.length > limit } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/digestion/scores/daily',
    operationId: 'listDailyScores',
    summary: 'Daily gut scores',
    description:
      'One score per day of [start_date, end_date] (default: the last 7 days), ascending, at most 366 days. Today is PENDING with a provisional score; a finished day with meals is SCORED; a finished day with nothing logged is UNSCORABLE (score and level null).',
    tag: 'Digestion',
    access: 'digestion:read',
    query: dayRangeQuery,
    responses: { 200: { description: 'Scores by day', schema: listOf(DailyScoreSchema, 'DailyScoreList') }, ...readErrors },
    async handler({ app, query }) {
      const { start, end } = seriesRange(query, digestionContext(app).today);
      await warmRange(app, start, end, { daily: true });
      const ctx = digestionContext(app);
      return { body: { object: 'list', data: dailyScoresRange(app, start, end, ctx).map(dailyScoreResource), has_more: false } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/digestion/scores/overnight',
    operationId: 'listOvernightScores',
    summary: 'Overnight (sleep-derived) gut scores',
    description:
      'One score per logged sleep session dated in [start_date, end_date] (the day the sleep ended; default the last 7 days), ascending, with features, a 14-night baseline and the deviation from it.',
    tag: 'Digestion',
    access: 'digestion:read',
    query: dayRangeQuery,
    responses: { 200: { description: 'Overnight scores', schema: listOf(OvernightScoreSchema, 'OvernightScoreList') }, ...readErrors },
    async handler({ app, query }) {
      const { start, end } = seriesRange(query, digestionContext(app).today);
      await warmRange(app, start, end, { overnight: true });
      const ctx = digestionContext(app);
      return { body: { object: 'list', data: overnightRange(app, start, end, ctx).map(overnightResource), has_more: false } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/digestion/windows',
    operationId: 'getWindows',
    summary: 'Calculated windows: sleep readiness, fasting, next-meal suggestions',
    tag: 'Digestion',
    access: 'digestion:read',
    responses: { 200: { description: 'The windows now', schema: WindowsSchema } },
    handler: ({ app }) => ({ body: windowsResource(currentWindows(app)) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/digestion/insights',
    operationId: 'listInsights',
    summary: 'Insights drawn from the data',
    description: 'Patterns found in the last `days` days (1–90, default 14), each with the numbers it rests on in `basis`.',
    tag: 'Digestion',
    access: 'digestion:read',
    query: z.object({ days: queryInt(1, 90).optional() }),
    responses: { 200: { description: 'Insights', schema: listOf(InsightSchema, 'InsightList') }, ...readErrors },
    async handler({ app, query }) {
      const days = query.days ?? 14;
      const today = digestionContext(app).today;
      await warmRange(app, addDays(today, -(days - 1)), today, { insights: true });
      const ctx = digestionContext(app);
      const data = insightsRangeFor(app, addDays(ctx.today, -(days - 1)), ctx.today, ctx).map(insightResource);
      return { body: { object: 'list', data, has_more: false } };
    },
  }),
];
