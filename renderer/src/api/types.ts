/**
 * Shapes of the `/v1` resources the renderer reads, as fixed by the service interface and
 * CONTRACT §3–8. Fields the contract leaves open are typed loosely (optional or unknown) and the
 * UI only shows them when present.
 */

export type MealType = 'breakfast' | 'lunch' | 'dinner' | 'snack';
export const MEAL_TYPES: readonly MealType[] = ['breakfast', 'lunch', 'dinner', 'snack'];

export type DigestiveStateName = 'fasted' | 'processing' | 'settling';
export type ScoreState = 'SCORED' | 'PENDING' | 'UNSCORABLE';
export type Contribution = 'positive' | 'neutral' | 'attention';
export type Level = 'optimal' | 'good' | 'fair' | 'pay_attention';

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/**
 * A food entry of a meal (or a saved meal) as stored and returned: `name` and `calories` always;
 * an entry built from the food table also names its food, amount and the nutrients computed from it.
 */
export interface Food {
  name: string;
  calories: number;
  food_id?: string;
  quantity?: number;
  /** "g", "ml" or the id of one of the food's portions. */
  unit?: string;
  grams?: number;
  protein_g?: number | null;
  carbs_g?: number | null;
  fat_g?: number | null;
  fiber_g?: number | null;
  sugars_g?: number | null;
  sodium_mg?: number | null;
  caffeine_mg?: number | null;
}

/**
 * A food entry as sent: a food of the table and an amount (the service computes its numbers), or an
 * entry with its calories, kept as sent: free text (name + calories) or a stored entry sent back
 * (re-log, copy, undo), which keeps the numbers it was logged with.
 */
export type FoodEntryInput = Food | { food_id: string; quantity: number; unit: string; name?: string };

export type NutrientKey = 'calories' | 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g' | 'sugars_g' | 'sodium_mg' | 'caffeine_mg';

/** Per 100 g; null = unknown (never a silent 0). */
export type FoodNutrients = Record<NutrientKey, number | null>;

export interface FoodPortion {
  id: string;
  label: string;
  grams: number;
}

/** A food of the table (`usda_sr`) or one of the person's own (`custom`). */
export interface NutritionFood {
  object: 'nutrition.food';
  id: string;
  name: string;
  brand: string | null;
  source: string;
  nutrients: FoodNutrients;
  portions: FoodPortion[];
  usage: { count: number; last_used_at: string | null };
  created_at: string | null;
  updated_at: string | null;
}

/** GET /v1/foods/sources: where the food table comes from, under what licence. */
export interface FoodSources {
  object: 'nutrition.food_sources';
  credit: string;
  licence: string;
  table_version: string | null;
  food_count: number;
  custom_food_count: number;
  sources: { id: string; release: string; obtained_from: string; licence: string; provides: string }[];
  /** Per nutrient: how many table foods take their value from each release, or have none. */
  values: Record<string, Record<string, number>>;
}

/** Body of POST /v1/foods (and PATCH /v1/foods/{id}, where null clears a brand or a nutrient). */
export interface FoodInput {
  name: string;
  brand?: string | null;
  nutrients?: Partial<FoodNutrients>;
  per_serving?: { grams: number; nutrients: Partial<FoodNutrients> };
  portions?: { label: string; grams: number }[];
}

export interface SavedMeal {
  object: 'nutrition.saved_meal';
  id: string;
  name: string;
  meal_type: MealType | null;
  foods: Food[];
  totals: { calories: number; protein_g: number | null; carbs_g: number | null; fat_g: number | null; fiber_g: number | null };
  created_at: string;
  updated_at: string;
}

/** Body of POST /v1/nutrition/saved_meals. */
export interface SavedMealInput {
  name: string;
  meal_type?: MealType | null;
  foods: FoodEntryInput[];
}

export interface Macros {
  calories: number;
  protein_g: number;
  carbs_g: number;
  fat_g: number;
  fiber_g?: number | null;
}

export interface Micros {
  sodium_mg: number;
  caffeine_mg: number | null;
}

export interface Meal {
  object: 'nutrition.meal';
  id: string;
  day: string;
  timestamp: string;
  meal_type: MealType;
  description: string;
  macros: Macros;
  micros: Micros;
  foods: Food[];
  /** Where macros.calories came from: typed in, the sum of the foods, or 4/4/9 kcal per gram. */
  calories_source?: 'logged' | 'foods' | 'macros';
  /** Per nutrient: typed in ("logged"), the sum of the foods ("foods"), or unknown (null). */
  nutrient_sources?: Partial<Record<'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g' | 'sodium_mg' | 'caffeine_mg', 'logged' | 'foods' | null>>;
}

/** Body of POST /v1/nutrition/meals and PATCH /v1/nutrition/meals/{id}. */
export interface MealInput {
  timestamp: string;
  meal_type: MealType;
  description?: string;
  macros?: Partial<Macros>;
  micros?: Partial<Micros>;
  foods?: FoodEntryInput[];
}

export interface Component {
  value: number;
  contribution: Contribution;
  /** "estimated" when the service had to estimate it (e.g. overnight without logged sleep). */
  source?: string;
}

export type ComponentName = 'overnight' | 'fasted_ratio' | 'regularity' | 'circadian';
export const COMPONENT_NAMES: readonly ComponentName[] = ['overnight', 'fasted_ratio', 'regularity', 'circadian'];

export interface DailyScore {
  object: 'digestion.score';
  date: string;
  score: number | null;
  score_state: ScoreState;
  level: Level | null;
  components: Partial<Record<ComponentName, Component>>;
  calibrating: boolean;
  confidence?: number;
}

export interface OvernightFeature {
  value: number | null;
  contribution: Contribution;
}

export interface OvernightScore {
  object: 'digestion.overnight_score';
  id: string;
  date: string;
  score: number | null;
  score_state: ScoreState;
  level: Level | null;
  sleep: { start: string; end: string; duration_min: number };
  last_meal_at: string | null;
  features: Record<string, OvernightFeature>;
  baseline: { score: number | null; days: number };
  deviation: number | null;
}

export interface DigestiveState {
  object: 'digestion.state';
  state: DigestiveStateName;
  minutes_remaining: number;
  confidence: number;
  active_meals: number;
  since: string;
  fasted_at: string;
}

export interface TimelineEntry {
  object: 'digestion.timeline';
  meal_id: string;
  meal_time: string;
  meal_type: MealType;
  total_processing_min: number;
  phases: { fed_end_min: number; processing_end_min: number; settling_end_min: number };
  confidence: number;
}

export interface MealSuggestion {
  kind: string;
  at: string;
  reason: string;
}

export interface Windows {
  object: 'digestion.windows';
  sleep_ready_at: string | null;
  fasted_at?: string | null;
  next_meal_suggestions?: MealSuggestion[];
  calculated_at?: string;
}

export interface Insight {
  object: 'digestion.insight';
  id: string;
  date: string;
  kind: string;
  severity: string;
  title: string;
  detail: string;
}

export interface Snapshot {
  object: 'snapshot';
  days: number;
  generated_at: string;
  user: { id: string; timezone: string };
  nutrition?: { meals: Meal[] };
  digestion?: {
    scores?: { daily?: DailyScore[]; overnight?: OvernightScore[] };
    state?: DigestiveState;
    windows?: Windows;
    timeline?: TimelineEntry[] | List<TimelineEntry>;
    insights?: Insight[] | List<Insight>;
  };
}

export interface SleepSession {
  object: 'sleep.session';
  id: string;
  start: string;
  end: string;
  efficiency?: number | null;
  awakenings?: number | null;
  source?: string | null;
}

export interface Settings {
  object: 'settings';
  timezone: string;
  day_start: string;
  units: string;
}

export interface ApiKey {
  object: 'api_key';
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  /** Present in the create response only. */
  secret?: string;
}

export type WebhookEventName =
  | 'meal.created'
  | 'meal.updated'
  | 'meal.deleted'
  | 'food.created'
  | 'food.updated'
  | 'food.deleted'
  | 'gut_score.created'
  | 'overnight_score.created'
  | 'digestion.state_changed'
  | 'windows.updated'
  | 'settings.updated'
  | 'test.ping';

export const WEBHOOK_EVENTS: readonly WebhookEventName[] = [
  'meal.created',
  'meal.updated',
  'meal.deleted',
  'food.created',
  'food.updated',
  'food.deleted',
  'gut_score.created',
  'overnight_score.created',
  'digestion.state_changed',
  'windows.updated',
  'settings.updated',
];

export interface WebhookSubscription {
  object: 'webhook_subscription';
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  created_at: string;
  /** Present in the create response only. */
  secret?: string;
  /** Why the service disabled it (deliveries failing for 3 days); null when enabled or paused by hand. */
  disabled_reason: string | null;
  disabled_at: string | null;
  updated_at: string;
}

export interface WebhookTest {
  object: 'webhook_test';
  delivered: boolean;
  status_code: number | null;
  duration_ms: number;
  webhook_delivery_id: string;
  error?: string;
}

export interface DeliveryAttempt {
  attempt: number;
  started_at: string;
  finished_at: string | null;
  outcome: 'succeeded' | 'failed' | 'interrupted' | 'in_flight';
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
}

export interface WebhookDelivery {
  object: 'webhook_delivery';
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  kind: 'event' | 'test' | 'redelivery';
  redelivery_of: string | null;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  status_detail: string | null;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  attempts: DeliveryAttempt[];
}

/** An event as carried by `/v1/events/stream` (and by webhooks). */
export interface ServiceEvent {
  object: 'event';
  id: string;
  type: string;
  created: string;
  data: { object: Record<string, unknown> & { object?: string } };
}

export interface ApiErrorBody {
  error: { type: string; code: string; message: string; param?: string; request_id?: string };
}
