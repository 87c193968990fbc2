import { z } from 'zod';
import { getMeal, listMealsPage, MEAL_TYPES, mealPosition } from '../../db/meals.js';
import { createMeal, MealValidationError, mealResource, patchMeal, removeMeal, type MealInput } from '../../nutrition/meals.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf, MealSchema } from '../schemas.js';
import { boundedDateTime, nonBlankText, checkDateOrder, checkNotTooFarAhead, cursorPosition, dateString, idString, parseDateTime, queryInt } from '../validation.js';

const mealType = z.enum(MEAL_TYPES as [string, ...string[]], {
  message: `must be one of ${MEAL_TYPES.join(', ')}`,
});

const bounded = (max: number) =>
  z.number({ message: 'must be a number' }).finite().min(0, { message: 'must not be negative' }).max(max, { message: `must be at most ${max}` });

const foodInput = z.strictObject({
  name: nonBlankText(200),
  calories: bounded(10_000),
});

const macrosCreate = z.strictObject({
  calories: bounded(10_000).optional(),
  protein_g: bounded(2000).optional(),
  carbs_g: bounded(2000).optional(),
  fat_g: bounded(2000).optional(),
  fiber_g: bounded(2000).optional(),
});
const macrosPatch = z.strictObject({
  calories: bounded(10_000).optional(),
  protein_g: bounded(2000).nullable().optional(),
  carbs_g: bounded(2000).nullable().optional(),
  fat_g: bounded(2000).nullable().optional(),
  fiber_g: bounded(2000).nullable().optional(),
});
const microsInput = z.strictObject({
  sodium_mg: bounded(50_000).nullable().optional(),
  caffeine_mg: bounded(2000).nullable().optional(),
});

/** Meals from 2000 up to a day ahead (clock skew, a planned dinner); beyond is a typo. */
const MEAL_TIMESTAMP_MAX_FUTURE = { iso: 'P1D', ms: 24 * 3600_000, words: 'one day' };
const mealTimestamp = boundedDateTime({ earliest: '2000-01-01T00:00:00Z', maxFuture: MEAL_TIMESTAMP_MAX_FUTURE });

const description = z.string().max(2000, { message: 'must be at most 2000 characters' });
const foods = z.array(foodInput).max(100, { message: 'a meal may list at most 100 foods' });

export const MealCreateSchema = z
  .strictObject({
    timestamp: mealTimestamp,
    meal_type: mealType,
    description: description.optional(),
    macros: macrosCreate.optional(),
    micros: microsInput.optional(),
    foods: foods.optional(),
  })
  .meta({ id: 'MealCreate' });

export const MealUpdateSchema = z
  .strictObject({
    timestamp: mealTimestamp.optional(),
    meal_type: mealType.optional(),
    description: description.optional(),
    macros: macrosPatch.optional(),
    micros: microsInput.optional(),
    foods: foods.optional(),
  })
  .meta({ id: 'MealUpdate' });

const idParams = z.object({ id: idString('meal') });
const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};

function toInput(body: z.output<typeof MealUpdateSchema>, nowMs: number): Partial<MealInput> {
  const out: Partial<MealInput> = {};
  if (body.timestamp !== undefined) {
    const t = parseDateTime(body.timestamp);
    checkNotTooFarAhead('timestamp', t.ms, nowMs, MEAL_TIMESTAMP_MAX_FUTURE, 'must be at most one day in the future.');
    out.timestampMs = t.ms;
    out.utcOffsetMin = t.offsetMin;
  }
  if (body.meal_type !== undefined) out.mealType = body.meal_type as MealInput['mealType'];
  if (body.description !== undefined) out.description = body.description;
  if (body.macros !== undefined) out.macros = body.macros;
  if (body.micros !== undefined) out.micros = body.micros;
  if (body.foods !== undefined) out.foods = body.foods;
  return out;
}

function asApiError(err: unknown): never {
  if (err instanceof MealValidationError) throw errors.parameterInvalid(err.param, err.message);
  throw err;
}

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
        mealType: query.meal_type as MealInput['mealType'] | undefined,
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
      'timestamp and meal_type are required. Without macros.calories, calories are the sum of the foods, else 4·protein + 4·carbs + 9·fat. A timestamp written with an offset records where the meal was eaten; with Z, the user time zone decides its day. Accepts an Idempotency-Key header.',
    tag: 'Meals',
    access: 'nutrition:write',
    body: MealCreateSchema,
    responses: { 201: { description: 'The new meal', schema: MealSchema }, ...errorResponses },
    handler({ app, body }) {
      const input = toInput(body, app.clock.now()) as MealInput;
      try {
        return { status: 201, body: mealResource(createMeal(app, input)) };
      } catch (err) {
        return asApiError(err);
      }
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
      const patch = toInput(body, app.clock.now());
      try {
        const meal = patchMeal(app, params.id, patch);
        if (!meal) throw errors.resourceMissing('meal', params.id);
        return { body: mealResource(meal) };
      } catch (err) {
        return asApiError(err);
      }
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
