import { readFileSync } from 'node:fs';
/**
 * The system's zone files (server/time/zoneinfo.ts) against hand-checked instants, against Intl
 * (ICU, an independent reading of the same IANA rules) for every zone both know, and against
 * zone files written here to reach the paths real ones may not: a file with no transitions
 * (zic's "slim" output), a version-1 file, rules in the footer's every date form.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dayBounds, dayOf, isValidTimeZone, localParts, offsetMinutes, systemTimeZone } from '../../server/time/tz.js';
import { offsetSecondsAt, parsePosixTz, parseTzif, systemZone, type ZoneRules } from '../../server/time/zoneinfo.js';

const noZoneFiles = systemZone('Europe/Berlin') === null ? 'this machine has no zone files (/usr/share/zoneinfo)' : false;
const at = (iso: string) => Date.parse(iso);
const minutes = (rules: ZoneRules, iso: string) => offsetSecondsAt(rules, at(iso)) / 60;

/** Intl's offset in minutes (the old path, and ICU's own copy of the rules). */
function intlOffset(zone: string, instantMs: number): number {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(instantMs)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour! % 24, p.minute!, p.second!);
  return Math.round((wall - (instantMs - (((instantMs % 1000) + 1000) % 1000))) / 60000);
}

describe('zone files: hand-checked instants', { skip: noZoneFiles }, () => {
  test('Berlin: the 2026 changes to and from summer time, to the second', () => {
    const berlin = systemZone('Europe/Berlin')!;
    assert.equal(minutes(berlin, '2026-03-29T00:59:59Z'), 60);
    assert.equal(minutes(berlin, '2026-03-29T01:00:00Z'), 120);
    assert.equal(minutes(berlin, '2026-10-25T00:59:59Z'), 120);
    assert.equal(minutes(berlin, '2026-10-25T01:00:00Z'), 60);
  });

  test('after the last transition in the file, the footer rule: Berlin and Sydney in 2090', () => {
    const berlin = systemZone('Europe/Berlin')!;
    assert.ok(berlin.rule, 'Berlin has a footer rule');
    assert.equal(minutes(berlin, '2090-01-15T12:00:00Z'), 60);
    assert.equal(minutes(berlin, '2090-07-15T12:00:00Z'), 120);
    // 2090: last Sunday of March is the 26th, of October the 29th.
    assert.equal(minutes(berlin, '2090-03-26T00:59:59Z'), 60);
    assert.equal(minutes(berlin, '2090-03-26T01:00:00Z'), 120);
    assert.equal(minutes(berlin, '2090-10-29T00:59:59Z'), 120);
    assert.equal(minutes(berlin, '2090-10-29T01:00:00Z'), 60);
    const sydney = systemZone('Australia/Sydney')!;
    assert.equal(minutes(sydney, '2090-01-15T00:00:00Z'), 660, 'southern summer');
    assert.equal(minutes(sydney, '2090-07-15T00:00:00Z'), 600);
  });

  test('half-hour and quarter-hour zones, and a zone that dropped daylight time', () => {
    assert.equal(minutes(systemZone('Asia/Kolkata')!, '2026-06-01T00:00:00Z'), 330);
    assert.equal(minutes(systemZone('Asia/Kathmandu')!, '2026-06-01T00:00:00Z'), 345);
    const lordHowe = systemZone('Australia/Lord_Howe')!;
    assert.equal(minutes(lordHowe, '2026-01-15T00:00:00Z'), 660, 'a 30-minute daylight shift');
    assert.equal(minutes(lordHowe, '2026-07-15T00:00:00Z'), 630);
    const chatham = systemZone('Pacific/Chatham')!;
    assert.equal(minutes(chatham, '2026-01-15T00:00:00Z'), 825);
    assert.equal(minutes(chatham, '2026-07-15T00:00:00Z'), 765);
    const saoPaulo = systemZone('America/Sao_Paulo')!;
    assert.equal(minutes(saoPaulo, '2017-01-15T00:00:00Z'), -120, 'daylight time until 2019');
    assert.equal(minutes(saoPaulo, '2026-01-15T00:00:00Z'), -180);
  });

  test('before the first transition: local mean time', () => {
    const berlin = systemZone('Europe/Berlin')!;
    assert.equal(offsetSecondsAt(berlin, at('1850-01-01T00:00:00Z')), 53 * 60 + 28, 'Berlin LMT +0:53:28');
  });

  test('names that are not zones are not looked up: tables, the posix/ and right/ copies, paths', () => {
    for (const name of ['zone.tab', 'tzdata.zi', 'posixrules', 'localtime', 'Factory', 'right/Europe/Berlin', 'posix/Europe/Berlin', '../zoneinfo/UTC', 'Europe/../UTC', '/etc/passwd', 'Europe//Berlin', '']) {
      assert.equal(systemZone(name), null, name);
    }
  });
});

describe('zone files agree with Intl', { skip: noZoneFiles }, () => {
  test('every zone both know, around each transition from 1970 to 2037 and at seeded instants to 2100', () => {
    let seed = 20261126;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const from = at('1970-01-01T00:00:00Z');
    const to = at('2100-01-01T00:00:00Z');
    const zones = Intl.supportedValuesOf('timeZone');
    const differ = new Map<string, string[]>();
    let compared = 0;
    let checked = 0;
    for (const zone of zones) {
      const rules = systemZone(zone);
      if (!rules) continue;
      checked++;
      const instants: number[] = [];
      for (const t of rules.at) if (t >= from && t < at('2037-01-01T00:00:00Z')) instants.push(t - 1000, t);
      for (let i = 0; i < 60; i++) instants.push(Math.floor(from + random() * (to - from)));
      for (const t of instants) {
        compared++;
        const ours = Math.round(offsetSecondsAt(rules, t) / 60);
        const intl = intlOffset(zone, t);
        if (ours !== intl) {
          const list = differ.get(zone) ?? [];
          if (list.length < 3) list.push(`${new Date(t).toISOString()}: ${ours} against ${intl}`);
          differ.set(zone, list);
        }
      }
    }
    assert.ok(checked >= 300, `zone files for ${checked} of Intl's ${zones.length} zones`);
    assert.ok(compared > 30_000, `${compared} instants compared`);
    // The system's tzdata and Node's ICU are released apart, so a zone whose rules changed in
    // between may differ (tzdata 2026f against ICU's 2025c: nine zones, Canada's and Morocco's
    // new rules among them); a misread of the format would show in dozens or hundreds of zones.
    // Three when both are the same release, else at most 4 % of the zones.
    const systemVersion = /^# version (\S+)/.exec(readZiHead())?.[1];
    const allowed = systemVersion === undefined || systemVersion === process.versions.tz ? 3 : Math.max(3, Math.ceil(checked * 0.04));
    if (differ.size) console.log(`zones that differ between this machine's tzdata (${systemVersion ?? '?'}) and ICU (${process.versions.tz}): ${[...differ].map(([z, l]) => `${z} (${l.join('; ')})`).join(", ")}`);
    assert.ok(differ.size <= allowed, `${differ.size} zones differ (at most ${allowed}):\n${[...differ].map(([z, l]) => `${z}: ${l.join('; ')}`).join('\n')}`);
  });

  test('tz.ts answers the same through the zone files as through Intl: parts, days, day bounds', () => {
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Apia']) {
      for (const iso of ['2026-03-29T01:30:00Z', '2026-10-25T00:30:00Z', '2026-11-01T06:30:00Z', '2011-12-30T10:00:00Z', '2026-06-01T23:59:59.999Z']) {
        const t = at(iso);
        assert.equal(offsetMinutes(t, zone), intlOffset(zone, t), `${zone} ${iso}`);
      }
    }
    // Samoa skipped 30 December 2011 (moving from −10 to +14 hours).
    assert.equal(dayOf(at('2011-12-31T10:00:00Z'), 'Pacific/Apia'), '2012-01-01');
    assert.equal(dayBounds('2026-03-29', 'Europe/Berlin').end - dayBounds('2026-03-29', 'Europe/Berlin').start, 23 * 3_600_000, 'the spring-forward day is 23 hours long');
    // With the day starting at 04:00, that day runs 04:00 to 04:00, after the jump: 24 hours.
    const b = dayBounds('2026-03-29', 'Europe/Berlin', 4 * 60);
    assert.equal(b.end - b.start, 24 * 3_600_000);
  });
});

describe('zone files written here', () => {
  /** A TZif file: version, transitions (seconds) to types (offset seconds), and a footer. */
  function tzif(version: '1' | '2', transitions: [number, number][], types: number[], footer = ''): Uint8Array {
    const chars = Buffer.from('LMT\0');
    const block = (timeSize: 4 | 8) => {
      const head = Buffer.alloc(44);
      head.write('TZif', 0, 'latin1');
      head.write(version === '1' ? '\0' : version, 4, 'latin1');
      [0, 0, 0, transitions.length, types.length, chars.length].forEach((n, i) => head.writeUInt32BE(n, 20 + i * 4));
      const times = Buffer.alloc(transitions.length * timeSize);
      transitions.forEach(([t], i) => (timeSize === 8 ? times.writeBigInt64BE(BigInt(t), i * 8) : times.writeInt32BE(t, i * 4)));
      const idx = Buffer.from(transitions.map(([, type]) => type));
      const typeBytes = Buffer.alloc(types.length * 6);
      types.forEach((off, i) => typeBytes.writeInt32BE(off, i * 6));
      return Buffer.concat([head, times, idx, typeBytes, chars]);
    };
    if (version === '1') return block(4);
    return Buffer.concat([block(4), block(8), Buffer.from(`\n${footer}\n`, 'latin1')]);
  }

  test('a file with no transitions, only a footer rule (zic -b slim)', () => {
    const rules = parseTzif(tzif('2', [], [3600], 'CET-1CEST,M3.5.0,M10.5.0/3'))!;
    assert.ok(rules);
    assert.equal(minutes(rules, '2026-03-29T00:59:59Z'), 60);
    assert.equal(minutes(rules, '2026-03-29T01:00:00Z'), 120);
    assert.equal(minutes(rules, '2026-10-25T01:00:00Z'), 60);
  });

  test('a version-1 file (32-bit times, no footer)', () => {
    const rules = parseTzif(tzif('1', [[0, 1], [1_000_000, 0]], [-18000, -14400]))!;
    assert.equal(offsetSecondsAt(rules, -1000), -18000, 'before the first transition: the first type');
    assert.equal(offsetSecondsAt(rules, 500_000_000), -14400);
    assert.equal(offsetSecondsAt(rules, 2_000_000_000), -18000, 'after the last: its type, with no rule');
  });

  test('anything else is not a zone file', () => {
    assert.equal(parseTzif(Buffer.from('# tzdb timezone descriptions\n')), null);
    assert.equal(parseTzif(tzif('2', [[0, 5]], [0])), null, 'a transition to a type that does not exist');
    assert.equal(parseTzif(tzif('2', [[0, 0]], [0]).subarray(0, 60)), null, 'cut short');
  });

  test('footer rules: offsets written west of Greenwich, quoted names, each date form', () => {
    assert.deepEqual(parsePosixTz('<+0545>-5:45'), { std: 20_700, dst: null, start: null, end: null });
    assert.equal(parsePosixTz('EST5EDT,M3.2.0,M11.1.0').dst, -14_400, 'daylight time one hour ahead by default');
    // Nuuk (from 2024): the changes at −02:00 and −01:00 local time (RFC 8536 allows negatives).
    const nuuk = parseTzif(tzif('2', [], [-7200], '<-02>2<-01>,M3.5.0/-1,M10.5.0/0'))!;
    assert.equal(minutes(nuuk, '2026-03-29T00:59:59Z'), -120);
    assert.equal(minutes(nuuk, '2026-03-29T01:00:00Z'), -60);
    // Daylight time all year (RFC 8536 §3.3.1's example).
    const always = parseTzif(tzif('2', [], [-18000], 'EST5EDT,0/0,J365/25'))!;
    for (const iso of ['2026-01-01T05:00:00Z', '2026-07-01T00:00:00Z', '2026-12-31T23:00:00Z']) assert.equal(minutes(always, iso), -240, iso);
    // Jn never counts 29 February, n does: J60 is 1 March in any year, 59 is 29 February in a leap year.
    const julian = parseTzif(tzif('2', [], [0], 'AAA0BBB,J60/0,J300/0'))!;
    assert.equal(minutes(julian, '2028-02-29T23:59:59Z'), 0);
    assert.equal(minutes(julian, '2028-03-01T00:00:00Z'), 60);
    const zeroBased = parseTzif(tzif('2', [], [0], 'AAA0BBB,59/0,300/0'))!;
    assert.equal(minutes(zeroBased, '2028-02-28T23:59:59Z'), 0);
    assert.equal(minutes(zeroBased, '2028-02-29T00:00:00Z'), 60);
    for (const bad of ['', 'CE', 'CET', 'CET-1CEST', 'CET-1CEST,M13.5.0,M10.5.0', 'CET-1CEST,M3.5.0', 'CET-1CEST,J0,J300', 'CET-1CEST,M3.5.0,M10.5.0x']) {
      assert.throws(() => parsePosixTz(bad), RangeError, bad);
    }
  });
});

describe('tz.ts without zone files for a name', () => {
  test('a name Intl accepts but no file has still works (Intl is case-insensitive)', () => {
    assert.equal(isValidTimeZone('europe/berlin'), true);
    assert.equal(offsetMinutes(at('2026-07-01T00:00:00Z'), 'europe/berlin'), 120);
    assert.deepEqual(localParts(at('2026-07-01T00:00:00Z'), 'europe/berlin'), { year: 2026, month: 7, day: 1, hour: 2, minute: 0, second: 0 });
    assert.equal(isValidTimeZone('Mars/Olympus_Mons'), false);
  });

  test('the system zone: TZ when it names a zone, else what /etc/localtime links to', { skip: noZoneFiles }, () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Tokyo';
      assert.equal(systemTimeZone(), 'Asia/Tokyo');
      process.env.TZ = ':/usr/share/zoneinfo/America/Chicago';
      assert.equal(systemTimeZone(), 'America/Chicago');
      process.env.TZ = 'Etc/UTC';
      assert.equal(systemTimeZone(), 'UTC');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

/** The first line of the system's tzdata.zi ("# version 2026f"), or '' where there is none. */
function readZiHead(): string {
  try {
    return readFileSync('/usr/share/zoneinfo/tzdata.zi', 'utf8').slice(0, 64);
  } catch {
    return '';
  }
}
