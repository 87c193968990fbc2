import type { RouteDef } from '../route.js';
import { apiKeyRoutes } from './api-keys.js';
import { digestionRoutes } from './digestion.js';
import { exportRoutes } from './export.js';
import { foodRoutes } from './foods.js';
import { mealRoutes } from './meals.js';
import { savedMealRoutes } from './saved-meals.js';
import { sleepRoutes } from './sleep.js';
import { snapshotRoutes } from './snapshot.js';
import { systemRoutes } from './system.js';

/**
 * Every /v1 route, one router per resource. The OpenAPI route is added by createRoutes, since it
 * describes this very list.
 */
export const resourceRoutes: RouteDef[] = [...systemRoutes, ...mealRoutes, ...foodRoutes, ...savedMealRoutes, ...sleepRoutes, ...digestionRoutes, ...snapshotRoutes, ...apiKeyRoutes, ...exportRoutes];
