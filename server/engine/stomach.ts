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

const SPEED_FLOOR = MIN_SHARED_EMPTYING_SPEED;
const SPEED_EXPONENT = 1 - SHARED_DELIVERY_EXPONENT;
const STEP_MIN = SIMULATION_STEP_MIN;
/**
 * A meal's clock is at the floor once the others hold more than this many times its calories
 * (k / (k + others) below SPEED_FLOOR^(1/SPEED_EXPONENT)), with a margin a millionfold wider than
 * Math.pow's rounding: the step loop then takes the floor without calling Math.pow, and gets the
 * very value Math.max(SPEED_FLOOR, pow(…)) would (a congested day of 200 meals spends most of its
 * steps there, and pow is a third of a step's cost).
 */
export const FLOOR_OTHERS_PER_KCAL = (1 / Math.pow(SPEED_FLOOR, 1 / SPEED_EXPONENT) - 1) * (1 + 1e-6);
/**
 * A congested stomach (many meals, each slowed to the floor) needs no loads at all, only proof
 * that every clock is at the floor: a lower bound of each meal's load, its load this many own-clock
 * minutes ahead (loads only fall as a clock runs), kept until the clock passes that point. Each
 * bound is shaded by a relative 1e-9, far above the rounding of exp and pow, so it never exceeds
 * the load the exact step would compute; sums of smaller terms in the same order are never larger
 * in floating point either, so a bound above the floor's threshold proves what the exact step
 * would decide, and the run stays bit for bit the same. Where the bounds prove nothing, the step
 * is computed exactly.
 */
const LOAD_BOUND_AHEAD_MIN = 10;
const LOAD_BOUND_SHADE = 1 - 1e-9;

/** Speed of a meal's own clock when `othersKcal` of other meals share the stomach. */
export function sharedClockSpeed(kcal: number, othersKcal: number): number {
  if (othersKcal <= 0) return 1;
  return Math.max(SPEED_FLOOR, Math.pow(kcal / (kcal + othersKcal), SPEED_EXPONENT));
}

/**
 * Runs the shared stomach until every meal is 90 % emptied. Pure. A meal alone is advanced in one
 * exact stretch; while two or more meals are in processing the clocks advance one grid minute at a
 * time (the hot loop: typed arrays, no allocation per step).
 */
export function runStomach(kinetics: readonly MealKinetics[], options: { recordTrajectories?: boolean; /** false: every step exact (tests compare). */ boundLoads?: boolean } = {}): StomachRun {
  const order = [...kinetics].sort(compareKinetics);
  const n = order.length;
  const arrival = new Float64Array(n);
  const kcal = new Float64Array(n);
  const invT50 = new Float64Array(n);
  const beta = new Float64Array(n);
  const marks = new Float64Array(MILESTONES * n);
  order.forEach((k, i) => {
    arrival[i] = k.timeMs / MS_PER_MINUTE;
    kcal[i] = k.kcal;
    invT50[i] = 1 / k.t50Min;
    beta[i] = k.beta;
    marks[MILESTONES * i] = k.fedEndOwnMin;
    marks[MILESTONES * i + 1] = k.sleepReadyOwnMin;
    marks[MILESTONES * i + 2] = k.processingEndOwnMin;
  });
  const courses: MealCourse[] = order.map((k) => ({
    kinetics: k,
    fedEndAt: NaN,
    sleepReadyAt: NaN,
    processingEndAt: NaN,
    minSpeed: 1,
  }));
  const trajectories: Trajectory[] | null = options.recordTrajectories ? order.map(() => ({ times: [], taus: [] })) : null;

  const tau = new Float64Array(n);
  const nextMilestone = new Uint8Array(n);
  // Meals in processing, in (time, id) order, and per-position scratch for loads and speeds.
  const active = new Int32Array(n);
  const loads = new Float64Array(n);
  const speeds = new Float64Array(n);
  const suffix = new Float64Array(n);
  // Per meal: the own-clock minute its load bound was taken at, and the bound (LOAD_BOUND_AHEAD_MIN).
  const boundLoads = options.boundLoads ?? true;
  const boundTau = new Float64Array(n).fill(-Infinity);
  const bound = new Float64Array(n);
  let activeCount = 0;

  const advance = (i: number, from: number, dt: number, speed: number) => {
    const t0 = tau[i]!;
    const tauEnd = t0 + speed * dt;
    let m = nextMilestone[i]!;
    while (m < MILESTONES && marks[MILESTONES * i + m]! <= tauEnd) {
      const at = (from + Math.min(dt, (marks[MILESTONES * i + m]! - t0) / speed)) * MS_PER_MINUTE;
      const course = courses[i]!;
      if (m === 0) course.fedEndAt = at;
      else if (m === 1) course.sleepReadyAt = at;
      else course.processingEndAt = at;
      m++;
    }
    nextMilestone[i] = m;
    tau[i] = tauEnd;
    if (speed < courses[i]!.minSpeed) courses[i]!.minSpeed = speed;
  };

  let next = 0;
  let grid = 0;
  while (next < n || activeCount > 0) {
    if (activeCount === 0) grid = Math.floor(arrival[next]!);

    // Congested: every clock (and every meal arriving in this one-minute step) provably at the
    // floor from the load bounds, summed in the order the exact step sums the loads.
    let atFloor = false;
    if (activeCount >= 2 && boundLoads) {
      let boundAfter = 0;
      for (let p = activeCount - 1; p >= 0; p--) {
        const i = active[p]!;
        if (tau[i]! > boundTau[i]!) {
          boundTau[i] = tau[i]! + LOAD_BOUND_AHEAD_MIN;
          bound[i] = kcal[i]! * Math.exp(-Math.LN2 * Math.pow(boundTau[i]! * invT50[i]!, beta[i]!)) * LOAD_BOUND_SHADE;
        }
        suffix[p] = boundAfter;
        boundAfter += bound[i]!;
      }
      let boundBefore = 0;
      atFloor = true;
      for (let p = 0; p < activeCount && atFloor; p++) {
        const i = active[p]!;
        atFloor = boundBefore + suffix[p]! > kcal[i]! * FLOOR_OTHERS_PER_KCAL;
        boundBefore += bound[i]!;
      }
      for (let j = next; atFloor && j < n && arrival[j]! < grid + STEP_MIN; j++) atFloor = boundBefore > kcal[j]! * FLOOR_OTHERS_PER_KCAL;
    }

    let loadAtGrid = 0;
    if (atFloor) {
      speeds.fill(SPEED_FLOOR, 0, activeCount);
    } else {
      for (let p = 0; p < activeCount; p++) {
        const i = active[p]!;
        const t = tau[i]!;
        loads[p] = t <= 0 ? kcal[i]! : kcal[i]! * Math.exp(-Math.LN2 * Math.pow(t * invT50[i]!, beta[i]!));
        loadAtGrid += loads[p]!;
      }
      // The others' load of position p is (loads before p, summed in meal order) + (loads after p,
      // summed from the last back): two sums of non-negative terms in a fixed order, so adding a
      // meal can only raise it, exactly as summing every other load in meal order would, but in
      // O(active) a step rather than O(active²) (a day of 200 overlapping meals). Never total − own
      // load: a subtraction's rounding could lower it.
      let after = 0;
      for (let p = activeCount - 1; p >= 0; p--) {
        suffix[p] = after;
        after += loads[p]!;
      }
      let before = 0;
      for (let p = 0; p < activeCount; p++) {
        const others = before + suffix[p]!;
        before += loads[p]!;
        const k = kcal[active[p]!]!;
        speeds[p] = others <= 0 ? 1 : others > k * FLOOR_OTHERS_PER_KCAL ? SPEED_FLOOR : Math.max(SPEED_FLOOR, Math.pow(k / (k + others), SPEED_EXPONENT));
      }
    }

    // One meal alone runs at speed 1, so the whole stretch until it finishes or the next meal
    // arrives is one exact step.
    let steps = 1;
    if (activeCount === 1) {
      const i = active[0]!;
      const untilDone = Math.ceil(marks[MILESTONES * i + 2]! - tau[i]!);
      const untilArrival = next < n ? Math.floor(arrival[next]!) - grid : Infinity;
      steps = Math.max(1, Math.min(untilDone, untilArrival));
    }
    const dt = steps * STEP_MIN;
    const stepEnd = grid + dt;

    for (let p = 0; p < activeCount; p++) {
      const i = active[p]!;
      if (trajectories) {
        trajectories[i]!.times.push(grid);
        trajectories[i]!.taus.push(tau[i]!);
      }
      advance(i, grid, dt, speeds[p]!);
    }

    // Meals arriving inside this step see the loads at the step's start; they count for the others
    // from the next grid point on.
    while (next < n && arrival[next]! < stepEnd) {
      if (trajectories) {
        trajectories[next]!.times.push(arrival[next]!);
        trajectories[next]!.taus.push(0);
      }
      advance(next, arrival[next]!, stepEnd - arrival[next]!, atFloor ? SPEED_FLOOR : sharedClockSpeed(kcal[next]!, loadAtGrid));
      active[activeCount++] = next;
      next++;
    }

    // Meals that reached their processing end leave the shared computation (order is kept).
    let kept = 0;
    for (let p = 0; p < activeCount; p++) {
      const i = active[p]!;
      if (nextMilestone[i]! < MILESTONES) {
        active[kept++] = i;
      } else if (trajectories) {
        trajectories[i]!.times.push(stepEnd);
        trajectories[i]!.taus.push(tau[i]!);
      }
    }
    activeCount = kept;
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
