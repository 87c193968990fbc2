import { z } from 'zod';
import { NUTRIENT_KEYS } from '../../db/foods.js';
import {
  createCustomFood,
  FoodError,
  findFood,
  foodResource,
  foodSources,
  foodUsage,
  patchCustomFood,
  removeCustomFood,
  type CustomFoodInput,
  type CustomFoodPatch,
  ensureFoods,
  type NutrientValues,
} from '../../foods/foods.js';
import { recentFoods, searchFoods } from '../../foods/search.js';
import { FoodSchema, FoodSourcesSchema } from '../../foods/schemas.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { idString, queryInt } from '../validation.js';

const bounded = (max: number) =>
  z.number({ message: 'must be a number' }).finite().min(0, { message: 'must not be negative' }).max(max, { message: `must be at most ${max}` });

/** Upper bounds per nutrient key (per 100 g or per serving); the feature checks the combinations. */
const NUTRIENT_MAX: Record<(typeof NUTRIENT_KEYS)[number], number> = {
  calories: 10_000,
  protein_g: 2000,
  carbs_g: 2000,
  fat_g: 2000,
  fiber_g: 2000,
  sugars_g: 2000,
  sodium_mg: 100_000,
  caffeine_mg: 100_000,
};

const nutrientsInput = (calories: 'required' | 'optional') =>
  z.strictObject({
    calories: calories === 'required' ? bounded(NUTRIENT_MAX.calories) : bounded(NUTRIENT_MAX.calories).optional(),
    protein_g: bounded(NUTRIENT_MAX.protein_g).nullable().optional(),
    carbs_g: bounded(NUTRIENT_MAX.carbs_g).nullable().optional(),
    fat_g: bounded(NUTRIENT_MAX.fat_g).nullable().optional(),
    fiber_g: bounded(NUTRIENT_MAX.fiber_g).nullable().optional(),
    sugars_g: bounded(NUTRIENT_MAX.sugars_g).nullable().optional(),
    sodium_mg: bounded(NUTRIENT_MAX.sodium_mg).nullable().optional(),
    caffeine_mg: bounded(NUTRIENT_MAX.caffeine_mg).nullable().optional(),
  });

const grams = z.number({ message: 'must be a number' }).finite().gt(0, { message: 'must be more than 0' }).max(5000, { message: 'must be at most 5000' });
const portionInput = z.strictObject({ label: z.string().trim().min(1, { message: 'must not be empty' }).max(100), grams });
const portions = z.array(portionInput).max(50, { message: 'a food may have at most 50 portions' });
const perServing = z.strictObject({ grams, nutrients: nutrientsInput('required') });
const name = z.string().trim().min(1, { message: 'must not be empty' }).max(200);
const brand = z.string().trim().min(1, { message: 'must not be empty' }).max(100).nullable();

export const FoodCreateSchema = z
  .strictObject({
    name,
    brand: brand.optional(),
    nutrients: nutrientsInput('required').optional().meta({ description: 'Per 100 g. Give this or per_serving.' }),
    per_serving: perServing.optional().meta({ description: 'Nutrients of one serving of `grams`; stored per 100 g, with a "1 serving" portion.' }),
    portions: portions.optional(),
  })
  .meta({ id: 'FoodCreate' });

export const FoodUpdateSchema = z
  .strictObject({
    name: name.optional(),
    brand: brand.optional(),
    nutrients: nutrientsInput('optional').optional().meta({ description: 'Per 100 g; merges field by field (null clears one).' }),
    per_serving: perServing.optional(),
    portions: portions.optional().meta({ description: 'Replaces the list.' }),
  })
  .meta({ id: 'FoodUpdate' });

const idParams = z.object({ id: idString('food') });
const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};

function asApiError(err: unknown): never {
  if (err instanceof FoodError) {
    if (err.kind === 'read_only') throw errors.resourceReadOnly(err.message, err.param);
    throw errors.parameterInvalid(err.param, err.message);
  }
  throw err;
}

function nutrientValues(n: Record<string, number | null | undefined> | undefined): NutrientValues | undefined {
  if (!n) return undefined;
  const out: NutrientValues = {};
  for (const k of NUTRIENT_KEYS) if (n[k] !== undefined) out[k] = n[k];
  return out;
}

function toInput(body: z.output<typeof FoodUpdateSchema>): CustomFoodPatch {
  const out: CustomFoodPatch = {};
  if (body.nutrients && body.per_serving) throw errors.parameterInvalid('per_serving', 'Give nutrients (per 100 g) or per_serving, not both.');
  if (body.name !== undefined) out.name = body.name;
  if (body.brand !== undefined) out.brand = body.brand;
  if (body.nutrients) out.nutrients = nutrientValues(body.nutrients);
  if (body.per_serving) out.perServing = { grams: body.per_serving.grams, nutrients: nutrientValues(body.per_serving.nutrients)! };
  if (body.portions) out.portions = body.portions;
  return out;
}

export const foodRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/foods',
    operationId: 'listFoods',
    summary: 'Search foods',
    description:
      'With query: foods whose name or brand holds every word (as a prefix, in any order; plurals and small typos forgiven), the person\'s own recent and frequent foods first, then the best name matches. Without query: the person\'s recent and frequent foods, most useful first. Nutrients are per 100 g.',
    tag: 'Foods',
    access: 'nutrition:read',
    query: z.object({
      query: z.string().max(200, { message: 'must be at most 200 characters' }).optional(),
      limit: queryInt(1, 50).optional(),
    }),
    responses: { 200: { description: 'Matching foods, best first', schema: listOf(FoodSchema, 'FoodList') }, ...errorResponses },
    handler({ app, query }) {
      ensureFoods(app);
      const limit = query.limit ?? 10;
      const now = app.clock.now();
      const text = query.query?.trim() ?? '';
      const found = text ? searchFoods(app.db, text, limit, now) : recentFoods(app.db, limit, now);
      return { body: { object: 'list', data: found.map((r) => foodResource(r.food, r.usage)), has_more: false } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/foods/sources',
    operationId: 'getFoodSources',
    summary: 'Where the food table comes from',
    description: 'Provenance and licence of the shipped food table, with how many values come from each release.',
    tag: 'Foods',
    access: 'nutrition:read',
    responses: { 200: { description: 'Provenance of the food table', schema: FoodSourcesSchema } },
    handler: ({ app }) => ({ body: foodSources(app) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/foods/{id}',
    operationId: 'getFood',
    summary: 'Retrieve a food',
    tag: 'Foods',
    access: 'nutrition:read',
    params: idParams,
    responses: { 200: { description: 'The food', schema: FoodSchema }, 404: { description: 'No such food', schema: ErrorSchema } },
    handler({ app, params }) {
      const food = findFood(app, params.id);
      if (!food) throw errors.resourceMissing('food', params.id);
      return { body: foodResource(food, foodUsage(app.db, food.id)) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/foods',
    operationId: 'createFood',
    summary: 'Create a custom food',
    description: 'name and either nutrients (per 100 g) or per_serving {grams, nutrients} are required; calories are required in either.',
    tag: 'Foods',
    access: 'nutrition:write',
    body: FoodCreateSchema,
    responses: { 201: { description: 'The new food', schema: FoodSchema }, ...errorResponses },
    handler({ app, body }) {
      if (!body.nutrients && !body.per_serving) throw errors.parameterMissing('nutrients', 'Missing required parameter: nutrients (per 100 g) or per_serving.');
      try {
        const food = createCustomFood(app, toInput(body) as CustomFoodInput);
        return { status: 201, body: foodResource(food, undefined) };
      } catch (err) {
        return asApiError(err);
      }
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/foods/{id}',
    operationId: 'updateFood',
    summary: 'Edit a custom food',
    description: 'Only the fields sent change. Meals already logged keep the numbers they were logged with. USDA foods are read-only (403 resource_read_only).',
    tag: 'Foods',
    access: 'nutrition:write',
    params: idParams,
    body: FoodUpdateSchema,
    responses: { 200: { description: 'The updated food', schema: FoodSchema }, 404: { description: 'No such food', schema: ErrorSchema }, ...errorResponses },
    handler({ app, params, body }) {
      try {
        const food = patchCustomFood(app, params.id, toInput(body));
        if (!food) throw errors.resourceMissing('food', params.id);
        return { body: foodResource(food, foodUsage(app.db, food.id)) };
      } catch (err) {
        return asApiError(err);
      }
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/foods/{id}',
    operationId: 'deleteFood',
    summary: 'Delete a custom food',
    description: 'Meals that used it keep their entries unchanged. USDA foods are read-only (403 resource_read_only).',
    tag: 'Foods',
    access: 'nutrition:write',
    params: idParams,
    responses: { 200: { description: 'Deleted', schema: DeletedSchema }, 404: { description: 'No such food', schema: ErrorSchema }, ...errorResponses },
    handler({ app, params }) {
      try {
        if (!removeCustomFood(app, params.id)) throw errors.resourceMissing('food', params.id);
      } catch (err) {
        return asApiError(err);
      }
      return { body: { id: params.id, object: 'nutrition.food', deleted: true } };
    },
  }),
];
