import { csvRows } from './csv.js';
import type { InputEntry } from './input.js';
import { diaryMeals, emptyNutrients, ISO_DATE, mealTypeFromLabel, numberCell, parseClockText, type DiaryRow, type Nutrients, type WarningLog } from './records.js';
import type { ImportedMeal } from './types.js';

/**
 * MyFitnessPal's Nutrition-Summary CSV in its three shapes: N1 (one row per date and meal, with
 * Note), N2 (per entry, with Time), N3 (N2 without Note, often with a BOM). No food names, no
 * caffeine, no zone. Vitamin A, Vitamin C, Calcium and Iron are % of daily value: never read.
 */

/** Columns read and their unit: only these; the %DV columns are deliberately absent. */
const COLUMNS: Array<[header: string, field: keyof Nutrients]> = [
  ['Calories', 'calories'],
  ['Protein (g)', 'proteinG'],
  ['Carbohydrates (g)', 'carbsG'],
  ['Fat (g)', 'fatG'],
  ['Fiber', 'fiberG'],
  ['Sodium (mg)', 'sodiumMg'],
];

export async function parseMyFitnessPal(entries: InputEntry[], timeZone: string, warnings: WarningLog): Promise<ImportedMeal[]> {
  const rows: DiaryRow[] = [];
  for (const entry of entries) {
    for await (const { cells, line } of csvRows(entry, ',', warnings)) {
      const warn = (m: string) => warnings.add(entry.name, line, m);
      const day = (cells.Date ?? '').trim();
      if (!ISO_DATE.test(day)) {
        warn(`Date "${cells.Date ?? ''}" is not YYYY-MM-DD; the row was skipped.`);
        continue;
      }
      const nutrients = emptyNutrients();
      for (const [header, field] of COLUMNS) nutrients[field] = numberCell(cells[header], header, warn);
      const timeText = (cells.Time ?? '').trim();
      let minute: number | null = null;
      if (timeText !== '') {
        minute = parseClockText(timeText) ?? null;
        if (minute === null) warn(`Time "${timeText}" is not a clock time such as 8:05 AM; the meal's default time was used.`);
      }
      const note = (cells.Note ?? '').trim();
      rows.push({ file: entry.name, line, day, label: (cells.Meal ?? '').trim() || 'Snacks', minute, food: null, nutrients, ...(note ? { note } : {}) });
    }
  }
  return diaryMeals(rows, {
    source: 'myfitnesspal',
    timeZone,
    warnings,
    describe: (label, list) => {
      const notes = list.flatMap((r) => (r.note ? [r.note] : []));
      // Renamed meals (Post-Workout) keep their name; the four standard ones are the meal type already.
      const parts = [mealTypeFromLabel(label) ? '' : label, ...notes].filter(Boolean);
      return parts.join(' — ');
    },
  }).map((m) => m.meal);
}
