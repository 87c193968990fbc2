import type { Food, FoodEntryInput, FoodNutrients, NutrientKey, NutritionFood } from '../api/types.js';
import { gramsPerMlOf } from '../../../server/foods/volume.js';
import { fmtNumber } from './meals.js';

/** The nutrients the meal form totals while a meal is built, in the order they are shown. */
export const TOTAL_KEYS = ['calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g'] as const satisfies readonly NutrientKey[];
export type TotalKey = (typeof TOTAL_KEYS)[number];

export const NUTRIENT_LABELS: Record<NutrientKey, { label: string; unit: string }> = {
  calories: { label: 'Calories', unit: 'kcal' },
  protein_g: { label: 'Protein', unit: 'g' },
  carbs_g: { label: 'Carbs', unit: 'g' },
  fat_g: { label: 'Fat', unit: 'g' },
  fiber_g: { label: 'Fibre', unit: 'g' },
  sugars_g: { label: 'Sugars', unit: 'g' },
  sodium_mg: { label: 'Sodium', unit: 'mg' },
  caffeine_mg: { label: 'Caffeine', unit: 'mg' },
};
export const NUTRIENT_KEYS = Object.keys(NUTRIENT_LABELS) as NutrientKey[];

/** One way to give an amount of a food: grams, millilitres or one of its portions. */
export interface UnitOption {
  /** What the API calls it: "g", "ml" or the portion's id. */
  id: string;
  label: string;
  /** Grams in one of it (1 for "g"). */
  grams: number;
  /** The portion's own label ("1 medium (7\" to 7-7/8\" long)"), for portions. */
  portion?: string;
}

/** A food of the table in the meal being built: the food's numbers and the amount typed. */
export interface TableEntry {
  kind: 'food';
  key: number;
  foodId: string;
  name: string;
  brand: string | null;
  /** Per 100 g; null = unknown. */
  per100: FoodNutrients;
  units: UnitOption[];
  quantity: string;
  unit: string;
  /** The stored entry it came from (editing or copying a meal): sent back as is while its amount is unchanged. */
  stored?: Food;
  /** The food as the service returned it, when picked from the search (custom ones can be edited). */
  food?: NutritionFood;
}

/** A food known only by its name and calories (no table food behind it). */
export interface FreeEntry {
  kind: 'free';
  key: number;
  name: string;
  calories: string;
}

export type Entry = TableEntry | FreeEntry;

let entryKey = 0;
export const nextEntryKey = (): number => ++entryKey;

/** Grams per millilitre where the service accepts "ml" for a food (its own rule), else null. */
export function mlGrams(food: Pick<NutritionFood, 'portions'>): number | null {
  return gramsPerMlOf(food.portions);
}

/** The units a food can be weighed in: grams, millilitres where allowed, then its portions. */
export function unitsOf(food: NutritionFood): UnitOption[] {
  const units: UnitOption[] = [{ id: 'g', label: 'g', grams: 1 }];
  const perMl = mlGrams(food);
  if (perMl !== null) units.push({ id: 'ml', label: 'ml', grams: perMl });
  for (const p of food.portions) units.push({ id: p.id, label: `${p.label} (${fmtNumber(p.grams, 1)} g)`, grams: p.grams, portion: p.label });
  return units;
}

/** Household volume measures: a poor default, since a count ("1 medium") is how most people eat a food. */
const VOLUME = /^\d+(\.\d+)?\s*(cups?|tbsp|tsp|fl oz|tablespoons?|teaspoons?|quarts?|pints?|gal(lons?)?|ml|l)\b/i;

/**
 * A newly picked food: one of its portions when it has any (a "medium" one, else the first that is
 * not a volume, else a cup rather than a quart), else 100 g.
 */
export function entryFromFood(food: NutritionFood): TableEntry {
  const units = unitsOf(food);
  const portions = units.filter((u): u is UnitOption & { portion: string } => u.portion !== undefined);
  const portion =
    portions.find((u) => /\bmedium\b/i.test(u.portion)) ??
    portions.find((u) => !VOLUME.test(u.portion)) ??
    portions.find((u) => /^1 cup\b/i.test(u.portion)) ??
    portions[0];
  return {
    kind: 'food',
    key: nextEntryKey(),
    foodId: food.id,
    name: food.name,
    brand: food.brand,
    per100: { ...food.nutrients },
    units,
    quantity: portion ? '1' : '100',
    unit: portion ? portion.id : 'g',
    food,
  };
}

/** A number followed by a word: "60 g", "250ml", "2 slices", "1,5 cups". */
const AMOUNT_WITH_WORD = /^\s*(\d+(?:[.,]\d*)?)\s*([a-z][a-z .]*?)\s*$/i;

/**
 * An amount typed with its unit ("60 g", "250ml", "2 slices"): the number and the unit it names,
 * when the food has that unit; null when only a number (or nothing usable) was typed.
 */
export function amountWithUnit(raw: string, units: readonly UnitOption[]): { quantity: string; unit: string } | null {
  const m = AMOUNT_WITH_WORD.exec(raw);
  if (!m) return null;
  const word = m[2]!.toLowerCase();
  if (word === 'g' || word === 'ml') return units.some((u) => u.id === word) ? { quantity: m[1]!, unit: word } : null;
  // A portion by a word of its label: "2 slices" finds "1 slice", "1 medium" finds "1 medium (7…)".
  const stem = word.replace(/e?s$/, '');
  if (stem.length < 3) return null;
  for (const u of units) {
    if (u.portion?.toLowerCase().replace(/^[\d./\s]+/, '').startsWith(stem)) return { quantity: m[1]!, unit: u.id };
  }
  return null;
}

/**
 * What a table entry's amount field means, read from its whole text: the number, and the unit the
 * text names ("2 slices") or else the unit chosen in the list. Null while the text is no amount
 * (blank, not a number, or a word that is none of the food's units). Everything shown and sent is
 * computed from this, so the answer depends on the text alone, never on when it was typed.
 */
export function amountOf(e: Pick<TableEntry, 'quantity' | 'unit' | 'units'>): { quantity: number; unit: string } | null {
  const named = amountWithUnit(e.quantity, e.units);
  if (named) {
    const q = parseAmount(named.quantity);
    return q === null ? null : { quantity: q, unit: named.unit };
  }
  const q = parseAmount(e.quantity);
  return q === null ? null : { quantity: q, unit: e.unit };
}

/** The word typed after the number when it names none of the food's units ("2 xyz" → "xyz"), else null. */
export function unknownUnitWord(e: Pick<TableEntry, 'quantity' | 'units'>): string | null {
  const m = AMOUNT_WITH_WORD.exec(e.quantity);
  return m && !amountWithUnit(e.quantity, e.units) ? m[2]!.trim() : null;
}

/** A stored entry of a logged or saved meal, back in the form (its numbers as they were logged). */
export function entryFromStored(f: Food): Entry {
  if (!f.food_id || !f.unit || f.quantity === undefined || !f.grams) {
    return { kind: 'free', key: nextEntryKey(), name: f.name, calories: String(f.calories) };
  }
  const per100 = Object.fromEntries(
    NUTRIENT_KEYS.map((k) => {
      const v = k === 'calories' ? f.calories : f[k];
      return [k, v === null || v === undefined ? null : (v / f.grams!) * 100];
    }),
  ) as FoodNutrients;
  const units: UnitOption[] = [{ id: 'g', label: 'g', grams: 1 }];
  if (f.unit !== 'g' && f.quantity > 0) {
    const each = f.grams / f.quantity;
    units.push({ id: f.unit, label: `${f.unit === 'ml' ? 'ml' : 'portion'} (${fmtNumber(each, 1)} g)`, grams: each });
  }
  return { kind: 'food', key: nextEntryKey(), foodId: f.food_id, name: f.name, brand: null, per100, units, quantity: String(f.quantity), unit: f.unit, stored: f };
}

/**
 * The same entry with its food's portions to choose from (after fetching the food). Its numbers stay
 * those it was logged with until its amount changes, when the service computes them afresh.
 */
export function refreshEntry(e: TableEntry, food: NutritionFood): TableEntry {
  const units = unitsOf(food);
  if (!units.some((u) => u.id === e.unit)) return { ...e, brand: food.brand };
  return { ...e, brand: food.brand, units };
}

/** Whether a table entry still has the amount it was stored with. */
function unchangedFromStored(e: TableEntry): e is TableEntry & { stored: Food } {
  const a = amountOf(e);
  return e.stored !== undefined && a !== null && a.unit === e.stored.unit && a.quantity === e.stored.quantity;
}

/** A typed number ("1,5" too); null when blank or not a number. */
export function parseAmount(raw: string): number | null {
  const s = raw.trim().replace(',', '.');
  if (s === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** Grams of a table entry, or null while its amount is not a valid number. */
export function entryGrams(e: TableEntry): number | null {
  const a = amountOf(e);
  const unit = a && e.units.find((u) => u.id === a.unit);
  if (!a || a.quantity < 0 || !unit) return null;
  return a.quantity * unit.grams;
}

/** Nutrients of one entry for its amount; null = unknown for this food (or no valid amount). */
export function entryNutrients(e: Entry): FoodNutrients {
  if (e.kind === 'free') {
    const out = Object.fromEntries(NUTRIENT_KEYS.map((k) => [k, null])) as FoodNutrients;
    out.calories = parseAmount(e.calories);
    return out;
  }
  const g = entryGrams(e);
  return Object.fromEntries(NUTRIENT_KEYS.map((k) => [k, g === null || e.per100[k] === null ? null : (e.per100[k]! * g) / 100])) as FoodNutrients;
}

export interface MealTotals {
  values: Record<NutrientKey, number>;
  /** Nutrients some entry does not know (the total is then a lower bound). */
  partial: Set<NutrientKey>;
  /** Nutrients at least one entry knows (a total of none is not shown as 0). */
  known: Set<NutrientKey>;
}

/** Sums of the entries while the meal is built; free-text entries carry calories only. */
export function totalsOf(entries: readonly Entry[]): MealTotals {
  const values = Object.fromEntries(NUTRIENT_KEYS.map((k) => [k, 0])) as Record<NutrientKey, number>;
  const partial = new Set<NutrientKey>();
  const known = new Set<NutrientKey>();
  for (const e of entries) {
    const n = entryNutrients(e);
    for (const k of NUTRIENT_KEYS) {
      const v = n[k];
      if (v === null) partial.add(k);
      else {
        values[k] += v;
        known.add(k);
      }
    }
  }
  return { values, partial, known };
}

/** Nutrient amounts as the form shows them: whole kcal and mg, grams to one decimal. */
export function fmtNutrient(k: NutrientKey, v: number): string {
  return fmtNumber(v, k === 'calories' || k.endsWith('_mg') ? 0 : 1);
}

/** A free-text entry with nothing typed is left out; anything else is sent. */
export function isBlank(e: Entry): boolean {
  return e.kind === 'free' && !e.name.trim() && !e.calories.trim();
}

/**
 * What the API is sent for an entry (`calories` is validated by the caller for free-text ones): a
 * stored entry whose amount is unchanged goes back as stored, keeping its numbers.
 */
export function entryInput(e: Entry): FoodEntryInput {
  if (e.kind === 'free') return { name: e.name.trim(), calories: parseAmount(e.calories) ?? 0 };
  if (unchangedFromStored(e)) return { ...e.stored };
  const a = amountOf(e);
  return { food_id: e.foodId, quantity: a?.quantity ?? 0, unit: a?.unit ?? e.unit, name: e.name };
}

/** "Bananas, raw" with its brand when it has one. */
export function foodLabel(f: Pick<NutritionFood, 'name' | 'brand'>): string {
  return f.brand ? `${f.name} (${f.brand})` : f.name;
}
