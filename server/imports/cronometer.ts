import { csvRows } from './csv.js';
import type { InputEntry } from './input.js';
import {
  diaryMeals,
  emptyNutrients,
  ISO_DATE,
  mealTypeFromLabel,
  numberCell,
  parseClockText,
  type DiaryRow,
  type Nutrients,
  type WarningLog,
} from './records.js';
import type { ImportedMeal } from './types.js';

/**
 * Cronometer's "Food & Recipe Entries" (servings.csv, wide with 58 nutrient columns or narrow with
 * none) and "Daily Nutrition" (dailysummary.csv: one row per diary group plus a Total row per day).
 * Times are local wall clock without a zone; empty cells are unknown, not zero. Every number of
 * the files is imported once, on each day the import covers: a wide entry's cells in its meal, a
 * group's daily totals in that group's one meal of the day (narrow shape) or, with no entry for
 * the group, in a meal at its default time.
 */

/** Columns read, with the factor to Chyme's unit (kJ → kcal by 4.184). Other columns are ignored. */
const NUTRIENT_COLUMNS: Array<[header: string, field: keyof Nutrients, factor: number]> = [
  ['Energy (kcal)', 'calories', 1],
  ['Energy (kJ)', 'calories', 1 / 4.184],
  ['Protein (g)', 'proteinG', 1],
  ['Carbs (g)', 'carbsG', 1],
  ['Fat (g)', 'fatG', 1],
  ['Fiber (g)', 'fiberG', 1],
  ['Sodium (mg)', 'sodiumMg', 1],
  ['Caffeine (mg)', 'caffeineMg', 1],
];

function nutrientsOf(cells: Record<string, string>, warn: (m: string) => void): Nutrients {
  const out = emptyNutrients();
  for (const [header, field, factor] of NUTRIENT_COLUMNS) {
    if (!(header in cells)) continue;
    const v = numberCell(cells[header], header, warn);
    if (v !== null) out[field] = Math.round(v * factor * 100) / 100;
  }
  return out;
}

function hasNutrientColumns(cells: Record<string, string>): boolean {
  return NUTRIENT_COLUMNS.some(([h]) => h in cells);
}

export interface CronometerFiles {
  servings: InputEntry[];
  dailySummaries: InputEntry[];
}

export async function parseCronometer(files: CronometerFiles, timeZone: string, warnings: WarningLog): Promise<ImportedMeal[]> {
  // Daily Nutrition rows by (date, group): the narrow servings shape takes its totals from here.
  const daily = new Map<string, { nutrients: Nutrients; line: number; file: string }>();
  let dailyWithoutGroup = false;
  for (const entry of files.dailySummaries) {
    for await (const { cells, line } of csvRows(entry, ',', warnings)) {
      const warn = (m: string) => warnings.add(entry.name, line, m);
      const date = (cells.Date ?? '').trim();
      if (!ISO_DATE.test(date)) {
        warn(`Date "${cells.Date ?? ''}" is not YYYY-MM-DD; the row was skipped.`);
        continue;
      }
      if (!('Group' in cells)) {
        dailyWithoutGroup = true;
        continue;
      }
      // Spelled as servings.csv's groups are, so each row finds its group's entries.
      const group = cells.Group!.trim() || 'Uncategorized';
      // The Total row sums the groups (counting missing values as 0): reading it would count the day twice.
      if (group === 'Total') continue;
      daily.set(`${date}\u0000${group}`, { nutrients: nutrientsOf(cells, warn), line, file: entry.name });
    }
  }
  if (dailyWithoutGroup) {
    warnings.add(files.dailySummaries[0]!.name, null, 'This dailysummary.csv has no Group column (one row per day): day totals cannot be placed at a meal time, so they were not imported. Export "Daily Nutrition" from the web app with diary groups.');
  }

  const rows: DiaryRow[] = [];
  // (day, group)s with entries of the wide shape (their numbers are the entries') and of the
  // narrow one (their numbers are only the group's row in dailysummary.csv).
  const wideGroups = new Set<string>();
  const narrowGroups = new Set<string>();
  const servingsDays = new Set<string>();
  for (const entry of files.servings) {
    let wide: boolean | undefined;
    for await (const { cells, line } of csvRows(entry, ',', warnings)) {
      const warn = (m: string) => warnings.add(entry.name, line, m);
      wide ??= hasNutrientColumns(cells);
      const day = (cells.Day ?? '').trim();
      if (!ISO_DATE.test(day)) {
        warn(`Day "${cells.Day ?? ''}" is not YYYY-MM-DD; the row was skipped.`);
        continue;
      }
      const timeText = (cells.Time ?? '').trim();
      let minute: number | null = null;
      if (timeText !== '') {
        minute = parseClockText(timeText) ?? null;
        if (minute === null) warn(`Time "${timeText}" is not a clock time such as 8:33 AM; the default time of its group was used.`);
      }
      const label = (cells.Group ?? '').trim() || 'Uncategorized';
      const name = (cells['Food Name'] ?? '').trim();
      const amount = (cells.Amount ?? '').trim();
      const nutrients = wide ? nutrientsOf(cells, warn) : emptyNutrients();
      (wide ? wideGroups : narrowGroups).add(`${day}\u0000${label}`);
      servingsDays.add(day);
      rows.push({
        file: entry.name,
        line,
        day,
        label,
        minute,
        food: name ? { name: amount ? `${name} (${amount})` : name, calories: nutrients.calories } : null,
        nutrients,
      });
    }
  }

  // A group's daily totals are a row of that group, where its entries carry no numbers: narrow
  // groups are one meal for the day (at their first time), so the totals cannot be split between
  // meals and none is left holding nothing. Wide groups' numbers are their entries'; their totals
  // would count twice. Totals of a group with no entry make a meal at the group's default time:
  // every group of a Daily Nutrition file read alone, and a group without entries on a day
  // servings.csv covers. A day servings.csv does not cover at all is left out: its entries come in
  // that period's servings.csv (Cronometer exports food entries about a year at a time), and an
  // import of it would add them beside a default-time meal of the same food.
  const narrowOnly = new Set([...narrowGroups].filter((k) => !wideGroups.has(k)));
  let totalsAlone = 0;
  const uncoveredDays = new Set<string>();
  for (const [k, total] of daily) {
    if (wideGroups.has(k)) continue;
    const [day, label] = k.split('\u0000') as [string, string];
    if (!narrowGroups.has(k)) {
      if (files.servings.length > 0 && !servingsDays.has(day)) {
        uncoveredDays.add(day);
        continue;
      }
      totalsAlone++;
    }
    rows.push({ file: total.file, line: total.line, day, label, minute: null, food: null, nutrients: total.nutrients });
  }
  if (totalsAlone > 0 && files.servings.length > 0) {
    warnings.add(
      files.dailySummaries[0]!.name,
      null,
      `${totalsAlone} diary group(s) in dailysummary.csv have no entry in servings.csv on a day it covers; each became a meal at its group's default time.`,
    );
  }
  if (uncoveredDays.size > 0) {
    const days = [...uncoveredDays].sort();
    warnings.add(
      files.dailySummaries[0]!.name,
      null,
      `dailysummary.csv has totals for ${days.length} day(s) (${days[0]} to ${days[days.length - 1]}) on which servings.csv has no entry; they were not imported. Import the servings.csv of those dates together with dailysummary.csv to add them.`,
    );
  }

  const meals = diaryMeals(rows, {
    source: 'cronometer',
    timeZone,
    warnings,
    describe: (label, list) => {
      const names = list.flatMap((r) => (r.food ? [r.food.name] : []));
      const prefix = mealTypeFromLabel(label) || label === 'Uncategorized' ? '' : `${label}: `;
      return `${prefix}${names.join(', ')}`;
    },
    wholeGroup: (day, label) => narrowOnly.has(`${day}\u0000${label}`),
  }).sort((a, b) => a.meal.timestampMs - b.meal.timestampMs);
  const missingTotals = [...narrowOnly].filter((k) => !daily.has(k)).length;
  if (missingTotals > 0) {
    warnings.add(
      files.servings[0]!.name,
      null,
      files.dailySummaries.length === 0
        ? 'This servings.csv has no nutrient columns (the narrow shape): import it together with dailysummary.csv from the same export to bring calories and macros; without it the meals carry food names only (to add the totals later, undo this import and import both files).'
        : `${missingTotals} diary group(s) in servings.csv have no row in dailysummary.csv; those meals carry food names only.`,
    );
  }
  return meals.map((m) => m.meal);
}
