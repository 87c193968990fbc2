import { z } from 'zod';

/** Resource schemas of the foods feature (they document the API and the webhook payloads). */

const nullableNumber = z.number().nullable();

export const FoodNutrientsSchema = z
  .object({
    calories: nullableNumber,
    protein_g: nullableNumber,
    carbs_g: nullableNumber,
    fat_g: nullableNumber,
    fiber_g: nullableNumber,
    sugars_g: nullableNumber,
    sodium_mg: nullableNumber,
    caffeine_mg: nullableNumber,
  })
  .meta({ id: 'FoodNutrients', description: 'Per 100 g (edible portion). null = unknown, never a silent 0.' });

export const FoodPortionSchema = z
  .object({
    id: z.string().meta({ description: 'Use as a meal food entry unit; quantity then counts portions.' }),
    label: z.string(),
    grams: z.number(),
  })
  .meta({ id: 'FoodPortion' });

export const FoodSchema = z
  .object({
    id: z.string().meta({ description: 'food_usda_<NDB number> for the USDA table, food_<random> for custom foods.' }),
    object: z.literal('nutrition.food'),
    name: z.string(),
    brand: z.string().nullable(),
    source: z.enum(['usda_sr', 'custom']),
    nutrients: FoodNutrientsSchema,
    portions: z.array(FoodPortionSchema),
    usage: z.object({
      count: z.number().int().meta({ description: 'Meals that include this food.' }),
      last_used_at: z.string().meta({ format: 'date-time' }).nullable(),
    }),
    created_at: z.string().meta({ format: 'date-time' }).nullable(),
    updated_at: z.string().meta({ format: 'date-time' }).nullable(),
  })
  .meta({ id: 'Food' });

export const FoodSourcesSchema = z
  .object({
    object: z.literal('nutrition.food_sources'),
    credit: z.string(),
    licence: z.string(),
    table_version: z.string().nullable(),
    food_count: z.number().int(),
    custom_food_count: z.number().int(),
    sources: z.array(
      z.object({
        id: z.enum(['usda_sr24', 'usda_sr28']),
        release: z.string(),
        obtained_from: z.string(),
        licence: z.string(),
        provides: z.string(),
      }),
    ),
    values: z
      .record(z.string(), z.object({ usda_sr28: z.number().int(), usda_sr24: z.number().int(), unknown: z.number().int() }))
      .meta({ description: 'Per nutrient: how many table foods take their value from each release, or have none.' }),
  })
  .meta({ id: 'FoodSources' });
