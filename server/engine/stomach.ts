/**
 * Overlapping meals share one stomach.
 *
 * Each meal keeps its own emptying curve y(τ) but runs on its own clock τ, which advances at speed
 * s = max(0.5, (E / (E + others))^(1−α)) where `others` is what the other still-processing meals have
 * left and α comes from Hunt's sub-linear delivery (constants.ts, SHARED_DELIVERY_EXPONENT). So:
 *
 * - one meal alone runs at exactly speed 1 and follows its calibrated curve;
 * - a later meal slows the earlier one (and is slowed by it): processing is extended, never restarted;
 * - remaining calories add up, and total delivery grows like Hunt's R of the combined load;
 * - adding a meal can only slow every clock, so no meal, and no stomach, ever empties sooner because
 *   food was added. The simulation keeps that property exactly, not just approximately: the step grid
 *   is fixed (whole epoch minutes), speeds are computed from loads at grid points, and every operation
 *   is monotone in the loads.
 *
 * A meal leaves the shared computation once it is 90 % emptied (its processing end); its small tail
 * then empties at its own pace and is only drawn in the load curve.
 */

import { MIN_SHARED_EMPTYING_SPEED, MS_PER_MINUTE, SHARED_DELIVERY_EXPONENT, SIMULATION_STEP_MIN } from './constants.js';
import { fractionLeftAfter, type MealKinetics } from './meal-model.js';

export interface MealCourse {
  kinetics: MealKinetics;
  /** Instants (epoch ms) at which the meal is half, 75 % and 90 % emptied in the shared stomach. */
  fedEndAt: number;
  sleepReadyAt: number;
  /** The meal's own processing end: 90 % emptied. */
  processingEndAt: number;
  /** Slowest clock speed it had (1 = never slowed by another meal). */
  minSpeed: number;
}

interface Trajectory {
  /** epoch minutes and own-clock minutes at breakpoints; τ is linear between them. */
  times: number[];
  taus: number[];
}

export interface StomachRun {
  /** One course per meal, ordered by (time, id). */
  courses: MealCourse[];
  /** Present when the run was asked to record trajectories (for load curves). */
  trajectories: Trajectory[] | null;
}

const MILESTONES = 3; // fed end (50 %), sleep ready (25 %), processing end (10 %)

function compareKinetics(a: MealKinetics, b: MealKinetics): number {
  return a.timeMs - b.timeMs || (a.mealId < b.mealId ? -1 : a.mealId > b.mealId ? 1 : 0);
}

/** Speed of a meal's own clock when `othersKcal` of other meals share the stomach. */
export function sharedClockSpeed(kcal: number, othersKcal: number): number {
  if (othersKcal <= 0) return 1;
  return Math.max(MIN_SHARED_EMPTYING_SPEED, Math.pow(kcal / (kcal + othersKcal), 1 - SHARED_DELIVERY_EXPONENT));
}

interface ActiveMeal {
  index: number;
  tau: number;
  nextMilestone: number;
}

/** Runs the shared stomach until every meal is 90 % emptied. Pure; cost ~ minutes with ≥ 2 meals in processing. */
export function runStomach(kinetics: readonly MealKinetics[], options: { recordTrajectories?: boolean } = {}): StomachRun {
  const order = [...kinetics].sort(compareKinetics);
  const n = order.length;
  const arrival = order.map((k) => k.timeMs / MS_PER_MINUTE);
  const milestones = order.map((k) => [k.fedEndOwnMin, k.sleepReadyOwnMin, k.processingEndOwnMin] as const);
  const courses: MealCourse[] = order.map((k) => ({
    kinetics: k,
    fedEndAt: NaN,
    sleepReadyAt: NaN,
    processingEndAt: NaN,
    minSpeed: 1,
  }));
  const trajectories: Trajectory[] | null = options.recordTrajectories ? order.map(() => ({ times: [], taus: [] })) : null;

  const advance = (a: ActiveMeal, from: number, dt: number, speed: number) => {
    const course = courses[a.index]!;
    const marks = milestones[a.index]!;
    const tauEnd = a.tau + speed * dt;
    while (a.nextMilestone < MILESTONES && marks[a.nextMilestone]! <= tauEnd) {
      const crossingMin = from + Math.min(dt, (marks[a.nextMilestone]! - a.tau) / speed);
      const at = crossingMin * MS_PER_MINUTE;
      if (a.nextMilestone === 0) course.fedEndAt = at;
      else if (a.nextMilestone === 1) course.sleepReadyAt = at;
      else course.processingEndAt = at;
      a.nextMilestone++;
    }
    a.tau = tauEnd;
    if (speed < course.minSpeed) course.minSpeed = speed;
  };

  let active: ActiveMeal[] = [];
  let next = 0;
  let grid = 0;
  while (next < n || active.length > 0) {
    if (active.length === 0) grid = Math.floor(arrival[next]!);

    const loads = active.map((a) => {
      const k = order[a.index]!;
      return k.kcal * fractionLeftAfter(k.t50Min, k.beta, a.tau);
    });
    const speeds = active.map((a, i) => {
      let others = 0;
      for (let j = 0; j < loads.length; j++) if (j !== i) others += loads[j]!;
      return sharedClockSpeed(order[a.index]!.kcal, others);
    });

    // One meal alone runs at speed 1, so whole stretches until it finishes or the next meal arrives
    // can be taken in one exact step.
    let steps = 1;
    if (active.length === 1) {
      const a = active[0]!;
      const untilDone = Math.ceil(milestones[a.index]![2] - a.tau);
      const untilArrival = next < n ? Math.floor(arrival[next]!) - grid : Infinity;
      steps = Math.max(1, Math.min(untilDone, untilArrival));
    }
    const dt = steps * SIMULATION_STEP_MIN;
    const stepEnd = grid + dt;

    if (trajectories) {
      for (const a of active) {
        trajectories[a.index]!.times.push(grid);
        trajectories[a.index]!.taus.push(a.tau);
      }
    }
    active.forEach((a, i) => advance(a, grid, dt, speeds[i]!));

    // Meals arriving inside this step see the loads at the step's start; they count for the others
    // from the next grid point on.
    let loadAtGrid = 0;
    for (const l of loads) loadAtGrid += l;
    while (next < n && arrival[next]! < stepEnd) {
      const a: ActiveMeal = { index: next, tau: 0, nextMilestone: 0 };
      if (trajectories) {
        trajectories[next]!.times.push(arrival[next]!);
        trajectories[next]!.taus.push(0);
      }
      advance(a, arrival[next]!, stepEnd - arrival[next]!, sharedClockSpeed(order[next]!.kcal, loadAtGrid));
      active.push(a);
      next++;
    }

    active = active.filter((a) => {
      if (a.nextMilestone < MILESTONES) return true;
      if (trajectories) {
        trajectories[a.index]!.times.push(stepEnd);
        trajectories[a.index]!.taus.push(a.tau);
      }
      return false;
    });
    grid = stepEnd;
  }
  return { courses, trajectories };
}

/** Own-clock minutes of meal `index` at epoch minute `tMin`, from a recorded trajectory. */
function tauAt(traj: Trajectory, tMin: number): number {
  const { times, taus } = traj;
  if (times.length === 0 || tMin <= times[0]!) return 0;
  const last = times.length - 1;
  // After its processing end the tail empties at its own pace (speed 1).
  if (tMin >= times[last]!) return taus[last]! + (tMin - times[last]!);
  let lo = 0;
  let hi = last;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! <= tMin) lo = mid;
    else hi = mid;
  }
  const t0 = times[lo]!;
  const t1 = times[hi]!;
  return taus[lo]! + ((taus[hi]! - taus[lo]!) * (tMin - t0)) / (t1 - t0);
}

/** Calories still in the stomach at `atMs` according to a recorded run. */
export function loadFromRun(run: StomachRun, atMs: number): number {
  if (!run.trajectories) throw new Error('loadFromRun needs a run with recordTrajectories');
  const tMin = atMs / MS_PER_MINUTE;
  let load = 0;
  run.courses.forEach((course, i) => {
    const k = course.kinetics;
    if (atMs < k.timeMs) return;
    load += k.kcal * fractionLeftAfter(k.t50Min, k.beta, tauAt(run.trajectories![i]!, tMin));
  });
  return load;
}
