import type { RouteDef } from '../route.js';
import { apiKeyRoutes } from './api-keys.js';
import { digestionRoutes } from './digestion.js';
import { exportRoutes } from './export.js';
import { importRoutes } from './imports.js';
import { foodRoutes } from './foods.js';
import { mealRoutes } from './meals.js';
import { savedMealRoutes } from './saved-meals.js';
import { sleepRoutes } from './sleep.js';
import { snapshotRoutes } from './snapshot.js';
import { systemRoutes } from './system.js';

/**
 * The /v1 routes that need nothing but the app context, one file per resource. The routes that
 * need a subsystem (webhooks, the event stream) and the OpenAPI route (which describes the whole
 * list) are added by createService.
 */
export const resourceRoutes: RouteDef[] = [...systemRoutes, ...mealRoutes, ...foodRoutes, ...savedMealRoutes, ...sleepRoutes, ...digestionRoutes, ...snapshotRoutes, ...apiKeyRoutes, ...exportRoutes, ...importRoutes];
