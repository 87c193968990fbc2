/** /v1/integrations/mqtt: Home Assistant through MQTT discovery. */
import { api } from './client';
import type { MqttSettings, MqttSettingsUpdate, MqttTest } from './types';

export const getMqtt = (signal?: AbortSignal) => api.get<MqttSettings>('/v1/integrations/mqtt', undefined, signal);
export const updateMqtt = (body: MqttSettingsUpdate) => api.patch<MqttSettings>('/v1/integrations/mqtt', body);
export const testMqtt = (body: MqttSettingsUpdate) => api.post<MqttTest>('/v1/integrations/mqtt/test', body);
