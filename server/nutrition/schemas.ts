import { z } from 'zod';
import { FoodEntrySchema } from '../foods/schemas.js';

const isoDateTime = z.string().meta({ format: 'date-time' });

export const SavedMealSchema = z
  .object({
    id: z.string(),
    object: z.literal('nutrition.saved_meal'),
    name: z.string(),
    meal_type: z.enum(['breakfast', 'lunch', 'dinner', 'snack']).nullable(),
    foods: z.array(FoodEntrySchema),
    totals: z
      .object({
        calories: z.number(),
        protein_g: z.number().nullable(),
        carbs_g: z.number().nullable(),
        fat_g: z.number().nullable(),
        fiber_g: z.number().nullable(),
      })
      .meta({ description: 'Sums of the entries (null when no entry knows the nutrient).' }),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: 'SavedMeal' });
