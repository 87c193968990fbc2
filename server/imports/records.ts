import { createHash } from 'node:crypto';
import type { FoodEntry, MealType } from '../db/meals.js';
import { localTimeToInstant, offsetMinutes } from '../time/tz.js';
import type { ImportedMeal, ImportSource, ImportWarning } from './types.js';

/** Helpers every parser shares: stable keys, local times, meal types, numbers, clustering. */

/** A stable key of a source record: the same record in any later export gives the same key. */
export function stableKey(source: ImportSource, ...parts: Array<string | number>): string {
  return `${source}:${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32)}`;
}

/** Default meal times (minutes after midnight) for sources that give only a date. */
export const DEFAULT_MEAL_MINUTE: Record<MealType, number> = { breakfast: 8 * 60, lunch: 12 * 60 + 30, snack: 15 * 60 + 30, dinner: 19 * 60 };

/** A diary label (Breakfast, Lunch, Dinner, Snacks; anything else is a snack). */
export function mealTypeFromLabel(label: string): MealType | undefined {
  const l = label.trim().toLowerCase();
  if (l === 'breakfast') return 'breakfast';
  if (l === 'lunch') return 'lunch';
  if (l === 'dinner' || l === 'supper') return 'dinner';
  if (l === 'snack' || l === 'snacks') return 'snack';
  return undefined;
}

/** A meal type from the local clock, for meals without a label. */
export function mealTypeFromMinute(minute: number): MealType {
  if (minute >= 5 * 60 && minute < 11 * 60) return 'breakfast';
  if (minute >= 11 * 60 && minute < 15 * 60) return 'lunch';
  if (minute >= 17 * 60 && minute < 22 * 60) return 'dinner';
  return 'snack';
}

/** "8:33 AM" / "12:05 pm" / "21:40" → minutes after midnight; undefined when unreadable. */
export function parseClockText(text: string): number | undefined {
  const m = /^\s*(\d{1,2}):(\d{2})(?::\d{2})?\s*([AaPp][Mm])?\s*$/.exec(text);
  if (!m) return undefined;
  let h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59) return undefined;
  if (m[3]) {
    if (h < 1 || h > 12) return undefined;
    const pm = m[3].toLowerCase() === 'pm';
    h = (h % 12) + (pm ? 12 : 0);
  } else if (h > 23) return undefined;
  return h * 60 + min;
}

/** A local wall-clock time on a date, in a zone: its instant and the offset lived there then. */
export function localInstant(date: string, minuteOfDay: number, timeZone: string, seconds = 0): { ms: number; offsetMin: number } {
  const ms = localTimeToInstant(date, minuteOfDay, timeZone) + seconds * 1000;
  return { ms, offsetMin: offsetMinutes(ms, timeZone) };
}

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A decimal number as exports write it ("12", "0.5", ".5", "1e-05"); Number() alone reads "" and " " as 0. */
export const DECIMAL = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A number cell: '' is unknown (null, never 0); a comma decimal or text is warned about and read
 * as unknown. Negative amounts are refused the same way.
 */
export function numberCell(raw: string | undefined, column: string, warn: (message: string) => void): number | null {
  const text = (raw ?? '').trim();
  if (text === '') return null;
  if (/^-?\d+,\d+$/.test(text)) {
    warn(`"${column}" is "${text}", written with a comma as the decimal separator; Chyme reads "." decimals and left it unknown.`);
    return null;
  }
  const value = Number(text);
  if (!Number.isFinite(value) || !DECIMAL.test(text)) {
    warn(`"${column}" is "${text}", which is not a number; it was left unknown.`);
    return null;
  }
  if (value < 0) {
    warn(`"${column}" is negative (${text}); it was left unknown.`);
    return null;
  }
  return value;
}

/** Sum of the known values; null when none is known (missing stays missing, never 0). */
export function sumKnown(values: Array<number | null>): number | null {
  let total: number | null = null;
  for (const v of values) if (v !== null) total = (total ?? 0) + v;
  return total === null ? null : Math.round(total * 100) / 100;
}

export interface Nutrients {
  calories: number | null;
  proteinG: number | null;
  carbsG: number | null;
  fatG: number | null;
  fiberG: number | null;
  sodiumMg: number | null;
  caffeineMg: number | null;
}

export const NUTRIENT_FIELDS = ['calories', 'proteinG', 'carbsG', 'fatG', 'fiberG', 'sodiumMg', 'caffeineMg'] as const;

export function emptyNutrients(): Nutrients {
  return { calories: null, proteinG: null, carbsG: null, fatG: null, fiberG: null, sodiumMg: null, caffeineMg: null };
}

export function sumNutrients(list: Nutrients[]): Nutrients {
  const out = emptyNutrients();
  for (const field of NUTRIENT_FIELDS) out[field] = sumKnown(list.map((n) => n[field]));
  return out;
}

/** One diary entry of a date-and-clock source (Cronometer, MyFitnessPal): a row, before grouping. */
export interface DiaryRow {
  /** The file (or zip entry) and line the row was read from, for warnings. */
  file: string;
  line: number;
  day: string;
  /** The diary label as written (Breakfast, Snack 1, Post-Workout). */
  label: string;
  /** Minutes after midnight, or null when the row has no time. */
  minute: number | null;
  food: { name: string; calories: number | null } | null;
  nutrients: Nutrients;
  note?: string;
}

/** A meal made from diary rows, with the (day, label) it came from. */
export interface DiaryMeal {
  day: string;
  label: string;
  meal: ImportedMeal;
}

/** Entries within this many minutes of a meal's first entry join that meal. */
export const DIARY_CLUSTER_MIN = 60;

export interface DiaryMealOptions {
  source: ImportSource;
  timeZone: string;
  warnings: WarningLog;
  /** The meal's description from its diary label and rows. */
  describe: (label: string, rows: DiaryRow[]) => string;
  /**
   * True for a (day, label) that is one meal at its first time however far apart its rows are:
   * its numbers are the group's totals, which cannot be split between meals (a second meal would
   * hold nothing).
   */
  wholeGroup?: (day: string, label: string) => boolean;
}

/**
 * Groups diary rows into meals: per (day, label), timed rows within DIARY_CLUSTER_MIN of the
 * cluster's first one. Untimed rows join the label's first timed meal that day; with none, they
 * make a meal at the label's default time, marked inferred. A meal that would give no number and
 * name no food is not made (it would be an invented meal, which the digestion model would read as
 * a typical portion): a warning says so.
 */
export function diaryMeals(rows: DiaryRow[], options: DiaryMealOptions): DiaryMeal[] {
  const { source, timeZone, warnings, describe, wholeGroup = () => false } = options;
  const groups = new Map<string, DiaryRow[]>();
  for (const row of rows) {
    const k = `${row.day}\u0000${row.label}`;
    const list = groups.get(k);
    if (list) list.push(row);
    else groups.set(k, [row]);
  }
  const meals: DiaryMeal[] = [];
  for (const list of groups.values()) {
    const { day, label } = list[0]!;
    const whole = wholeGroup(day, label);
    const timed = list.filter((r) => r.minute !== null).sort((a, b) => a.minute! - b.minute! || a.line - b.line);
    const untimed = list.filter((r) => r.minute === null);
    const clusters: Array<{ minute: number; inferred: boolean; rows: DiaryRow[] }> = [];
    for (const row of timed) {
      const last = clusters[clusters.length - 1];
      if (last && (whole || row.minute! - last.minute <= DIARY_CLUSTER_MIN)) last.rows.push(row);
      else clusters.push({ minute: row.minute!, inferred: false, rows: [row] });
    }
    const labelType = mealTypeFromLabel(label);
    if (untimed.length > 0) {
      if (clusters.length > 0) clusters[0]!.rows.push(...untimed);
      else clusters.push({ minute: DEFAULT_MEAL_MINUTE[labelType ?? 'snack'], inferred: true, rows: untimed });
    }
    for (const c of clusters) {
      const nutrients = sumNutrients(c.rows.map((r) => r.nutrients));
      if (NUTRIENT_FIELDS.every((f) => nutrients[f] === null) && c.rows.every((r) => r.food === null)) {
        const first = c.rows[0]!;
        warnings.add(first.file, first.line, `The ${label} of ${day} gives no number and names no food; no meal was made for it.`);
        continue;
      }
      const at = localInstant(day, c.minute, timeZone);
      const foods: FoodEntry[] = c.rows.flatMap((r) => (r.food && r.food.calories !== null ? [{ name: r.food.name.slice(0, 200), calories: Math.round(r.food.calories * 100) / 100 }] : []));
      meals.push({ day, label, meal: {
        key: stableKey(source, day, label, c.inferred ? 'default-time' : c.minute),
        source,
        timestampMs: at.ms,
        utcOffsetMin: at.offsetMin,
        inferredTime: c.inferred,
        // The diary's label decides (a 9:39 PM yogurt filed under Breakfast stays breakfast);
        // renamed or added groups (Snack 1, Post-Workout) are snacks, keeping their name.
        mealType: labelType ?? 'snack',
        description: describe(label, c.rows).slice(0, 2000),
        ...nutrients,
        foods,
      } });
    }
  }
  return meals;
}

/** Collects warnings with a cap, so a file of ten thousand bad rows does not make a huge report. */
export class WarningLog {
  readonly list: ImportWarning[] = [];
  dropped = 0;
  constructor(private readonly max = 500) {}
  add(file: string, line: number | null, message: string): void {
    if (this.list.length < this.max) this.list.push({ file, line, message });
    else this.dropped++;
  }
}
