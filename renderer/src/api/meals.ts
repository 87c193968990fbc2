/** /v1/nutrition/meals. */
import { api } from './client';
import type { Deleted, Meal, MealInput, MealPatch } from './types';

const path = (id: string) => `/v1/nutrition/meals/${encodeURIComponent(id)}`;

/** Every meal of the days [start_date, end_date], all pages. */
export const listMeals = (range: { start_date: string; end_date: string }, signal?: AbortSignal) => api.all<Meal>('/v1/nutrition/meals', range, signal);
export const createMeal = (body: MealInput, idempotencyKey?: string) => api.post<Meal>('/v1/nutrition/meals', body, idempotencyKey);
export const updateMeal = (id: string, body: MealPatch) => api.patch<Meal>(path(id), body);
export const deleteMeal = (id: string) => api.del<Deleted>(path(id));
