/**
 * The IANA time-zone database as the operating system ships it: the compiled zone files (TZif,
 * RFC 8536) under /usr/share/zoneinfo on Linux and macOS.
 *
 * Why not only Intl: the first Intl.DateTimeFormat a process makes loads ICU's date-formatting
 * data, about 8.7 MB of resident memory for as long as the process runs (measured in a bare Node
 * 20: 41.8 → 50.5 MB), while Chyme only needs a zone's UTC offset at an instant. A zone file gives
 * that directly: a sorted list of transitions, and for instants past the last one, the POSIX TZ
 * rule in the file's footer. The system's files also follow the operating system's tzdata
 * updates, which come sooner than Node's own copy of the rules.
 *
 * Where there is no zone directory (Windows) or no file for a name, time/tz.ts uses Intl as before.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A zone's offsets from UTC, in seconds east of Greenwich, at any instant. */
export interface ZoneRules {
  /** Transition instants in ms, ascending. */
  readonly at: Float64Array;
  /** The offset in effect from at[i] on. */
  readonly offsetAfter: Int32Array;
  /** The offset before the first transition (RFC 8536 §3.2: the first local time type). */
  readonly offsetBefore: number;
  /** For instants after the last transition: the footer's rule, if the file has one. */
  readonly rule: PosixRule | null;
}

/** Where the operating system keeps the zone files (TZDIR overrides, as for the C library). */
const ZONE_DIRS = [process.env.TZDIR, '/usr/share/zoneinfo', '/usr/lib/zoneinfo', '/usr/share/lib/zoneinfo'].filter((d): d is string => !!d);

/**
 * An IANA name: "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC". Files in the
 * directory that are not zones (posixrules, localtime, Factory, the "posix/" and "right/" copies,
 * the tables with a dot in their names) are never looked up.
 */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;
const NOT_ZONES = new Set(['posixrules', 'localtime', 'Factory']);
const NOT_ZONE_DIRS = new Set(['posix', 'right', 'SystemV']);

const loaded = new Map<string, ZoneRules | null>();
const LOADED_LIMIT = 64;

/** The rules of a zone from the system's zone files, or null (no such file, not a zone file, no zone directory). */
export function systemZone(name: string): ZoneRules | null {
  const hit = loaded.get(name);
  if (hit !== undefined) return hit;
  let rules: ZoneRules | null = null;
  if (name.length <= 64 && ZONE_NAME.test(name) && !NOT_ZONES.has(name) && !NOT_ZONE_DIRS.has(name.split('/')[0]!)) {
    for (const dir of ZONE_DIRS) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, name));
      } catch {
        continue;
      }
      rules = parseTzif(bytes);
      break;
    }
  }
  if (loaded.size >= LOADED_LIMIT) loaded.clear();
  loaded.set(name, rules);
  return rules;
}

/** Offset from UTC in seconds at an instant. */
export function offsetSecondsAt(rules: ZoneRules, instantMs: number): number {
  const { at } = rules;
  if (at.length === 0 || instantMs < at[0]!) {
    return at.length === 0 && rules.rule ? ruleOffset(rules.rule, instantMs) : rules.offsetBefore;
  }
  if (instantMs >= at[at.length - 1]! && rules.rule) return ruleOffset(rules.rule, instantMs);
  // The last transition at or before the instant.
  let lo = 0;
  let hi = at.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (at[mid]! <= instantMs) lo = mid;
    else hi = mid - 1;
  }
  return rules.offsetAfter[lo]!;
}

/**
 * Reads a TZif file (versions 1 to 4). Returns null for anything that is not one. Leap-second
 * records are skipped: the "right/" zones that carry them are not looked up.
 */
export function parseTzif(bytes: Uint8Array): ZoneRules | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = (pos: number) => {
    if (bytes.length < pos + 44 || view.getUint32(pos) !== 0x545a6966 /* "TZif" */) return null;
    const [isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt] = [20, 24, 28, 32, 36, 40].map((o) => view.getUint32(pos + o)) as [number, number, number, number, number, number];
    if (typecnt === 0) return null;
    return { version: bytes[pos + 4]!, isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt };
  };
  const first = header(0);
  if (!first) return null;
  let h = first;
  let pos = 44;
  let timeSize = 4;
  if (first.version >= 0x32 /* "2" */) {
    // Skip the 32-bit block: version 2 and later repeat everything with 64-bit times.
    pos += first.timecnt * 5 + first.typecnt * 6 + first.charcnt + first.leapcnt * 8 + first.isstdcnt + first.isutcnt;
    const second = header(pos);
    if (!second) return null;
    h = second;
    pos += 44;
    timeSize = 8;
  }
  const dataEnd = pos + h.timecnt * (timeSize + 1) + h.typecnt * 6 + h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt + h.isutcnt;
  if (bytes.length < dataEnd) return null;
  const at = new Float64Array(h.timecnt);
  for (let i = 0; i < h.timecnt; i++) {
    const seconds = timeSize === 8 ? Number(view.getBigInt64(pos + i * 8)) : view.getInt32(pos + i * 4);
    at[i] = seconds * 1000;
  }
  const typeIndexAt = pos + h.timecnt * timeSize;
  const typesAt = typeIndexAt + h.timecnt;
  const typeOffset = (t: number) => {
    if (t >= h.typecnt) throw new RangeError('zone file: transition to a missing type');
    return view.getInt32(typesAt + t * 6);
  };
  const offsetAfter = new Int32Array(h.timecnt);
  let rule: PosixRule | null = null;
  try {
    for (let i = 0; i < h.timecnt; i++) offsetAfter[i] = typeOffset(bytes[typeIndexAt + i]!);
    if (timeSize === 8) {
      // The footer: "\n" TZ-string "\n" (empty when the file has no rule for later times).
      const footer = new TextDecoder('latin1').decode(bytes.subarray(dataEnd)); // (no Buffer: the phone's worker shares this module)
      const m = /^\n([^\n]*)\n/.exec(footer);
      if (m && m[1]) rule = parsePosixTz(m[1]);
    }
  } catch {
    return null;
  }
  return { at, offsetAfter, offsetBefore: typeOffset(0), rule };
}

// ---- POSIX TZ strings (the footer's rule for instants after the last transition) -------------

interface RuleDate {
  /** J: day 1–365 never counting 29 February; n: day 0–365 counting it; M: month, week (5 = last), weekday. */
  kind: 'J' | 'n' | 'M';
  day: number;
  month: number;
  week: number;
  /** Seconds after local midnight (RFC 8536 allows −167 h to 167 h). */
  time: number;
}

export interface PosixRule {
  /** Standard offset, seconds east of UTC. */
  std: number;
  /** Daylight offset, seconds east of UTC, when the zone has daylight time. */
  dst: number | null;
  start: RuleDate | null;
  end: RuleDate | null;
}

/**
 * Parses "CET-1CEST,M3.5.0,M10.5.0/3", "<+0545>-5:45", "EST5EDT,0/0,J365/25". POSIX offsets count
 * west of Greenwich; they are turned into seconds east here. Throws on anything malformed.
 */
export function parsePosixTz(s: string): PosixRule {
  let i = 0;
  const fail = (): never => {
    throw new RangeError(`invalid TZ rule ${JSON.stringify(s)}`);
  };
  const name = () => {
    if (s[i] === '<') {
      const close = s.indexOf('>', i);
      if (close < 0) fail();
      i = close + 1;
      return;
    }
    const start = i;
    while (i < s.length && /[A-Za-z]/.test(s[i]!)) i++;
    if (i - start < 3) fail();
  };
  /** [+-]hh[:mm[:ss]] in seconds. */
  const clock = () => {
    const m = /^([+-]?)(\d{1,3})(?::(\d{1,2}))?(?::(\d{1,2}))?/.exec(s.slice(i));
    if (!m) return fail();
    i += m[0].length;
    const seconds = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
    return m[1] === '-' ? -seconds : seconds;
  };
  const date = (): RuleDate => {
    let d: RuleDate;
    if (s[i] === 'M') {
      const m = /^M(\d{1,2})\.(\d)\.(\d)/.exec(s.slice(i));
      if (!m) return fail();
      i += m[0].length;
      d = { kind: 'M', month: Number(m[1]), week: Number(m[2]), day: Number(m[3]), time: 7200 };
      if (d.month < 1 || d.month > 12 || d.week < 1 || d.week > 5 || d.day > 6) fail();
    } else {
      const julian = s[i] === 'J';
      if (julian) i++;
      const m = /^\d{1,3}/.exec(s.slice(i));
      if (!m) return fail();
      i += m[0].length;
      d = { kind: julian ? 'J' : 'n', day: Number(m[0]), month: 0, week: 0, time: 7200 };
      if (julian ? d.day < 1 || d.day > 365 : d.day > 365) fail();
    }
    if (s[i] === '/') {
      i++;
      d.time = clock();
    }
    return d;
  };
  name();
  const std = 0 - clock();
  if (i === s.length) return { std, dst: null, start: null, end: null };
  name();
  let dst = std + 3600;
  if (i < s.length && s[i] !== ',') dst = 0 - clock();
  // Zone files always carry the rule when there is daylight time; POSIX leaves the default to the system.
  if (s[i] !== ',') fail();
  i++;
  const start = date();
  if (s[i] !== ',') fail();
  i++;
  const end = date();
  if (i !== s.length) fail();
  return { std, dst, start, end };
}

const DAY_MS = 86_400_000;
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Midnight (as if UTC) of the day a rule date names in a year. */
function ruleDay(d: RuleDate, year: number): number {
  const jan1 = Date.UTC(year, 0, 1);
  if (d.kind === 'n') return jan1 + d.day * DAY_MS;
  if (d.kind === 'J') return jan1 + (d.day - 1 + (isLeap(year) && d.day >= 60 ? 1 : 0)) * DAY_MS;
  const first = Date.UTC(year, d.month - 1, 1);
  const firstWeekday = (Math.floor(first / DAY_MS) + 4) % 7; // 1970-01-01 was a Thursday.
  let day = 1 + ((d.day - firstWeekday + 7) % 7) + (d.week - 1) * 7;
  const daysInMonth = new Date(Date.UTC(year, d.month, 0)).getUTCDate();
  while (day > daysInMonth) day -= 7;
  return Date.UTC(year, d.month - 1, day);
}

function ruleOffset(rule: PosixRule, instantMs: number): number {
  if (rule.dst === null || !rule.start || !rule.end) return rule.std;
  const year = new Date(instantMs + rule.std * 1000).getUTCFullYear();
  // The start is written in standard time, the end in daylight time.
  const start = ruleDay(rule.start, year) + (rule.start.time - rule.std) * 1000;
  const end = ruleDay(rule.end, year) + (rule.end.time - rule.dst) * 1000;
  const inDst = start < end ? instantMs >= start && instantMs < end : !(instantMs >= end && instantMs < start);
  return inDst ? rule.dst : rule.std;
}
