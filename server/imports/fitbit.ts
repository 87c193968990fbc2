import { isValidTimeZone } from '../time/tz.js';
import { csvRows } from './csv.js';
import type { InputEntry } from './input.js';
import { readText } from './input.js';
import { localInstant, numberCell, stableKey, type WarningLog } from './records.js';
import { ImportInputError, NAP_MAX_MS, type ImportedSleep } from './types.js';

/**
 * Fitbit from Google Takeout: the legacy sleep-YYYY-MM-DD.json files (local wall-clock times with
 * no offset; the only zone in the archive is Profile.csv's current one) and the Google Health
 * UserSleeps_*.csv (UTC with offsets; each night written twice, once per algorithm version), with
 * the wake segments of UserSleepStages_*.csv.
 */

/** The zone in Your Profile/Profile.csv, when the archive has one. */
export async function profileTimeZone(entry: InputEntry, warnings: WarningLog): Promise<string | undefined> {
  for await (const { cells, line } of csvRows(entry, ',', warnings)) {
    const zone = (cells.timezone ?? '').trim();
    if (zone && isValidTimeZone(zone)) return zone;
    if (zone) warnings.add(entry.name, line, `timezone "${zone}" is not an IANA zone; the zone chosen for the import was used.`);
    return undefined;
  }
  return undefined;
}

const LOCAL = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/;

/** A Fitbit time: local wall clock (no offset) read in `timeZone`; one with an offset as written. */
function fitbitInstant(text: unknown, timeZone: string): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = LOCAL.exec(text.trim());
  if (m) return localInstant(m[1]!, Number(m[2]) * 60 + Number(m[3]), timeZone, Number(m[4])).ms;
  const ms = /([+-]\d{2}:?\d{2}|Z)$/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

interface LevelItem {
  dateTime: string;
  level: string;
  seconds: number;
}

const WAKE_LEVELS = new Set(['wake', 'awake']);

interface StageSegment {
  start: number;
  end: number;
  wake: boolean;
}

/** Wake segments (merged where they overlap) between the first and last sleep segment; null without sleep. */
function awakeningsOf(all: StageSegment[]): number | null {
  const sleep = all.filter((s) => !s.wake);
  if (sleep.length === 0) return null;
  const first = Math.min(...sleep.map((s) => s.start));
  const last = Math.max(...sleep.map((s) => s.end));
  const wakes = all.filter((s) => s.wake && s.start >= first && s.end <= last).sort((a, b) => a.start - b.start);
  let count = 0;
  let end = -Infinity;
  for (const w of wakes) {
    if (w.start > end) count++;
    end = Math.max(end, w.end);
  }
  return count;
}

/** Wake segments (data and shortData, merged where they overlap) between the first and last sleep. */
export function fitbitAwakenings(data: LevelItem[], shortData: LevelItem[], timeZone: string): number | null {
  const seg = (items: LevelItem[]) =>
    items.flatMap((i) => {
      const start = fitbitInstant(i.dateTime, timeZone);
      return start === undefined || !(i.seconds > 0) ? [] : [{ start, end: start + i.seconds * 1000, wake: WAKE_LEVELS.has(i.level) }];
    });
  return awakeningsOf([...seg(data), ...seg(shortData)]);
}

export async function parseFitbitJson(entries: InputEntry[], timeZone: string, warnings: WarningLog): Promise<ImportedSleep[]> {
  const out: ImportedSleep[] = [];
  for (const entry of entries) {
    let logs: unknown;
    try {
      logs = JSON.parse(await readText(entry));
    } catch (err) {
      throw new ImportInputError(`${entry.name} is not valid JSON (${(err as Error).message}); the file may be cut short.`);
    }
    if (!Array.isArray(logs)) throw new ImportInputError(`${entry.name} is not a list of Fitbit sleep logs (expected a JSON array).`);
    logs.forEach((raw: unknown, i) => {
      const log = (raw ?? {}) as Record<string, unknown>;
      const startMs = fitbitInstant(log.startTime, timeZone);
      const endMs = fitbitInstant(log.endTime, timeZone);
      if (startMs === undefined || endMs === undefined || endMs <= startMs || endMs - startMs > 24 * 3600_000) {
        warnings.add(entry.name, null, `Sleep log ${String(log.logId ?? `#${i + 1}`)} has no readable startTime/endTime; it was skipped.`);
        return;
      }
      const levels = (log.levels ?? {}) as { data?: LevelItem[]; shortData?: LevelItem[] };
      const efficiency = typeof log.efficiency === 'number' ? Math.min(1, Math.max(0, log.efficiency / 100)) : null;
      const main = log.mainSleep ?? log.isMainSleep;
      out.push({
        key: log.logId !== undefined ? stableKey('fitbit', 'log', String(log.logId)) : stableKey('fitbit', 'time', startMs, endMs),
        source: 'fitbit',
        startMs,
        endMs,
        // Kept as Fitbit computed it: for stage logs it is not minutesAsleep / timeInBed.
        efficiency,
        awakenings: fitbitAwakenings(Array.isArray(levels.data) ? levels.data : [], Array.isArray(levels.shortData) ? levels.shortData : [], timeZone),
        nap: main === undefined ? endMs - startMs < NAP_MAX_MS : main === false,
        staged: log.type === 'stages',
        asleepMs: typeof log.minutesAsleep === 'number' ? log.minutesAsleep * 60_000 : null,
      });
    });
  }
  return out;
}

const GOOGLE_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([+-])(\d{2}):?(\d{2})|Z)$/;

/** A Google Health time: UTC, written `2026-04-12 05:45:30+0000` (also read: an ISO form, or Z). */
function googleInstant(text: string | undefined): number | undefined {
  const m = GOOGLE_TIME.exec((text ?? '').trim());
  if (!m) return undefined;
  const sign = m[7] === '-' ? -1 : 1;
  const offsetMin = m[7] ? sign * (Number(m[8]) * 60 + Number(m[9])) : 0;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) - offsetMin * 60_000;
}

/**
 * Whether algorithm version `a` is newer than `b`: by their trailing numbers (`sleep_session_v2`,
 * or a plain `3`), so that 10 is newer than 9; as text when either has none.
 */
function newerVersion(a: string, b: string): boolean {
  const na = /(\d+)$/.exec(a);
  const nb = /(\d+)$/.exec(b);
  if (na && nb && a.slice(0, na.index) === b.slice(0, nb.index)) return Number(na[1]) > Number(nb[1]);
  return a > b;
}

/** Stage types of UserSleepStages_*.csv that are wake: AWAKE (WAKE in some files). */
const GOOGLE_WAKE_STAGES = new Set(['AWAKE', 'WAKE']);

/**
 * The stage segments of Google Health's UserSleepStages_*.csv (sleep_id, sleep_stage_type
 * AWAKE/LIGHT/DEEP/REM, sleep_stage_start/end in UTC), by the sleep_id of their UserSleeps row.
 */
async function googleStages(entries: InputEntry[], warnings: WarningLog): Promise<Map<string, StageSegment[]>> {
  const bySleep = new Map<string, StageSegment[]>();
  for (const entry of entries) {
    for await (const { cells, line } of csvRows(entry, ',', warnings)) {
      const id = (cells.sleep_id ?? '').trim();
      const type = (cells.sleep_stage_type ?? '').trim().toUpperCase();
      const start = googleInstant(cells.sleep_stage_start);
      const end = googleInstant(cells.sleep_stage_end);
      if (!id || !type || start === undefined || end === undefined || end <= start) {
        warnings.add(entry.name, line, `This stage row has no readable sleep_id, sleep_stage_type, sleep_stage_start or sleep_stage_end; it was skipped.`);
        continue;
      }
      const list = bySleep.get(id);
      const segment = { start, end, wake: GOOGLE_WAKE_STAGES.has(type) };
      if (list) list.push(segment);
      else bySleep.set(id, [segment]);
    }
  }
  return bySleep;
}

export async function parseGoogleSleeps(entries: InputEntry[], stageEntries: InputEntry[], warnings: WarningLog): Promise<ImportedSleep[]> {
  const stages = await googleStages(stageEntries, warnings);
  if (entries.length === 0 && stageEntries.length > 0) {
    warnings.add(stageEntries[0]!.name, null, 'Sleep stages alone make no nights: import them with the UserSleeps_*.csv of the same Takeout.');
  }
  const rows: Array<ImportedSleep & { version: string }> = [];
  for (const entry of entries) {
    for await (const { cells, line } of csvRows(entry, ',', warnings)) {
      const warn = (m: string) => warnings.add(entry.name, line, m);
      const startMs = googleInstant(cells.sleep_start);
      const endMs = googleInstant(cells.sleep_end);
      if (startMs === undefined || endMs === undefined || endMs <= startMs || endMs - startMs > 24 * 3600_000) {
        warn(`sleep_start/sleep_end ("${cells.sleep_start ?? ''}", "${cells.sleep_end ?? ''}") are not readable times; the row was skipped.`);
        continue;
      }
      const asleep = numberCell(cells.minutes_asleep, 'minutes_asleep', warn);
      const period = numberCell(cells.minutes_in_sleep_period, 'minutes_in_sleep_period', warn);
      const segments = cells.sleep_id ? stages.get(cells.sleep_id.trim()) : undefined;
      rows.push({
        key: cells.sleep_id ? stableKey('fitbit', 'google', cells.sleep_id) : stableKey('fitbit', 'google-time', startMs, endMs),
        source: 'fitbit',
        startMs,
        endMs,
        efficiency: asleep !== null && period ? Math.min(1, Math.round((asleep / period) * 1000) / 1000) : null,
        // Only UserSleepStages_*.csv has the wake segments; without it the count is unknown.
        awakenings: segments ? awakeningsOf(segments) : null,
        nap: endMs - startMs < NAP_MAX_MS,
        staged: (cells.sleep_type ?? '').toUpperCase() === 'STAGES' || segments !== undefined,
        asleepMs: asleep === null ? null : asleep * 60_000,
        version: cells.algorithm_version ?? '',
      });
    }
  }
  // Each night is written once per algorithm version, minutes apart: keep the newest version.
  return rows
    .filter((r) => !rows.some((o) => o !== r && o.startMs < r.endMs && o.endMs > r.startMs && newerVersion(o.version, r.version)))
    .map(({ version: _version, ...sleep }) => sleep);
}
