import type { Portion } from '../db/foods.js';

/**
 * The order a table food's portions are listed in: the natural unit first (one egg, one slice, one
 * medium fruit), then the rest in the source's order. USDA lists portions in no useful order ("1
 * cup (4.86 large eggs)" comes first for an egg), and an assistant or a person who takes the first
 * portion for "2 eggs" must get two eggs, not two cups. A portion's id stays its place in the
 * source's list, so meals and clients that name a portion by id keep meaning the same one.
 */

export interface ListedPortion {
  id: string;
  label: string;
  grams: number;
}

/** Measures that weigh or hold a food rather than count it: never the natural unit. */
const NOT_COUNTED =
  /^(cups?|c|oz|ounces?|fl|tbsp|tablespoons?|tsp|teaspoons?|lbs?|pounds?|quarts?|pints?|gal|gallons?|cubic|inch|inches|g|grams?|kg|ml|l|liters?|litres?|servings?|nlea|package|packages|pkg|jars?|cans?|containers?|bottles?|bags?|box|boxes|pouch|pouches|packets?|scoops?|units?|portions?|cartons?|envelopes?|recipe|batch|loaf|loaves|roasts?|pie|pies)\b/;
/** Sizes that are not the everyday one (a measure without a size word is everyday too). */
const OTHER_SIZE = /\b(small|large|extra|jumbo|mini|thin|thick|very|big|giant|baby|half)\b/;
/** "(4.86 large eggs)": the size the source counts this food in, named by one of its other portions. */
const COUNTED_IN = /\(\s*[\d.]+\s+(extra large|extra small|small|medium|large|jumbo)\s+[a-z]/;

/** The amount-less measure of a label, lower case: "1 medium (7" long)" → "medium (7" long)". */
export function measureOf(label: string): string {
  return label.toLowerCase().replace(/^[\d.,/\s-]+/, '');
}

/** How natural a portion is as the unit of a count: higher is more natural; null: not a count. */
function naturalness(label: string, countedIn: string | undefined): number | null {
  const measure = measureOf(label);
  if (measure === '' || NOT_COUNTED.test(measure) || /\b(serving|yields?)\b/.test(measure)) return null;
  // The first segment says what is counted ("slice, medium (1/4" thick)" is a slice), the rest
  // qualifies it ("slice, large"); asides in parentheses only describe it.
  const plain = measure.replace(/\([^)]*\)?/g, ' ');
  const head = plain.split(',')[0]!.trim();
  // Among equals, the plainer label: "1 slice" before "1 slice crust not eaten"; and one of a
  // thing before several ("6 slices").
  const amount = Number.parseFloat(label);
  const plainer = 1 / (1 + plain.trim().length) - (amount > 1 ? 0.5 : 0);
  if (countedIn !== undefined && head === countedIn) return 5;
  if (/\bmedium\b/.test(head)) return 4 + plainer;
  if (!OTHER_SIZE.test(plain)) return 3 + plainer;
  if (!OTHER_SIZE.test(head)) return 2 + plainer;
  if (/^large\b/.test(head)) return 1 + plainer;
  return plainer;
}

/** True when a portion counts the food ("1 slice", "1 large") rather than weighing or holding it ("1 cup"). */
export function countsFood(label: string): boolean {
  return naturalness(label, undefined) !== null;
}

/** The index of the natural unit among `portions`, or -1 when none counts the food. */
export function naturalPortionIndex(portions: readonly Portion[]): number {
  const countedIn = portions.map((p) => COUNTED_IN.exec(p.label.toLowerCase())?.[1]).find((s) => s !== undefined);
  let best = -1;
  let bestScore = -1;
  portions.forEach((p, i) => {
    const score = naturalness(p.label, countedIn);
    if (score !== null && score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  return best;
}

/**
 * A food's portions as the API lists them, each with its id. Table foods: the natural unit
 * first. The person's own foods keep the order they gave (their form edits the list as shown).
 */
export function listedPortions(food: { source: string; portions: readonly Portion[] }): ListedPortion[] {
  const listed = food.portions.map((p, i) => ({ id: String(i + 1), label: p.label, grams: p.grams }));
  if (food.source !== 'usda_sr') return listed;
  const natural = naturalPortionIndex(food.portions);
  return natural <= 0 ? listed : [listed[natural]!, ...listed.slice(0, natural), ...listed.slice(natural + 1)];
}
