import { z } from 'zod';
import { NUTRIENT_KEYS } from '../db/foods.js';
import { InvalidInputError } from '../domain-errors.js';
import { nonBlankText } from '../fields.js';
import type { CustomFoodPatch, NutrientValues } from './foods.js';

/**
 * Resource schemas of the foods feature (they document the API and the webhook payloads), built
 * on first use (z.lazy), not at import: a cold start of the service answers its first requests
 * without them (docs/performance.md, "Cold start").
 */

const nullableNumber = z.number().nullable();

export const FoodNutrientsSchema = z.lazy(() =>
  z
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
    .meta({ id: 'FoodNutrients', description: 'Per 100 g (edible portion). null = unknown, never a silent 0.' }),
);

export const FoodPortionSchema = z.lazy(() =>
  z
    .object({
      id: z.string().meta({ description: 'Use as a meal food entry unit; quantity then counts portions.' }),
      label: z.string(),
      grams: z.number(),
    })
    .meta({ id: 'FoodPortion' }),
);

export const FoodSchema = z.lazy(() =>
  z
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
    .meta({ id: 'Food' }),
);

export const FoodSourcesSchema = z.lazy(() =>
  z
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
    .meta({ id: 'FoodSources' }),
);

const entryNumber = z.number().nullable().optional();

/** A food entry of a meal or saved meal, as returned. */
export const FoodEntrySchema = z.lazy(() =>
  z
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
    .meta({ id: 'FoodEntry' }),
);

const nutrientSource = z.enum(['logged', 'foods']).nullable();

export const NutrientSourcesSchema = z.lazy(() =>
  z
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
    }),
);

// ---- Input ----------------------------------------------------------------------------------

const bounded = (max: number) =>
  z.number({ message: 'must be a number' }).finite().min(0, { message: 'must not be negative' }).max(max, { message: `must be at most ${max}` });

/**
 * Upper bounds per nutrient key: per serving they bound the value typed in; per 100 g they are the
 * physical limits the feature checks (foods.ts checkNutrients), so the OpenAPI document states them.
 * Protein, carbohydrate and fat may each reach 105 g per 100 g, the slack their sum is allowed for
 * rounded label values; the sum itself is a rule between fields, stated in the operations' prose.
 */
const PER_SERVING_MAX: Record<(typeof NUTRIENT_KEYS)[number], number> = {
  calories: 10_000,
  protein_g: 2000,
  carbs_g: 2000,
  fat_g: 2000,
  fiber_g: 2000,
  sugars_g: 2000,
  sodium_mg: 100_000,
  caffeine_mg: 100_000,
};
export const PER_100G_MAX: Record<(typeof NUTRIENT_KEYS)[number], number> = {
  calories: 1000,
  protein_g: 105,
  carbs_g: 105,
  fat_g: 105,
  fiber_g: 100,
  sugars_g: 100,
  sodium_mg: 100_000,
  caffeine_mg: 100_000,
};

const nutrientsInput = (max: Record<(typeof NUTRIENT_KEYS)[number], number>, calories: 'required' | 'optional') =>
  z.strictObject({
    calories: calories === 'required' ? bounded(max.calories) : bounded(max.calories).optional(),
    protein_g: bounded(max.protein_g).nullable().optional(),
    carbs_g: bounded(max.carbs_g).nullable().optional(),
    fat_g: bounded(max.fat_g).nullable().optional(),
    fiber_g: bounded(max.fiber_g).nullable().optional(),
    sugars_g: bounded(max.sugars_g).nullable().optional(),
    sodium_mg: bounded(max.sodium_mg).nullable().optional(),
    caffeine_mg: bounded(max.caffeine_mg).nullable().optional(),
  });

const grams = z.lazy(() => z.number({ message: 'must be a number' }).finite().gt(0, { message: 'must be more than 0' }).max(5000, { message: 'must be at most 5000' }));
const portionInput = z.lazy(() => z.strictObject({ label: nonBlankText(100), grams }));
const portions = z.lazy(() => z.array(portionInput).max(50, { message: 'a food may have at most 50 portions' }));
const perServing = z.lazy(() =>
  z
    .strictObject({ grams, nutrients: nutrientsInput(PER_SERVING_MAX, 'required') })
    .meta({ description: 'Nutrients of one serving of `grams`; stored per 100 g, with a "1 serving" portion. The values per 100 g they come to must keep the limits of `nutrients` (calories at most 1000, protein + carbohydrate + fat at most 105 g, fiber and sugars at most 100 g).' }),
);
const name = z.lazy(() => nonBlankText(200));
const brand = z.lazy(() => nonBlankText(100).nullable());

/** Per 100 g, protein + carbohydrate + fat: a rule between fields, stated in words. */
const MACROS_SUM_RULE = 'protein_g + carbs_g + fat_g at most 105 (g per 100 g, allowing for rounded label values)';

/**
 * A food's nutrients come as `nutrients` (per 100 g) or `per_serving`: exactly one on create (the
 * document says so with a oneOf of `required`), at most one on an edit (a `not` of both). The
 * create handler and customFoodPatchFrom check it, with clear messages.
 */
export const FoodCreateSchema = z.lazy(() =>
  z
    .strictObject({
      name,
      brand: brand.optional(),
      nutrients: nutrientsInput(PER_100G_MAX, 'required').optional().meta({ description: `Per 100 g, ${MACROS_SUM_RULE}. Give this or per_serving.` }),
      per_serving: perServing.optional(),
      portions: portions.optional(),
    })
    .meta({ id: 'FoodCreate', oneOf: [{ required: ['nutrients'] }, { required: ['per_serving'] }] } as Record<string, unknown>),
);

export const FoodUpdateSchema = z.lazy(() =>
  z
    .strictObject({
      name: name.optional(),
      brand: brand.optional(),
      nutrients: nutrientsInput(PER_100G_MAX, 'optional')
        .optional()
        .meta({ description: `Per 100 g; merges field by field (null clears one). After the merge, ${MACROS_SUM_RULE}.` }),
      per_serving: perServing.optional().meta({ description: 'Replaces all nutrients, with the same limits as when creating a food.' }),
      portions: portions.optional().meta({ description: 'Replaces the list.' }),
    })
    .meta({ id: 'FoodUpdate', not: { required: ['nutrients', 'per_serving'] } } as Record<string, unknown>),
);

function nutrientValues(n: Record<string, number | null | undefined> | undefined): NutrientValues | undefined {
  if (!n) return undefined;
  const out: NutrientValues = {};
  for (const k of NUTRIENT_KEYS) if (n[k] !== undefined) out[k] = n[k];
  return out;
}

/** A validated create or update body as the fields it sets (only those sent). */
export function customFoodPatchFrom(body: z.output<typeof FoodUpdateSchema>): CustomFoodPatch {
  const out: CustomFoodPatch = {};
  if (body.nutrients && body.per_serving) throw new InvalidInputError('per_serving', 'Give nutrients (per 100 g) or per_serving, not both.');
  if (body.name !== undefined) out.name = body.name;
  if (body.brand !== undefined) out.brand = body.brand;
  if (body.nutrients) out.nutrients = nutrientValues(body.nutrients);
  if (body.per_serving) out.perServing = { grams: body.per_serving.grams, nutrients: nutrientValues(body.per_serving.nutrients)! };
  if (body.portions) out.portions = body.portions;
  return out;
}

