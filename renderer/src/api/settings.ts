/** /v1/settings. */
import { api, prefetch, takePrefetched } from './client';
import type { Settings, SettingsPatch } from './types';

/** Starts loading the settings at boot (every screen needs them). */
export const prefetchSettings = () => prefetch('/v1/settings');
/** The settings: the ones prefetched at boot the first time, fresh ones after. */
export const getSettings = () => takePrefetched<Settings>('/v1/settings') ?? api.get<Settings>('/v1/settings');
export const updateSettings = (body: SettingsPatch) => api.patch<Settings>('/v1/settings', body);
