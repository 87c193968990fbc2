import { z } from 'zod';
import { getSleep, listSleepPage, sleepPosition } from '../../db/sleep.js';
import { dateString, idString } from '../../fields.js';
import { createSleep, removeSleep, SleepCreateSchema, sleepInputFrom, sleepResource, SleepSessionSchema } from '../../sleep/sessions.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { checkDateOrder, cursorPosition, queryInt } from '../validation.js';

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
      return { status: 201, body: sleepResource(createSleep(app, sleepInputFrom(body, app.clock.now()))) };
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
