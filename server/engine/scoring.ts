/** Shared score vocabulary: anchor maps, contributions and levels (MODEL.md "Scores — product anchors"). */

import {
  CONTRIBUTION_NEUTRAL_MIN,
  CONTRIBUTION_POSITIVE_MIN,
  LEVEL_FAIR_MIN,
  LEVEL_GOOD_MIN,
  LEVEL_OPTIMAL_MIN,
  type Anchors,
} from './constants.js';
import type { ComponentValue, Contribution, Level } from './types.js';

/** Piecewise-linear interpolation through anchors, flat beyond the first and last. */
export function fromAnchors(x: number, anchors: Anchors): number {
  const first = anchors[0]!;
  const last = anchors[anchors.length - 1]!;
  if (x <= first[0]) return first[1];
  if (x >= last[0]) return last[1];
  for (let i = 1; i < anchors.length; i++) {
    const [x1, y1] = anchors[i]!;
    if (x <= x1) {
      const [x0, y0] = anchors[i - 1]!;
      return y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
    }
  }
  return last[1];
}

/** positive ≥ 85, neutral 60–84, attention < 60. */
export function contributionOf(value: number): Contribution {
  if (value >= CONTRIBUTION_POSITIVE_MIN) return 'positive';
  if (value >= CONTRIBUTION_NEUTRAL_MIN) return 'neutral';
  return 'attention';
}

/** optimal ≥ 85, good 70–84, fair 60–69, pay_attention < 60. */
export function levelOf(score: number): Level {
  if (score >= LEVEL_OPTIMAL_MIN) return 'optimal';
  if (score >= LEVEL_GOOD_MIN) return 'good';
  if (score >= LEVEL_FAIR_MIN) return 'fair';
  return 'pay_attention';
}

/** A 0–100 integer component with its contribution. */
export function component(value: number): ComponentValue {
  const v = clampScore(value);
  return { value: v, contribution: contributionOf(v) };
}

export function clampScore(x: number): number {
  return Math.round(Math.min(100, Math.max(0, x)));
}

export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function mean(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Population standard deviation (defined for one value: 0). */
export function standardDeviation(xs: readonly number[]): number | null {
  const m = mean(xs);
  if (m === null) return null;
  let sum = 0;
  for (const x of xs) sum += (x - m) ** 2;
  return Math.sqrt(sum / xs.length);
}
