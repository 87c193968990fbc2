import type { ChosenSource } from './types.js';

/**
 * What a file is, from its first kilobytes (never from its name: Apple translates export.xml,
 * MyFitnessPal and Google date theirs).
 */
export type FileKind =
  | 'apple_xml'
  | 'cronometer_servings'
  | 'cronometer_dailysummary'
  | 'myfitnesspal_nutrition'
  | 'oura_json'
  | 'oura_csv'
  | 'fitbit_sleep_json'
  | 'fitbit_usersleeps_csv'
  | 'fitbit_usersleepstages_csv'
  | 'fitbit_profile_csv'
  | 'chyme_json';

export interface Detection {
  /** A kind Chyme reads, or null for a file it does not (described in `found`). */
  kind: FileKind | null;
  /** What the file looks like, for messages ("a Cronometer exercises.csv", "a CSV file starting …"). */
  found: string;
}

export const KIND_SOURCE: Record<FileKind, ChosenSource> = {
  apple_xml: 'apple_health',
  cronometer_servings: 'cronometer',
  cronometer_dailysummary: 'cronometer',
  myfitnesspal_nutrition: 'myfitnesspal',
  oura_json: 'oura',
  oura_csv: 'oura',
  fitbit_sleep_json: 'fitbit',
  fitbit_usersleeps_csv: 'fitbit',
  fitbit_usersleepstages_csv: 'fitbit',
  fitbit_profile_csv: 'fitbit',
  chyme_json: 'chyme',
};

/** What each source's files look like, for "expected … found …" sentences. */
export const EXPECTED: Record<ChosenSource, string> = {
  apple_health: 'an Apple Health export (export.zip, or the export.xml inside it, starting with <HealthData>)',
  cronometer: 'a Cronometer servings.csv (header "Day,Time,Group,Food Name,…") or dailysummary.csv (header "Date,Group,Energy (kcal),…")',
  myfitnesspal: 'a MyFitnessPal Nutrition-Summary CSV (header "Date,Meal,…,Calories,…") or the export zip',
  oura: 'Oura sleep data: the API v2 sleep JSON ({"data":[…]}), the older {"sleep":[…]} JSON, or the membership export\'s sleepmodel.csv',
  fitbit: 'Fitbit sleep data from Google Takeout: sleep-YYYY-MM-DD.json files or UserSleeps_*.csv (with UserSleepStages_*.csv)',
  chyme: "a Chyme export (JSON with \"format\": \"chyme.export\")",
};

function firstLine(head: string): string {
  const end = head.search(/\r?\n/);
  return (end === -1 ? head : head.slice(0, end)).replace(/^\uFEFF/, '');
}

function shorten(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export function detect(head: string, baseName: string): Detection {
  const text = head.replace(/^\uFEFF/, '');
  const trimmed = text.trimStart();
  if (trimmed.startsWith('<')) {
    if (/<!DOCTYPE HealthData|<HealthData[\s>]/.test(text)) return { kind: 'apple_xml', found: 'an Apple Health export.xml' };
    if (/<ClinicalDocument[\s>]/.test(text)) return { kind: null, found: 'Apple\'s clinical-records document (export_cda.xml), which holds no meals or sleep' };
    return { kind: null, found: `an XML document starting "${shorten(trimmed)}"` };
  }
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    if (/"format"\s*:\s*"chyme\.export"/.test(text)) return { kind: 'chyme_json', found: 'a Chyme export' };
    if (/"bedtime_start"/.test(text) && (/^\{\s*"(data|next_token)"/.test(trimmed) || trimmed.startsWith('['))) return { kind: 'oura_json', found: 'Oura API v2 sleep JSON' };
    if (/^\{\s*"sleep"\s*:/.test(trimmed) && /"summary_date"|"bedtime_start"/.test(text)) return { kind: 'oura_json', found: 'Oura v1 sleep JSON' };
    if (trimmed.startsWith('[') && /"logId"/.test(text) && /"dateOfSleep"/.test(text)) return { kind: 'fitbit_sleep_json', found: 'a Fitbit sleep-*.json file' };
    if (trimmed === '[]' || trimmed === '[ ]') return { kind: null, found: 'an empty JSON list' };
    return { kind: null, found: `a JSON document starting "${shorten(trimmed)}"` };
  }
  const header = firstLine(text);
  if (/^Day,Time,Group,Food Name,Amount(,|$)/.test(header)) return { kind: 'cronometer_servings', found: 'a Cronometer servings.csv' };
  if (/^Date,(Group,)?Energy \(k(cal|J)\),/.test(header)) return { kind: 'cronometer_dailysummary', found: 'a Cronometer dailysummary.csv' };
  if (/^Day,Time,Group,(Exercise|Metric|Note)(,|$)/.test(header)) return { kind: null, found: `a Cronometer ${header.split(',')[3]!.toLowerCase()}s file, which holds no meals` };
  if (/^Date,Meal,/.test(header) && /(^|,)Calories(,|$)/.test(header)) return { kind: 'myfitnesspal_nutrition', found: 'a MyFitnessPal Nutrition-Summary CSV' };
  if (/^Date,(Exercise|Weight)(,|$)/.test(header)) return { kind: null, found: 'a MyFitnessPal exercise or measurement summary, which holds no meals' };
  if (/(^|[;,])bedtime_start([;,]|$)/.test(header) && /(^|[;,])bedtime_end([;,]|$)/.test(header)) return { kind: 'oura_csv', found: 'an Oura sleepmodel.csv' };
  if (/^sleep_id,sleep_type,/.test(header)) return { kind: 'fitbit_usersleeps_csv', found: 'a Google Health UserSleeps CSV' };
  if (/^sleep_id,/.test(header) && /(^|,)sleep_stage_type(,|$)/.test(header)) return { kind: 'fitbit_usersleepstages_csv', found: 'a Google Health UserSleepStages CSV' };
  if (/^profile\.csv$/i.test(baseName) && /(^|,)timezone(,|$)/.test(header)) return { kind: 'fitbit_profile_csv', found: 'a Fitbit Profile.csv' };
  if (header.length === 0) return { kind: null, found: 'an empty file' };
  return { kind: null, found: `a file starting "${shorten(header)}"` };
}
