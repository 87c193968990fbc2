import { z } from 'zod';
import { getMeal, listMealsPage, MEAL_TYPES, mealPosition } from '../../db/meals.js';
import { createMeal, MealValidationError, mealResource, patchMeal, removeMeal, type MealInput } from '../../nutrition/meals.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf, MealSchema } from '../schemas.js';
import { checkDateOrder, cursorPosition, dateString, dateTimeString, idString, parseDateTime, queryInt } from '../validation.js';

export const mealType = z.enum(MEAL_TYPES as [string, ...string[]], {
  message: `must be one of ${MEAL_TYPES.join(', ')}`,
});

const bounded = (max: number) =>
  z.number({ message: 'must be a number' }).finite().min(0, { message: 'must not be negative' }).max(max, { message: `must be at most ${max}` });

/**
 * A food entry: {name, calories} as before; {food_id, quantity, unit, name?} computed from the food;
 * or an entry exactly as a meal returned it (kept as sent, so re-sending a meal's foods never
 * rewrites them).
 */
export const foodEntryInput = z
  .strictObject({
    name: z.string().trim().min(1, { message: 'must not be empty' }).max(200).optional(),
    calories: bounded(10_000).optional(),
    food_id: idString('food').optional(),
    quantity: z.number({ message: 'must be a number' }).finite().gt(0, { message: 'must be more than 0' }).max(100_000).optional(),
    unit: z.string().min(1).max(20).optional().meta({ description: '"g", "ml", or a portion id of the food' }),
    grams: bounded(100_000).optional(),
    protein_g: bounded(2000).nullable().optional(),
    carbs_g: bounded(2000).nullable().optional(),
    fat_g: bounded(2000).nullable().optional(),
    fiber_g: bounded(2000).nullable().optional(),
    sugars_g: bounded(2000).nullable().optional(),
    sodium_mg: bounded(50_000).nullable().optional(),
    caffeine_mg: bounded(2000).nullable().optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.food_id !== undefined) {
      if (entry.quantity === undefined) ctx.addIssue({ code: 'custom', path: ['quantity'], message: 'is required with food_id' });
      else if (entry.unit === undefined) ctx.addIssue({ code: 'custom', path: ['unit'], message: 'is required with food_id' });
      return;
    }
    if (entry.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'is required without food_id' });
    else if (entry.calories === undefined) ctx.addIssue({ code: 'custom', path: ['calories'], message: 'is required without food_id' });
  })
  .meta({ id: 'FoodEntryInput' });

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

const description = z.string().max(2000, { message: 'must be at most 2000 characters' });
export const foodEntries = z.array(foodEntryInput).max(100, { message: 'a meal may list at most 100 foods' });

export const MealCreateSchema = z
  .strictObject({
    timestamp: dateTimeString,
    meal_type: mealType,
    description: description.optional(),
    macros: macrosCreate.optional(),
    micros: microsInput.optional(),
    foods: foodEntries.optional(),
  })
  .meta({ id: 'MealCreate' });

export const MealUpdateSchema = z
  .strictObject({
    timestamp: dateTimeString.optional(),
    meal_type: mealType.optional(),
    description: description.optional(),
    macros: macrosPatch.optional(),
    micros: microsInput.optional(),
    foods: foodEntries.optional(),
  })
  .meta({ id: 'MealUpdate' });

const idParams = z.object({ id: idString('meal') });
export const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};

/** Accepts meals from 2000 up to a day ahead (clock skew, planned dinner); beyond is a typo. */
export function checkTimestamp(ms: number, nowMs: number): void {
  if (ms < Date.UTC(2000, 0, 1) || ms > nowMs + 24 * 3600_000) {
    throw errors.parameterInvalid('timestamp', 'Invalid timestamp: must be after 2000-01-01 and at most one day in the future.');
  }
}

function toInput(body: z.output<typeof MealUpdateSchema>, nowMs: number): Partial<MealInput> {
  const out: Partial<MealInput> = {};
  if (body.timestamp !== undefined) {
    const t = parseDateTime(body.timestamp);
    checkTimestamp(t.ms, nowMs);
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
      'timestamp and meal_type are required. A food entry is {name, calories} or {food_id, quantity, unit} (computed from the food). Without macros.calories, calories are the sum of the foods, else 4·protein + 4·carbs + 9·fat; every other nutrient not typed in is the sum of the foods that know it (see nutrient_sources). A timestamp written with an offset records where the meal was eaten; with Z, the user time zone decides its day. Accepts an Idempotency-Key header.',
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
