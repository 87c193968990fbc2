import { csvRows, sniffDelimiter } from './csv.js';
import type { InputEntry } from './input.js';
import { readHead, readText } from './input.js';
import { stableKey, type WarningLog } from './records.js';
import { ImportInputError, NAP_MAX_MS, type ImportedSleep } from './types.js';

/**
 * Oura sleep: API v2 documents ({"data": [...]}, or a bare list of them), the membership export's
 * sleepmodel.csv (the same fields, ';'-separated, JSON cells unquoted) and the older v1 JSON
 * ({"sleep": [...]}). bedtime_start/end carry the offset the night was lived at.
 */

/** Awakenings: runs of '4' (awake) between the first and last non-awake 5-minute phase. */
export function awakeningsFromPhases(phases: string): number | null {
  const first = phases.search(/[123]/);
  if (first === -1) return null;
  let last = phases.length - 1;
  while (last > first && phases[last] === '4') last--;
  const middle = phases.slice(first, last + 1);
  return (middle.match(/4+/g) ?? []).length;
}

type Doc = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
function num(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** Instant of an ISO 8601 time with its offset ("2026-01-13T23:10:30.000+01:00"); refuses one without. */
function instantWithOffset(text: string | undefined): number | undefined {
  if (!text || !/([+-]\d{2}:?\d{2}|Z)$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

function sleepFromDoc(doc: Doc, version: 'v1' | 'v2', file: string, line: number | null, warnings: WarningLog): ImportedSleep | undefined {
  const type = str(doc.type);
  if (version === 'v2' && (type === 'deleted' || type === 'rest')) return undefined;
  const startMs = instantWithOffset(str(doc.bedtime_start));
  const endMs = instantWithOffset(str(doc.bedtime_end));
  if (startMs === undefined || endMs === undefined || endMs <= startMs) {
    warnings.add(file, line, `A sleep record has no readable bedtime_start/bedtime_end with an offset (${String(doc.bedtime_start)} to ${String(doc.bedtime_end)}); it was skipped.`);
    return undefined;
  }
  if (endMs - startMs > 24 * 3600_000) {
    warnings.add(file, line, `A sleep record lasts more than 24 hours (${String(doc.bedtime_start)} to ${String(doc.bedtime_end)}); it was skipped.`);
    return undefined;
  }
  const phases = str(version === 'v2' ? doc.sleep_phase_5_min : doc.hypnogram_5min);
  const efficiency = num(doc.efficiency);
  const asleepSec = num(version === 'v2' ? doc.total_sleep_duration : doc.total);
  const long = version === 'v2' ? type === 'long_sleep' : num(doc.is_longest) === 1 || doc.is_longest === true;
  const short = endMs - startMs < NAP_MAX_MS;
  // late_nap is a nap whatever its length; otherwise anything but the main sleep under 3 h is.
  const nap = type === 'late_nap' || (!long && short);
  const id = str(doc.id);
  return {
    key: id ? stableKey('oura', 'id', id) : stableKey('oura', 'bedtime', startMs, endMs),
    source: 'oura',
    startMs,
    endMs,
    efficiency: efficiency === null ? null : Math.min(1, Math.max(0, efficiency / 100)),
    awakenings: phases ? awakeningsFromPhases(phases) : null,
    nap,
    staged: phases !== undefined || num(doc.deep_sleep_duration) !== null || num(doc.deep) !== null,
    asleepMs: asleepSec === null ? null : asleepSec * 1000,
  };
}

export async function parseOura(entries: InputEntry[], warnings: WarningLog): Promise<ImportedSleep[]> {
  const out: ImportedSleep[] = [];
  for (const entry of entries) {
    const head = (await readHead(entry)) ?? '';
    if (head.trimStart().startsWith('{') || head.trimStart().startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(await readText(entry));
      } catch (err) {
        throw new ImportInputError(`${entry.name} is not valid JSON (${(err as Error).message}); the file may be cut short.`);
      }
      let docs: unknown[];
      let version: 'v1' | 'v2' = 'v2';
      if (Array.isArray(parsed)) docs = parsed;
      else if (parsed && typeof parsed === 'object' && Array.isArray((parsed as Doc).data)) docs = (parsed as Doc).data as unknown[];
      else if (parsed && typeof parsed === 'object' && Array.isArray((parsed as Doc).sleep)) {
        docs = (parsed as Doc).sleep as unknown[];
        version = 'v1';
      } else throw new ImportInputError(`${entry.name} is JSON but has neither a "data" nor a "sleep" list of Oura sleep records.`);
      docs.forEach((doc, i) => {
        if (!doc || typeof doc !== 'object') {
          warnings.add(entry.name, null, `Record ${i + 1} is not an object; it was skipped.`);
          return;
        }
        const s = sleepFromDoc(doc as Doc, version, entry.name, null, warnings);
        if (s) out.push(s);
      });
      continue;
    }
    for await (const { cells, line } of csvRows(entry, sniffDelimiter(head), warnings)) {
      const s = sleepFromDoc(cells, 'v2', entry.name, line, warnings);
      if (s) out.push(s);
    }
  }
  return out;
}
