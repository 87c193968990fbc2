/**
 * Every number the digestion engine uses, in one place.
 *
 * Each constant names its source — a row of /work/shared/MODEL.md ("Measured figures" or "Scores —
 * product anchors") — or says plainly that it is an ASSUMPTION: a product decision or an
 * extrapolation that no measurement pins down. Changing an ASSUMPTION is a product decision;
 * changing a sourced figure needs a better source.
 */

import type { MealType } from './types.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

// ---------------------------------------------------------------------------------------------
// Energy of a meal
// ---------------------------------------------------------------------------------------------

/** MODEL.md "A starting model": intake under 15 kcal (water, black coffee) is not a meal for digestion. */
export const MIN_DIGESTIVE_KCAL = 15;

/** Atwater factors, as MODEL.md writes energy: E = 4·protein + 4·carbs + 9·fat when calories are absent. */
export const KCAL_PER_G_PROTEIN = 4;
export const KCAL_PER_G_CARBS = 4;
export const KCAL_PER_G_FAT = 9;

/**
 * ASSUMPTION. Energy assumed for a meal logged with no calories, no macros and no food calories
 * (e.g. just "lunch"): roughly typical adult portions. Without it such a meal would silently vanish
 * from digestion; with it the meal digests like an ordinary one, at a much lower confidence
 * (ASSUMED_ENERGY_CONFIDENCE_FACTOR).
 */
export const ASSUMED_MEAL_KCAL: Readonly<Record<MealType, number>> = {
  breakfast: 400,
  lunch: 600,
  dinner: 700,
  snack: 200,
};

// ---------------------------------------------------------------------------------------------
// Emptying rate — Hunt, Smith & Jiang, Gastroenterology 1985;89:1326
// ---------------------------------------------------------------------------------------------

/** About 2.5 kcal/min leave the stomach on average (Hunt 1985), taken at a 400 kcal reference meal. */
export const EMPTYING_RATE_BASE_KCAL_PER_MIN = 2.5;
export const EMPTYING_RATE_REFERENCE_KCAL = 400;
/** +0.7 kcal/min each time the load doubles (Hunt 1985). */
export const EMPTYING_RATE_PER_DOUBLING = 0.7;
/** Clamp of R, MODEL.md starting model: R = clamp(2.5 + 0.7·log2(E/400), 1.0, 4.5). */
export const EMPTYING_RATE_MIN_KCAL_PER_MIN = 1.0;
export const EMPTYING_RATE_MAX_KCAL_PER_MIN = 4.5;

// ---------------------------------------------------------------------------------------------
// Shape of the emptying curve: y(t) = 2^(−(t/T50)^β) — Elashoff 1982 (power exponential)
// ---------------------------------------------------------------------------------------------

/** Solid lag = min(15 + 0.03·E, 60) min: spans Siegel (Gut 1988) lags of 31 ± 8 (egg) to 62 ± 16 min (liver). */
export const SOLID_LAG_BASE_MIN = 15;
export const SOLID_LAG_PER_KCAL_MIN = 0.03;
export const SOLID_LAG_MAX_MIN = 60;

/** β for solid or mixed meals: fitted to the healthy retention curve, Dig Dis Sci 2022 (β ≈ 1.6). */
export const SOLID_BETA = 1.6;
/** β for mostly liquid meals: MODEL.md starting model (no lag shoulder to speak of). */
export const LIQUID_BETA = 1.2;

/**
 * Half-emptying of a 300 g liquid is 24 ± 8 min against 58 ± 17 min for the same solid (Dig Dis Sci
 * 1986;31:799), so a liquid's emptying term is 24/58 of a solid's.
 *
 * This is a CALIBRATION of MODEL.md's starting model, which has no such factor: without it a 330 kcal
 * drink settles at ~245 min, twice the measured 123 ± 19 min (Schonfeld 1997). With it the same drink
 * settles at ~131 min (+6 %) and nothing changes for solids.
 */
export const LIQUID_HALF_TIME_RATIO = 24 / 58;

/**
 * ASSUMPTION. A meal is "mostly liquid" when at least this share of its food calories comes from drinks
 * (or, with no food calories, when every item of the description is a drink). Mixed meals stay on the
 * solid curve, which is the slower, conservative choice.
 */
export const MOSTLY_LIQUID_KCAL_SHARE = 0.75;

// ---------------------------------------------------------------------------------------------
// Composition factors (multiply the emptying term E/(2R))
// ---------------------------------------------------------------------------------------------

/**
 * Fat: 1 + 0.6·max(0, fat share − 0.30), at most 1.4. A fried version of the same meal took 40 % longer
 * to empty (Dig Dis Sci, doi 10.1007/BF02087640). Hunt & Stubbs (J Physiol 1975) found equal calories of
 * each macronutrient slow emptying about equally, so most of frying's effect comes through its extra
 * calories; this factor adds the rest (a 400 kcal meal fried to 550 kcal: model +31 %).
 */
export const FAT_SHARE_THRESHOLD = 0.3;
export const FAT_FACTOR_SLOPE = 0.6;
export const FAT_FACTOR_MAX = 1.4;

/** Protein: 1 + 0.4·max(0, protein share − 0.25). MODEL.md starting model (no cap given: at most 1.3). */
export const PROTEIN_SHARE_THRESHOLD = 0.25;
export const PROTEIN_FACTOR_SLOPE = 0.4;

/**
 * Fibre: 1 + 0.03·fibre_g, at most 1.35. The cap is Schonfeld (Dig Dis Sci 1997): 5 g guar lengthened the
 * fed pattern from 310 to 419 min (×1.35). Guar is a purified viscous fibre, far stronger per gram than
 * the mostly insoluble fibre of ordinary food, so the per-gram slope is MODEL.md's smaller one
 * (ASSUMPTION): 5 g of food fibre lengthens a 530 kcal meal's settling from 317 to 347 min, not to 419.
 */
export const FIBRE_FACTOR_PER_G = 0.03;
export const FIBRE_FACTOR_MAX = 1.35;

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

/** fed_end = T50: half the meal has left the stomach (MODEL.md "Phases"). */
export const FED_END_FRACTION_LEFT = 0.5;
/** processing_end = T(0.10): the stomach is ≥ 90 % empty of the meal (MODEL.md "Phases"). */
export const PROCESSING_END_FRACTION_LEFT = 0.1;
/** sleep_ready_at uses the time the stomach is 75 % empty (MODEL.md "Scores — product anchors"). */
export const SLEEP_READY_FRACTION_LEFT = 0.25;
/**
 * Settling lasts 50 min after processing ends: about half a fasting MMC cycle (MODEL.md "Phases"). With
 * it the model reproduces the return of MMC phase III (Schonfeld 1997): 530 kcal solid → 317 min
 * (measured 310 ± 92), 330 kcal drink → 131 min (measured 123 ± 19).
 */
export const SETTLING_MIN = 50;

/**
 * ASSUMPTION. Longest time, on the meal's own clock, from eating to processing end (≥ 90 % emptied).
 * T50 is clamped so that T(0.10) never exceeds it. The measurements stop at ~530 kcal; the model's
 * linear extrapolation would give a 10 000 kcal meal more than three days. 11 h leaves every ordinary
 * meal unclamped (a plain 1 500 kcal meal reaches 90 % in ~9 h), clamps only feasts that are also very
 * fatty or fibrous, and bounds the look-back below.
 */
export const MAX_OWN_PROCESSING_MIN = 660;

// ---------------------------------------------------------------------------------------------
// Overlapping meals share one stomach
// ---------------------------------------------------------------------------------------------

/**
 * Delivery grows sub-linearly with load: doubling the load raises 2.5 to 3.2 kcal/min (Hunt 1985), i.e.
 * delivery ∝ load^α with α = log2(3.2/2.5) ≈ 0.356. A meal that is a share p of what is in the stomach
 * therefore gets p·R(load) of the delivery where alone it would get R(its own load): its own emptying
 * clock runs at speed (E/(E+others))^(1−α). One meal alone runs at exactly 1 (so the single-meal
 * calibrations hold), and two equal meals eaten together take about as long as one meal of double size.
 */
export const SHARED_DELIVERY_EXPONENT = Math.log2(
  (EMPTYING_RATE_BASE_KCAL_PER_MIN + EMPTYING_RATE_PER_DOUBLING) / EMPTYING_RATE_BASE_KCAL_PER_MIN,
);

/**
 * ASSUMPTION. Sharing never slows a meal's own clock below half speed. Without a floor a small snack eaten
 * on top of a large meal would stall almost indefinitely; physically it is mixed into the same chyme and
 * leaves with it. The floor also bounds the look-back below.
 */
export const MIN_SHARED_EMPTYING_SPEED = 0.5;

/** Integration step of the shared-stomach simulation (minutes). One meal alone is integrated exactly. */
export const SIMULATION_STEP_MIN = 1;

/**
 * How far back the digestive state must look. The longest any meal can stay in processing is
 * MAX_OWN_PROCESSING_MIN / MIN_SHARED_EMPTYING_SPEED = 22 h of real time; settling adds 50 min, so a
 * meal eaten more than 22 h 50 min ago has finished digesting and cannot change the state, fasted_at
 * or active meals at `now`. 24 h covers that with an hour to spare and is one look-up of "the last day
 * of meals". (Only `since` of a digestion that has run without a break for more than a day is clipped
 * to the first meal inside the window.)
 */
export const MAX_DIGESTION_LOOKBACK_MS = 24 * HOUR_MS;

/**
 * How far a meal of a day can lie outside that day's bounds in the user's zone. A meal's day is the
 * date on the clock where it was eaten (its own UTC offset, which a later change of zone does not
 * move); offsets run from −12:00 to +14:00, so that clock can be up to 26 h from the zone's.
 */
export const MEAL_DAY_SPREAD_MS = 26 * HOUR_MS;

// ---------------------------------------------------------------------------------------------
// Confidence (0–1)
// ---------------------------------------------------------------------------------------------

/** Never above 0.8: T50 varies ~20 % within and ~40 % between people (PMC6160344). */
export const MAX_CONFIDENCE = 0.8;
/** ASSUMPTION: multipliers for what is missing or modelled rather than measured. */
export const ENERGY_FROM_MACROS_CONFIDENCE_FACTOR = 0.95;
export const ENERGY_FROM_FOODS_CONFIDENCE_FACTOR = 0.9;
export const ASSUMED_ENERGY_CONFIDENCE_FACTOR = 0.5;
export const PARTIAL_MACROS_CONFIDENCE_FACTOR = 0.9;
export const MISSING_MACROS_CONFIDENCE_FACTOR = 0.8;
export const MISSING_FIBRE_CONFIDENCE_FACTOR = 0.95;
/**
 * ASSUMPTION: a meal whose time of day is a default (08:00, 12:30, 15:30, 19:00; imported from a
 * source with dates only) may be hours off, and timing drives every phase: weigh it down like a
 * meal without macros. Its energy and macros are still counted in full.
 */
export const INFERRED_TIME_CONFIDENCE_FACTOR = 0.8;
/** Overlapping meals: the sharing rule is a model, not a measurement. */
export const OVERLAP_CONFIDENCE_FACTOR = 0.85;
/** Calibrating users (fewer than CALIBRATION_MIN_DAYS days of data). */
export const CALIBRATION_CONFIDENCE_FACTOR = 0.75;
/** A daily score whose overnight component is estimated from the usual bedtime, not a logged night. */
export const ESTIMATED_OVERNIGHT_CONFIDENCE_FACTOR = 0.85;
/** A daily score whose overnight fast is unknown (nothing logged the day before). */
export const UNKNOWN_FAST_CONFIDENCE_FACTOR = 0.9;
/** An overnight score without efficiency or awakenings. */
export const MISSING_SLEEP_DETAIL_CONFIDENCE_FACTOR = 0.95;
/** An overnight score with fewer than 2 earlier nights to compare with. */
export const NO_BASELINE_CONFIDENCE_FACTOR = 0.85;
/**
 * ASSUMPTION: after fasted_at, the state "fasted" is uncertain only within the person-to-person spread
 * of the last digestion's length (~40 %, PMC6160344); beyond it, fasted is as sure as the model gets.
 */
export const FASTED_UNCERTAINTY_SHARE = 0.4;

// ---------------------------------------------------------------------------------------------
// Scores — levels and contributions (MODEL.md "Scores — product anchors", after Oura)
// ---------------------------------------------------------------------------------------------

export const LEVEL_OPTIMAL_MIN = 85;
export const LEVEL_GOOD_MIN = 70;
export const LEVEL_FAIR_MIN = 60;
export const CONTRIBUTION_POSITIVE_MIN = 85;
export const CONTRIBUTION_NEUTRAL_MIN = 60;

/** The spec: calibrating is true with less than 2 days of data. */
export const CALIBRATION_MIN_DAYS = 2;

/**
 * ASSUMPTION (product decision): weights of the daily gut score's components, ordered by the strength
 * of the evidence behind each. Eating close to bed carries the largest effect sizes (reflux OR 7.45,
 * Fujiwara 2005; night waking OR 1.61, Chung 2020); the overnight fast (Marinac 2016) and late eating
 * (Gill & Panda 2015; Allison 2021) come next; regular timing (Pot 2016; St-Onge 2017) is the most
 * observational. They sum to 1.
 */
export const DAILY_WEIGHTS = {
  overnight: 0.3,
  fastedRatio: 0.25,
  circadian: 0.25,
  regularity: 0.2,
} as const;

/** A piecewise-linear map from a measure to a 0–100 value: [measure, value] anchors, ascending measure. */
export type Anchors = ReadonlyArray<readonly [number, number]>;

/**
 * Overnight fast (hours) → value. ≥ 13 h is positive (Marinac, JAMA Oncol 2016: < 13 h HR 1.36), so 13 h
 * maps to 85. ASSUMPTION: 16 h reaches 100; 11 h (a common fast) is the edge of neutral (60); 7 h is 0.
 */
export const OVERNIGHT_FAST_ANCHORS_H: Anchors = [
  [7, 0],
  [11, 60],
  [13, 85],
  [16, 100],
];

/**
 * Eating span (hours, first to last meal of the day) → value. ≤ 12 h positive, 12–14 neutral, > 14
 * attention (MODEL.md anchors; Gill & Panda, Cell Metab 2015: half of people eat over > 14.75 h, and
 * 10–11 h improved sleep, hence 10 h → 100). ASSUMPTION: 18 h → 0.
 */
export const EATING_SPAN_ANCHORS_H: Anchors = [
  [10, 100],
  [12, 85],
  [14, 60],
  [18, 0],
];

/** fasted_ratio = mean of the two sub-values above (ASSUMPTION: both bases weigh the same). */
export const FASTED_RATIO_FAST_WEIGHT = 0.5;

/**
 * SD of the eating-window midpoint (minutes) → regularity value: ≤ 60 positive, > 120 attention
 * (MODEL.md anchors; Pot 2016; St-Onge 2017). ASSUMPTION: ≤ 30 min → 100, 240 min → 0.
 */
export const REGULARITY_SD_ANCHORS_MIN: Anchors = [
  [30, 100],
  [60, 85],
  [120, 60],
  [240, 0],
];
/** Days before the scored day whose midpoints enter the SD (MODEL.md: prior 14 days). */
export const REGULARITY_WINDOW_DAYS = 14;

/**
 * Share of the day's calories eaten late (after 20:00, within 3 h of sleep, or in the night before the
 * day: McHill, Am J Clin Nutr 2017 — food in one's biological night) → circadian value: ≤ 10 %
 * positive, > 25 % attention (MODEL.md anchors; Allison, Curr Biol 2021: eating 08–19 h beats 12–23 h).
 * ASSUMPTION: 0 % → 100, 60 % → 0.
 */
export const LATE_SHARE_ANCHORS: Anchors = [
  [0, 100],
  [0.1, 85],
  [0.25, 60],
  [0.6, 0],
];
/** "After 20:00" (MODEL.md anchors; Allison 2021's daytime window ends at 19:00). Local clock, minutes. */
export const LATE_EVENING_CLOCK_MIN = 20 * 60;

// ---------------------------------------------------------------------------------------------
// Sleep and the overnight score
// ---------------------------------------------------------------------------------------------

/**
 * Eating within 3 h of bed: reflux OR 7.45 for < 3 h vs ≥ 4 h (Fujiwara, Am J Gastroenterol 2005) and
 * night waking OR 1.61 (Chung, IJERPH 2020). Used for the meal-to-sleep gap, late calories, the latest
 * dinner suggestion and sleep_ready_at (last meal + 180 min, MODEL.md).
 */
export const PRE_SLEEP_WINDOW_MIN = 180;
/** The reference group of Fujiwara 2005: ≥ 4 h between dinner and bed. */
export const FULL_GAP_MIN = 240;

/** ASSUMPTION: bedtime when no sleep has been logged (MODEL.md / CONTRACT: "else 23:00"). */
export const DEFAULT_BEDTIME_MIN = 23 * 60;
/**
 * ASSUMPTION: the length of a night when none has been logged, so the default night is 23:00 → 07:00
 * (the sleep form's default). 8 h is inside the 7–9 h recommended for adults (Watson et al., Sleep
 * 2015: 7 h or more; Hirshkowitz et al., Sleep Health 2015;1:40: 7–9 h) and earns the duration
 * feature's full marks.
 */
export const DEFAULT_NIGHT_MIN = 8 * 60;
/**
 * ASSUMPTION: a meal in the last hour before the wake time (a logged night's end, or the usual wake
 * time) is an early breakfast rather than eating in the night, so a night's late-eating span ends 1 h
 * before it. Wake times are logged roughly (the sleep form offers 07:00) and vary from day to day,
 * and a meal just before getting up is not followed by lying down, which is what the reflux and
 * night-waking figures are about.
 */
export const EARLY_WAKE_ALLOWANCE_MIN = 60;
/** Nights whose start (and end) times teach the usual bedtime (and wake time): circular mean of the local clock. */
export const BEDTIME_LEARNING_DAYS = 14;
/**
 * ASSUMPTION: below this resultant length the sleep start times are too scattered for their circular
 * mean to mean anything (e.g. half at 22:00, half at 10:00), and the default bedtime is used.
 */
export const MIN_BEDTIME_RESULTANT = 0.2;

/**
 * ASSUMPTION: a sleep session shorter than 3 h is a nap, not a night. It gets an UNSCORABLE overnight
 * score, does not teach the bedtime and does not enter baselines.
 */
export const MIN_NIGHT_SLEEP_MIN = 180;

/** Looking for the last meal before sleep: at most a day back. A longer gap is reported as 1 440 min. */
export const LAST_MEAL_SEARCH_MIN = 24 * 60;

/**
 * Caffeine window: 6 h before sleep. Not in MODEL.md (caffeine does not change gastric emptying, Boekema
 * 1999); the sleep effect is from Drake et al., J Clin Sleep Med 2013;9:1195 — 400 mg 6 h before bed
 * still cut sleep by over an hour.
 */
export const CAFFEINE_WINDOW_MIN = 360;

/**
 * Gap from the last meal to sleep (minutes) → feature value. ≥ 3 h good, < 3 h attention (MODEL.md,
 * Fujiwara 2005), hence the step at 180 from just under 60 (attention) to 85 (positive); ≥ 4 h (the
 * reference group) → 100. Below 3 h the value falls linearly to 0 at no gap.
 */
export const MEAL_GAP_BELOW_THRESHOLD_MAX_VALUE = 55;
export const MEAL_GAP_AT_THRESHOLD_VALUE = 85;

/** ASSUMPTION: kcal eaten in the 3 h before sleep → value (a small snack ≤ 100 kcal stays positive). */
export const LATE_KCAL_ANCHORS: Anchors = [
  [0, 100],
  [100, 85],
  [300, 60],
  [800, 0],
];
/** ASSUMPTION: caffeine (mg) in the 6 h before sleep → value (one espresso ≈ 60 mg stays near positive). */
export const LATE_CAFFEINE_ANCHORS_MG: Anchors = [
  [0, 100],
  [50, 85],
  [100, 60],
  [400, 0],
];
/**
 * Sleep duration (minutes) → value. 7 h or more is what adults need (AASM/SRS consensus, Watson et al.,
 * Sleep 2015; not in MODEL.md), so 7 h is the edge of positive (85). ASSUMPTION: the rest of the shape
 * (8 h → 100, under 6 h needs attention, 3 h → 0).
 */
export const SLEEP_DURATION_ANCHORS_MIN: Anchors = [
  [180, 0],
  [360, 60],
  [420, 85],
  [480, 100],
];
/** ASSUMPTION: sleep efficiency (0–1) → value; 85 % is the usual clinical cut-off. */
export const SLEEP_EFFICIENCY_ANCHORS: Anchors = [
  [0.5, 0],
  [0.75, 60],
  [0.85, 85],
  [0.95, 100],
];
/** ASSUMPTION: awakenings → value. */
export const AWAKENINGS_ANCHORS: Anchors = [
  [1, 100],
  [2, 85],
  [4, 60],
  [8, 0],
];

/**
 * ASSUMPTION (product decision): weights of the overnight features. It is a gut analysis of the night, so
 * the meal features carry most of it; features that were not logged (efficiency, awakenings) drop out
 * and the rest are renormalised.
 */
export const OVERNIGHT_WEIGHTS = {
  last_meal_gap_min: 0.35,
  late_calories: 0.2,
  late_caffeine_mg: 0.1,
  sleep_duration_min: 0.15,
  sleep_efficiency: 0.1,
  awakenings: 0.1,
} as const;

/** MODEL.md: baseline = weighted mean of the last 14 nights. */
export const BASELINE_NIGHTS = 14;
/** ASSUMPTION: weights halve every 7 nights back (last night 1, a week ago 0.5, two weeks ago 0.25). */
export const BASELINE_HALF_LIFE_NIGHTS = 7;

// ---------------------------------------------------------------------------------------------
// Windows
// ---------------------------------------------------------------------------------------------

/** Keeping the eating span within 12 h keeps fasted_ratio's span positive (EATING_SPAN_ANCHORS_H). */
export const EATING_WINDOW_TARGET_MIN = 12 * 60;
/** An overnight fast of ≥ 13 h (Marinac 2016) — the earliest first meal after an evening meal. */
export const OVERNIGHT_FAST_TARGET_MIN = 13 * 60;
/**
 * ASSUMPTION: a meal from 17:00 (local, within the user's day) on may be the last of the day, so the
 * earliest first meal for a 13 h fast is suggested after it — not after lunch.
 */
export const EVENING_MEAL_CLOCK_MIN = 17 * 60;

// ---------------------------------------------------------------------------------------------
// Insights (ASSUMPTIONS: how much evidence an insight needs)
// ---------------------------------------------------------------------------------------------

/** A warning needs at least this many qualifying days/nights… */
export const INSIGHT_MIN_OCCURRENCES = 3;
/** …making up at least this share of the days/nights with data. */
export const INSIGHT_MIN_SHARE = 0.4;
/** A positive insight ("kept it up") needs at least this many days/nights, all qualifying. */
export const INSIGHT_POSITIVE_MIN_DAYS = 5;
/** Regularity insights need midpoints from this many days (warning) / (positive). */
export const INSIGHT_REGULARITY_MIN_DAYS = 5;
export const INSIGHT_REGULARITY_POSITIVE_MIN_DAYS = 7;
/** Caffeine counts as "late" for the caffeine insight from this much in the 6 h before sleep (mg). */
export const INSIGHT_LATE_CAFFEINE_MG = 50;
/** Nights needed in each group (with / without late caffeine) to compare sleep. */
export const INSIGHT_CAFFEINE_MIN_NIGHTS_EACH = 2;
/** Differences in sleep that count as worse on late-caffeine nights. */
export const INSIGHT_CAFFEINE_EFFICIENCY_DROP = 0.05;
export const INSIGHT_CAFFEINE_DURATION_DROP_MIN = 30;
export const INSIGHT_CAFFEINE_AWAKENINGS_RISE = 1;

// ---------------------------------------------------------------------------------------------
// Cited figures quoted in explanations (reasons and insight details)
// ---------------------------------------------------------------------------------------------

/** Reflux odds ratio, bed < 3 h vs ≥ 4 h after dinner (Fujiwara, Am J Gastroenterol 2005). */
export const REFLUX_ODDS_RATIO = 7.45;
/** Night-waking odds ratio for eating within 3 h of bed (Chung, IJERPH 2020). */
export const NIGHT_WAKING_ODDS_RATIO = 1.61;
/** Hazard ratio for an overnight fast < 13 h (Marinac, JAMA Oncol 2016). */
export const SHORT_FAST_HAZARD_RATIO = 1.36;
/** Half of people eat over more than this many hours a day; 10–11 h improved sleep (Gill & Panda 2015). */
export const MEDIAN_EATING_SPAN_H = 14.75;
export const IMPROVED_EATING_SPAN_H = '10–11';
/** Daytime vs late eating windows compared by Allison, Curr Biol 2021. */
export const DAYTIME_EATING_WINDOW = '08–19 h';
export const LATE_EATING_WINDOW = '12–23 h';

export const MS_PER_MINUTE = MINUTE_MS;
export const MS_PER_DAY = 24 * HOUR_MS;
