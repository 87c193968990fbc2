/**
 * Synthetic exports for the importers: invented values, one quirk each (see
 * /work/shared/IMPORT-FORMATS.md). Never a real person's export. The tests state what each should
 * become; the person's zone in the tests is Europe/Berlin.
 */

/** An Apple date written with the EXPORT day's offset (-0800), whatever the sample's own zone. */
export function appleDate(utcIso: string): string {
  const shifted = new Date(Date.parse(utcIso) - 8 * 3600_000).toISOString();
  return `${shifted.slice(0, 10)} ${shifted.slice(11, 19)} -0800`;
}

function rec(attrs: Record<string, string>, meta: Record<string, string> = {}): string {
  const a = Object.entries(attrs)
    .map(([k, v]) => `${k}="${v}"`)
    .join(' ');
  const m = Object.entries(meta).map(([k, v]) => `  <MetadataEntry key="${k}" value="${v}"/>\n`);
  return m.length ? `<Record ${a}>\n${m.join('')}</Record>\n` : `<Record ${a}/>\n`;
}

const WATCH = 'Ana’s Apple Watch';
const PHONE = 'Ana’s iPhone';

function sleepRec(source: string, value: string, start: string, end: string, meta: Record<string, string> = {}): string {
  return rec(
    { type: 'HKCategoryTypeIdentifierSleepAnalysis', sourceName: source, sourceVersion: '26.1', creationDate: appleDate(end), startDate: appleDate(start), endDate: appleDate(end), value: `HKCategoryValueSleepAnalysis${value}` },
    meta,
  );
}

export function dietRec(source: string, type: string, unit: string, value: number, at: string, meta: Record<string, string> = {}): string {
  return rec({ type: `HKQuantityTypeIdentifierDietary${type}`, sourceName: source, unit, creationDate: appleDate(at), startDate: appleDate(at), endDate: appleDate(at), value: String(value) }, meta);
}

/** Every Apple quirk at once; the expected results are spelled out in test/imports/parsers.test.ts. */
export function appleExportXml(extra = ''): string {
  const berlin = { HKTimeZone: 'Europe/Berlin' };
  const mfp = { meal: 'Breakfast', Meal: 'Breakfast' };
  const soupChildren = [
    dietRec('Lifesum', 'EnergyConsumed', 'kJ', 1046, '2026-06-11T11:00:00Z'),
    dietRec('Lifesum', 'Protein', 'g', 15, '2026-06-11T11:00:00Z'),
    dietRec('Lifesum', 'Fiber', 'mg', 8000, '2026-06-11T11:00:00Z'),
  ];
  const breadChildren = [dietRec('Lifesum', 'EnergyConsumed', 'kcal', 100, '2026-06-11T11:10:00Z'), dietRec('Lifesum', 'Carbohydrates', 'g', 20, '2026-06-11T11:10:00Z')];
  const correlation = (name: string, at: string, children: string[]) =>
    `<Correlation type="HKCorrelationTypeIdentifierFood" sourceName="Lifesum" creationDate="${appleDate(at)}" startDate="${appleDate(at)}" endDate="${appleDate(at)}">\n` +
    `  <MetadataEntry key="HKFoodType" value="${name}"/>\n  <MetadataEntry key="HKTimeZone" value="America/New_York"/>\n${children.join('')}</Correlation>\n`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 12 -->
<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout)*)>
<!ATTLIST HealthData locale CDATA #REQUIRED>
<!ATTLIST VisionPrescription type CDATA #REQUIRED
]>
<HealthData locale="en_US">
 <ExportDate value="2026-11-20 09:00:00 -0800"/>
 <Me HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>
${rec({ type: 'HKQuantityTypeIdentifierHeartRate', sourceName: WATCH, unit: 'count/min', startDate: appleDate('2026-06-10T20:00:00Z'), endDate: appleDate('2026-06-10T20:00:00Z'), value: '61' }, { HKMetadataKeyHeartRateMotionContext: '0' })}
${rec({ type: 'HKQuantityTypeIdentifierStepCount', sourceName: 'Odd\u000Bsource', unit: 'count', startDate: appleDate('2026-06-10T20:00:00Z'), endDate: appleDate('2026-06-10T20:05:00Z'), value: '12' })}
${sleepRec(PHONE, 'InBed', '2026-06-10T20:50:00Z', '2026-06-11T05:00:00Z')}
${sleepRec(WATCH, 'AsleepCore', '2026-06-10T21:10:00Z', '2026-06-10T23:00:00Z', berlin)}
${sleepRec(WATCH, 'AsleepDeep', '2026-06-10T23:00:00Z', '2026-06-11T00:30:00Z', berlin)}
${sleepRec(WATCH, 'Awake', '2026-06-11T00:30:00Z', '2026-06-11T00:40:00Z', berlin)}
${sleepRec(WATCH, 'AsleepREM', '2026-06-11T00:40:00Z', '2026-06-11T02:00:00Z', berlin)}
${sleepRec(WATCH, 'AsleepCore', '2026-06-11T02:00:00Z', '2026-06-11T04:40:00Z', berlin)}
${sleepRec(WATCH, 'Awake', '2026-06-11T04:40:00Z', '2026-06-11T05:00:00Z', berlin)}
${sleepRec('AutoSleep', 'Asleep', '2026-06-10T21:05:00Z', '2026-06-11T04:55:00Z')}
${sleepRec(PHONE, 'InBed', '2026-06-12T21:30:00Z', '2026-06-13T05:10:00Z')}
${sleepRec(PHONE, 'Asleep', '2026-06-12T22:00:00Z', '2026-06-13T05:00:00Z')}
${sleepRec(WATCH, 'AsleepUnspecified', '2026-06-13T12:00:00Z', '2026-06-13T12:40:00Z')}
${dietRec('MyFitnessPal', 'EnergyConsumed', 'Cal', 420, '2026-06-11T06:30:00Z', mfp)}
${dietRec('MyFitnessPal', 'Protein', 'g', 20, '2026-06-11T06:30:00Z', mfp)}
${dietRec('MyFitnessPal', 'Carbohydrates', 'g', 50, '2026-06-11T06:30:00Z', mfp)}
${dietRec('MyFitnessPal', 'FatTotal', 'g', 12, '2026-06-11T06:30:00Z', mfp)}
${dietRec('MyFitnessPal', 'Sodium', 'mg', 300, '2026-06-11T06:30:00Z', mfp)}
${dietRec('MyFitnessPal', 'EnergyConsumed', 'Cal', 100, '2026-06-11T06:45:00Z', mfp)}
${dietRec('MyFitnessPal', 'Protein', 'g', 5, '2026-06-11T06:45:00Z', mfp)}
${soupChildren.join('')}${correlation('Lentil soup', '2026-06-11T11:00:00Z', soupChildren)}${breadChildren.join('')}${correlation('Rye bread', '2026-06-11T11:10:00Z', breadChildren)}
${dietRec('FoodNoms', 'EnergyConsumed', 'kcal', 600, '2026-06-11T17:30:00Z', { HKFoodType: 'Pasta' })}
${dietRec('FoodNoms', 'Protein', 'g', 22, '2026-06-11T17:30:00Z', { HKFoodType: 'Pasta' })}
${dietRec('FoodNoms', 'EnergyConsumed', 'kcal', 5, '2026-06-11T17:30:00Z', { HKFoodType: 'Espresso' })}
${dietRec('FoodNoms', 'Caffeine', 'mg', 80, '2026-06-11T17:30:00Z', { HKFoodType: 'Espresso' })}
${extra}</HealthData>
`;
}

export const CRONOMETER_WIDE_HEADER =
  'Day,Time,Group,Food Name,Amount,Energy (kcal),Alcohol (g),Caffeine (mg),Water (g),Vitamin D (IU),B12 (Cobalamin) (µg),Sodium (mg),Carbs (g),Fiber (g),Fat (g),Protein (g),Category';

/** Wide servings.csv: LF, unsorted rows, an untimed row, a renamed group, an empty Energy cell, a bad date. */
export function cronometerWideServings(): string {
  return [
    CRONOMETER_WIDE_HEADER,
    '2026-06-01,9:39 PM,Breakfast,Greek yogurt,"1.00 container - each 5.3 oz",90.00,0.00,0.00,120.00,0.00,0.50,50.00,6.00,0.00,0.00,15.00,Dairy',
    '2026-06-01,8:10 AM,Breakfast,Oats,0.50 cup,150.00,0.00,,10.00,0.00,0.00,2.00,27.00,4.00,3.00,5.00,Grains',
    '2026-06-01,8:40 AM,Breakfast,Coffee,1.00 cup,2.00,0.00,95.00,237.00,0.00,0.00,5.00,0.00,0.00,0.00,0.30,Beverages',
    '2026-06-01,,Breakfast,Blueberries,0.50 cup,42.00,0.00,0.00,60.00,0.00,0.00,1.00,11.00,2.00,0.20,0.50,Fruit',
    '2026-06-01,1:05 PM,Snack 1,Apple,"1.00 medium - 3"" diameter",95.00,0.00,0.00,150.00,0.00,0.00,2.00,25.00,4.40,0.30,0.50,Fruit',
    '2026-06-02,,Lunch,Lentils,1.00 cup,230.00,0.00,0.00,140.00,0.00,0.00,4.00,40.00,15.60,0.80,17.90,Legumes',
    '2026-06-02,12:15 AM,Dinner,Toast,1.00 slice,80.00,0.00,0.00,5.00,0.00,0.00,140.00,14.00,1.00,1.00,3.00,Grains',
    '2026-06-02,7:00 PM,Dinner,Mystery stew,1.00 bowl,,,,,,,,,,,,Other',
    '06/03/2026,8:00 AM,Breakfast,Bad date,1.00 each,10.00,,,,,,,,,,,Other',
    '',
  ].join('\n');
}

/** Narrow servings.csv (Gold, 2026): six columns, no nutrients. */
export function cronometerNarrowServings(): string {
  return ['Day,Time,Group,Food Name,Amount,Category', '2026-06-05,7:45 AM,Breakfast,Porridge,1.00 bowl,Grains', '2026-06-05,8:00 AM,Breakfast,Tea,1.00 cup,Beverages', '2026-06-05,,Lunch,Salad,1.00 plate,Vegetables', ''].join('\n');
}

/** dailysummary.csv: one row per group plus a Total row that must not be counted. */
export function cronometerDailySummary(): string {
  return [
    'Date,Group,Energy (kcal),Caffeine (mg),Sodium (mg),Carbs (g),Fiber (g),Fat (g),Protein (g),Completed',
    '2026-06-05,Breakfast,400.00,40.00,300.00,50.00,6.00,10.00,20.00,false',
    '2026-06-05,Lunch,700.00,,900.00,60.00,12.00,30.00,35.00,false',
    '2026-06-05,Total,1100.00,40.00,1200.00,110.00,18.00,40.00,55.00,false',
    '',
  ].join('\n');
}

/**
 * Narrow servings.csv with its dailysummary.csv, where one food of a diary group is logged hours
 * after the rest of the group (a 10:15 PM tea under Dinner, after a 6:30 PM dinner): the group's
 * totals are the only numbers, so they belong to one Dinner meal, and no meal may hold nothing.
 */
export function cronometerNarrowLateFood(): { servings: string; dailySummary: string } {
  return {
    servings: [
      'Day,Time,Group,Food Name,Amount,Category',
      '2026-06-08,6:30 PM,Dinner,Pasta,1.00 plate,Grains',
      '2026-06-08,6:45 PM,Dinner,Salad,1.00 bowl,Vegetables',
      '2026-06-08,10:15 PM,Dinner,Chamomile tea,1.00 cup,Beverages',
      '2026-06-08,8:00 AM,Breakfast,Toast,2.00 slice,Grains',
      '',
    ].join('\n'),
    dailySummary: [
      'Date,Group,Energy (kcal),Caffeine (mg),Sodium (mg),Carbs (g),Fiber (g),Fat (g),Protein (g),Completed',
      '2026-06-08,Breakfast,160.00,,300.00,30.00,2.00,2.00,6.00,true',
      '2026-06-08,Dinner,820.00,0.00,1100.00,110.00,9.00,28.00,30.00,true',
      '2026-06-08,Total,980.00,0.00,1400.00,140.00,11.00,30.00,36.00,true',
      '',
    ].join('\n'),
  };
}

const MFP_N1_HEADER =
  'Date,Meal,Calories,Fat (g),Saturated Fat,Polyunsaturated Fat,Monounsaturated Fat,Trans Fat,Cholesterol,Sodium (mg),Potassium,Carbohydrates (g),Fiber,Sugar,Protein (g),Vitamin A,Vitamin C,Calcium,Iron,Note';

/** N1 (2026): one row per date and meal, CRLF, a renamed meal, %DV columns that must never be read as mg. */
export function mfpN1(): string {
  return [
    MFP_N1_HEADER,
    '2026-06-20,Breakfast,350,10,3,1,4,0,20,210,300,45,5,12,15,20,35,15,10,felt fine',
    '2026-06-20,Post-Workout,250,5,1,1,2,0,0,120,400,30,2,20,20,0,10,8,4,',
    '',
  ].join('\r\n');
}

/** N2 (2025): with Time after Meal, entries within an hour make one meal, a blank Time uses the default. */
export function mfpN2(): string {
  const header = MFP_N1_HEADER.replace('Date,Meal,', 'Date,Meal,Time,');
  return [
    header,
    '2026-06-21,Lunch,12:05 PM,400,12,3,2,5,0,30,500,600,50,6,8,25,10,20,5,15,',
    '2026-06-21,Lunch,12:40 PM,150,2,0,0,1,0,0,100,200,30,2,15,3,0,0,2,1,',
    '2026-06-21,Dinner,,600,20,6,4,8,0,60,800,700,70,9,10,40,15,30,20,25,',
    '',
  ].join('\n');
}

/** N3 (2018): N2 without Note, with a BOM. */
export function mfpN3(): string {
  const header = MFP_N1_HEADER.replace('Date,Meal,', 'Date,Meal,Time,').replace(',Note', '');
  return `\uFEFF${[header, '2018-03-04,Breakfast,7:30 AM,300,9,2,1,4,0,10,150,200,40,4,9,14,5,10,2,8', ''].join('\n')}`;
}

/** Oura API v2 sleep documents: a long sleep lived in New York, a late nap, a short sleep, deleted and rest. */
export function ouraApiJson(): string {
  const doc = (id: string, type: string, start: string, end: string, extra: Record<string, unknown> = {}) => ({
    id,
    day: end.slice(0, 10),
    type,
    period: 0,
    bedtime_start: start,
    bedtime_end: end,
    time_in_bed: (Date.parse(end) - Date.parse(start)) / 1000,
    efficiency: 87,
    heart_rate: { interval: 300, items: [55, 54, null], timestamp: start },
    ...extra,
  });
  return JSON.stringify({
    data: [
      doc('oura-night-1', 'long_sleep', '2026-07-09T23:15:00.000-05:00', '2026-07-10T07:05:00.000-05:00', {
        total_sleep_duration: 25200,
        deep_sleep_duration: 5400,
        sleep_phase_5_min: '4411224411334422114',
      }),
      doc('oura-nap-1', 'late_nap', '2026-07-10T14:00:00.000-05:00', '2026-07-10T14:35:00.000-05:00', { total_sleep_duration: 1800 }),
      doc('oura-short-1', 'sleep', '2026-07-11T03:00:00.000-05:00', '2026-07-11T04:30:00.000-05:00', { total_sleep_duration: 4800 }),
      doc('oura-deleted-1', 'deleted', '2026-07-12T23:00:00.000-05:00', '2026-07-13T07:00:00.000-05:00'),
      doc('oura-rest-1', 'rest', '2026-07-13T13:00:00.000-05:00', '2026-07-13T13:30:00.000-05:00'),
    ],
    next_token: null,
  });
}

/** sleepmodel.csv from the membership export: ';'-separated, unquoted JSON cells with commas, one night again (same id). */
export function ouraMembershipCsv(): string {
  return [
    'id;day;type;bedtime_start;bedtime_end;efficiency;total_sleep_duration;sleep_phase_5_min;heart_rate',
    'oura-night-1;2026-07-10;long_sleep;2026-07-09T23:15:00.000-05:00;2026-07-10T07:05:00.000-05:00;87;25200;4411224411334422114;{"interval":300,"items":[55,54,53],"timestamp":"2026-07-09T23:15:00.000-05:00"}',
    'oura-night-2;2026-07-15;long_sleep;2026-07-14T22:40:00.000+02:00;2026-07-15T06:50:00.000+02:00;91;26000;1122334411;{"interval":300,"items":[50,51],"timestamp":"2026-07-14T22:40:00.000+02:00"}',
    '',
  ].join('\n');
}

/** The older Oura v1 JSON ({"sleep": [...]}, offsets in bedtime_*). */
export function ouraV1Json(): string {
  return JSON.stringify({
    sleep: [
      { summary_date: '2025-12-01', bedtime_start: '2025-12-01T23:00:00+01:00', bedtime_end: '2025-12-02T07:00:00+01:00', timezone: 60, is_longest: 1, efficiency: 90, duration: 28800, total: 25920, hypnogram_5min: '112233241' },
    ],
  });
}

/** A Fitbit legacy monthly file: local times without an offset; a stages night and a classic nap. */
export function fitbitSleepJson(includeNight = true): string {
  const night = {
    logId: 31001,
    dateOfSleep: '2026-07-02',
    startTime: '2026-07-01T23:10:30.000',
    endTime: '2026-07-02T07:05:30.000',
    duration: 28500000,
    minutesToFallAsleep: 0,
    minutesAsleep: 430,
    minutesAwake: 45,
    minutesAfterWakeup: 0,
    timeInBed: 475,
    efficiency: 96,
    type: 'stages',
    infoCode: 0,
    logType: 'auto_detected',
    mainSleep: true,
    levels: {
      summary: { deep: { count: 3, minutes: 80, thirtyDayAvgMinutes: 75 } },
      data: [
        { dateTime: '2026-07-01T23:10:30.000', level: 'wake', seconds: 300 },
        { dateTime: '2026-07-01T23:15:30.000', level: 'light', seconds: 3600 },
        { dateTime: '2026-07-02T00:15:30.000', level: 'wake', seconds: 600 },
        { dateTime: '2026-07-02T00:25:30.000', level: 'deep', seconds: 4800 },
        { dateTime: '2026-07-02T01:45:30.000', level: 'rem', seconds: 18000 },
        { dateTime: '2026-07-02T06:45:30.000', level: 'wake', seconds: 1200 },
      ],
      // A short wake overlapping the data's wake at 00:15 counts once; one inside REM counts.
      shortData: [
        { dateTime: '2026-07-02T00:20:00.000', level: 'wake', seconds: 60 },
        { dateTime: '2026-07-02T03:00:00.000', level: 'wake', seconds: 90 },
      ],
    },
  };
  const nap = {
    logId: 31002,
    dateOfSleep: '2026-07-03',
    startTime: '2026-07-03T14:00:00.000',
    endTime: '2026-07-03T14:50:00.000',
    duration: 3000000,
    minutesAsleep: 44,
    timeInBed: 50,
    efficiency: 88,
    type: 'classic',
    mainSleep: false,
    levels: {
      data: [
        { dateTime: '2026-07-03T14:00:00.000', level: 'asleep', seconds: 900 },
        { dateTime: '2026-07-03T14:15:00.000', level: 'restless', seconds: 120 },
        { dateTime: '2026-07-03T14:17:00.000', level: 'awake', seconds: 180 },
        { dateTime: '2026-07-03T14:20:00.000', level: 'asleep', seconds: 1800 },
      ],
    },
  };
  // Newest first, as Takeout writes them.
  return JSON.stringify(includeNight ? [nap, night] : [nap]);
}

export function fitbitProfileCsv(zone = 'America/Chicago'): string {
  return ['id,full_name,first_name,last_name,display_name,timezone', `ABC123,Test Person,Test,Person,Test,${zone}`, ''].join('\n');
}

export const GOOGLE_USERSLEEPS_HEADER =
  'sleep_id,sleep_type,minutes_in_sleep_period,minutes_after_wake_up,minutes_to_fall_asleep,minutes_asleep,minutes_awake,minutes_longest_awakening,minutes_to_persistent_sleep,start_utc_offset,sleep_start,end_utc_offset,sleep_end,data_source,algorithm_version,sleep_created,sleep_last_updated';
export const GOOGLE_STAGES_HEADER =
  'sleep_id,sleep_stage_id,sleep_stage_type,start_utc_offset,sleep_stage_start,end_utc_offset,sleep_stage_end,data_source,algorithm_version,sleep_stage_created,sleep_stage_last_updated';

/** Google Health UserSleeps: UTC times with offsets, each night twice (v1 and v2), a short nap. */
export function googleUserSleepsCsv(): string {
  return [
    GOOGLE_USERSLEEPS_HEADER,
    'g-1,STAGES,470,0,5,420,50,12,5,-04:00,2026-08-01 03:10:00+0000,-04:00,2026-08-01 11:00:00+0000,FITBIT,sleep_session_v1,2026-08-01 11:05:00+0000,2026-08-01 11:05:00+0000',
    'g-2,STAGES,476,0,5,430,46,12,5,-04:00,2026-08-01 03:06:00+0000,-04:00,2026-08-01 11:02:00+0000,FITBIT,sleep_session_v2,2026-08-01 11:07:00+0000,2026-08-01 11:07:00+0000',
    'g-3,CLASSIC,60,0,3,50,10,4,3,-04:00,2026-08-01 18:00:00+0000,-04:00,2026-08-01 19:00:00+0000,FITBIT,sleep_session_v2,2026-08-01 19:05:00+0000,2026-08-01 19:05:00+0000',
    '',
  ].join('\n');
}

/**
 * Google Health UserSleepStages for googleUserSleepsCsv's nights (invented): the v2 night g-2 has
 * two wake runs between its first and last sleep (one written as two touching AWAKE rows, one as
 * WAKE), plus wake before falling asleep and after waking that are not awakenings; the v1 copy g-1
 * has its own rows (one awakening), which must not leak into g-2. The nap g-3 has none.
 */
export function googleUserSleepStagesCsv(): string {
  const row = (id: string, n: number, type: string, start: string, end: string) =>
    `${id},${n},${type},-04:00,2026-08-01 ${start}:00+0000,-04:00,2026-08-01 ${end}:00+0000,FITBIT,sleep_session_v2,,`;
  return [
    GOOGLE_STAGES_HEADER,
    row('g-2', 1, 'AWAKE', '03:06', '03:11'),
    row('g-2', 2, 'LIGHT', '03:11', '04:30'),
    row('g-2', 3, 'DEEP', '04:30', '05:40'),
    row('g-2', 4, 'AWAKE', '05:40', '05:44'),
    row('g-2', 5, 'AWAKE', '05:44', '05:47'),
    row('g-2', 6, 'REM', '05:47', '07:00'),
    row('g-2', 7, 'WAKE', '07:00', '07:06'),
    row('g-2', 8, 'LIGHT', '07:06', '10:55'),
    row('g-2', 9, 'AWAKE', '10:55', '11:02'),
    row('g-1', 1, 'LIGHT', '03:10', '06:00'),
    row('g-1', 2, 'AWAKE', '06:00', '06:05'),
    row('g-1', 3, 'DEEP', '06:05', '11:00'),
    'g-2,10,LIGHT,-04:00,not a time,-04:00,2026-08-01 11:02:00+0000,FITBIT,sleep_session_v2,,',
    '',
  ].join('\n');
}

/** A Chyme export document with one meal and one night. */
export function chymeExport(): string {
  return JSON.stringify({
    object: 'export',
    format: 'chyme.export',
    format_version: 1,
    settings: { timezone: 'Europe/Berlin', day_start: '00:00', units: 'metric' },
    meals: [
      {
        id: 'meal_fromExport1',
        timestamp: '2026-05-01T10:00:00Z',
        meal_type: 'breakfast',
        description: 'Porridge',
        macros: { calories: 300, protein_g: 10, carbs_g: 50, fat_g: 5, fiber_g: 6 },
        micros: { sodium_mg: 100, caffeine_mg: null },
        foods: [],
        utc_offset_min: 120,
        source: 'cronometer',
        inferred_time: true,
      },
    ],
    sleep_sessions: [{ id: 'sleep_fromExport1', start: '2026-04-30T21:00:00Z', end: '2026-05-01T05:00:00Z', efficiency: 0.9, awakenings: 1, source: 'oura', nap: false }],
    webhook_subscriptions: [],
  });
}
