/**
 * Digestion episodes: runs of digestive meals that share the stomach without the user ever becoming
 * fasted in between, and the processing/settling segments of each.
 *
 * Processing lasts until every meal eaten so far is ≥ 90 % emptied (its processing end in the shared
 * stomach). For one meal this is exactly MODEL.md's "combined load under 10 % of its peak". For
 * overlapping meals the per-meal form is used because the peak form is not monotone: a large, fast
 * drink raises the peak and with it the threshold, so adding it could end digestion of a small solid
 * meal sooner than the meal alone (a 100 kcal solid snack alone: 135 min; with a 300 kcal drink:
 * 121 min). Settling then lasts SETTLING_MIN; a meal eaten during settling starts processing again
 * and joins the episode; after settling the user is fasted.
 *
 * Per meal (the timeline): its own processing ends when it is 90 % emptied in the shared stomach
 * (later meals slow it, so it ends later than alone), and its settling SETTLING_MIN after that. The
 * state is their union: processing while any meal is, settling until the last one has settled.
 */

import { SETTLING_MIN, MS_PER_MINUTE } from './constants.js';
import { mealKinetics, type MealKinetics } from './meal-model.js';
import type { MealCourse, StomachRun } from './stomach.js';
import type { EngineMeal } from './types.js';

export const SETTLING_MS = SETTLING_MIN * MS_PER_MINUTE;

export interface DigestionSegment {
  state: 'processing' | 'settling';
  start: number;
  end: number;
}

export interface DigestionEpisode {
  /** Its meals in time order. */
  courses: MealCourse[];
  start: number;
  processingEnd: number;
  /** = processingEnd + SETTLING_MIN: when the user becomes fasted if nothing more is eaten. */
  settlingEnd: number;
  /** Contiguous processing/settling segments covering [start, settlingEnd). */
  segments: DigestionSegment[];
  /** For each course, the processing segment it was eaten in. */
  courseSegments: DigestionSegment[];
}

/** Kinetics of the digestive meals (≥ 15 kcal) among `meals`. */
export function digestiveKinetics(meals: readonly EngineMeal[]): MealKinetics[] {
  const out: MealKinetics[] = [];
  for (const m of meals) {
    const k = mealKinetics(m);
    if (k) out.push(k);
  }
  return out;
}

export function digestionEpisodes(run: StomachRun): DigestionEpisode[] {
  const episodes: DigestionEpisode[] = [];
  let current: DigestionEpisode | null = null;
  for (const course of run.courses) {
    const t = course.kinetics.timeMs;
    const ownEnd = course.processingEndAt;
    if (!current || t >= current.settlingEnd) {
      const segment: DigestionSegment = { state: 'processing', start: t, end: ownEnd };
      current = {
        courses: [course],
        start: t,
        processingEnd: ownEnd,
        settlingEnd: ownEnd + SETTLING_MS,
        segments: [segment],
        courseSegments: [segment],
      };
      episodes.push(current);
      continue;
    }
    current.courses.push(course);
    if (t >= current.processingEnd) {
      // Eaten while settling: settling is cut short and processing starts again.
      const segment: DigestionSegment = { state: 'processing', start: t, end: Math.max(current.processingEnd, ownEnd) };
      current.segments.push({ state: 'settling', start: current.processingEnd, end: t });
      current.segments.push(segment);
      current.courseSegments.push(segment);
    } else {
      const segment = current.segments[current.segments.length - 1]!;
      segment.end = Math.max(segment.end, ownEnd);
      current.courseSegments.push(segment);
    }
    current.processingEnd = Math.max(current.processingEnd, ownEnd);
    current.settlingEnd = current.processingEnd + SETTLING_MS;
  }
  for (const e of episodes) {
    e.segments = e.segments.filter((s) => s.end > s.start);
    e.segments.push({ state: 'settling', start: e.processingEnd, end: e.settlingEnd });
  }
  return episodes;
}
