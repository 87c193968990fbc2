import type { AppContext } from '../app-context.js';
import type { Principal, Scope } from '../auth/scopes.js';
import { listMealsPage } from '../db/meals.js';
import { stateResource } from '../digestion/resources.js';
import { currentState, digestionContext } from '../digestion/service.js';
import type { EventType } from '../events/types.js';
import { mealResource } from '../nutrition/meals.js';
import { invalidParams } from './sdk.js';
import { missingScope } from './tools.js';

/**
 * The MCP resources: live data a client can read and subscribe to. Each is the same resource the
 * REST API returns; a subscribed session hears `notifications/resources/updated` after every write
 * that changes it (see createMcpSession).
 */

export interface ResourceDef {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
  scope: Scope;
  /** The events after which the resource reads differently. */
  changedBy: readonly EventType[];
  read(app: AppContext): unknown;
}

const MEAL_EVENTS: readonly EventType[] = ['meal.created', 'meal.updated', 'meal.deleted'];
/** A day's meals never list more than this many (the REST page limit). */
const TODAY_LIMIT = 100;

export const RESOURCES: readonly ResourceDef[] = [
  {
    uri: 'chyme://digestion/state',
    name: 'digestive_state',
    title: 'Digestive state now',
    description: 'The live digestive state (as GET /v1/digestion/state): fasted, processing or settling, and when it changes next.',
    mimeType: 'application/json',
    scope: 'digestion:read',
    changedBy: [...MEAL_EVENTS, 'digestion.state_changed', 'settings.updated'],
    read(app) {
      const ctx = digestionContext(app);
      return stateResource(currentState(app, ctx), ctx.now);
    },
  },
  {
    uri: 'chyme://meals/today',
    name: 'meals_today',
    title: 'Today\'s meals',
    description: 'The meals of today (the person\'s day, in their time zone), newest first, as a list of meal resources.',
    mimeType: 'application/json',
    scope: 'nutrition:read',
    changedBy: [...MEAL_EVENTS, 'settings.updated'],
    read(app) {
      const today = digestionContext(app).today;
      const page = listMealsPage(app.db, { startDay: today, endDay: today, mealType: undefined, after: undefined, limit: TODAY_LIMIT });
      return { object: 'list', data: page.meals.map(mealResource), has_more: page.hasMore };
    },
  },
];

export function resourcesChangedBy(type: string): string[] {
  return RESOURCES.filter((r) => (r.changedBy as readonly string[]).includes(type)).map((r) => r.uri);
}

export function readResource(app: AppContext, principal: Principal, uri: string): { uri: string; mimeType: string; text: string } {
  const resource = RESOURCES.find((r) => r.uri === uri);
  if (!resource) throw invalidParams(`No such resource: ${uri}. resources/list shows them.`);
  if (!principal.scopes.has(resource.scope)) throw invalidParams(missingScope(resource.scope).message);
  return { uri, mimeType: resource.mimeType, text: JSON.stringify(resource.read(app)) };
}
