import { z } from 'zod';
import { idString, parseDateTime } from '../../fields.js';
import { checkTimestamp, mealResource, MealSchema, mealTimestamp, mealType } from '../../nutrition/meals.js';
import {
  allSavedMeals,
  createSavedMeal,
  findSavedMeal,
  logSavedMeal,
  patchSavedMeal,
  removeSavedMeal,
  SavedMealCreateSchema,
  savedMealPatchFrom,
  savedMealResource,
  SavedMealSchema,
  SavedMealUpdateSchema,
} from '../../nutrition/saved-meals.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';

const LogSavedMealSchema = z.strictObject({ timestamp: mealTimestamp, meal_type: mealType.optional() }).meta({ id: 'SavedMealLog' });

const idParams = z.object({ id: idString('smeal') });
const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};

export const savedMealRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/nutrition/saved_meals',
    operationId: 'listSavedMeals',
    summary: 'List saved meals',
    description: 'Every saved meal, by name.',
    tag: 'Saved meals',
    access: 'nutrition:read',
    responses: { 200: { description: 'The saved meals', schema: listOf(SavedMealSchema, 'SavedMealList') }, ...errorResponses },
    handler: ({ app }) => ({ body: { object: 'list', data: allSavedMeals(app).map(savedMealResource), has_more: false } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/nutrition/saved_meals/{id}',
    operationId: 'getSavedMeal',
    summary: 'Retrieve a saved meal',
    tag: 'Saved meals',
    access: 'nutrition:read',
    params: idParams,
    responses: { 200: { description: 'The saved meal', schema: SavedMealSchema }, 404: { description: 'No such saved meal', schema: ErrorSchema } },
    handler({ app, params }) {
      const saved = findSavedMeal(app, params.id);
      if (!saved) throw errors.resourceMissing('saved meal', params.id);
      return { body: savedMealResource(saved) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/nutrition/saved_meals',
    operationId: 'createSavedMeal',
    summary: 'Save a meal',
    description:
      'A named set of food entries (like "usual breakfast"), in the same shapes a meal accepts. Entries with food_id are computed now and keep these numbers.',
    tag: 'Saved meals',
    access: 'nutrition:write',
    body: SavedMealCreateSchema,
    responses: { 201: { description: 'The new saved meal', schema: SavedMealSchema }, ...errorResponses },
    handler({ app, body }) {
      const saved = createSavedMeal(app, { name: body.name, mealType: body.meal_type ?? null, foods: body.foods });
      return { status: 201, body: savedMealResource(saved) };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/nutrition/saved_meals/{id}',
    operationId: 'updateSavedMeal',
    summary: 'Edit a saved meal',
    description: 'Only the fields sent change; foods replaces the list.',
    tag: 'Saved meals',
    access: 'nutrition:write',
    params: idParams,
    body: SavedMealUpdateSchema,
    responses: { 200: { description: 'The saved meal', schema: SavedMealSchema }, 404: { description: 'No such saved meal', schema: ErrorSchema }, ...errorResponses },
    handler({ app, params, body }) {
      const saved = patchSavedMeal(app, params.id, savedMealPatchFrom(body));
      if (!saved) throw errors.resourceMissing('saved meal', params.id);
      return { body: savedMealResource(saved) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/nutrition/saved_meals/{id}',
    operationId: 'deleteSavedMeal',
    summary: 'Delete a saved meal',
    description: 'Meals logged from it stay as they are.',
    tag: 'Saved meals',
    access: 'nutrition:write',
    params: idParams,
    responses: { 200: { description: 'Deleted', schema: DeletedSchema }, 404: { description: 'No such saved meal', schema: ErrorSchema } },
    handler({ app, params }) {
      if (!removeSavedMeal(app, params.id)) throw errors.resourceMissing('saved meal', params.id);
      return { body: { id: params.id, object: 'nutrition.saved_meal', deleted: true } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/nutrition/saved_meals/{id}/log',
    operationId: 'logSavedMeal',
    summary: 'Log a saved meal',
    description:
      "Creates a meal from the saved meal in one request: its entries as saved, description = the saved meal's name, meal_type from the request or else the saved meal (a 400 on meal_type when neither has one). Returns the new meal (meal.created is sent as for any meal).",
    tag: 'Saved meals',
    access: 'nutrition:write',
    params: idParams,
    body: LogSavedMealSchema,
    responses: { 201: { description: 'The new meal', schema: MealSchema }, 404: { description: 'No such saved meal', schema: ErrorSchema }, ...errorResponses },
    handler({ app, params, body }) {
      const t = parseDateTime(body.timestamp);
      checkTimestamp(t.ms, app.clock.now());
      const meal = logSavedMeal(app, params.id, { timestampMs: t.ms, utcOffsetMin: t.offsetMin, mealType: body.meal_type });
      if (!meal) throw errors.resourceMissing('saved meal', params.id);
      return { status: 201, body: mealResource(meal) };
    },
  }),
];
