/** /v1/digestion: state, scores and the timeline. */
import { api } from './client';
import type { DailyScore, DigestiveState, List, OvernightScore, TimelineEntry } from './types';

type DayRange = { start_date: string; end_date: string };

export const getDigestiveState = () => api.get<DigestiveState>('/v1/digestion/state');
export const listDailyScores = (range: DayRange, signal?: AbortSignal) => api.get<List<DailyScore>>('/v1/digestion/scores/daily', range, signal);
export const listOvernightScores = (range: DayRange, signal?: AbortSignal) => api.get<List<OvernightScore>>('/v1/digestion/scores/overnight', range, signal);
/** Every timeline entry of the days [start_date, end_date], all pages. */
export const listTimeline = (range: DayRange, signal?: AbortSignal) => api.all<TimelineEntry>('/v1/digestion/timeline', range, signal);
