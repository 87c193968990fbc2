import { z } from 'zod';
import { mealPosition } from '../../db/meals.js';
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
import { dateString, idString } from '../../fields.js';
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
import { dayRangeQuery, seriesRange } from '../../digestion/ranges.js';
import { defineRoute } from '../route.js';
import { ErrorSchema, listOf } from '../schemas.js';
import { checkDateRange, cursorPosition, queryInt } from '../validation.js';

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
      'One score per day of [start_date, end_date] (default: the last 7 days; start_date alone: 7 days from it; end_date needs start_date), ascending, at most 366 days. Today is PENDING with a provisional score; a finished day with meals is SCORED; a finished day with nothing logged is UNSCORABLE (score and level null).',
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
      'One score per logged sleep session dated in [start_date, end_date] (the day the sleep ended; default the last 7 days; start_date alone: 7 days from it; end_date needs start_date), ascending, with features, a 14-night baseline and the deviation from it.',
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
    summary: 'Calculated windows: sleep readiness, fasting, next-meal suggestions, tonight',
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
