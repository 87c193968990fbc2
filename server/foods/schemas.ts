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

const entryNumber = z.number().nullable().optional();

/** A food entry of a meal or saved meal, as returned. */
export const FoodEntrySchema = z
  .object({
    name: z.string(),
    calories: z.number(),
    food_id: z.string().optional().meta({ description: 'The food it was computed from (the entry keeps its numbers if the food changes or is deleted).' }),
    quantity: z.number().optional(),
    unit: z.string().optional().meta({ description: '"g", "ml", or the id of one of the food\'s portions (quantity then counts portions).' }),
    grams: z.number().optional(),
    protein_g: entryNumber,
    carbs_g: entryNumber,
    fat_g: entryNumber,
    fiber_g: entryNumber,
    sugars_g: entryNumber,
    sodium_mg: entryNumber,
    caffeine_mg: entryNumber,
  })
  .meta({ id: 'FoodEntry' });

const nutrientSource = z.enum(['logged', 'foods']).nullable();

export const NutrientSourcesSchema = z
  .object({
    protein_g: nutrientSource,
    carbs_g: nutrientSource,
    fat_g: nutrientSource,
    fiber_g: nutrientSource,
    sodium_mg: nutrientSource,
    caffeine_mg: nutrientSource,
  })
  .meta({
    id: 'NutrientSources',
    description: 'Where each nutrient came from: typed in (kept on edits), the sum of the foods (follows them), or null when unknown. calories_source does the same for calories.',
  });
