import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { isValidTimeZone, offsetMinutes } from '../time/tz.js';
import { utf8Text, type InputEntry } from './input.js';
import { DECIMAL, emptyNutrients, mealTypeFromLabel, mealTypeFromMinute, stableKey, sumNutrients, type Nutrients, type WarningLog } from './records.js';
import { ImportInputError, NAP_MAX_MS, type ImportedMeal, type ImportedSleep } from './types.js';

/**
 * Apple Health's export.xml, streamed through saxes (no DOM: exports reach gigabytes). Only sleep
 * and dietary records are kept; everything else is dropped at its open tag.
 *
 * Times: every date carries the offset the phone had on the day of the EXPORT, not of the sample,
 * so the instant is right and the wall clock may not be. The lived zone comes from the HKTimeZone
 * metadata when present, else the person's zone.
 */

const SLEEP_TYPE = 'HKCategoryTypeIdentifierSleepAnalysis';
const FOOD_CORRELATION = 'HKCorrelationTypeIdentifierFood';

type Unit = 'energy' | 'g' | 'mg';
const DIETARY: Record<string, { field: keyof Nutrients; unit: Unit }> = {
  HKQuantityTypeIdentifierDietaryEnergyConsumed: { field: 'calories', unit: 'energy' },
  HKQuantityTypeIdentifierDietaryProtein: { field: 'proteinG', unit: 'g' },
  HKQuantityTypeIdentifierDietaryCarbohydrates: { field: 'carbsG', unit: 'g' },
  HKQuantityTypeIdentifierDietaryFatTotal: { field: 'fatG', unit: 'g' },
  HKQuantityTypeIdentifierDietaryFiber: { field: 'fiberG', unit: 'g' },
  HKQuantityTypeIdentifierDietarySodium: { field: 'sodiumMg', unit: 'mg' },
  HKQuantityTypeIdentifierDietaryCaffeine: { field: 'caffeineMg', unit: 'mg' },
};

const GRAMS_PER: Record<string, number> = { g: 1, mg: 1e-3, mcg: 1e-6, 'µg': 1e-6, 'μg': 1e-6, kg: 1000, oz: 28.349523125, lb: 453.59237 };
/** kcal per unit: "Cal" is MyFitnessPal's spelling of kcal. */
const KCAL_PER: Record<string, number> = { kcal: 1, Cal: 1, kJ: 1 / 4.184, J: 1 / 4184, cal: 1e-3 };

/** The value in Chyme's unit, or undefined when the unit is not one Chyme knows for this type. */
export function convertAppleValue(value: number, unit: string, to: Unit): number | undefined {
  if (to === 'energy') {
    const f = KCAL_PER[unit];
    return f === undefined ? undefined : value * f;
  }
  const g = GRAMS_PER[unit];
  if (g === undefined) return undefined;
  return to === 'g' ? value * g : value * g * 1000;
}

const APPLE_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** "2026-01-06 00:20:00 -0800" → UTC ms (the offset is the export day's; the instant is right). */
export function parseAppleDate(text: string | undefined): number | undefined {
  const m = APPLE_DATE.exec(text ?? '');
  if (!m) return undefined;
  const offsetMin = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) - offsetMin * 60_000;
}

type SleepKind = 'inbed' | 'asleep' | 'awake' | 'core' | 'deep' | 'rem';
const SLEEP_VALUES: Record<string, SleepKind> = {
  HKCategoryValueSleepAnalysisInBed: 'inbed',
  HKCategoryValueSleepAnalysisAsleep: 'asleep',
  HKCategoryValueSleepAnalysisAsleepUnspecified: 'asleep',
  HKCategoryValueSleepAnalysisAwake: 'awake',
  HKCategoryValueSleepAnalysisAsleepCore: 'core',
  HKCategoryValueSleepAnalysisAsleepDeep: 'deep',
  HKCategoryValueSleepAnalysisAsleepREM: 'rem',
  '0': 'inbed',
  '1': 'asleep',
  '2': 'awake',
  '3': 'core',
  '4': 'deep',
  '5': 'rem',
};

interface SleepSample {
  source: string;
  startMs: number;
  endMs: number;
  kind: SleepKind;
}

interface DietRecord {
  source: string;
  field: keyof Nutrients;
  value: number;
  startMs: number;
  /** The end, value and unit as written: with source, field and start, how a correlation's child is matched at top level (dietSignature). */
  endMs: number | undefined;
  raw: number;
  unit: string;
  timeZone: string | undefined;
  foodType: string | undefined;
  meal: string | undefined;
}

/**
 * (source, type, start, end, value, unit) as written: how a correlation's child is matched at top
 * level. Built when it is compared, never stored per record: a template string is a tree of some
 * ten string pieces until it is hashed, ~0.5 kB for each of the tens of thousands of dietary
 * records a big export holds (most of the parse's memory before).
 */
function dietSignature(d: DietRecord): string {
  return `${d.source}\u0000${d.field}\u0000${d.startMs}\u0000${d.endMs ?? ''}\u0000${d.raw}\u0000${d.unit}`;
}

interface FoodEntry {
  source: string;
  startMs: number;
  timeZone: string | undefined;
  name: string | undefined;
  meal: string | undefined;
  nutrients: Nutrients;
}

interface OpenRecord {
  kind: 'sleep' | 'diet' | 'other';
  attrs: Record<string, string>;
  meta: Record<string, string>;
}

interface OpenCorrelation {
  source: string;
  startMs: number | undefined;
  meta: Record<string, string>;
  children: DietRecord[];
}

/** Food entries logged by one app within this many minutes of a meal's first entry join that meal. */
const APPLE_MEAL_GAP_MS = 30 * 60_000;
/** Sleep samples of one app less than this apart belong to the same night. */
const NIGHT_GAP_MS = 60 * 60_000;

export interface AppleResult {
  meals: ImportedMeal[];
  sleeps: ImportedSleep[];
}

const zoneValidity = new Map<string, boolean>();
function validZone(name: string | undefined): string | undefined {
  if (!name) return undefined;
  let ok = zoneValidity.get(name);
  if (ok === undefined) zoneValidity.set(name, (ok = isValidTimeZone(name)));
  return ok ? name : undefined;
}

export async function parseAppleHealth(
  entry: InputEntry,
  personZone: string,
  warnings: WarningLog,
  onBytes: (bytes: number) => void = () => {},
): Promise<AppleResult> {
  const parser = new SaxesParser({ xmlns: false });
  // Strings saxes hands out are slices of the chunk they came from: keeping one would keep the
  // whole chunk alive (hundreds of MB over a big export). Everything kept is copied once, and
  // repeated values (app names, food names, zones) share one copy.
  const interned = new Map<string, string>();
  const own = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    let copy = interned.get(text);
    if (copy === undefined) {
      copy = Buffer.from(text, 'utf8').toString('utf8');
      interned.set(copy, copy);
    }
    return copy;
  };
  const dietTop: DietRecord[] = [];
  const correlations: OpenCorrelation[] = [];
  const childSignatures = new Set<string>();
  const sleepSamples: SleepSample[] = [];
  let record: OpenRecord | null = null;
  let correlation: OpenCorrelation | null = null;
  let sawRoot = false;
  let closedRoot = false;
  let xmlErrors = 0;

  const dietRecord = (r: OpenRecord, line: number): DietRecord | undefined => {
    const a = r.attrs;
    const spec = DIETARY[a.type!]!;
    // A missing or blank value is unknown: Number('') would read it as a logged 0.
    const text = (a.value ?? '').trim();
    const raw = DECIMAL.test(text) ? Number(text) : NaN;
    const startMs = parseAppleDate(a.startDate);
    if (!Number.isFinite(raw) || raw < 0 || startMs === undefined) {
      warnings.add(entry.name, line, `A ${a.type} record has an unreadable value or date (value "${a.value}", startDate "${a.startDate}"); it was skipped.`);
      return undefined;
    }
    const value = convertAppleValue(raw, a.unit ?? '', spec.unit);
    if (value === undefined) {
      warnings.add(entry.name, line, `A ${a.type} record is in unit "${a.unit}", which Chyme does not convert; it was skipped.`);
      return undefined;
    }
    const source = own(a.sourceName ?? '')!;
    return {
      source,
      field: spec.field,
      value,
      startMs,
      // Copies and numbers only (see own()).
      endMs: parseAppleDate(a.endDate),
      raw,
      unit: own(a.unit ?? '')!,
      timeZone: own(validZone(r.meta.HKTimeZone)),
      foodType: own(r.meta.HKFoodType),
      meal: own(r.meta.Meal ?? r.meta.meal),
    };
  };

  parser.on('opentag', (tag: SaxesTagPlain) => {
    const name = tag.name;
    if (name === 'Record') {
      const attrs = tag.attributes as Record<string, string>;
      const type = attrs.type;
      record = { kind: type === SLEEP_TYPE ? 'sleep' : type !== undefined && type in DIETARY ? 'diet' : 'other', attrs, meta: {} };
    } else if (name === 'MetadataEntry') {
      const attrs = tag.attributes as Record<string, string>;
      if (record) {
        if (record.kind !== 'other' && attrs.key !== undefined) record.meta[attrs.key] = attrs.value ?? '';
      } else if (correlation && attrs.key !== undefined) correlation.meta[own(attrs.key)!] = own(attrs.value ?? '')!;
    } else if (name === 'Correlation') {
      const attrs = tag.attributes as Record<string, string>;
      if (attrs.type === FOOD_CORRELATION) correlation = { source: own(attrs.sourceName ?? '')!, startMs: parseAppleDate(attrs.startDate), meta: {}, children: [] };
    } else if (!sawRoot) {
      if (name !== 'HealthData') throw new ImportInputError(`${entry.name} is not an Apple Health export: its root element is <${name}>, not <HealthData>.`);
    }
    if (name === 'HealthData') sawRoot = true;
  });

  parser.on('closetag', (tag) => {
    const name = tag.name;
    if (name === 'Record' && record) {
      const r: OpenRecord = record;
      record = null;
      if (r.kind === 'diet') {
        const d = dietRecord(r, parser.line);
        if (!d) return;
        if (correlation) {
          correlation.children.push(d);
          childSignatures.add(dietSignature(d));
        } else dietTop.push(d);
      } else if (r.kind === 'sleep' && !correlation) {
        const kind = SLEEP_VALUES[r.attrs.value ?? ''];
        const startMs = parseAppleDate(r.attrs.startDate);
        const endMs = parseAppleDate(r.attrs.endDate);
        if (!kind || startMs === undefined || endMs === undefined || endMs <= startMs) {
          warnings.add(entry.name, parser.line, `A sleep record has an unknown value "${r.attrs.value}" or unreadable dates; it was skipped.`);
          return;
        }
        sleepSamples.push({ source: own(r.attrs.sourceName ?? '')!, startMs, endMs, kind });
      }
    } else if (name === 'Correlation' && correlation) {
      correlations.push(correlation);
      correlation = null;
    } else if (name === 'HealthData') closedRoot = true;
  });

  // Bad characters (U+000B) and repeated attributes are reported and passed over: one stray byte in
  // a ten-year export must not cost the person the whole import.
  parser.on('error', (err: Error) => {
    xmlErrors++;
    if (xmlErrors <= 20) warnings.add(entry.name, parser.line, `XML problem passed over: ${err.message.replace(/^(.*?:)?\d+:\d+: /, '')}`);
  });

  for await (const text of utf8Text(await entry.open(), entry.name, onBytes)) parser.write(text);
  parser.close();
  if (!sawRoot) throw new ImportInputError(`${entry.name} is not an Apple Health export: it has no <HealthData> element.`);
  if (!closedRoot) throw new ImportInputError(`${entry.name} ends before </HealthData>: the export was cut short. Export it again from the Health app.`);

  return { meals: appleMeals(dietTop, correlations, childSignatures, personZone), sleeps: appleNights(sleepSamples) };
}

function appleMeals(top: DietRecord[], correlations: OpenCorrelation[], childSignatures: Set<string>, personZone: string): ImportedMeal[] {
  const entries: FoodEntry[] = [];
  // A food correlation's children are repeated as top-level records (the DTD says so): the children
  // count, their top-level copies do not.
  for (const c of correlations) {
    if (c.children.length === 0) continue;
    const first = c.children[0]!;
    const nutrients = emptyNutrients();
    for (const d of c.children) nutrients[d.field] = (nutrients[d.field] ?? 0) + d.value;
    entries.push({
      source: c.source || first.source,
      startMs: c.startMs ?? first.startMs,
      timeZone: validZone(c.meta.HKTimeZone) ?? c.children.find((d) => d.timeZone)?.timeZone,
      name: c.meta.HKFoodType ?? c.children.find((d) => d.foodType)?.foodType,
      meal: c.meta.Meal ?? c.meta.meal ?? c.children.find((d) => d.meal)?.meal,
      nutrients,
    });
  }
  // Loose records: one per nutrient per logged food (MyFitnessPal), grouped back by their shared start.
  const loose = new Map<string, FoodEntry>();
  for (const d of top) {
    if (childSignatures.size > 0 && childSignatures.has(dietSignature(d))) continue;
    const k = `${d.source}\u0000${d.startMs}\u0000${d.foodType ?? ''}\u0000${d.meal ?? ''}`;
    let e = loose.get(k);
    if (!e) {
      e = { source: d.source, startMs: d.startMs, timeZone: d.timeZone, name: d.foodType, meal: d.meal, nutrients: emptyNutrients() };
      loose.set(k, e);
    }
    e.nutrients[d.field] = (e.nutrients[d.field] ?? 0) + d.value;
    e.timeZone ??= d.timeZone;
  }
  entries.push(...loose.values());
  entries.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.startMs - b.startMs));

  const meals: ImportedMeal[] = [];
  let group: FoodEntry[] = [];
  const flush = () => {
    if (group.length === 0) return;
    const first = group[0]!;
    const zone = group.find((e) => e.timeZone)?.timeZone ?? personZone;
    const offset = offsetMinutes(first.startMs, zone);
    const localMinute = ((((first.startMs / 60_000 + offset) % 1440) + 1440) % 1440) | 0;
    const label = group.find((e) => e.meal)?.meal;
    const labelType = label ? mealTypeFromLabel(label) : undefined;
    const named = group.filter((e) => e.name);
    const nutrients = sumNutrients(group.map((e) => e.nutrients));
    meals.push({
      key: stableKey('apple_health', 'meal', first.source, first.startMs),
      source: 'apple_health',
      timestampMs: first.startMs,
      utcOffsetMin: offset,
      inferredTime: false,
      mealType: labelType ?? mealTypeFromMinute(localMinute),
      description: (named.length > 0 ? named.map((e) => e.name).join(', ') : [label && !labelType ? label : '', `from ${first.source}`].filter(Boolean).join(' ')).slice(0, 2000),
      ...nutrients,
      foods: named.flatMap((e) => (e.nutrients.calories === null ? [] : [{ name: e.name!.slice(0, 200), calories: Math.round(e.nutrients.calories * 100) / 100 }])),
    });
    group = [];
  };
  for (const e of entries) {
    const first = group[0];
    if (first && (first.source !== e.source || e.startMs - first.startMs > APPLE_MEAL_GAP_MS)) flush();
    group.push(e);
  }
  flush();
  return meals;
}

/** Total length of the union of intervals. */
function unionMs(intervals: Array<{ startMs: number; endMs: number }>): number {
  const sorted = [...intervals].sort((a, b) => a.startMs - b.startMs);
  let total = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const i of sorted) {
    if (i.startMs > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = i.startMs;
      curEnd = i.endMs;
    } else curEnd = Math.max(curEnd, i.endMs);
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}

/** Groups samples of one app into runs whose gaps are under NIGHT_GAP_MS. */
function runsBySource(samples: SleepSample[]): SleepSample[][] {
  const bySource = new Map<string, SleepSample[]>();
  for (const s of samples) {
    const list = bySource.get(s.source);
    if (list) list.push(s);
    else bySource.set(s.source, [s]);
  }
  const runs: SleepSample[][] = [];
  for (const list of bySource.values()) {
    list.sort((a, b) => a.startMs - b.startMs);
    let run: SleepSample[] = [];
    let end = -Infinity;
    for (const s of list) {
      if (run.length > 0 && s.startMs - end >= NIGHT_GAP_MS) {
        runs.push(run);
        run = [];
      }
      run.push(s);
      end = Math.max(run.length === 1 ? s.endMs : end, s.endMs);
    }
    if (run.length > 0) runs.push(run);
  }
  return runs;
}

const ASLEEP: ReadonlySet<SleepKind> = new Set(['asleep', 'core', 'deep', 'rem']);

/**
 * Nights from sleep samples: each app's samples grouped into nights; the window widened by any
 * overlapping InBed; efficiency = asleep union ÷ window; awakenings = Awake samples between the
 * first and last asleep ones. Nights with only InBed samples (an old phone) are nights too, with
 * nothing known but their times. Overlaps between apps are settled later, with every source.
 */
function appleNights(samples: SleepSample[]): ImportedSleep[] {
  const inBed = samples.filter((s) => s.kind === 'inbed').sort((a, b) => a.startMs - b.startMs);
  const nights: ImportedSleep[] = [];
  for (const run of runsBySource(samples.filter((s) => s.kind !== 'inbed'))) {
    const asleep = run.filter((s) => ASLEEP.has(s.kind));
    if (asleep.length === 0) continue;
    let startMs = Math.min(...run.map((s) => s.startMs));
    let endMs = Math.max(...run.map((s) => s.endMs));
    for (const b of inBed) {
      if (b.startMs < endMs && b.endMs > startMs) {
        startMs = Math.min(startMs, b.startMs);
        endMs = Math.max(endMs, b.endMs);
      }
    }
    const asleepMs = unionMs(asleep);
    const firstAsleep = Math.min(...asleep.map((s) => s.startMs));
    const lastAsleep = Math.max(...asleep.map((s) => s.endMs));
    nights.push({
      key: stableKey('apple_health', 'sleep', run[0]!.source, firstAsleep),
      source: 'apple_health',
      startMs,
      endMs,
      efficiency: Math.round((asleepMs / (endMs - startMs)) * 1000) / 1000,
      // An app that never writes Awake samples (old iPhones, some third parties) says nothing about
      // awakenings: unknown, not zero.
      awakenings: run.some((s) => s.kind === 'awake')
        ? run.filter((s) => s.kind === 'awake' && s.startMs >= firstAsleep && s.endMs <= lastAsleep).length
        : null,
      nap: endMs - startMs < NAP_MAX_MS,
      staged: run.some((s) => s.kind === 'core' || s.kind === 'deep' || s.kind === 'rem'),
      asleepMs,
    });
  }
  for (const run of runsBySource(inBed)) {
    const startMs = Math.min(...run.map((s) => s.startMs));
    const endMs = Math.max(...run.map((s) => s.endMs));
    if (nights.some((n) => n.startMs < endMs && n.endMs > startMs)) continue;
    nights.push({
      key: stableKey('apple_health', 'inbed', run[0]!.source, startMs),
      source: 'apple_health',
      startMs,
      endMs,
      efficiency: null,
      awakenings: null,
      nap: endMs - startMs < NAP_MAX_MS,
      staged: false,
      asleepMs: null,
    });
  }
  return nights.filter((n) => n.endMs - n.startMs <= 24 * 3600_000);
}
