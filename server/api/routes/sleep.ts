import { z } from 'zod';
import { getSleep, listSleepPage, sleepPosition } from '../../db/sleep.js';
import { createSleep, removeSleep, SleepOverlapError, sleepResource } from '../../sleep/sessions.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, isoDateTime, listOf } from '../schemas.js';
import { boundedDateTime, nonBlankText, checkDateOrder, checkNotTooFarAhead, cursorPosition, dateString, dateTimeString, idString, parseDateTime, queryInt } from '../validation.js';

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
    source: z.string(),
    created_at: isoDateTime,
  })
  .meta({ id: 'SleepSession' });

/** A session may end a little ahead of the service clock (a tracker's clock runs fast), not more. */
const SLEEP_END_MAX_FUTURE = { iso: 'PT5M', ms: 5 * 60_000, words: '5 minutes' };

export const SleepCreateSchema = z
  .strictObject({
    start: dateTimeString,
    end: boundedDateTime({ maxFuture: SLEEP_END_MAX_FUTURE }),
    efficiency: z.number().min(0).max(1, { message: 'must be a fraction from 0 to 1' }).nullable().optional(),
    awakenings: z.number().int().min(0).max(100).nullable().optional(),
    source: nonBlankText(50).optional(),
  })
  .meta({ id: 'SleepCreate' });

const MAX_SLEEP_MS = 24 * 3600_000;

export const sleepRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/sleep/sessions',
    operationId: 'createSleepSession',
    summary: 'Log a sleep session',
    description:
      'end must be after start, at most 24 hours later. An overnight score is computed for it (event overnight_score.created). Sessions may not overlap (409).',
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
      checkNotTooFarAhead('end', end, app.clock.now(), SLEEP_END_MAX_FUTURE, 'a sleep session cannot end in the future.');
      try {
        const session = createSleep(app, {
          startMs: start,
          endMs: end,
          efficiency: body.efficiency,
          awakenings: body.awakenings,
          source: body.source,
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
