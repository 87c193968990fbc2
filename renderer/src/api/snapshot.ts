/** /v1/snapshot: Today's data in one request, started before the first render. */
import { api, prefetch, takePrefetched } from './client';
import type { Snapshot } from './types';

const SNAPSHOT_QUERY = { days: 7, include: 'meals,scores,state,windows,insights' };

/** Starts loading Today's snapshot at boot. */
export const prefetchSnapshot = () => prefetch('/v1/snapshot', SNAPSHOT_QUERY);
/** The snapshot: the one prefetched at boot the first time, a fresh one after. */
export const getSnapshot = (signal?: AbortSignal) => takePrefetched<Snapshot>('/v1/snapshot', SNAPSHOT_QUERY) ?? api.get<Snapshot>('/v1/snapshot', SNAPSHOT_QUERY, signal);
