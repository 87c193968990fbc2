import { z } from 'zod';
import { FoodEntrySchema, NutrientSourcesSchema } from '../foods/schemas.js';

/**
 * Shared response schemas: they document the resources in the OpenAPI document. Input schemas
 * live beside the routes that accept them.
 */

export const ErrorSchema = z
  .object({
    error: z.object({
      type: z.enum(['invalid_request_error', 'authentication_error', 'permission_error', 'rate_limit_error', 'api_error']),
      code: z.string(),
      message: z.string(),
      param: z.string().optional(),
      request_id: z.string(),
    }),
  })
  .meta({ id: 'Error' });

export function listOf(item: z.ZodType, id: string) {
  return z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() }).meta({ id });
}

export const DeletedSchema = z.object({ id: z.string(), object: z.string(), deleted: z.literal(true) }).meta({ id: 'Deleted' });

const isoDateTime = z.string().meta({ format: 'date-time' });

export const MealSchema = z
  .object({
    object: z.literal('nutrition.meal'),
    id: z.string(),
    day: z.string().meta({ format: 'date' }),
    timestamp: isoDateTime,
    meal_type: z.enum(['breakfast', 'lunch', 'dinner', 'snack']),
    description: z.string(),
    macros: z.object({
      calories: z.number(),
      protein_g: z.number(),
      carbs_g: z.number(),
      fat_g: z.number(),
      fiber_g: z.number().nullable(),
    }),
    calories_source: z.enum(['logged', 'foods', 'macros']).meta({
      description: 'Where macros.calories came from: typed in, the sum of the foods, or 4/4/9 kcal per gram of macros. Derived calories follow their source when it is edited.',
    }),
    nutrient_sources: NutrientSourcesSchema,
    micros: z.object({ sodium_mg: z.number(), caffeine_mg: z.number().nullable() }),
    foods: z.array(FoodEntrySchema),
    utc_offset_min: z.number().int().meta({ description: 'Offset from UTC, in minutes, where the meal was eaten.' }),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: 'Meal' });

export { isoDateTime };
