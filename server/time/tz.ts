/**
 * Time-zone arithmetic on IANA zone names.
 *
 * Chyme stores instants as UTC milliseconds and derives every "day" from the user's zone and
 * day-start setting, so a meal logged at 00:30 with day_start "04:00" counts for the previous day,
 * and a day keeps its meaning across DST changes and travel.
 *
 * A zone's offsets come from the operating system's zone files (time/zoneinfo.ts), else from Intl
 * (Node ships full ICU): Windows has no zone files, and a name Intl accepts that has no file (Intl
 * also takes "europe/berlin") keeps working as it always did.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { offsetSecondsAt, systemZone } from './zoneinfo.js';

const formatterCache = new Map<string, Intl.DateTimeFormat>();

function partsFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatterCache.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatterCache.set(timeZone, f);
  }
  return f;
}

/** True when `name` is an IANA zone this machine knows (e.g. "Europe/Berlin", "UTC"). */
export function isValidTimeZone(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > 64) return false;
  if (name === 'UTC' || systemZone(name)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The zone the operating system is set to, falling back to UTC: TZ when it names a zone, else the
 * zone /etc/localtime links to (or /etc/timezone names), as the C library and ICU read them;
 * Intl's answer only where neither says.
 */
export function systemTimeZone(): string {
  const read = (f: () => string) => {
    try {
      return f();
    } catch {
      return undefined;
    }
  };
  const named = (path: string | undefined) => {
    const name = path?.replace(/^:/, '').replace(/^.*\/zoneinfo\//, '').trim();
    return name && systemZone(name) ? name : undefined;
  };
  const zone = process.env.TZ
    ? named(process.env.TZ)
    : (named(read(() => readlinkSync('/etc/localtime'))) ?? named(read(() => readFileSync('/etc/timezone', 'utf8'))));
  if (zone) return zone === 'Etc/UTC' || zone === 'Etc/Universal' || zone === 'Universal' || zone === 'Zulu' || zone === 'Etc/Zulu' ? 'UTC' : zone;
  const intl = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return intl && isValidTimeZone(intl) ? intl : 'UTC';
}

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The zone's offset in seconds at an instant, from its zone file (0 for UTC); undefined: ask Intl. */
function fileOffsetSeconds(instantMs: number, timeZone: string): number | undefined {
  if (timeZone === 'UTC') return 0;
  const rules = systemZone(timeZone);
  return rules ? offsetSecondsAt(rules, instantMs) : undefined;
}

/** Wall-clock fields of an instant in a zone. */
export function localParts(instantMs: number, timeZone: string): LocalParts {
  const offset = fileOffsetSeconds(instantMs, timeZone);
  if (offset !== undefined) {
    const local = new Date(instantMs + offset * 1000);
    return {
      year: local.getUTCFullYear(),
      month: local.getUTCMonth() + 1,
      day: local.getUTCDate(),
      hour: local.getUTCHours(),
      minute: local.getUTCMinutes(),
      second: local.getUTCSeconds(),
    };
  }
  const out: Record<string, number> = {};
  for (const p of partsFormatter(timeZone).formatToParts(new Date(instantMs))) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return {
    year: out.year!,
    month: out.month!,
    day: out.day!,
    hour: out.hour === 24 ? 0 : out.hour!,
    minute: out.minute!,
    second: out.second!,
  };
}

/** Offset of the zone from UTC at an instant, in minutes (Berlin in summer: +120). */
export function offsetMinutes(instantMs: number, timeZone: string): number {
  const offset = fileOffsetSeconds(instantMs, timeZone);
  if (offset !== undefined) return Math.round(offset / 60);
  const p = localParts(instantMs, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  const truncated = instantMs - (((instantMs % 1000) + 1000) % 1000);
  return Math.round((asUtc - truncated) / 60000);
}

/** Minutes since local midnight (0–1439) of an instant. */
export function localMinuteOfDay(instantMs: number, timeZone: string): number {
  const p = localParts(instantMs, timeZone);
  return p.hour * 60 + p.minute;
}

/** Parses "HH:MM" into minutes after midnight; throws on malformed input. */
export function parseClock(hhmm: string): number {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(hhmm);
  if (!m) throw new RangeError(`invalid clock time ${JSON.stringify(hhmm)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

export function formatDate(year: number, month: number, day: number): string {
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** True for a real calendar date written YYYY-MM-DD. */
export function isValidDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const dt = new Date(Date.UTC(y, mo - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === mo - 1 && dt.getUTCDate() === d;
}

/** Adds whole calendar days to a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const dt = new Date(Date.UTC(y, m - 1, d + days));
  return formatDate(dt.getUTCFullYear(), dt.getUTCMonth() + 1, dt.getUTCDate());
}

/** Whole days from `a` to `b` (b − a) between two YYYY-MM-DD dates. */
export function daysBetween(a: string, b: string): number {
  const toUtc = (s: string) => {
    const [y, m, d] = s.split('-').map(Number) as [number, number, number];
    return Date.UTC(y, m - 1, d);
  };
  return Math.round((toUtc(b) - toUtc(a)) / 86_400_000);
}

/**
 * The user's day (YYYY-MM-DD) an instant belongs to: its local date, or the previous date when the
 * local time is before `dayStartMin` (minutes after midnight, from the day_start setting).
 */
export function dayOf(instantMs: number, timeZone: string, dayStartMin = 0): string {
  const p = localParts(instantMs - 0, timeZone);
  const date = formatDate(p.year, p.month, p.day);
  return p.hour * 60 + p.minute < dayStartMin ? addDays(date, -1) : date;
}

/**
 * The UTC instant of a local wall-clock time on a date in a zone. For a time skipped by a DST jump
 * it returns the instant just after the gap; for a repeated time, the first occurrence.
 */
export function localTimeToInstant(date: string, minuteOfDay: number, timeZone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d, 0, minuteOfDay);
  // Two passes converge for every real zone: guess with the offset at the wall time read as UTC,
  // then correct with the offset at the guessed instant.
  let guess = wall - offsetMinutes(wall, timeZone) * 60000;
  const second = wall - offsetMinutes(guess, timeZone) * 60000;
  if (second !== guess) {
    // Ambiguous or skipped: prefer the earlier instant that maps to this wall time, else the later.
    const earlier = Math.min(guess, second);
    const later = Math.max(guess, second);
    guess = wallOf(earlier, timeZone) === wall ? earlier : later;
  }
  return guess;
}

function wallOf(instantMs: number, timeZone: string): number {
  const p = localParts(instantMs, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

/** [start, end) UTC instants of a user's day, honouring the day-start setting. */
export function dayBounds(date: string, timeZone: string, dayStartMin = 0): { start: number; end: number } {
  return {
    start: localTimeToInstant(date, dayStartMin, timeZone),
    end: localTimeToInstant(addDays(date, 1), dayStartMin, timeZone),
  };
}

const DAY_MS = 86_400_000;
/** 9999-12-31T23:59:59Z and after: toISOString writes six-digit years there. */
const YEAR_10000_MS = 253_402_300_800_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** "YYYY-MM-DDT" per UTC day, for the days recently formatted (a list page touches a few). */
const dayPrefixes = new Map<number, string>();

/**
 * ISO 8601 UTC with a Z, second precision ("2026-11-22T08:30:00Z"). Three per meal in every
 * meal answer: the date part comes from a small per-day cache and the time of day is written
 * from two-digit strings, instead of a Date, toISOString and a replace per instant (a tenth of a
 * 100-meal list's CPU). Outside years 1970–9999 it is toISOString's answer itself.
 */
export function isoUtc(instantMs: number): string {
  const secondMs = Math.floor(instantMs / 1000) * 1000;
  if (!(secondMs >= 0 && secondMs < YEAR_10000_MS)) return new Date(secondMs).toISOString().replace('.000Z', 'Z');
  const msOfDay = secondMs % DAY_MS;
  const dayMs = secondMs - msOfDay;
  let prefix = dayPrefixes.get(dayMs);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 4096) dayPrefixes.clear();
    prefix = new Date(dayMs).toISOString().slice(0, 11);
    dayPrefixes.set(dayMs, prefix);
  }
  const s = msOfDay / 1000;
  return `${prefix}${TWO_DIGITS[Math.floor(s / 3600)]}:${TWO_DIGITS[Math.floor(s / 60) % 60]}:${TWO_DIGITS[s % 60]}Z`;
}
