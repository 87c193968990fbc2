import type { Windows } from '../api/types.js';
import { addDays, dayLabel, dayOf, fmtDuration, fmtTime, fmtTimeOnDay, localParts } from './time.js';

/** The words around "Ready for sleep": the time, when that is, and what it means. */
export interface SleepReadyText {
  /** The clock time, or "Now" once it has passed. */
  time: string;
  /** When, in words: "this afternoon, in 2 h 25 min", "tonight, in 40 min", "since 9:10 PM". */
  when: string;
  /** What the time means at this point of the day. */
  note: string;
}

export const AFTER_LAST_MEAL = 'Three hours after your last meal, once the stomach is mostly empty. Lying down sooner raises the odds of reflux.';
// In the morning or afternoon the time follows breakfast or lunch, not a bedtime: say so.
const DAYTIME = 'That is if you eat nothing more today: each meal moves it later. Lying down before the stomach is mostly empty raises the odds of reflux.';

/**
 * Describes the moment lying down is fine (`sleep_ready_at`) relative to `now`, by calendar day
 * in `tz`: "this morning"/"this afternoon" for a time during the day (which is only the time after
 * the last meal so far), "tonight" for the evening and the small hours after midnight, else
 * "tomorrow" or the day.
 */
export function sleepReadyText(at: number, now: number, tz: string): SleepReadyText {
  const today = dayOf(now, tz);
  const day = dayOf(at, tz);
  const hour = localParts(at, tz).hour;
  const min = Math.round((at - now) / 60_000);
  const time = fmtTime(at, tz);
  if (min <= 0) return { time: 'Now', when: `since ${fmtTimeOnDay(at, now, tz)}`, note: AFTER_LAST_MEAL };
  const smallHours = hour < 5;
  let part: string;
  if (day === today) part = smallHours || hour >= 17 ? 'tonight' : hour < 12 ? 'this morning' : 'this afternoon';
  else if (day === addDays(today, 1)) part = smallHours ? 'tonight' : 'tomorrow';
  else part = `on ${dayLabel(day, today)}`;
  const daytime = part === 'this morning' || part === 'this afternoon';
  return { time, when: `${part}, in ${fmtDuration(min)}`, note: daytime ? DAYTIME : AFTER_LAST_MEAL };
}

/** What Today's card says once the person is up: tonight's latest time to finish eating. */
export interface TonightText {
  /** "Finish eating by" */
  label: string;
  /** The clock time, e.g. "8:00 PM". */
  time: string;
  /** "in 12 h 40 min" */
  when: string;
  /** The bedtime it is for, and why 3 h. */
  note: string;
}

/**
 * Once the person is up (`tonight` is present), the card speaks of the coming night: the latest time
 * to finish eating for the usual bedtime, while that is still ahead and what has been eaten lets the
 * stomach be ready by the bedtime. Otherwise (the time has passed, a meal pushed readiness past the
 * bedtime, or it is night) null: the card shows when lying down is fine, which then moves with each
 * meal logged.
 */
export function tonightText(tonight: Windows['tonight'] | undefined, now: number, tz: string): TonightText | null {
  if (!tonight) return null;
  const by = Date.parse(tonight.finish_eating_by);
  const bedtime = Date.parse(tonight.bedtime_at);
  if (by <= now) return null;
  if (tonight.sleep_ready_at !== null && Date.parse(tonight.sleep_ready_at) > bedtime) return null;
  const usual =
    tonight.bedtime_source === 'learned'
      ? `For bed at ${fmtTime(bedtime, tz)}, your usual bedtime from the nights you logged.`
      : `For bed at ${fmtTime(bedtime, tz)}, assumed until you log a night’s sleep.`;
  return {
    label: 'Finish eating by',
    time: fmtTime(by, tz),
    when: `in ${fmtDuration(Math.round((by - now) / 60_000))}`,
    note: `${usual} Lying down less than 3 h after eating raises the odds of reflux and of waking in the night.`,
  };
}

/**
 * The moment to describe as "Ready for sleep": once the person is up, never a time before they got
 * up (the stomach's readiness last night says nothing about tonight).
 */
export function sleepReadyAt(windows: Pick<Windows, 'sleep_ready_at' | 'tonight'>): number {
  const at = Date.parse(windows.sleep_ready_at);
  return windows.tonight ? Math.max(at, Date.parse(windows.tonight.woke_at)) : at;
}
