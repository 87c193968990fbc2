/**
 * Millilitres to grams through a food's own household volume portions. Dependency-free: the
 * service converts meal entries with it, and the renderer offers "ml" with it, so the form offers
 * millilitres exactly where the service takes them.
 */

/** Millilitres in one of each household volume unit USDA portions use (US customary). */
const ML_PER_UNIT: Array<[RegExp, number]> = [
  [/^fl oz\b/, 29.5735],
  [/^(cups?)\b/, 236.588],
  [/^(tbsp|tablespoons?)\b/, 14.7868],
  [/^(tsp|teaspoons?)\b/, 4.92892],
  [/^(ml|millilit(er|re)s?)\b/, 1],
  [/^(l|lit(er|re)s?)\b/, 1000],
];

/**
 * Grams per millilitre from a food's volume portions ("1 cup" = 240 g → 1.01 g/ml). A plain
 * measure ("1 cup", "1 fl oz") is preferred over a qualified one ("1 cup, mashed"); null when the
 * food has no volume portion at all.
 */
export function gramsPerMlOf(portions: readonly { label: string; grams: number }[]): number | null {
  let qualified: number | null = null;
  for (const p of portions) {
    const m = /^(\d+(?:\.\d+)?)\s+(.*)$/.exec(p.label.trim().toLowerCase());
    if (!m) continue;
    const amount = Number(m[1]);
    const rest = m[2]!;
    const unit = ML_PER_UNIT.find(([re]) => re.test(rest));
    if (!unit || amount <= 0) continue;
    const density = p.grams / (amount * unit[1]);
    const plain = !/[,(]/.test(rest.replace(unit[0], ''));
    if (plain) return density;
    qualified ??= density;
  }
  return qualified;
}
