/** /v1/nutrition/saved_meals: named sets of food entries, logged again in one request. */
import { api } from './client';
import type { Deleted, List, Meal, MealType, SavedMeal, SavedMealInput } from './types';

const path = (id: string) => `/v1/nutrition/saved_meals/${encodeURIComponent(id)}`;

export const listSavedMeals = (signal?: AbortSignal) => api.get<List<SavedMeal>>('/v1/nutrition/saved_meals', { limit: 100 }, signal).then((l) => l.data);
export const createSavedMeal = (body: SavedMealInput, idempotencyKey?: string) => api.post<SavedMeal>('/v1/nutrition/saved_meals', body, idempotencyKey);
export const deleteSavedMeal = (id: string) => api.del<Deleted>(path(id));
/** Logs the saved meal as a new meal at `timestamp`. */
export const logSavedMeal = (id: string, body: { timestamp: string; meal_type?: MealType }, idempotencyKey?: string) => api.post<Meal>(`${path(id)}/log`, body, idempotencyKey);
