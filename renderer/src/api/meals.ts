/** /v1/nutrition/meals. */
import { api, requestVersioned } from './client';
import type { Deleted, Meal, MealInput, MealPatch } from './types';

const path = (id: string) => `/v1/nutrition/meals/${encodeURIComponent(id)}`;

/** Every meal of the days [start_date, end_date], all pages. */
export const listMeals = (range: { start_date: string; end_date: string }, signal?: AbortSignal) => api.all<Meal>('/v1/nutrition/meals', range, signal);
export const createMeal = (body: MealInput, idempotencyKey?: string) => api.post<Meal>('/v1/nutrition/meals', body, idempotencyKey);
/** One meal with its version, to edit it. */
export const getMeal = (id: string, signal?: AbortSignal) => requestVersioned<Meal>('GET', path(id), signal ? { signal } : {});
/** Changes the fields sent; with `ifMatch`, only if the meal is still that version (else a 412 ApiError). */
export const updateMeal = (id: string, body: MealPatch, ifMatch?: string | null) => requestVersioned<Meal>('PATCH', path(id), { body, ifMatch });
export const deleteMeal = (id: string) => api.del<Deleted>(path(id));
