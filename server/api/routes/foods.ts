import { z } from 'zod';
import { idString } from '../../fields.js';
import {
  createCustomFood,
  ensureFoods,
  findFood,
  foodResource,
  foodSources,
  foodUsage,
  patchCustomFood,
  removeCustomFood,
  type CustomFoodInput,
} from '../../foods/foods.js';
import { customFoodPatchFrom, FoodCreateSchema, FoodSchema, FoodSourcesSchema, FoodUpdateSchema } from '../../foods/schemas.js';
import { recentFoods, searchFoods } from '../../foods/search.js';
import { errors } from '../errors.js';
import { defineRoute } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { queryInt } from '../validation.js';

const idParams = z.object({ id: idString('food') });
const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};

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
      const food = createCustomFood(app, customFoodPatchFrom(body) as CustomFoodInput);
      return { status: 201, body: foodResource(food, undefined) };
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
      const food = patchCustomFood(app, params.id, customFoodPatchFrom(body));
      if (!food) throw errors.resourceMissing('food', params.id);
      return { body: foodResource(food, foodUsage(app.db, food.id)) };
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
      if (!removeCustomFood(app, params.id)) throw errors.resourceMissing('food', params.id);
      return { body: { id: params.id, object: 'nutrition.food', deleted: true } };
    },
  }),
];
