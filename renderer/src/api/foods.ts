/** /v1/foods: the food table and the person's own foods. */
import { api } from './client';
import type { Deleted, FoodInput, FoodPatch, FoodSources, List, NutritionFood } from './types';

const path = (id: string) => `/v1/foods/${encodeURIComponent(id)}`;

/** Ranked matches for `query`; without one, the person's recent and frequent foods. */
export const searchFoods = (query: string, limit: number, signal?: AbortSignal) => api.get<List<NutritionFood>>('/v1/foods', { query: query || undefined, limit }, signal);
export const getFood = (id: string, signal?: AbortSignal) => api.get<NutritionFood>(path(id), undefined, signal);
export const createFood = (body: FoodInput, idempotencyKey?: string) => api.post<NutritionFood>('/v1/foods', body, idempotencyKey);
export const updateFood = (id: string, body: FoodPatch) => api.patch<NutritionFood>(path(id), body);
export const deleteFood = (id: string) => api.del<Deleted>(path(id));
export const getFoodSources = (signal?: AbortSignal) => api.get<FoodSources>('/v1/foods/sources', undefined, signal);
