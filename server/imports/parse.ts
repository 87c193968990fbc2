import { parseAppleHealth } from './apple.js';
import { parseCronometer } from './cronometer.js';
import { detect, EXPECTED, KIND_SOURCE, type FileKind } from './detect.js';
import { parseFitbitJson, parseGoogleSleeps, profileTimeZone } from './fitbit.js';
import { MAX_TEXT_ENTRY_BYTES, MAX_XML_ENTRY_BYTES, openInputs, readHead, readText, type InputEntry } from './input.js';
import { parseMyFitnessPal } from './myfitnesspal.js';
import { parseOura } from './oura.js';
import { WarningLog } from './records.js';
import { ImportInputError, SOURCE_LABELS, type ChosenSource, type ImportedMeal, type ImportedSleep, type ImportWarning } from './types.js';

/**
 * Reads the given files (and the entries of zips among them), detects what each is from its
 * content, parses every recognised one and settles overlaps: the pure "what is in these files"
 * half of an import. Runs in a worker thread for the API (see worker.ts), so it knows no database.
 */

export interface ParseRequest {
  files: Array<{ path: string; name?: string }>;
  /** The source the person chose; files of other apps are then refused or passed over. */
  chosen?: ChosenSource | undefined;
  /** The zone for formats without offsets (the person's setting, or --tz). */
  timeZone: string;
  /** True when the person named the zone (it then wins over Fitbit's Profile.csv). */
  timeZoneExplicit: boolean;
}

export interface ParseProgress {
  bytesDone: number;
  bytesTotal: number;
}

export interface ParseOutcome {
  sources: ChosenSource[];
  /** Files (and zip entries) read, in order. */
  files: string[];
  meals: ImportedMeal[];
  sleeps: ImportedSleep[];
  warnings: ImportWarning[];
  warningsDropped: number;
  /** Records met twice in these files (same key), or nights another record of the same night beat. */
  duplicatesInFiles: number;
  /** The zone used for times written without an offset; null when every time had its own. */
  zoneAssumed: string | null;
  /** A Chyme export's parsed JSON (validated by the writer, which owns its schema). */
  chymeDocument?: unknown;
}

const HUMAN_BYTES = (n: number) => (n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GB` : `${Math.round(n / 1024 ** 2)} MB`);

interface Recognised {
  entry: InputEntry;
  kind: FileKind;
}

async function recognise(entries: InputEntry[], chosen: ChosenSource | undefined): Promise<Recognised[]> {
  const found: Recognised[] = [];
  const passedOver: string[] = [];
  for (const entry of entries) {
    const head = await readHead(entry);
    if (head === null) {
      if (!entry.inZip || /\.(csv|json|xml|txt)$/i.test(entry.baseName)) {
        throw new ImportInputError(`${entry.name} is not UTF-8 text; Chyme reads UTF-8 exports (CSV, JSON or XML). Save it as UTF-8, or import the export's original file.`);
      }
      continue;
    }
    const { kind, found: what } = detect(head, entry.baseName);
    const source = kind ? KIND_SOURCE[kind] : undefined;
    if (!kind || (chosen && source !== chosen)) {
      if (!entry.inZip) {
        throw new ImportInputError(
          chosen
            ? `${entry.name} is not ${SOURCE_LABELS[chosen]} data: expected ${EXPECTED[chosen]}; found ${what}.`
            : `${entry.name} is not an export Chyme can import: found ${what}. Chyme reads Apple Health, Cronometer, MyFitnessPal, Oura and Fitbit exports, and its own.`,
        );
      }
      passedOver.push(`${entry.name} (${what})`);
      continue;
    }
    const limit = kind === 'apple_xml' ? MAX_XML_ENTRY_BYTES : MAX_TEXT_ENTRY_BYTES;
    if (entry.size > limit) throw new ImportInputError(`${entry.name} is ${HUMAN_BYTES(entry.size)}, more than any ${what} can be (at most ${HUMAN_BYTES(limit)}); it was refused.`);
    found.push({ entry, kind });
  }
  if (found.length === 0) {
    const what = passedOver.slice(0, 5).join('; ') || 'nothing readable';
    throw new ImportInputError(
      chosen
        ? `No ${SOURCE_LABELS[chosen]} data found: expected ${EXPECTED[chosen]}; found ${what}.`
        : `None of these files is an export Chyme can import; found ${what}.`,
    );
  }
  return found;
}

/**
 * One record per night: of overlapping records (several apps, phone and watch, a re-export),
 * staged ones win, then the longest time asleep, then the longest window.
 */
export function oneSessionPerNight(sleeps: ImportedSleep[]): { kept: ImportedSleep[]; dropped: number } {
  const sorted = [...sleeps].sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
  const kept: ImportedSleep[] = [];
  let cluster: ImportedSleep[] = [];
  let clusterEnd = -Infinity;
  const rank = (s: ImportedSleep) => [s.staged ? 1 : 0, s.asleepMs ?? -1, s.endMs - s.startMs];
  const better = (a: ImportedSleep, b: ImportedSleep) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i]! > rb[i]!;
    return a.key < b.key;
  };
  const flush = () => {
    if (cluster.length > 0) kept.push(cluster.reduce((best, s) => (better(s, best) ? s : best)));
    cluster = [];
  };
  for (const s of sorted) {
    if (s.startMs >= clusterEnd) flush();
    cluster.push(s);
    clusterEnd = cluster.length === 1 ? s.endMs : Math.max(clusterEnd, s.endMs);
  }
  flush();
  return { kept, dropped: sleeps.length - kept.length };
}

export async function parseImport(request: ParseRequest, onProgress: (p: ParseProgress) => void = () => {}): Promise<ParseOutcome> {
  const inputs = await openInputs(request.files);
  try {
    const recognised = await recognise(inputs.entries, request.chosen);
    const sources = [...new Set(recognised.map((r) => KIND_SOURCE[r.kind]))];
    if (sources.includes('chyme') && recognised.length > 1) {
      throw new ImportInputError('A Chyme export is imported on its own: import it separately from the other files.');
    }
    const of = (kind: FileKind) => recognised.filter((r) => r.kind === kind).map((r) => r.entry);
    const warnings = new WarningLog();
    const outcome: ParseOutcome = {
      sources,
      files: recognised.map((r) => r.entry.name),
      meals: [],
      sleeps: [],
      warnings: warnings.list,
      warningsDropped: 0,
      duplicatesInFiles: 0,
      zoneAssumed: null,
    };

    const chyme = of('chyme_json');
    if (chyme.length > 0) {
      try {
        outcome.chymeDocument = JSON.parse(await readText(chyme[0]!));
      } catch (err) {
        if (err instanceof ImportInputError) throw err;
        throw new ImportInputError(`${chyme[0]!.name} is not valid JSON (${(err as Error).message}); the file may be cut short.`);
      }
      return outcome;
    }

    const bytesTotal = recognised.reduce((sum, r) => sum + r.entry.size, 0);
    let bytesDone = 0;
    const progress = (n: number) => {
      bytesDone += n;
      onProgress({ bytesDone: Math.min(bytesDone, bytesTotal), bytesTotal });
    };
    const usedZone = () => {
      outcome.zoneAssumed = request.timeZone;
    };

    let fitbitZone = request.timeZone;
    const profile = of('fitbit_profile_csv')[0];
    if (profile && !request.timeZoneExplicit) fitbitZone = (await profileTimeZone(profile, warnings)) ?? request.timeZone;

    for (const entry of of('apple_xml')) {
      const r = await parseAppleHealth(entry, request.timeZone, warnings, progress);
      outcome.meals.push(...r.meals);
      outcome.sleeps.push(...r.sleeps);
      // Meals without HKTimeZone take the person's zone for their wall clock (their instants are exact).
      if (r.meals.length > 0) usedZone();
    }
    const servings = of('cronometer_servings');
    const dailySummaries = of('cronometer_dailysummary');
    if (servings.length + dailySummaries.length > 0) {
      outcome.meals.push(...(await parseCronometer({ servings, dailySummaries }, request.timeZone, warnings)));
      usedZone();
    }
    const mfp = of('myfitnesspal_nutrition');
    if (mfp.length > 0) {
      outcome.meals.push(...(await parseMyFitnessPal(mfp, request.timeZone, warnings)));
      usedZone();
    }
    outcome.sleeps.push(...(await parseOura([...of('oura_json'), ...of('oura_csv')], warnings)));
    const fitbitJson = of('fitbit_sleep_json');
    if (fitbitJson.length > 0) {
      outcome.sleeps.push(...(await parseFitbitJson(fitbitJson, fitbitZone, warnings)));
      outcome.zoneAssumed = fitbitZone;
    }
    outcome.sleeps.push(...(await parseGoogleSleeps(of('fitbit_usersleeps_csv'), of('fitbit_usersleepstages_csv'), warnings)));
    for (const r of recognised) if (r.kind !== 'apple_xml') progress(r.entry.size);

    // The same record twice (Fitbit's monthly files overlap; a later export repeats an earlier one).
    const seen = new Set<string>();
    const unique = <T extends { key: string }>(list: T[]) =>
      list.filter((x) => {
        if (seen.has(x.key)) {
          outcome.duplicatesInFiles++;
          return false;
        }
        seen.add(x.key);
        return true;
      });
    outcome.meals = unique(outcome.meals).sort((a, b) => a.timestampMs - b.timestampMs);
    const nights = oneSessionPerNight(unique(outcome.sleeps));
    outcome.sleeps = nights.kept;
    outcome.duplicatesInFiles += nights.dropped;
    outcome.warningsDropped = warnings.dropped;
    return outcome;
  } finally {
    inputs.close();
  }
}
