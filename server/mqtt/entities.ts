import type { AppContext } from '../app-context.js';
import { latestMealAtOrBefore, listMealsByDays } from '../db/meals.js';
import { currentState, currentWindows, dailyScoresRange, digestionContext, overnightRange } from '../digestion/service.js';
import { dailyScoreResource, overnightResource, stateResource, windowsResource } from '../digestion/resources.js';
import { STATE_LABEL } from '../digestion/vocabulary.js';
import { mealNumbers, mealResource } from '../nutrition/meals.js';
import { mealTotals } from '../nutrition/totals.js';
import { allSavedMeals } from '../nutrition/saved-meals.js';
import { currentSettings } from '../settings.js';
import { addDays, dayBounds, isoUtc, parseClock } from '../time/tz.js';
import { MEAL_TEXT_PATTERN } from './commands.js';
import type { MqttConfig } from './config.js';

/**
 * What Chyme publishes for Home Assistant's MQTT discovery
 * (home-assistant.io/integrations/mqtt/#mqtt-discovery): one device, "Chyme", whose entities read
 * the same resources as /v1. Each state topic carries the /v1 resource itself as JSON (the daily
 * score as GET /v1/digestion/scores/daily gives it, the state as GET /v1/digestion/state, …) and
 * the entity's value_template picks the field it shows, so automations can use every field.
 */

export interface Topics {
  availability: string;
  /** Home Assistant's birth message: republish everything when it says "online". */
  haStatus: string;
  state(entity: string): string;
  logSavedMeal: string;
  logMeal: string;
  /** What became of each command (not retained): Home Assistant's "Meal command" event entity. */
  commandResult: string;
}

export function topicsFor(config: Pick<MqttConfig, 'discoveryPrefix' | 'topicPrefix'>): Topics {
  const base = config.topicPrefix;
  return {
    availability: `${base}/availability`,
    haStatus: `${config.discoveryPrefix}/status`,
    state: (entity) => `${base}/${entity}`,
    logSavedMeal: `${base}/command/log_saved_meal`,
    logMeal: `${base}/command/log_meal`,
    commandResult: `${base}/command_result`,
  };
}

/** A retained discovery config: its topic and its JSON (an empty payload removes the entity). */
export interface DiscoveryConfig {
  topic: string;
  payload: Record<string, unknown>;
}

export interface DeviceInfo {
  /** Stable for this installation (the settings' user id): entities keep their ids across restarts. */
  installId: string;
  version: string;
  /** Where the app is, for the device page's "Visit" link; undefined when unknown. */
  configurationUrl: string | undefined;
}

/** A score, or unknown ("None") when there is none: no score yet, or the payload is {} (nothing to show). */
const SCORE_TEMPLATE = '{{ value_json.score if value_json.score is defined and value_json.score is not none else "None" }}';

/** The sensors every installation gets: [object id, name, state entity, what HA needs to know]. */
const SENSORS: Array<{ id: string; name: string; extra: Record<string, unknown> }> = [
  {
    id: 'digestive_state',
    name: 'Digestive state',
    extra: {
      device_class: 'enum',
      options: Object.keys(STATE_LABEL),
      value_template: '{{ value_json.state }}',
      // minutes_remaining and calculated_at are left out: they change every minute, states are published on change.
      json_attributes_template:
        '{{ {"since": value_json.since, "next_change_at": value_json.next_change_at, "fasted_at": value_json.fasted_at, "active_meals": value_json.active_meals, "confidence": value_json.confidence} | tojson }}',
      icon: 'mdi:stomach',
    },
  },
  {
    id: 'gut_score',
    name: 'Gut score',
    extra: {
      state_class: 'measurement',
      unit_of_measurement: 'points',
      value_template: SCORE_TEMPLATE,
      json_attributes_template: '{{ {"date": value_json.date, "level": value_json.level, "score_state": value_json.score_state, "components": value_json.components} | tojson }}',
      icon: 'mdi:stomach',
    },
  },
  {
    id: 'overnight_score',
    name: 'Overnight score',
    extra: {
      state_class: 'measurement',
      unit_of_measurement: 'points',
      value_template: SCORE_TEMPLATE,
      json_attributes_template: '{{ {"date": value_json.date, "level": value_json.level, "last_meal_at": value_json.last_meal_at, "features": value_json.features} | tojson }}',
      icon: 'mdi:weather-night',
    },
  },
  {
    id: 'calories_today',
    name: 'Calories today',
    extra: {
      unit_of_measurement: 'kcal',
      state_class: 'total',
      value_template: '{{ value_json.calories }}',
      last_reset_value_template: '{{ value_json.day_started_at }}',
      json_attributes_template: '{{ {"date": value_json.date, "meals": value_json.meals, "meals_without_calories": value_json.meals_without_calories} | tojson }}',
      icon: 'mdi:food-apple',
    },
  },
  {
    id: 'last_meal',
    name: 'Last meal',
    extra: {
      device_class: 'timestamp',
      value_template: '{{ value_json.timestamp if value_json.timestamp is defined else "None" }}',
      // Calories derived from nothing (see nutrition/totals.ts) are unknown, not 0.
      json_attributes_template:
        '{% set m = value_json %}{% set s = m.nutrient_sources if m.nutrient_sources is defined else {} %}' +
        '{% set none_known = m.calories_source == "macros" and s.protein_g is none and s.carbs_g is none and s.fat_g is none %}' +
        '{{ {"meal_type": m.meal_type, "description": m.description, "calories": m.macros.calories if m.macros is defined and not none_known else none} | tojson }}',
      icon: 'mdi:silverware-fork-knife',
    },
  },
  {
    id: 'ready_for_sleep',
    name: 'Ready for sleep',
    extra: { device_class: 'timestamp', value_template: '{{ value_json.sleep_ready_at }}', icon: 'mdi:bed-clock' },
  },
  {
    id: 'fasting_since',
    name: 'Fasting since',
    extra: {
      device_class: 'timestamp',
      // Fasting "since" only once it has begun; before that the fasted state is still ahead.
      value_template: '{{ value_json.fasted_at if value_json.state == "fasted" else "None" }}',
      icon: 'mdi:timer-sand',
    },
  },
];

/** Which state topic each sensor reads (two read the windows and the state resources). */
const SENSOR_SOURCE: Record<string, string> = {
  digestive_state: 'state',
  gut_score: 'gut_score',
  overnight_score: 'overnight_score',
  calories_today: 'calories_today',
  last_meal: 'last_meal',
  ready_for_sleep: 'windows',
  fasting_since: 'state',
};

function nodeId(device: DeviceInfo): string {
  return `chyme_${device.installId.replace(/[^A-Za-z0-9_-]/g, '')}`;
}

function devicePayload(device: DeviceInfo): Record<string, unknown> {
  return {
    identifiers: [nodeId(device)],
    name: 'Chyme',
    manufacturer: 'Chyme',
    model: 'Chyme meal log',
    sw_version: device.version,
    ...(device.configurationUrl ? { configuration_url: device.configurationUrl } : {}),
  };
}

/** The event types of the "Meal command" entity: a command logged a meal, or Chyme refused it. */
const COMMAND_RESULTS = ['logged', 'refused'] as const;

/** Every discovery config for these settings: the sensors, and the command entities when allowed. */
export function discoveryConfigs(app: AppContext, config: MqttConfig, device: DeviceInfo): DiscoveryConfig[] {
  const topics = topicsFor(config);
  const node = nodeId(device);
  const common = {
    availability: [{ topic: topics.availability, payload_available: 'online', payload_not_available: 'offline' }],
    device: devicePayload(device),
  };
  const configs: DiscoveryConfig[] = SENSORS.map((s) => ({
    topic: `${config.discoveryPrefix}/sensor/${node}/${s.id}/config`,
    payload: {
      name: s.name,
      unique_id: `${node}_${s.id}`,
      state_topic: topics.state(SENSOR_SOURCE[s.id]!),
      json_attributes_topic: s.extra.json_attributes_template ? topics.state(SENSOR_SOURCE[s.id]!) : undefined,
      ...s.extra,
      ...common,
    },
  }));
  if (config.commandsEnabled) {
    for (const saved of allSavedMeals(app)) {
      const id = saved.id.replace(/[^A-Za-z0-9_-]/g, '');
      configs.push({
        topic: `${config.discoveryPrefix}/button/${node}/${id}/config`,
        payload: {
          name: `Log ${saved.name}`,
          unique_id: `${node}_${id}`,
          command_topic: topics.logSavedMeal,
          payload_press: saved.id,
          icon: 'mdi:silverware-fork-knife',
          ...common,
        },
      });
    }
    configs.push({
      topic: `${config.discoveryPrefix}/text/${node}/log_meal/config`,
      payload: {
        name: 'Log a meal',
        unique_id: `${node}_log_meal`,
        command_topic: topics.logMeal,
        // "Description, 450 kcal": Chyme's own grammar, so Home Assistant refuses what Chyme would.
        pattern: MEAL_TEXT_PATTERN,
        max: 255,
        icon: 'mdi:pencil-plus',
        ...common,
      },
    });
    // A command Chyme refuses (an unknown saved meal, a retained message) is an event Home
    // Assistant shows and automations can react to, not only a line in Chyme's log.
    configs.push({
      topic: `${config.discoveryPrefix}/event/${node}/command_result/config`,
      payload: {
        name: 'Meal command',
        unique_id: `${node}_command_result`,
        state_topic: topics.commandResult,
        event_types: [...COMMAND_RESULTS],
        icon: 'mdi:message-alert-outline',
        ...common,
      },
    });
  }
  // JSON has no undefined: drop the keys that do not apply.
  for (const c of configs) for (const k of Object.keys(c.payload)) if (c.payload[k] === undefined) delete c.payload[k];
  return configs;
}

/**
 * The state topics' payloads now: each the /v1 resource the entity reads (JSON text), or {} when
 * there is nothing (no meal logged, the last one deleted): the templates then give unknown. An
 * empty payload would not do: Home Assistant keeps the old value when a template cannot render.
 */
const NOTHING = '{}';

export function statePayloads(app: AppContext, config: MqttConfig): Map<string, string> {
  const topics = topicsFor(config);
  const ctx = digestionContext(app);
  const settings = currentSettings(app);
  const out = new Map<string, string>();
  out.set(topics.state('state'), JSON.stringify(stateResource(currentState(app, ctx), ctx.now)));
  out.set(topics.state('windows'), JSON.stringify(windowsResource(currentWindows(app, ctx))));
  const today = dailyScoresRange(app, ctx.today, ctx.today, ctx)[0];
  out.set(topics.state('gut_score'), today ? JSON.stringify(dailyScoreResource(today)) : NOTHING);
  const overnight = overnightRange(app, addDays(ctx.today, -1), ctx.today, ctx).at(-1);
  out.set(topics.state('overnight_score'), overnight ? JSON.stringify(overnightResource(overnight)) : NOTHING);
  // Eaten so far: a meal logged for later counts once its time comes (the minute's refresh).
  const meals = listMealsByDays(app.db, ctx.today, ctx.today).filter((m) => m.timestampMs <= ctx.now);
  const calories = mealTotals(meals.map(mealNumbers)).calories;
  out.set(
    topics.state('calories_today'),
    JSON.stringify({
      object: 'calories_today',
      date: ctx.today,
      // Meals whose calories nobody gave are left out and counted; none known at all: unknown.
      calories: calories.known === 0 && calories.unknown > 0 ? null : Math.round(calories.value),
      meals: meals.length,
      meals_without_calories: calories.unknown,
      day_started_at: isoUtc(dayBounds(ctx.today, settings.timezone, parseClock(settings.dayStart)).start),
    }),
  );
  const last = latestMealAtOrBefore(app.db, ctx.now);
  out.set(topics.state('last_meal'), last ? JSON.stringify(mealResource(last)) : NOTHING);
  return out;
}

/**
 * What a state payload means, for deciding whether to publish it again: the resources carry the
 * moment they were computed (calculated_at) and a countdown (minutes_remaining) that change on
 * every computation; republishing for those alone would send a retained message a second.
 */
export function stateFingerprint(payload: string): string {
  return payload.replace(/"(calculated_at|minutes_remaining)":("[^"]*"|-?\d+(\.\d+)?)/g, '');
}
