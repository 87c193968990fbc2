import { z } from 'zod';
import { getSleep, listSleepPage, sleepPosition } from '../../db/sleep.js';
import { createSleep, removeSleep, SleepOverlapError, sleepResource } from '../../sleep/sessions.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, isoDateTime, listOf } from '../schemas.js';
import { checkDateOrder, cursorPosition, dateString, dateTimeString, idString, parseDateTime, queryInt } from '../validation.js';

export const SleepSessionSchema = z
  .object({
    object: z.literal('sleep.session'),
    id: z.string(),
    start: isoDateTime,
    end: isoDateTime,
    date: z.string().meta({ format: 'date', description: 'The day the sleep ended (its overnight score date).' }),
    duration_min: z.number().int(),
    efficiency: z.number().nullable(),
    awakenings: z.number().int().nullable(),
    source: z.string().meta({ description: 'Where the session came from: manual, apple_health, cronometer, myfitnesspal, oura, fitbit, or what an API client set.' }),
    nap: z.boolean().meta({ description: 'A nap: kept and listed, but it makes no overnight score.' }),
    created_at: isoDateTime,
  })
  .meta({ id: 'SleepSession' });

export const SleepCreateSchema = z
  .strictObject({
    start: dateTimeString,
    end: dateTimeString,
    efficiency: z.number().min(0).max(1, { message: 'must be a fraction from 0 to 1' }).nullable().optional(),
    awakenings: z.number().int().min(0).max(100).nullable().optional(),
    source: z.string().trim().min(1).max(50).optional(),
    nap: z.boolean().optional(),
  })
  .meta({ id: 'SleepCreate' });

const MAX_SLEEP_MS = 24 * 3600_000;

export const sleepRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/sleep/sessions',
    operationId: 'createSleepSession',
    summary: 'Log a sleep session',
    description: 'An overnight score is computed for it (event overnight_score.created). Sessions may not overlap.',
    tag: 'Sleep',
    access: 'sleep:write',
    body: SleepCreateSchema,
    responses: {
      201: { description: 'The session', schema: SleepSessionSchema },
      400: { description: 'Invalid', schema: ErrorSchema },
      409: { description: 'Overlaps another session', schema: ErrorSchema },
    },
    handler({ app, body }) {
      const start = parseDateTime(body.start).ms;
      const end = parseDateTime(body.end).ms;
      if (end <= start) throw errors.parameterInvalid('end', 'Invalid end: must be after start.');
      if (end - start > MAX_SLEEP_MS) throw errors.parameterInvalid('end', 'Invalid end: a sleep session may last at most 24 hours.');
      if (end > app.clock.now() + 5 * 60_000) throw errors.parameterInvalid('end', 'Invalid end: a sleep session cannot end in the future.');
      try {
        const session = createSleep(app, {
          startMs: start,
          endMs: end,
          efficiency: body.efficiency,
          awakenings: body.awakenings,
          source: body.source,
          nap: body.nap,
        });
        return { status: 201, body: sleepResource(session) };
      } catch (err) {
        if (err instanceof SleepOverlapError) throw errors.conflict('sleep_overlap', err.message, 'start');
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/sleep/sessions',
    operationId: 'listSleepSessions',
    summary: 'List sleep sessions',
    description: 'Sessions whose date lies in [start_date, end_date], newest first; pages like meals.',
    tag: 'Sleep',
    access: 'sleep:read',
    query: z.object({
      start_date: dateString,
      end_date: dateString,
      limit: queryInt(1, 100).optional(),
      starting_after: idString('sleep').optional(),
    }),
    responses: { 200: { description: 'A page of sessions', schema: listOf(SleepSessionSchema, 'SleepSessionList') } },
    handler({ app, query }) {
      checkDateOrder(query.start_date, query.end_date);
      const after = cursorPosition((id) => sleepPosition(app.db, id), query.starting_after);
      const page = listSleepPage(app.db, { startDay: query.start_date, endDay: query.end_date, after, limit: query.limit ?? 50 });
      return { body: { object: 'list', data: page.sessions.map(sleepResource), has_more: page.hasMore } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/sleep/sessions/{id}',
    operationId: 'getSleepSession',
    summary: 'Retrieve a sleep session',
    tag: 'Sleep',
    access: 'sleep:read',
    params: z.object({ id: idString('sleep') }),
    responses: { 200: { description: 'The session', schema: SleepSessionSchema }, 404: { description: 'No such session', schema: ErrorSchema } },
    handler({ app, params }) {
      const s = getSleep(app.db, params.id);
      if (!s) throw errors.resourceMissing('sleep session', params.id);
      return { body: sleepResource(s) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/sleep/sessions/{id}',
    operationId: 'deleteSleepSession',
    summary: 'Delete a sleep session',
    tag: 'Sleep',
    access: 'sleep:write',
    params: z.object({ id: idString('sleep') }),
    responses: { 200: { description: 'Deleted', schema: DeletedSchema }, 404: { description: 'No such session', schema: ErrorSchema } },
    handler({ app, params }) {
      if (!removeSleep(app, params.id)) throw errors.resourceMissing('sleep session', params.id);
      return { body: { id: params.id, object: 'sleep.session', deleted: true } };
    },
  }),
];
