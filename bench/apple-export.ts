/**
 * A synthetic Apple Health export.xml of any size for the import bench: ten years of days, each
 * with heart-rate and step records (what makes real exports big, and what the importer skips),
 * three MyFitnessPal meals written as loose records, and one watch night with stages. Invented
 * values; streamed to disk, never held in memory.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

const DAYS = 3650;

function appleDate(ms: number): string {
  // Written with one export-day offset (-0800), as Apple does.
  const s = new Date(ms - 8 * 3600_000).toISOString();
  return `${s.slice(0, 10)} ${s.slice(11, 19)} -0800`;
}

/** One day of a ten-year watch export: heart rate and steps (skipped by the importer), 3 logged meals, one night. */
function day(dayStartMs: number, fillerRecords: number): string {
  const out: string[] = [];
  for (let i = 0; i < fillerRecords; i++) {
    const t = appleDate(dayStartMs + Math.floor((i * 86_400_000) / fillerRecords));
    if (i % 3 === 0) {
      out.push(
        `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Ana’s Apple Watch" sourceVersion="11.1" device="&lt;&lt;HKDevice: 0x283e1a9e0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:11.1&gt;" unit="count/min" creationDate="${t}" startDate="${t}" endDate="${t}" value="${55 + (i % 40)}">\n  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="0"/>\n </Record>\n`,
      );
    } else {
      out.push(`<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Ana’s iPhone" sourceVersion="18.1" unit="count" creationDate="${t}" startDate="${t}" endDate="${t}" value="${i % 120}"/>\n`);
    }
  }
  for (const [hour, label, kcal] of [[7.5, 'Breakfast', 420], [12.5, 'Lunch', 650], [19, 'Dinner', 780]] as const) {
    const t = appleDate(dayStartMs + hour * 3600_000);
    for (const [type, unit, value] of [['EnergyConsumed', 'Cal', kcal], ['Protein', 'g', kcal / 20], ['Carbohydrates', 'g', kcal / 8], ['FatTotal', 'g', kcal / 30], ['Sodium', 'mg', kcal]] as const) {
      out.push(
        `<Record type="HKQuantityTypeIdentifierDietary${type}" sourceName="MyFitnessPal" unit="${unit}" creationDate="${t}" startDate="${t}" endDate="${t}" value="${value}">\n  <MetadataEntry key="meal" value="${label}"/>\n  <MetadataEntry key="Meal" value="${label}"/>\n </Record>\n`,
      );
    }
  }
  const bed = dayStartMs + 22.5 * 3600_000;
  out.push(`<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Ana’s iPhone" startDate="${appleDate(bed - 600_000)}" endDate="${appleDate(bed + 8 * 3600_000)}" value="HKCategoryValueSleepAnalysisInBed"/>\n`);
  const stages = ['AsleepCore', 'AsleepDeep', 'AsleepCore', 'AsleepREM', 'Awake', 'AsleepCore', 'AsleepREM', 'AsleepCore'];
  stages.forEach((stage, i) => {
    const s = bed + i * 3600_000;
    out.push(
      `<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Ana’s Apple Watch" startDate="${appleDate(s)}" endDate="${appleDate(s + 3600_000)}" value="HKCategoryValueSleepAnalysis${stage}">\n  <MetadataEntry key="HKTimeZone" value="Europe/Berlin"/>\n </Record>\n`,
    );
  });
  return out.join('');
}

/** Writes a synthetic ten-year export.xml of about `targetBytes` (invented values). */
export async function generateAppleExport(path: string, targetBytes: number): Promise<void> {
  const out = createWriteStream(path);
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write(`<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE HealthData [\n<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout)*)>\n]>\n<HealthData locale="en_US">\n <ExportDate value="2026-11-20 09:00:00 -0800"/>\n <Me HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>\n`);
  const sample = day(Date.UTC(2020, 0, 1), 100);
  const perFiller = (sample.length - day(Date.UTC(2020, 0, 1), 0).length) / 100;
  const filler = Math.max(0, Math.round((targetBytes / DAYS - day(Date.UTC(2020, 0, 1), 0).length) / perFiller));
  const first = Date.UTC(2016, 10, 1) - 3600_000;
  for (let d = 0; d < DAYS; d++) await write(day(first + d * 86_400_000, filler));
  await write('</HealthData>\n');
  out.end();
  await once(out, 'finish');
}

