import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { Principal, Scope } from '../auth/scopes.js';
import { cursorPosition } from '../date-ranges.js';
import { listMealsPage, mealPosition, type MealRecord } from '../db/meals.js';
import { DailyScoreSchema, dailyScoreResource, DigestiveStateSchema, stateResource } from '../digestion/resources.js';
import { dayRangeFields, endNeedsStart, seriesRange } from '../digestion/ranges.js';
import { currentState, dailyScoresRange, digestionContext, warmRange } from '../digestion/service.js';
import {
  buildSnapshot,
  SECTION_SCOPE,
  SNAPSHOT_DEFAULT_DAYS,
  SNAPSHOT_MAX_DAYS,
  SNAPSHOT_SECTIONS,
  SnapshotSchema,
  type SnapshotSection,
} from '../digestion/snapshot.js';
import { STATE_LABEL } from '../digestion/vocabulary.js';
import { DeletedSchema, listOf } from '../envelopes.js';
import { idString, nonBlankText, parseDateTime } from '../fields.js';
import { entryFromFood } from '../foods/entries.js';
import { ensureFoods, foodResource } from '../foods/foods.js';
import { listedPortions } from '../foods/portions.js';
import { FoodEntrySchema, FoodSchema } from '../foods/schemas.js';
import { searchFoods } from '../foods/search.js';
import {
  checkTimestamp,
  createMeal,
  MealCreateSchema,
  mealInputFrom,
  mealNumbers,
  mealPatchFrom,
  mealResource,
  MealSchema,
  mealTimestamp,
  mealType,
  MealUpdateSchema,
  patchMeal,
  removeMeal,
} from '../nutrition/meals.js';
import { leftOut, mealNutrient, mealTotals } from '../nutrition/totals.js';
import { allSavedMeals, logSavedMeal, savedMealResource, SavedMealSchema } from '../nutrition/saved-meals.js';
import { createSleep, SleepCreateSchema, sleepInputFrom, sleepResource, SleepSessionSchema } from '../sleep/sessions.js';
import { isoUtc } from '../time/tz.js';

/**
 * The MCP tools: designed around what a person asks an assistant, each a thin layer over the same
 * feature functions and schemas the REST routes use. Input schemas are the features' own (or
 * composed from their field schemas), output schemas are the resources' schemas, and the
 * structured result is what the resource mapper makes, so a tool's answer is the REST answer.
 */

/** What a tool gives back: the resource (structured content) and a short sentence for the model. */
export interface ToolResult {
  structured: Record<string, unknown>;
  text: string;
}

/** A tool's own refusal (a missing meal, a scope a section needs): a tool error naming the field. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDef {
  name: string;
  description: string;
  scope: Scope;
  annotations: ToolAnnotations;
  input: z.ZodType;
  output: z.ZodType;
  /**
   * A write: it takes an `idempotency_key`, and runs synchronously, inside the transaction that
   * also records its answer under that key.
   */
  writes: boolean;
  run(app: AppContext, args: never, principal: Principal): ToolResult | Promise<ToolResult>;
}

function defineTool<I extends z.ZodType>(tool: Omit<ToolDef, 'run' | 'input'> & { input: I; run(app: AppContext, args: z.output<I>, principal: Principal): ToolResult | Promise<ToolResult> }): ToolDef {
  return tool as unknown as ToolDef;
}

const read = (title: string): ToolAnnotations => ({ title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });

// ---- Summaries ----------------------------------------------------------------------------------

const kcal = (n: number) => `${Math.round(n)} kcal`;

function mealLine(m: MealRecord): string {
  const what = m.description || m.foods.map((f) => f.name).join(', ') || 'no description';
  const calories = mealNutrient(mealNumbers(m), 'calories');
  return `${m.mealType} ${isoUtc(m.timestampMs)} (${m.day}): ${what}, ${calories === null ? 'calories unknown' : kcal(calories)} [${m.id}]`;
}

/** The instant a meal was eaten: now when not given. */
function mealTime(app: AppContext, timestamp: string | undefined) {
  const now = app.clock.now();
  const t = timestamp === undefined ? { ms: now, offsetMin: null } : parseDateTime(timestamp);
  checkTimestamp(t.ms, now);
  return { timestampMs: t.ms, utcOffsetMin: t.offsetMin, iso: timestamp ?? isoUtc(t.ms) };
}

// ---- The tools ----------------------------------------------------------------------------------

let tools: readonly ToolDef[] | undefined;

/**
 * Every tool, built on first use (the first MCP request), not at import: a cold start of the
 * service answers its first requests without them (docs/performance.md, "Cold start").
 */
export function allTools(): readonly ToolDef[] {
  if (tools) return tools;
  /** Writes accept a key: a retried call with the same key and arguments returns the first answer, not a second meal. */
  const idempotencyKey = z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Any unique string (a UUID). A retry with the same key and arguments returns the first answer instead of writing again (kept 24 h).' });

  const FoodWithPortionsSchema = FoodSchema.unwrap().extend({
    per_portion: z.array(FoodEntrySchema).meta({
      description:
        'Each of the food\'s portions as the entry log_meal would store for {food_id, quantity: 1, unit: <portion id>}: its grams and nutrients.',
    }),
  });

  const MEAL_ID = idString('meal').meta({ description: 'The meal\'s id (meal_…), as list_meals or log_meal returned it.' });

  tools = [
    defineTool({
      name: 'search_foods',
      description:
        'Search the offline food table (USDA SR, plus the person\'s own custom foods) by name; the everyday food comes first. Each food has nutrients per 100 g and its portions with the nutrients of one portion, the natural unit first (one egg, one slice, one medium fruit). Log one with log_meal foods: [{food_id, quantity, unit}] where unit is "g", "ml" or a portion id; for a count ("2 eggs") leave unit out and quantity counts the natural unit.',
      scope: 'nutrition:read',
      annotations: read('Search foods'),
      input: z.strictObject({
        query: nonBlankText(200).meta({ description: 'Words of the food\'s name or brand, e.g. "banana" or "greek yogurt".' }),
        limit: z.number().int().min(1).max(50).optional().meta({ description: 'At most this many foods (default 10).' }),
      }),
      output: listOf(FoodWithPortionsSchema, 'FoodWithPortionsList'),
      writes: false,
      run(app, args) {
        ensureFoods(app);
        const found = searchFoods(app.db, args.query, args.limit ?? 10, app.clock.now());
        const data = found.map((r) => ({
          ...foodResource(r.food, r.usage),
          per_portion: listedPortions(r.food).map((p) => entryFromFood(r.food, 1, p.id, undefined, 'unit')),
        }));
        const lines = found.map((r) => {
          const portions = listedPortions(r.food).slice(0, 3).map((p) => `${p.id} = ${p.label} (${p.grams} g)`);
          return `${r.food.name}${r.food.brand ? ` (${r.food.brand})` : ''} [${r.food.id}]: ${r.food.nutrients.calories ?? '?'} kcal per 100 g${portions.length ? `; portions ${portions.join(', ')}` : ''}`;
        });
        return {
          structured: { object: 'list', data, has_more: false },
          text: found.length ? `${found.length} food${found.length === 1 ? '' : 's'} for "${args.query}":\n${lines.join('\n')}` : `No food matches "${args.query}".`,
        };
      },
    }),
    defineTool({
      name: 'log_meal',
      description:
        'Log a meal. Give foods from search_foods as {food_id, quantity, unit} (nutrients are computed from the food table; unit "g", "ml", a portion id, or left out so that quantity counts the food\'s natural unit: "2 eggs" is {food_id, quantity: 2}) or as {name, calories}, and/or macros, and/or a description. timestamp defaults to now; meal_type defaults from the local time of day. Calories without macros.calories are the sum of the foods. Returns the stored meal.',
      scope: 'nutrition:write',
      annotations: { title: 'Log a meal', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      input: MealCreateSchema.unwrap().extend({
        timestamp: mealTimestamp.optional(),
        meal_type: mealType.optional(),
        idempotency_key: idempotencyKey,
      }),
      output: MealSchema,
      writes: true,
      run(app, args) {
        const { idempotency_key: _key, ...body } = args;
        if (body.description === undefined && body.foods === undefined && body.macros === undefined) {
          throw new ToolError('parameter_missing', 'Say what was eaten: give foods, macros or a description.', 'foods');
        }
        // Without a meal_type, the meal's is the one its local time suggests (and follows the time when moved).
        const at = mealTime(app, body.timestamp);
        const meal = createMeal(app, { ...mealInputFrom({ ...body, timestamp: at.iso }, app.clock.now()), source: 'mcp' });
        return { structured: mealResource(meal), text: `Logged ${mealLine(meal)}.` };
      },
    }),
    defineTool({
      name: 'list_meals',
      description:
        'List logged meals whose day lies in [start_date, end_date] (YYYY-MM-DD in the person\'s time zone), newest first. Neither date: the last 7 days; start_date alone: 7 days from it. Page with starting_after = the last meal id of the previous page.',
      scope: 'nutrition:read',
      annotations: read('List meals'),
      input: z
        .strictObject({
          ...dayRangeFields,
          meal_type: mealType.optional(),
          limit: z.number().int().min(1).max(100).optional().meta({ description: 'Page size, 1–100 (default 50).' }),
          starting_after: idString('meal').optional(),
        })
        .superRefine(endNeedsStart),
      output: listOf(MealSchema, 'MealList'),
      writes: false,
      run(app, args) {
        const { start, end } = seriesRange(args, digestionContext(app).today);
        const after = cursorPosition((id) => mealPosition(app.db, id), args.starting_after);
        const page = listMealsPage(app.db, { startDay: start, endDay: end, mealType: args.meal_type, after, limit: args.limit ?? 50 });
        const calories = mealTotals(page.meals.map(mealNumbers)).calories;
        const total = `${kcal(calories.value)}${calories.unknown ? `; ${leftOut(calories.unknown, 'calories')}` : ''}`;
        return {
          structured: { object: 'list', data: page.meals.map(mealResource), has_more: page.hasMore },
          text: page.meals.length
            ? `${page.meals.length} meal${page.meals.length === 1 ? '' : 's'} from ${start} to ${end} (${total}${page.hasMore ? '; more with starting_after' : ''}):\n${page.meals.map(mealLine).join('\n')}`
            : `No meals from ${start} to ${end}.`,
        };
      },
    }),
    defineTool({
      name: 'update_meal',
      description:
        'Edit a meal by id. Only the fields sent change; macros and micros merge field by field (null clears one); foods replaces the list. Returns the updated meal.',
      scope: 'nutrition:write',
      annotations: { title: 'Edit a meal', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      input: MealUpdateSchema.unwrap().extend({ meal_id: MEAL_ID, idempotency_key: idempotencyKey }),
      output: MealSchema,
      writes: true,
      run(app, args) {
        const { idempotency_key: _key, meal_id: id, ...body } = args;
        const meal = patchMeal(app, id, mealPatchFrom(body, app.clock.now()));
        if (!meal) throw new ToolError('resource_missing', `No such meal: '${id}'.`, 'meal_id');
        return { structured: mealResource(meal), text: `Updated ${mealLine(meal)}.` };
      },
    }),
    defineTool({
      name: 'delete_meal',
      description: 'Delete a meal by id. It cannot be undone through this tool (log it again to restore it).',
      scope: 'nutrition:write',
      annotations: { title: 'Delete a meal', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      input: z.strictObject({ meal_id: MEAL_ID, idempotency_key: idempotencyKey }),
      output: DeletedSchema,
      writes: true,
      run(app, args) {
        const meal = removeMeal(app, args.meal_id);
        if (!meal) throw new ToolError('resource_missing', `No such meal: '${args.meal_id}'.`, 'meal_id');
        return { structured: { id: meal.id, object: 'nutrition.meal', deleted: true }, text: `Deleted ${mealLine(meal)}.` };
      },
    }),
    defineTool({
      name: 'list_saved_meals',
      description: 'The person\'s saved meals (a named set of foods, like "usual breakfast"), by name, with their totals. Log one with log_saved_meal.',
      scope: 'nutrition:read',
      annotations: read('List saved meals'),
      input: z.strictObject({}),
      output: listOf(SavedMealSchema, 'SavedMealList'),
      writes: false,
      run(app) {
        const saved = allSavedMeals(app);
        return {
          structured: { object: 'list', data: saved.map(savedMealResource), has_more: false },
          text: saved.length
            ? `${saved.length} saved meal${saved.length === 1 ? '' : 's'}:\n${saved.map((s) => `${s.name}${s.mealType ? ` (${s.mealType})` : ''} [${s.id}]: ${s.foods.map((f) => f.name).join(', ')}`).join('\n')}`
            : 'No saved meals yet.',
        };
      },
    }),
    defineTool({
      name: 'log_saved_meal',
      description:
        'Log a saved meal as a new meal, by saved_meal_id or by its name. timestamp defaults to now; meal_type to the saved meal\'s, else from the local time of day. Returns the new meal.',
      scope: 'nutrition:write',
      annotations: { title: 'Log a saved meal', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      input: z
        .strictObject({
          saved_meal_id: idString('smeal').optional(),
          name: z.string().min(1).max(200).optional().meta({ description: 'The saved meal\'s name (case does not matter).' }),
          timestamp: mealTimestamp.optional(),
          meal_type: mealType.optional(),
          idempotency_key: idempotencyKey,
        })
        .superRefine((q, ctx) => {
          if ((q.saved_meal_id === undefined) === (q.name === undefined)) {
            ctx.addIssue({ code: 'custom', path: ['saved_meal_id'], message: 'give either saved_meal_id or name' });
          }
        }),
      output: MealSchema,
      writes: true,
      run(app, args) {
        const wanted = args.name?.trim().toLowerCase();
        const saved = allSavedMeals(app).find((s) => (wanted === undefined ? s.id === args.saved_meal_id : s.name.trim().toLowerCase() === wanted));
        if (!saved) {
          throw wanted === undefined
            ? new ToolError('resource_missing', `No such saved meal: '${args.saved_meal_id}'.`, 'saved_meal_id')
            : new ToolError('resource_missing', `No saved meal is named "${args.name}"; list_saved_meals shows their names.`, 'name');
        }
        const at = mealTime(app, args.timestamp);
        // An assistant has no form to ask for a meal type: the time of day's is taken.
        const meal = logSavedMeal(app, saved.id, { ...at, mealType: args.meal_type, source: 'mcp', guessType: true })!;
        return { structured: mealResource(meal), text: `Logged ${mealLine(meal)}.` };
      },
    }),
    defineTool({
      name: 'log_sleep',
      description:
        'Log a sleep session (start and end as ISO 8601 date-times; at most 24 h, not overlapping another). An overnight gut score is computed for it. nap: true keeps it out of the overnight score.',
      scope: 'sleep:write',
      annotations: { title: 'Log sleep', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      input: SleepCreateSchema.unwrap().extend({ idempotency_key: idempotencyKey }),
      output: SleepSessionSchema,
      writes: true,
      run(app, args) {
        const { idempotency_key: _key, ...body } = args;
        const sleep = createSleep(app, sleepInputFrom(body, app.clock.now()));
        const resource = sleepResource(sleep);
        return { structured: resource, text: `Logged sleep from ${String(resource.start)} to ${String(resource.end)} (${String(resource.duration_min)} min) [${sleep.id}].` };
      },
    }),
    defineTool({
      name: 'get_digestive_state',
      description:
        'The digestive state now: fasted, processing (a meal is being digested) or settling; how many meals are active, since when, and when it changes next (minutes_remaining, next_change_at; fasted_at is when fasting begins if nothing more is eaten).',
      scope: 'digestion:read',
      annotations: read('Digestive state'),
      input: z.strictObject({}),
      output: DigestiveStateSchema,
      writes: false,
      run(app) {
        const ctx = digestionContext(app);
        const s = currentState(app, ctx);
        const resource = stateResource(s, ctx.now);
        const next = s.state === 'fasted' ? '' : `; changes in ${s.minutesRemaining} min (at ${String(resource.next_change_at)}); fasted from ${String(resource.fasted_at)}`;
        return { structured: resource, text: `${STATE_LABEL[s.state]} since ${String(resource.since)}, ${s.activeMeals} active meal${s.activeMeals === 1 ? '' : 's'}${next}.` };
      },
    }),
    defineTool({
      name: 'get_daily_scores',
      description:
        'Daily gut scores (0–100) with their four components (overnight, fasted_ratio, regularity, circadian), one per day of [start_date, end_date]; default the last 7 days; start_date alone: 7 days from it. Today is PENDING (provisional); a day with nothing logged is UNSCORABLE.',
      scope: 'digestion:read',
      annotations: read('Daily gut scores'),
      input: z.strictObject(dayRangeFields).superRefine(endNeedsStart),
      output: listOf(DailyScoreSchema, 'DailyScoreList'),
      writes: false,
      async run(app, args) {
        const { start, end } = seriesRange(args, digestionContext(app).today);
        await warmRange(app, start, end, { daily: true });
        const scores = dailyScoresRange(app, start, end, digestionContext(app));
        const lines = scores.map((s) => `${s.date}: ${s.score ?? '–'} ${s.level ?? ''} (${s.scoreState})`.replace('  ', ' '));
        return { structured: { object: 'list', data: scores.map(dailyScoreResource), has_more: false }, text: `Daily scores ${start} to ${end}:\n${lines.join('\n')}` };
      },
    }),
    defineTool({
      name: 'get_snapshot',
      description:
        'Everything for a review in one call: the last `days` days (default 7, up to 90) of meals, daily and overnight scores, the state now, windows, the per-meal timeline and insights. include picks sections; by default every section the key may read.',
      scope: 'digestion:read',
      annotations: read('Snapshot for a review'),
      input: z.strictObject({
        days: z.number().int().min(1).max(SNAPSHOT_MAX_DAYS).optional(),
        include: z.array(z.enum(SNAPSHOT_SECTIONS)).min(1).optional().meta({ description: `Sections: ${SNAPSHOT_SECTIONS.join(', ')} (meals needs nutrition:read).` }),
      }),
      output: SnapshotSchema,
      writes: false,
      async run(app, args, principal) {
        const include = new Set<SnapshotSection>(args.include ?? SNAPSHOT_SECTIONS.filter((s) => principal.scopes.has(SECTION_SCOPE[s])));
        for (const section of include) {
          if (!principal.scopes.has(SECTION_SCOPE[section])) throw missingScope(SECTION_SCOPE[section], 'include');
        }
        const days = args.days ?? SNAPSHOT_DEFAULT_DAYS;
        const snapshot = (await buildSnapshot(app, days, include)).toJSON() as Record<string, unknown>;
        const digestion = snapshot.digestion as { state?: { state: string }; scores?: { daily?: Array<{ date: string; score: number | null }> } };
        const meals = (snapshot.nutrition as { meals?: unknown[] }).meals;
        const parts = [`Snapshot of the last ${days} day${days === 1 ? '' : 's'}`];
        if (meals) parts.push(`${meals.length} meal${meals.length === 1 ? '' : 's'}`);
        if (digestion.state) parts.push(`now ${digestion.state.state}`);
        const today = digestion.scores?.daily?.at(-1);
        if (today) parts.push(`score ${today.date}: ${today.score ?? '–'}`);
        return { structured: snapshot, text: `${parts.join('; ')}.` };
      },
    }),
  ];
  return tools;
}

/** The tool error for a scope the key lacks (the same sentence the REST API's 403 says). */
export function missingScope(scope: Scope, param?: string): ToolError {
  return new ToolError('insufficient_scope', `This API key lacks the scope "${scope}" required for this request.`, param);
}
