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
  patchMeal,
  removeMeal,
} from '../../nutrition/meals.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { checkDateOrder, cursorPosition, queryInt } from '../validation.js';

const idParams = z.object({ id: idString('meal') });
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
    responses: { 200: { description: 'The meal', schema: MealSchema }, 404: { description: 'No such meal', schema: ErrorSchema } },
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
    responses: { 201: { description: 'The new meal', schema: MealSchema }, ...errorResponses },
    handler({ app, body }) {
      return { status: 201, body: mealResource(createMeal(app, mealInputFrom(body, app.clock.now()))) };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/nutrition/meals/{id}',
    operationId: 'updateMeal',
    summary: 'Edit a meal',
    description: 'Only the fields sent change; macros and micros merge field by field (null clears one).',
    tag: 'Meals',
    access: 'nutrition:write',
    params: idParams,
    body: MealUpdateSchema,
    responses: { 200: { description: 'The updated meal', schema: MealSchema }, 404: { description: 'No such meal', schema: ErrorSchema }, ...errorResponses },
    handler({ app, params, body }) {
      const meal = patchMeal(app, params.id, mealPatchFrom(body, app.clock.now()));
      if (!meal) throw errors.resourceMissing('meal', params.id);
      return { body: mealResource(meal) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/nutrition/meals/{id}',
    operationId: 'deleteMeal',
    summary: 'Delete a meal',
    tag: 'Meals',
    access: 'nutrition:write',
    params: idParams,
    responses: { 200: { description: 'Deleted', schema: DeletedSchema }, 404: { description: 'No such meal', schema: ErrorSchema } },
    handler({ app, params }) {
      if (!removeMeal(app, params.id)) throw errors.resourceMissing('meal', params.id);
      return { body: { id: params.id, object: 'nutrition.meal', deleted: true } };
    },
  }),
];
