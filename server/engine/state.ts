/**
 * The digestive state at `now`: fasted → processing → settling → fasted.
 *
 * Only meals eaten at or before `now` count, and the prediction assumes nothing more is eaten. Meals
 * older than MAX_DIGESTION_LOOKBACK_MS have finished digesting by `now`, so the API reads only
 * stateInputWindow(now) — optionally plus the latest meal before it, which then gives an exact
 * `since` for a user who has fasted longer than the look-back.
 */

import {
  CALIBRATION_CONFIDENCE_FACTOR,
  CALIBRATION_MIN_DAYS,
  FASTED_UNCERTAINTY_SHARE,
  MAX_CONFIDENCE,
  MAX_DIGESTION_LOOKBACK_MS,
  MS_PER_MINUTE,
} from './constants.js';
import { digestionEpisodes, digestiveKinetics, SETTLING_MS, type DigestionEpisode } from './episodes.js';
import type { MealKinetics } from './meal-model.js';
import { courseConfidence, roundConfidence } from './phases.js';
import { runStomach, type StomachRun } from './stomach.js';
import type { DigestiveState, EngineMeal } from './types.js';

export interface StateOptions {
  /** Days with logged meals up to now; < 2 means calibrating (lower confidence). */
  daysWithData: number;
}

export interface StomachAtNow {
  run: StomachRun;
  episodes: DigestionEpisode[];
}

/**
 * The last few stomach runs by their exact input (every field of every meal's kinetics). A meal
 * write asks for the state and the windows, which mostly read the same meals, and the scheduler
 * asks again every second although nothing changed; with a day of 200 meals each run is tens of ms
 * on the only thread. The engine keeps none itself (it is functions of their inputs): the
 * digestion feature keeps one beside its derived-data cache (digestion/cache.ts) and passes it in.
 * A result depends on nothing but its key, so no write makes one wrong. Results are shared, so
 * callers treat them as read-only (they do).
 */
export class StomachMemo {
  private readonly runs = new Map<string, StomachAtNow>();

  constructor(private readonly limit = 4) {}

  /** The run for `kinetics`, computed by `run` unless one of the last few asked for the same. */
  runFor(kinetics: readonly MealKinetics[], run: () => StomachAtNow): StomachAtNow {
    const key = JSON.stringify(kinetics);
    const hit = this.runs.get(key);
    // Most recently used last, so the oldest is the one dropped.
    if (hit) this.runs.delete(key);
    else if (this.runs.size >= this.limit) this.runs.delete(this.runs.keys().next().value!);
    const result = hit ?? run();
    this.runs.set(key, result);
    return result;
  }

  clear(): void {
    this.runs.clear();
  }
}

/** The shared-stomach run and episodes of the meals eaten at or before `now` (through `memo` when given). */
export function stomachAt(meals: readonly EngineMeal[], now: number, memo?: StomachMemo): StomachAtNow {
  const kinetics = digestiveKinetics(meals.filter((m) => m.timestamp <= now));
  const compute = () => {
    const run = runStomach(kinetics);
    return { run, episodes: digestionEpisodes(run) };
  };
  return memo ? memo.runFor(kinetics, compute) : compute();
}

/** Confidence of an episode's prediction: its least certain meal. */
function episodeConfidence(episode: DigestionEpisode, daysWithData: number): number {
  let c = MAX_CONFIDENCE;
  for (const course of episode.courses) c = Math.min(c, courseConfidence(course, episode.courses.length, daysWithData));
  return c;
}

/**
 * State at `now`.
 *
 * - processing: from a meal until every meal eaten so far is ≥ 90 % emptied; `since` is the meal that
 *   started it (a meal during settling starts it again);
 * - settling: the 50 min after processing; `since` is the processing end;
 * - fasted: `since` = `fastedAt` = the end of the last settling. With no digestive meal among `meals`
 *   at all, both are now − MAX_DIGESTION_LOOKBACK_MS: "fasted for at least the look-back" — the
 *   earliest instant the engine can vouch for.
 *
 * minutesRemaining is rounded up, so it is 0 only when fasted. Instants are whole milliseconds.
 * `stomach`: stomachAt(meals, now) when the caller has it already (the shared-stomach run is most
 * of the cost).
 */
export function digestiveState(meals: readonly EngineMeal[], now: number, options: StateOptions, stomach: StomachAtNow = stomachAt(meals, now)): DigestiveState {
  const { episodes } = stomach;
  const calibrationFactor = options.daysWithData < CALIBRATION_MIN_DAYS ? CALIBRATION_CONFIDENCE_FACTOR : 1;
  const last = episodes[episodes.length - 1];
  if (!last) {
    const since = now - MAX_DIGESTION_LOOKBACK_MS;
    return {
      state: 'fasted',
      minutesRemaining: 0,
      since,
      fastedAt: since,
      activeMeals: 0,
      confidence: roundConfidence(MAX_CONFIDENCE * calibrationFactor),
      nextChangeAt: null,
    };
  }
  const predicted = episodeConfidence(last, options.daysWithData);
  if (now >= last.settlingEnd) {
    // Right after the predicted end the user may in truth still be digesting (people differ by ~40 %);
    // well past it, "fasted" is as certain as the model gets.
    const uncertainUntil = last.settlingEnd + FASTED_UNCERTAINTY_SHARE * (last.settlingEnd - last.start);
    return {
      state: 'fasted',
      minutesRemaining: 0,
      since: Math.round(last.settlingEnd),
      fastedAt: Math.round(last.settlingEnd),
      activeMeals: 0,
      confidence: now < uncertainUntil ? predicted : roundConfidence(MAX_CONFIDENCE * calibrationFactor),
      nextChangeAt: null,
    };
  }
  const segment = last.segments.find((s) => s.start <= now && now < s.end) ?? last.segments[last.segments.length - 1]!;
  return {
    state: segment.state,
    minutesRemaining: Math.max(1, Math.ceil((segment.end - now) / MS_PER_MINUTE)),
    since: Math.round(segment.start),
    fastedAt: Math.round(last.settlingEnd),
    // Meals whose own digestion (processing, then settling) is still running.
    activeMeals: last.courses.filter((c) => c.processingEndAt + SETTLING_MS > now).length,
    confidence: predicted,
    nextChangeAt: Math.round(segment.end),
  };
}
