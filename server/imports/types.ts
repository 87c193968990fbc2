import type { ImportRecord } from '../db/imports.js';
import type { InputIssue } from '../fields.js';
import type { FoodEntry, MealRecord, MealType, RecordSource } from '../db/meals.js';
import type { SleepRecord } from '../db/sleep.js';

/** An app Chyme imports from (the `source` stored on each record it adds). */
export type ImportSource = Exclude<RecordSource, 'manual' | 'mcp' | 'mqtt'>;
export const IMPORT_SOURCES: readonly ImportSource[] = ['apple_health', 'cronometer', 'myfitnesspal', 'oura', 'fitbit'];

/** What the person may name with --from / the API's `source`: an app, or Chyme's own export. */
export type ChosenSource = ImportSource | 'chyme';

/** The CLI spells sources with dashes (apple-health); the API and the database with underscores. */
export function parseSourceName(name: string): ChosenSource | undefined {
  const normal = name.trim().toLowerCase().replaceAll('-', '_');
  return (IMPORT_SOURCES as readonly string[]).includes(normal) || normal === 'chyme' ? (normal as ChosenSource) : undefined;
}

export const SOURCE_LABELS: Record<ChosenSource, string> = {
  apple_health: 'Apple Health',
  cronometer: 'Cronometer',
  myfitnesspal: 'MyFitnessPal',
  oura: 'Oura',
  fitbit: 'Fitbit',
  chyme: 'Chyme',
};

/** A problem with one row or record: reported, the rest of the import goes on. */
export interface ImportWarning {
  file: string;
  /** 1-based line in the file, when the format has lines worth naming. */
  line: number | null;
  message: string;
}

/** A meal read from a source, before it is written: keyed by a stable per-source key. */
export interface ImportedMeal {
  key: string;
  source: ImportSource;
  timestampMs: number;
  utcOffsetMin: number;
  inferredTime: boolean;
  mealType: MealType;
  description: string;
  /** null when the source did not say (then Chyme derives calories from the macros, marked as such). */
  calories: number | null;
  proteinG: number | null;
  carbsG: number | null;
  fatG: number | null;
  fiberG: number | null;
  sodiumMg: number | null;
  caffeineMg: number | null;
  foods: FoodEntry[];
}

/** A night (or nap) read from a source; several may describe one night, and one is kept. */
export interface ImportedSleep {
  key: string;
  source: ImportSource;
  startMs: number;
  endMs: number;
  efficiency: number | null;
  awakenings: number | null;
  nap: boolean;
  /** True when the source recorded sleep stages: preferred over an unstaged record of the same night. */
  staged: boolean;
  /** Time asleep, when known: among unstaged records of one night the longest wins. */
  asleepMs: number | null;
}

/** A night shorter than this (in bed) is a nap, for sources without a main-sleep flag. */
export const NAP_MAX_MS = 3 * 3600_000;

/** Thrown for input Chyme refuses as a whole: the message is a sentence for the person. */
export class ImportInputError extends Error {
  constructor(message: string, readonly param = 'file') {
    super(message);
    this.name = 'ImportInputError';
  }
}

/** The import was cancelled (its request closed) before it wrote anything: nothing was written. */
export class ImportCancelledError extends Error {
  constructor() {
    super('The import was cancelled before it wrote anything; nothing was written.');
  }
}

/** What an import did, or (dry run) would do. */
export interface ImportResult {
  record: ImportRecord;
  dryRun: boolean;
  zoneAssumed: string | null;
  sources: ChosenSource[];
  /** A few of the records added (dry run: that would be added), for a preview. */
  samples: { meals: MealRecord[]; sleep: SleepRecord[] };
}

/** Why a Chyme export document posted to the API was refused, before anything was written. */
export type DocumentProblem =
  /** Not JSON: the parser's message. */
  | { kind: 'json'; message: string }
  /** JSON, but not an export: the schema's first issue. */
  | { kind: 'schema'; issue: InputIssue };

export class ImportDocumentInvalid extends Error {
  constructor(readonly reason: DocumentProblem) {
    super(reason.kind === 'json' ? reason.message : reason.issue.message);
    this.name = 'ImportDocumentInvalid';
  }
}
