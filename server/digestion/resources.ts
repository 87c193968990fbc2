import type {
  ComponentValue,
  DailyScore,
  DigestionWindows,
  DigestiveState,
  Insight,
  MealPhases,
  OvernightScore,
} from '../engine/types.js';
import { isoUtc } from '../time/tz.js';

/**
 * Engine outputs (camelCase, epoch ms) → API resources (snake_case, ISO 8601 UTC). The same
 * resources are returned by the endpoints, carried by webhooks and the event stream, and
 * embedded in the snapshot.
 */

export function stateResource(s: DigestiveState, now: number): Record<string, unknown> {
  return {
    object: 'digestion.state',
    state: s.state,
    minutes_remaining: s.minutesRemaining,
    confidence: s.confidence,
    active_meals: s.activeMeals,
    since: isoUtc(s.since),
    fasted_at: isoUtc(s.fastedAt),
    next_change_at: s.nextChangeAt === null ? null : isoUtc(s.nextChangeAt),
    calculated_at: isoUtc(now),
  };
}

export function timelineResource(p: MealPhases): Record<string, unknown> {
  return {
    object: 'digestion.timeline',
    meal_id: p.mealId,
    meal_time: isoUtc(p.mealTime),
    meal_type: p.mealType,
    total_processing_min: p.totalProcessingMin,
    phases: { fed_end_min: p.fedEndMin, processing_end_min: p.processingEndMin, settling_end_min: p.settlingEndMin },
    confidence: p.confidence,
    kcal: p.kcal,
    energy_source: p.energySource,
    form: p.form,
    shared_with_meals: p.episodeMeals - 1,
  };
}

function component(c: ComponentValue): Record<string, unknown> {
  return { value: c.value, contribution: c.contribution };
}

export function dailyScoreResource(s: DailyScore): Record<string, unknown> {
  return {
    object: 'digestion.score',
    date: s.date,
    score: s.score,
    score_state: s.scoreState,
    level: s.level,
    components: {
      overnight: { ...component(s.components.overnight), source: s.overnightSource },
      fasted_ratio: component(s.components.fastedRatio),
      regularity: component(s.components.regularity),
      circadian: component(s.components.circadian),
    },
    calibrating: s.calibrating,
    confidence: s.confidence,
  };
}

/** Overnight scores are identified by their sleep session: one score per night. */
export function overnightId(sleepId: string): string {
  return `ovn_${sleepId.replace(/^sleep_/, '')}`;
}

export function overnightResource(o: OvernightScore): Record<string, unknown> {
  return {
    object: 'digestion.overnight_score',
    id: overnightId(o.sleepId),
    sleep_session_id: o.sleepId,
    date: o.date,
    score: o.score,
    score_state: o.scoreState,
    level: o.level,
    sleep: { start: isoUtc(o.sleep.start), end: isoUtc(o.sleep.end), duration_min: o.sleep.durationMin },
    last_meal_at: o.lastMealAt === null ? null : isoUtc(o.lastMealAt),
    features: Object.fromEntries(
      Object.entries(o.features).map(([name, f]) => [name, { value: f.value, contribution: f.contribution, score: f.score }]),
    ),
    baseline: { score: o.baseline.score, days: o.baseline.days },
    deviation: o.deviation,
    confidence: o.confidence,
  };
}

export function windowsResource(w: DigestionWindows): Record<string, unknown> {
  return {
    object: 'digestion.windows',
    sleep_ready_at: isoUtc(w.sleepReadyAt),
    fasted_at: isoUtc(w.fastedAt),
    next_meal_suggestions: w.nextMealSuggestions.map((s) => ({ kind: s.kind, at: isoUtc(s.at), reason: s.reason })),
    calculated_at: isoUtc(w.calculatedAt),
  };
}

export function insightResource(i: Insight): Record<string, unknown> {
  return {
    object: 'digestion.insight',
    id: i.id,
    date: i.date,
    kind: i.kind,
    severity: i.severity,
    title: i.title,
    detail: i.detail,
    basis: i.basis,
  };
}
