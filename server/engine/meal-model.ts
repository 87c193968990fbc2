/**
 * One meal on its own: its energy, whether it is mostly liquid, and its emptying curve
 * y(t) = 2^(−(t/T50)^β) (Elashoff 1982) with T50 from MODEL.md's starting model, calibrated.
 */

import {
  ASSUMED_ENERGY_CONFIDENCE_FACTOR,
  ASSUMED_MEAL_KCAL,
  EMPTYING_RATE_BASE_KCAL_PER_MIN,
  EMPTYING_RATE_MAX_KCAL_PER_MIN,
  EMPTYING_RATE_MIN_KCAL_PER_MIN,
  EMPTYING_RATE_PER_DOUBLING,
  EMPTYING_RATE_REFERENCE_KCAL,
  ENERGY_FROM_FOODS_CONFIDENCE_FACTOR,
  ENERGY_FROM_MACROS_CONFIDENCE_FACTOR,
  FAT_FACTOR_MAX,
  FAT_FACTOR_SLOPE,
  FAT_SHARE_THRESHOLD,
  FED_END_FRACTION_LEFT,
  FIBRE_FACTOR_MAX,
  FIBRE_FACTOR_PER_G,
  KCAL_PER_G_CARBS,
  KCAL_PER_G_FAT,
  KCAL_PER_G_PROTEIN,
  LIQUID_BETA,
  LIQUID_HALF_TIME_RATIO,
  MAX_CONFIDENCE,
  MAX_OWN_PROCESSING_MIN,
  MIN_DIGESTIVE_KCAL,
  MISSING_FIBRE_CONFIDENCE_FACTOR,
  INFERRED_TIME_CONFIDENCE_FACTOR,
  MISSING_MACROS_CONFIDENCE_FACTOR,
  MOSTLY_LIQUID_KCAL_SHARE,
  PARTIAL_MACROS_CONFIDENCE_FACTOR,
  PROCESSING_END_FRACTION_LEFT,
  PROTEIN_FACTOR_SLOPE,
  PROTEIN_SHARE_THRESHOLD,
  SLEEP_READY_FRACTION_LEFT,
  SOLID_BETA,
  SOLID_LAG_BASE_MIN,
  SOLID_LAG_MAX_MIN,
  SOLID_LAG_PER_KCAL_MIN,
} from './constants.js';
import type { EnergySource, EngineMeal, MealForm, MealType } from './types.js';

// ---------------------------------------------------------------------------------------------
// Energy
// ---------------------------------------------------------------------------------------------

export interface MealEnergy {
  kcal: number;
  source: EnergySource;
}

/** A finite, non-negative number, or null (bad input is treated as not logged, never as a crash). */
function known(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : null;
}

/**
 * The energy the engine digests: logged calories; else 4·protein + 4·carbs + 9·fat when any macro is
 * logged; else the foods' calories; else 0 for a description of zero-calorie drinks ("water", "black
 * coffee"); else a typical portion for the meal type (ASSUMED_MEAL_KCAL, low confidence).
 */
export function mealEnergy(meal: EngineMeal): MealEnergy {
  const calories = known(meal.calories);
  if (calories !== null) return { kcal: calories, source: 'logged' };
  const protein = known(meal.proteinG);
  const carbs = known(meal.carbsG);
  const fat = known(meal.fatG);
  if (protein !== null || carbs !== null || fat !== null) {
    return {
      kcal: KCAL_PER_G_PROTEIN * (protein ?? 0) + KCAL_PER_G_CARBS * (carbs ?? 0) + KCAL_PER_G_FAT * (fat ?? 0),
      source: 'macros',
    };
  }
  const foodKcal = foodCalories(meal);
  if (foodKcal > 0) return { kcal: foodKcal, source: 'foods' };
  if (describesOnlyZeroCalorieDrinks(meal)) return { kcal: 0, source: 'zero_calorie_drink' };
  return { kcal: ASSUMED_MEAL_KCAL[meal.mealType as MealType] ?? ASSUMED_MEAL_KCAL.snack, source: 'assumed' };
}

function foodCalories(meal: EngineMeal): number {
  let sum = 0;
  for (const f of meal.foods ?? []) sum += known(f.calories) ?? 0;
  return sum;
}

/**
 * True when the meal starts digestion: 15 kcal or more (MODEL.md). Smaller intake (water, black
 * coffee, a sip of juice) stays a logged meal but has no digestive phases, does not change the
 * digestive state and has no timeline entry.
 */
export function isDigestiveMeal(meal: EngineMeal): boolean {
  return mealEnergy(meal).kcal >= MIN_DIGESTIVE_KCAL;
}

// ---------------------------------------------------------------------------------------------
// Solid or mostly liquid — inferred from food names and the description
// ---------------------------------------------------------------------------------------------

/** Head nouns that name a drink. Matching is on the last word of an item ("chocolate milk" yes, "milk chocolate" no). */
const DRINK_WORDS = new Set([
  'water', 'juice', 'smoothie', 'shake', 'milkshake', 'milk', 'latte', 'cappuccino', 'coffee', 'espresso',
  'americano', 'macchiato', 'mocha', 'cortado', 'tea', 'chai', 'matcha', 'soda', 'cola', 'coke', 'lemonade',
  'limeade', 'kombucha', 'kefir', 'lassi', 'ayran', 'broth', 'bouillon', 'consomme', 'consommé', 'beer', 'ale',
  'lager', 'stout', 'wine', 'cider', 'champagne', 'prosecco', 'cocktail', 'spritz', 'whisky', 'whiskey', 'vodka',
  'gin', 'rum', 'tequila', 'liqueur', 'drink', 'beverage', 'cocoa', 'frappe', 'frappuccino', 'nectar',
  'horchata', 'eggnog', 'soylent', 'huel', 'ensure', 'seltzer', 'tonic', 'infusion', 'tisane', 'decaf', 'mate',
]);
/** Multi-word drinks whose last word alone would read as food. */
const DRINK_PHRASES = ['hot chocolate', 'drinking chocolate', 'flat white', 'meal replacement'];
/** Drinks with (practically) no energy: only used when a meal carries no calories, macros or food calories. */
const ZERO_CALORIE_DRINKS = new Set([
  'water', 'sparkling water', 'mineral water', 'still water', 'tap water', 'soda water', 'club soda', 'seltzer',
  'black coffee', 'coffee black', 'espresso', 'americano', 'tea', 'green tea', 'black tea', 'herbal tea',
  'mint tea', 'peppermint tea', 'chamomile tea', 'diet soda', 'diet coke', 'coke zero', 'diet cola',
]);

/** Words describing an amount or a container ("2 cups", "500 ml", "a glass of"), not the item itself. */
const QUANTITY_WORD = /^(\d+([.,]\d+)?|a|an|one|two|three|half|ml|l|cl|dl|oz|fl|g|kg|cup|cups|glass|glasses|mug|mugs|bottle|bottles|can|cans|pint|pints|shot|shots|large|small|medium|big)$/;

/** Splits a description into items: "coffee with milk, toast and jam" → ["coffee", "milk", "toast", "jam"]. */
export function descriptionItems(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/\([^)]*\)/g, ' ')
    .split(/[,;+&/\n]|\band\b|\bwith\b|\bplus\b/)
    .map((item) => normaliseItem(item))
    .filter((item) => item.length > 0);
}

function normaliseItem(item: string): string {
  // "glass of milk" → "milk": the drink is what follows the last "of".
  const afterOf = item.split(/\bof\b/).pop() ?? item;
  const words = afterOf
    .replace(/[^\p{L}\p{N}\s.,-]/gu, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0 && !QUANTITY_WORD.test(w));
  return words.join(' ');
}

function isDrinkItem(item: string): boolean {
  const normalised = normaliseItem(item.toLowerCase());
  if (normalised.length === 0) return false;
  if (DRINK_PHRASES.some((p) => normalised === p || normalised.endsWith(` ${p}`))) return true;
  const last = normalised.split(' ').pop() ?? '';
  return DRINK_WORDS.has(last) || (last.endsWith('s') && DRINK_WORDS.has(last.slice(0, -1)));
}

function describesOnlyZeroCalorieDrinks(meal: EngineMeal): boolean {
  const names = meal.foods.length > 0 ? meal.foods.map((f) => normaliseItem(f.name.toLowerCase())) : descriptionItems(meal.description ?? '');
  return names.length > 0 && names.every((n) => ZERO_CALORIE_DRINKS.has(n));
}

/**
 * 'liquid' when the meal is mostly drinks: at least MOSTLY_LIQUID_KCAL_SHARE of the foods' calories come
 * from drinks, or (without food calories) every food or description item is a drink. Anything else, and
 * anything the engine cannot read, is 'solid' — the slower curve.
 */
export function mealForm(meal: EngineMeal): MealForm {
  const foods = meal.foods ?? [];
  let total = 0;
  let liquid = 0;
  for (const f of foods) {
    const kcal = known(f.calories) ?? 0;
    total += kcal;
    if (isDrinkItem(f.name)) liquid += kcal;
  }
  if (total > 0) return liquid / total >= MOSTLY_LIQUID_KCAL_SHARE ? 'liquid' : 'solid';
  const names = foods.length > 0 ? foods.map((f) => f.name) : descriptionItems(meal.description ?? '');
  return names.length > 0 && names.every(isDrinkItem) ? 'liquid' : 'solid';
}

// ---------------------------------------------------------------------------------------------
// Kinetics
// ---------------------------------------------------------------------------------------------

export interface CompositionFactors {
  fat: number;
  protein: number;
  fibre: number;
}

export interface MealKinetics {
  mealId: string;
  timeMs: number;
  mealType: MealType;
  kcal: number;
  energySource: EnergySource;
  form: MealForm;
  /** R, kcal/min (Hunt 1985). */
  emptyingRate: number;
  lagMin: number;
  beta: number;
  factors: CompositionFactors;
  /** Half-emptying time on the meal's own clock (minutes), after the MAX_OWN_PROCESSING_MIN clamp. */
  t50Min: number;
  /** Own-clock minutes to 50 %, 25 % and 10 % left. */
  fedEndOwnMin: number;
  sleepReadyOwnMin: number;
  processingEndOwnMin: number;
  /** Confidence of this meal's curve alone (before overlap and calibration), ≤ 0.8. */
  confidence: number;
}

/** R = clamp(2.5 + 0.7·log2(E/400), 1.0, 4.5) kcal/min (Hunt 1985; MODEL.md). */
export function emptyingRate(kcal: number): number {
  const r = EMPTYING_RATE_BASE_KCAL_PER_MIN + EMPTYING_RATE_PER_DOUBLING * Math.log2(kcal / EMPTYING_RATE_REFERENCE_KCAL);
  return Math.min(EMPTYING_RATE_MAX_KCAL_PER_MIN, Math.max(EMPTYING_RATE_MIN_KCAL_PER_MIN, r));
}

/** Fat, protein and fibre factors. Unknown macros give a factor of 1 (and lower confidence). */
export function compositionFactors(meal: EngineMeal, kcal: number): CompositionFactors {
  const fatG = known(meal.fatG);
  const proteinG = known(meal.proteinG);
  const fibreG = known(meal.fiberG);
  const share = (kcalPart: number) => (kcal > 0 ? Math.min(1, kcalPart / kcal) : 0);
  const fat =
    fatG === null
      ? 1
      : Math.min(FAT_FACTOR_MAX, 1 + FAT_FACTOR_SLOPE * Math.max(0, share(KCAL_PER_G_FAT * fatG) - FAT_SHARE_THRESHOLD));
  const protein =
    proteinG === null ? 1 : 1 + PROTEIN_FACTOR_SLOPE * Math.max(0, share(KCAL_PER_G_PROTEIN * proteinG) - PROTEIN_SHARE_THRESHOLD);
  const fibre = fibreG === null ? 1 : Math.min(FIBRE_FACTOR_MAX, 1 + FIBRE_FACTOR_PER_G * fibreG);
  return { fat, protein, fibre };
}

/** Minutes (on the meal's own clock) until `fractionLeft` of it remains: T(x) = T50·(log2(1/x))^(1/β). */
export function ownMinutesToFractionLeft(t50Min: number, beta: number, fractionLeft: number): number {
  return t50Min * Math.pow(Math.log2(1 / fractionLeft), 1 / beta);
}

/** Fraction of a meal still in the stomach after `ownMin` minutes of its own clock. */
export function fractionLeftAfter(t50Min: number, beta: number, ownMin: number): number {
  if (ownMin <= 0) return 1;
  return Math.exp(-Math.LN2 * Math.pow(ownMin / t50Min, beta));
}

function baseConfidence(meal: EngineMeal, source: EnergySource): number {
  let c = MAX_CONFIDENCE;
  if (source === 'macros') c *= ENERGY_FROM_MACROS_CONFIDENCE_FACTOR;
  else if (source === 'foods') c *= ENERGY_FROM_FOODS_CONFIDENCE_FACTOR;
  else if (source === 'assumed') c *= ASSUMED_ENERGY_CONFIDENCE_FACTOR;
  const macrosKnown = [meal.proteinG, meal.carbsG, meal.fatG].filter((x) => known(x) !== null).length;
  if (macrosKnown === 0) c *= MISSING_MACROS_CONFIDENCE_FACTOR;
  else if (macrosKnown < 3) c *= PARTIAL_MACROS_CONFIDENCE_FACTOR;
  if (known(meal.fiberG) === null) c *= MISSING_FIBRE_CONFIDENCE_FACTOR;
  if (meal.inferredTime) c *= INFERRED_TIME_CONFIDENCE_FACTOR;
  return c;
}

/**
 * The meal's emptying curve, or null when it is not digestive (< 15 kcal).
 *
 * Solid or mixed: lag = min(15 + 0.03·E, 60), β = 1.6, T50 = lag + E/(2R)·factors.
 * Mostly liquid:  lag 0, β = 1.2, T50 = (24/58)·E/(2R)·factors (Dig Dis Sci 1986 liquid/solid ratio).
 * T50 is then clamped so that 90 % emptying never takes more than MAX_OWN_PROCESSING_MIN.
 */
export function mealKinetics(meal: EngineMeal): MealKinetics | null {
  const energy = mealEnergy(meal);
  if (energy.kcal < MIN_DIGESTIVE_KCAL) return null;
  const kcal = energy.kcal;
  const form = mealForm(meal);
  const rate = emptyingRate(kcal);
  const factors = compositionFactors(meal, kcal);
  const emptyingTerm = (kcal / (2 * rate)) * factors.fat * factors.protein * factors.fibre;
  const beta = form === 'liquid' ? LIQUID_BETA : SOLID_BETA;
  const lagMin = form === 'liquid' ? 0 : Math.min(SOLID_LAG_BASE_MIN + SOLID_LAG_PER_KCAL_MIN * kcal, SOLID_LAG_MAX_MIN);
  const unclampedT50 = form === 'liquid' ? LIQUID_HALF_TIME_RATIO * emptyingTerm : lagMin + emptyingTerm;
  const maxT50 = MAX_OWN_PROCESSING_MIN / Math.pow(Math.log2(1 / PROCESSING_END_FRACTION_LEFT), 1 / beta);
  const t50Min = Math.min(unclampedT50, maxT50);
  return {
    mealId: meal.id,
    timeMs: meal.timestamp,
    mealType: meal.mealType,
    kcal,
    energySource: energy.source,
    form,
    emptyingRate: rate,
    lagMin,
    beta,
    factors,
    t50Min,
    fedEndOwnMin: ownMinutesToFractionLeft(t50Min, beta, FED_END_FRACTION_LEFT),
    sleepReadyOwnMin: ownMinutesToFractionLeft(t50Min, beta, SLEEP_READY_FRACTION_LEFT),
    processingEndOwnMin: Math.min(MAX_OWN_PROCESSING_MIN, ownMinutesToFractionLeft(t50Min, beta, PROCESSING_END_FRACTION_LEFT)),
    confidence: baseConfidence(meal, energy.source),
  };
}
