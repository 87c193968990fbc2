/** /v1/settings. */
import { clock } from '../lib/time';
import { api, prefetch, takePrefetched } from './client';
import type { SettingsAnswer, SettingsPatch } from './types';

/**
 * Every settings answer carries the service's clock (`generated_at`): the app aligns its "now"
 * with it here, before anything renders a day from the settings (the first screen included).
 */
function aligned(s: SettingsAnswer): SettingsAnswer {
  clock.sync(s.generated_at);
  return s;
}

/** Starts loading the settings at boot (every screen needs them). */
export const prefetchSettings = () => prefetch('/v1/settings');
/** The settings: the ones prefetched at boot the first time, fresh ones after. */
export const getSettings = () => (takePrefetched<SettingsAnswer>('/v1/settings') ?? api.get<SettingsAnswer>('/v1/settings')).then(aligned);
export const updateSettings = (body: SettingsPatch) => api.patch<SettingsAnswer>('/v1/settings', body).then(aligned);
