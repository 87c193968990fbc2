import type { AppContext } from '../app-context.js';
import type { MealRecord } from '../db/meals.js';
import { createMeal, MAX_MEAL_CALORIES } from '../nutrition/meals.js';
import { logSavedMeal } from '../nutrition/saved-meals.js';
import { currentSettings } from '../settings.js';
import { offsetMinutes } from '../time/tz.js';

/**
 * Meals logged from Home Assistant (only with commands_enabled): a button per saved meal, and a
 * text entity taking "Description, 450 kcal". Each is logged like any other meal (events,
 * webhooks, the app), through the same feature functions as POST /v1/nutrition/meals.
 *
 * A second identical command within REPEAT_WINDOW_MS is the same press, not a second meal: an NFC
 * tag read twice, a button tapped twice, or a QoS 1 message the broker delivered again.
 */
export const REPEAT_WINDOW_MS = 60_000;

const MAX_DESCRIPTION = 200;

export type CommandOutcome = { logged: MealRecord } | { ignored: string };

/**
 * The one grammar of a described meal, "Description, 450 kcal": Chyme parses the "Log a meal"
 * text with it, and Home Assistant's text entity gets it as its `pattern`, so Home Assistant
 * refuses before sending exactly what Chyme would refuse. Written for both regex dialects (the
 * browser's and Python's): no flags, no named groups, ASCII digits. The description is 1–200
 * characters between spaces; calories 0–10000, with decimals, then "kcal" in any case or nothing;
 * between them a comma or semicolon, spaces, or nothing where the description ends in no digit
 * nor a minus ("Apple95"), so "Toast 123456" and "Toast -5" are refused, not read as "Toast 12" with 3456 kcal.
 */
export const MEAL_TEXT_PATTERN =
  '^\\s*(\\S(?:.{0,198}?\\S)?)(?:\\s*[,;]\\s*|\\s+|(?<=[^0-9.,;\\-]))(10000(?:\\.0+)?|[0-9]{1,4}(?:\\.[0-9]+)?)\\s*(?:[kK][cC][aA][lL])?\\s*$';
const MEAL_TEXT = new RegExp(MEAL_TEXT_PATTERN);

/** "Oat porridge, 350 kcal", "Toast; 210", "Apple 95kcal" or {"description": "Apple", "calories": 95}. */
export function parseMealText(payload: string): { description: string; calories: number } | string {
  const text = payload.trim();
  if (!text) return 'the payload is empty';
  const m = MEAL_TEXT.exec(payload);
  if (m) return { description: m[1]!, calories: Math.round(Number(m[2])) };
  if (text.startsWith('{')) return parseMealJson(text);
  // Refused: say why, as far as the shape lets us tell.
  const loose = /^(.*?)[,;]?\s*(\d+(?:\.\d+)?)\s*(?:kcal)?$/i.exec(text);
  if (!loose) return 'expected "Description, 450 kcal"';
  if (loose[1]!.trim() === '') return 'the description is missing';
  if (loose[1]!.trim().length > MAX_DESCRIPTION) return `the description is longer than ${MAX_DESCRIPTION} characters`;
  return `calories must be a number from 0 to ${MAX_MEAL_CALORIES}`;
}

function parseMealJson(text: string): { description: string; calories: number } | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'the payload starts with "{" but is not JSON';
  }
  const { description, calories } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof description !== 'string' || description.trim() === '') return 'the description is missing';
  if (description.trim().length > MAX_DESCRIPTION) return `the description is longer than ${MAX_DESCRIPTION} characters`;
  if (typeof calories !== 'number' || !Number.isFinite(calories) || calories < 0 || calories > MAX_MEAL_CALORIES) {
    return `calories must be a number from 0 to ${MAX_MEAL_CALORIES}`;
  }
  return { description: description.trim(), calories: Math.round(calories) };
}

export function createCommandHandler(app: AppContext) {
  const recent = new Map<string, number>();

  function repeated(key: string, now: number): boolean {
    for (const [k, at] of recent) if (now - at >= REPEAT_WINDOW_MS) recent.delete(k);
    if (recent.has(key)) return true;
    recent.set(key, now);
    return false;
  }

  /** The moment of a meal logged now, with its offset in the person's zone. */
  function now() {
    const ms = app.clock.now();
    return { ms, offset: offsetMinutes(ms, currentSettings(app).timezone) };
  }

  return {
    logSavedMeal(payload: string): CommandOutcome {
      const id = payload.trim();
      if (!/^smeal_[A-Za-z0-9]{1,60}$/.test(id)) return { ignored: 'the payload is not a saved meal id' };
      const at = now();
      if (repeated(`saved:${id}`, at.ms)) return { ignored: `the same saved meal was logged less than ${REPEAT_WINDOW_MS / 1000} s ago` };
      // A saved meal without a meal type gets the one the time of day suggests (the button has no form to ask).
      const meal = logSavedMeal(app, id, { timestampMs: at.ms, utcOffsetMin: at.offset, source: 'mqtt', guessType: true });
      if (!meal) {
        recent.delete(`saved:${id}`);
        return { ignored: `no saved meal ${id}` };
      }
      return { logged: meal };
    },

    logMeal(payload: string): CommandOutcome {
      const parsed = parseMealText(payload);
      if (typeof parsed === 'string') return { ignored: parsed };
      const at = now();
      if (repeated(`text:${parsed.description.toLowerCase()}|${parsed.calories}`, at.ms)) {
        return { ignored: `the same meal was logged less than ${REPEAT_WINDOW_MS / 1000} s ago` };
      }
      const meal = createMeal(app, {
        timestampMs: at.ms,
        utcOffsetMin: at.offset,
        // No meal type: the one the time of day suggests.
        description: parsed.description,
        source: 'mqtt',
        macros: { calories: parsed.calories },
      });
      return { logged: meal };
    },
  };
}
