import { z } from 'zod';
import type {
  ComponentValue,
  DailyScore,
  DigestionWindows,
  DigestiveState,
  Insight,
  MealPhases,
  OvernightScore,
} from '../engine/types.js';
import { isoDateTime } from '../fields.js';
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

/**
 * Engine results served from the derived-data cache are the same (never mutated) objects request
 * after request: their resources are mapped once and kept beside them, dying with them.
 */
function mappedOnce<T extends object>(map: (value: T) => Record<string, unknown>): (value: T) => Record<string, unknown> {
  const resources = new WeakMap<T, Record<string, unknown>>();
  return (value) => {
    let resource = resources.get(value);
    if (!resource) resources.set(value, (resource = map(value)));
    return resource;
  };
}

export const timelineResource = mappedOnce((p: MealPhases): Record<string, unknown> => {
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
});

function component(c: ComponentValue): Record<string, unknown> {
  return { value: c.value, contribution: c.contribution };
}

export const dailyScoreResource = mappedOnce((s: DailyScore): Record<string, unknown> => {
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
});

/** Overnight scores are identified by their sleep session: one score per night. */
export function overnightId(sleepId: string): string {
  return `ovn_${sleepId.replace(/^sleep_/, '')}`;
}

export const overnightResource = mappedOnce((o: OvernightScore): Record<string, unknown> => {
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
    meals_during_sleep: o.mealsDuringSleep,
    features: Object.fromEntries(
      Object.entries(o.features).map(([name, f]) => [name, { value: f.value, contribution: f.contribution, score: f.score }]),
    ),
    baseline: { score: o.baseline.score, days: o.baseline.days },
    deviation: o.deviation,
    confidence: o.confidence,
  };
});

export function windowsResource(w: DigestionWindows): Record<string, unknown> {
  return {
    object: 'digestion.windows',
    sleep_ready_at: isoUtc(w.sleepReadyAt),
    fasted_at: isoUtc(w.fastedAt),
    next_meal_suggestions: w.nextMealSuggestions.map((s) => ({ kind: s.kind, at: isoUtc(s.at), reason: s.reason })),
    tonight:
      w.tonight === null
        ? null
        : {
            woke_at: isoUtc(w.tonight.wokeAt),
            woke_source: w.tonight.wokeSource,
            bedtime_at: isoUtc(w.tonight.bedtimeAt),
            bedtime_source: w.tonight.bedtimeSource,
            finish_eating_by: isoUtc(w.tonight.finishEatingBy),
            sleep_ready_at: w.tonight.sleepReadyAt === null ? null : isoUtc(w.tonight.sleepReadyAt),
          },
    calculated_at: isoUtc(w.calculatedAt),
  };
}

export const insightResource = mappedOnce((i: Insight): Record<string, unknown> => {
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
});

// ---- The resources' schemas (they document the endpoints, webhooks and the snapshot) ----------

const contribution = z.enum(['positive', 'neutral', 'attention']);
const componentSchema = z.object({ value: z.number(), contribution });
const levelSchema = z.enum(['optimal', 'good', 'fair', 'pay_attention']).nullable();
const scoreState = z.enum(['SCORED', 'PENDING', 'UNSCORABLE']);

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
export const DigestiveStateSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('digestion.state'),
      state: z.enum(['fasted', 'processing', 'settling']),
      minutes_remaining: z.number().int().meta({ description: 'Minutes to the next change of state; 0 when fasted.' }),
      confidence: z.number(),
      active_meals: z.number().int(),
      since: isoDateTime,
      fasted_at: isoDateTime.meta({ description: 'When fasting began (fasted) or will begin if nothing more is eaten.' }),
      next_change_at: isoDateTime.nullable(),
      calculated_at: isoDateTime,
    })
    .meta({ id: 'DigestiveState' }),
);

export const TimelineEntrySchema = z.lazy(() =>
  z
    .object({
      object: z.literal('digestion.timeline'),
      meal_id: z.string(),
      meal_time: isoDateTime,
      meal_type: z.enum(['breakfast', 'lunch', 'dinner', 'snack']),
      total_processing_min: z.number().int(),
      phases: z.object({ fed_end_min: z.number().int(), processing_end_min: z.number().int(), settling_end_min: z.number().int() }),
      confidence: z.number(),
      kcal: z.number(),
      energy_source: z.enum(['logged', 'macros', 'foods', 'assumed', 'zero_calorie_drink']),
      form: z.enum(['solid', 'liquid']),
      shared_with_meals: z.number().int().meta({ description: 'Other meals that shared the stomach with this one.' }),
    })
    .meta({ id: 'TimelineEntry' }),
);

export const DailyScoreSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('digestion.score'),
      date: z.string().meta({ format: 'date' }),
      score: z.number().int().min(0).max(100).nullable(),
      score_state: scoreState,
      level: levelSchema,
      components: z.object({
        overnight: componentSchema.extend({ source: z.enum(['sleep', 'estimated']) }),
        fasted_ratio: componentSchema,
        regularity: componentSchema,
        circadian: componentSchema,
      }),
      calibrating: z.boolean(),
      confidence: z.number(),
    })
    .meta({ id: 'DailyScore' }),
);

export const OvernightScoreSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('digestion.overnight_score'),
      id: z.string(),
      sleep_session_id: z.string(),
      date: z.string().meta({ format: 'date' }),
      score: z.number().int().min(0).max(100).nullable(),
      score_state: scoreState,
      level: levelSchema,
      sleep: z.object({ start: isoDateTime, end: isoDateTime, duration_min: z.number().int() }),
      last_meal_at: isoDateTime
        .nullable()
        .meta({ description: 'The last meal (15 kcal or more) from a day before the sleep until an hour before it ended: a meal inside the sleep is a gap of 0; one in its last hour is breakfast.' }),
      meals_during_sleep: z
        .number()
        .int()
        .meta({ description: 'Meals logged inside the sleep before its last hour (eating in the night, or sleep times that are off); an insight `meal_during_sleep` tells the person.' }),
      features: z.record(z.string(), z.object({ value: z.number(), contribution, score: z.number() })),
      baseline: z.object({ score: z.number().nullable(), days: z.number().int() }),
      deviation: z.number().nullable(),
      confidence: z.number(),
    })
    .meta({ id: 'OvernightScore' }),
);

export const WindowsSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('digestion.windows'),
      sleep_ready_at: isoDateTime,
      fasted_at: isoDateTime,
      next_meal_suggestions: z.array(z.object({ kind: z.string(), at: isoDateTime, reason: z.string() })),
      tonight: z
        .object({
          woke_at: isoDateTime.meta({ description: 'When the person got up: the end of a logged night since the last usual bedtime, else the usual wake time.' }),
          woke_source: z.enum(['sleep', 'learned', 'default']),
          bedtime_at: isoDateTime.meta({ description: 'The usual bedtime of the coming night (learned from logged nights, else 23:00).' }),
          bedtime_source: z.enum(['learned', 'default']),
          finish_eating_by: isoDateTime.meta({ description: 'The latest time to finish eating for that bedtime: 3 h before it.' }),
          sleep_ready_at: isoDateTime
            .nullable()
            .meta({ description: 'When lying down is fine after what has been eaten since woke_at (as sleep_ready_at); null when nothing has been.' }),
        })
        .nullable()
        .meta({
          description:
            'The coming night, from the time the person is up until the usual bedtime; null during the usual night. sleep_ready_at stays what the stomach says, which in the morning is usually a time last night.',
        }),
      calculated_at: isoDateTime,
    })
    .meta({ id: 'Windows' }),
);

export const InsightSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('digestion.insight'),
      id: z.string(),
      date: z.string().meta({ format: 'date' }),
      kind: z.string(),
      severity: z.enum(['info', 'positive', 'warning']),
      title: z.string(),
      detail: z.string(),
      basis: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])),
    })
    .meta({ id: 'Insight' }),
);
