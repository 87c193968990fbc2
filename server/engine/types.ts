/**
 * Inputs and outputs of the digestion engine.
 *
 * Instants are UTC epoch milliseconds; days are YYYY-MM-DD in the user's zone and day start. Outputs
 * are plain camelCase objects: the API layer maps them to the resource field names and ISO strings.
 */

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

export type MealType = 'breakfast' | 'lunch' | 'dinner' | 'snack';

export interface EngineFood {
  name: string;
  calories: number;
}

export interface EngineMeal {
  id: string;
  /** UTC epoch ms */
  timestamp: number;
  mealType: MealType;
  description: string;
  calories: number | null;
  proteinG: number | null;
  carbsG: number | null;
  fatG: number | null;
  fiberG: number | null;
  sodiumMg: number | null;
  caffeineMg: number | null;
  foods: EngineFood[];
  /**
   * Offset from UTC (minutes) where the meal was eaten. When given, it decides the meal's day and
   * local clock time (so a meal eaten while travelling keeps its day); otherwise the settings'
   * zone does. Digestion itself always runs on the instant.
   */
  utcOffsetMin?: number | null;
  /** True when the time is a default meal time (an import from a source without times of day). */
  inferredTime?: boolean;
}

export interface EngineSleep {
  id: string;
  start: number;
  end: number;
  /** 0–1 */
  efficiency: number | null;
  awakenings: number | null;
  /** A nap never makes an overnight score, whatever its length. */
  nap?: boolean;
}

export interface EngineSettings {
  /** IANA zone */
  timezone: string;
  /** "HH:MM" */
  dayStart: string;
}

// ---------------------------------------------------------------------------------------------
// Shared vocabulary
// ---------------------------------------------------------------------------------------------

export type DigestiveStateName = 'fasted' | 'processing' | 'settling';
export type ScoreState = 'SCORED' | 'PENDING' | 'UNSCORABLE';
export type Level = 'optimal' | 'good' | 'fair' | 'pay_attention';
export type Contribution = 'positive' | 'neutral' | 'attention';

/** The numbers that produced a derived value, for explanations and audits. */
export type Basis = Record<string, number | string | boolean | null>;

// ---------------------------------------------------------------------------------------------
// Per-meal phases (timeline entry)
// ---------------------------------------------------------------------------------------------

export interface MealPhases {
  mealId: string;
  /** = the meal's timestamp */
  mealTime: number;
  mealType: MealType;
  /** Minutes after the meal; integers with 0 < fedEndMin < processingEndMin < settlingEndMin. */
  fedEndMin: number;
  processingEndMin: number;
  settlingEndMin: number;
  /** = settlingEndMin */
  totalProcessingMin: number;
  /** 0–0.8 */
  confidence: number;
  /** Energy the engine digested (logged, from macros or foods, or assumed — see energySource). */
  kcal: number;
  energySource: EnergySource;
  form: MealForm;
  /** How many digestive meals share this meal's stomach episode (1 = it digested alone). */
  episodeMeals: number;
}

export type MealForm = 'solid' | 'liquid';
export type EnergySource = 'logged' | 'macros' | 'foods' | 'assumed' | 'zero_calorie_drink';

// ---------------------------------------------------------------------------------------------
// Digestive state
// ---------------------------------------------------------------------------------------------

export interface DigestiveState {
  state: DigestiveStateName;
  /** Whole minutes to the next change of state (rounded up); 0 when fasted. */
  minutesRemaining: number;
  /** When the current state began. */
  since: number;
  /** When fasting began (state fasted) or will begin if nothing more is eaten. */
  fastedAt: number;
  /** Digestive meals whose digestion (processing or settling) is still running at now. */
  activeMeals: number;
  /** 0–0.8 */
  confidence: number;
  /** When the state will next change by itself (null when fasted). */
  nextChangeAt: number | null;
}

// ---------------------------------------------------------------------------------------------
// Scores
// ---------------------------------------------------------------------------------------------

export interface ComponentValue {
  /** 0–100 */
  value: number;
  contribution: Contribution;
}

export interface DailyScore {
  date: string;
  /** Integer 0–100; null when UNSCORABLE or for a day that has not started. */
  score: number | null;
  scoreState: ScoreState;
  level: Level | null;
  components: {
    overnight: ComponentValue;
    fastedRatio: ComponentValue;
    regularity: ComponentValue;
    circadian: ComponentValue;
  };
  calibrating: boolean;
  /** 0–0.8 */
  confidence: number;
  /** 'sleep': the overnight score of the night that ended on this day; 'estimated': from the usual bedtime. */
  overnightSource: 'sleep' | 'estimated';
  basis: Basis;
}

export interface OvernightFeature {
  /** The measure itself (minutes, kcal, mg, 0–1 efficiency, count). */
  value: number;
  contribution: Contribution;
  /** The measure mapped to 0–100. */
  score: number;
}

export interface OvernightScore {
  sleepId: string;
  /** The user's day the sleep ended on. */
  date: string;
  score: number | null;
  scoreState: ScoreState;
  level: Level | null;
  sleep: { start: number; end: number; durationMin: number };
  /** Last digestive meal from 24 h before the sleep started until an hour before it ended (inside it: gap 0). */
  lastMealAt: number | null;
  /** Digestive meals inside the sleep before its last hour: eating in the night, or sleep times that are off. */
  mealsDuringSleep: number;
  features: Record<string, OvernightFeature>;
  baseline: { score: number | null; days: number };
  deviation: number | null;
  confidence: number;
}

// ---------------------------------------------------------------------------------------------
// Windows and insights
// ---------------------------------------------------------------------------------------------

export type MealSuggestionKind = 'latest_dinner' | 'eating_window_close' | 'earliest_first_meal';

export interface MealSuggestion {
  kind: MealSuggestionKind;
  at: number;
  reason: string;
  basis: Basis;
}

/** The coming night, from the moment the person is up until the usual bedtime. */
export interface TonightWindow {
  /** When the person got up: a logged night's end, else the usual wake time. */
  wokeAt: number;
  wokeSource: 'sleep' | 'learned' | 'default';
  /** The usual bedtime of the coming night. */
  bedtimeAt: number;
  bedtimeClock: string;
  bedtimeSource: 'learned' | 'default';
  /** Nights the bedtime was learned from. */
  nights: number;
  /** The latest time to finish eating for that bedtime: bedtimeAt − 3 h. */
  finishEatingBy: number;
  /** sleepReadyAt once something has been eaten since wokeAt; null before. */
  sleepReadyAt: number | null;
}

export interface DigestionWindows {
  /** The later of last meal + 180 min and the time the stomach is 75 % empty; now with no recent meal. */
  sleepReadyAt: number;
  fastedAt: number;
  nextMealSuggestions: MealSuggestion[];
  /** Null during the usual night, before the person is known to be up. */
  tonight: TonightWindow | null;
  calculatedAt: number;
}

export type InsightSeverity = 'info' | 'positive' | 'warning';

export interface Insight {
  /** Deterministic: the same kind on the same date always has the same id. */
  id: string;
  date: string;
  kind: string;
  severity: InsightSeverity;
  title: string;
  detail: string;
  basis: Basis;
}

export interface StomachLoadPoint {
  at: number;
  kcal: number;
}
