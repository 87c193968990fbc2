import { z } from 'zod';
import { getMeal, listMealsPage, mealPosition } from '../../db/meals.js';
import { dateString, idString } from '../../fields.js';
import {
  createMeal,
  MealCreateSchema,
  mealInputFrom,
  mealPatchFrom,
  mealResource,
  MealSchema,
  mealType,
  MealUpdateSchema,
  resourceETag,
  patchMeal,
  removeMeal,
} from '../../nutrition/meals.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { checkDateOrder, cursorPosition, queryInt } from '../validation.js';

const idParams = z.object({ id: idString('meal') });
const etagHeader = { ETag: 'The meal\'s current version: send it back in If-Match to change or delete the meal only if nobody has since.' };
const ifMatchHeader = {
  name: 'If-Match',
  description:
    'An ETag from an earlier answer about this meal (or *): the write happens only if the meal is still that version, else 412 precondition_failed and nothing changes. Without it, the write happens whatever changed meanwhile.',
};
const preconditionFailed = { description: 'If-Match named a version the meal no longer has; the ETag header gives the current one', schema: ErrorSchema };
/** The If-Match header as sent (several headers joined by commas, as lists are), or undefined. */
const ifMatchOf = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);
const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};

export const mealRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/nutrition/meals',
    operationId: 'listMeals',
    summary: 'List meals',
    description:
      'Meals whose day lies in [start_date, end_date], newest first (timestamp desc, then id desc). Page with starting_after=<last id of the previous page>.',
    tag: 'Meals',
    access: 'nutrition:read',
    query: z.object({
      start_date: dateString,
      end_date: dateString,
      limit: queryInt(1, 100).optional(),
      starting_after: idString('meal').optional(),
      meal_type: mealType.optional(),
    }),
    responses: { 200: { description: 'A page of meals', schema: listOf(MealSchema, 'MealList') }, ...errorResponses },
    handler({ app, query }) {
      checkDateOrder(query.start_date, query.end_date);
      const after = cursorPosition((id) => mealPosition(app.db, id), query.starting_after);
      const page = listMealsPage(app.db, {
        startDay: query.start_date,
        endDay: query.end_date,
        mealType: query.meal_type,
        after,
        limit: query.limit ?? 50,
      });
      return { body: { object: 'list', data: page.meals.map(mealResource), has_more: page.hasMore } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/nutrition/meals/{id}',
    operationId: 'getMeal',
    summary: 'Retrieve a meal',
    tag: 'Meals',
    access: 'nutrition:read',
    params: idParams,
    responses: { 200: { description: 'The meal', schema: MealSchema, headers: etagHeader }, 404: { description: 'No such meal', schema: ErrorSchema } },
    etag: resourceETag,
    handler({ app, params }) {
      const meal = getMeal(app.db, params.id);
      if (!meal) throw errors.resourceMissing('meal', params.id);
      return { body: mealResource(meal) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/nutrition/meals',
    operationId: 'createMeal',
    summary: 'Log a meal',
    description:
      'timestamp and meal_type are required. A food entry is {name, calories} or {food_id, quantity, unit} (computed from the food). Without macros.calories, calories are the sum of the foods, else 4·protein + 4·carbs + 9·fat; every other nutrient not typed in is the sum of the foods that know it (see nutrient_sources). A timestamp written with an offset records where the meal was eaten; with Z, the user time zone decides its day. Accepts an Idempotency-Key header.',
    tag: 'Meals',
    access: 'nutrition:write',
    body: MealCreateSchema,
    responses: { 201: { description: 'The new meal', schema: MealSchema, headers: etagHeader }, ...errorResponses },
    etag: resourceETag,
    handler({ app, body }) {
      return { status: 201, body: mealResource(createMeal(app, mealInputFrom(body, app.clock.now()))) };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/nutrition/meals/{id}',
    operationId: 'updateMeal',
    summary: 'Edit a meal',
    description:
      'Only the fields sent change; macros and micros merge field by field (null clears one; null calories go back to the sum of the foods, else 4/4/9 kcal per gram of macros). With If-Match, only if the meal is still the version named.',
    tag: 'Meals',
    access: 'nutrition:write',
    params: idParams,
    body: MealUpdateSchema,
    requestHeaders: [ifMatchHeader],
    responses: {
      200: { description: 'The updated meal', schema: MealSchema, headers: etagHeader },
      404: { description: 'No such meal', schema: ErrorSchema },
      412: preconditionFailed,
      ...errorResponses,
    },
    etag: resourceETag,
    handler({ app, params, body, req }) {
      const meal = patchMeal(app, params.id, mealPatchFrom(body, app.clock.now()), { ifMatch: ifMatchOf(req.headers['if-match']) });
      if (!meal) throw errors.resourceMissing('meal', params.id);
      return { body: mealResource(meal) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/nutrition/meals/{id}',
    operationId: 'deleteMeal',
    summary: 'Delete a meal',
    description: 'With If-Match, only if the meal is still the version named.',
    tag: 'Meals',
    access: 'nutrition:write',
    params: idParams,
    requestHeaders: [ifMatchHeader],
    responses: { 200: { description: 'Deleted', schema: DeletedSchema }, 404: { description: 'No such meal', schema: ErrorSchema }, 412: preconditionFailed },
    handler({ app, params, req }) {
      if (!removeMeal(app, params.id, { ifMatch: ifMatchOf(req.headers['if-match']) })) throw errors.resourceMissing('meal', params.id);
      return { body: { id: params.id, object: 'nutrition.meal', deleted: true } };
    },
  }),
];
