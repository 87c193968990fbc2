/** /v1/sync: this device's copies of the data on the person's other computers, through their relay. */
import { api } from './client';
import type { SyncJoin, SyncPairing, SyncSetup, SyncStatus } from './types';

export const getSync = (signal?: AbortSignal) => api.get<SyncStatus>('/v1/sync', undefined, signal);
export const setupSync = (body: SyncSetup) => api.post<SyncStatus>('/v1/sync/setup', body);
/** Can take tens of seconds: the service downloads the whole history before it answers. */
export const joinSync = (body: SyncJoin) => api.post<SyncStatus>('/v1/sync/join', body);
export const leaveSync = () => api.post<SyncStatus>('/v1/sync/leave');
export const makeWebhookHost = () => api.post<SyncStatus>('/v1/sync/webhook-host');
export const getPairingCode = (signal?: AbortSignal) => api.get<SyncPairing>('/v1/sync/pairing-code', undefined, signal);
