import { z } from 'zod';
import { checkDateRange } from '../date-ranges.js';
import { dateString } from '../fields.js';
import { addDays } from '../time/tz.js';

/**
 * The day range of a series read (daily and overnight scores over REST, and the MCP tools that
 * read days): start_date/end_date both; start_date alone (7 days from it); or neither (the last 7
 * days ending today). end_date alone is refused.
 */
export const dayRangeFields = { start_date: dateString.optional(), end_date: dateString.optional() };

export const DEFAULT_SERIES_DAYS = 7;

/** The refinement of a day range: end_date needs start_date (JSON Schema's dependentRequired). */
export function endNeedsStart(q: { start_date?: string | undefined; end_date?: string | undefined }, ctx: z.RefinementCtx): void {
  if (q.end_date !== undefined && q.start_date === undefined) {
    ctx.addIssue({ code: 'custom', path: ['start_date'], message: 'end_date needs start_date' });
  }
}

/** The REST query of a day series; the OpenAPI document carries the rule as x-dependent-required. */
export const dayRangeQuery = z.object(dayRangeFields).superRefine(endNeedsStart).meta({ dependentRequired: { end_date: ['start_date'] } });

/** The inclusive range a day-range query names, checked (end not before start, at most 366 days). */
export function seriesRange(query: { start_date?: string | undefined; end_date?: string | undefined }, today: string): { start: string; end: string } {
  const end = query.end_date ?? (query.start_date === undefined ? today : addDays(query.start_date, DEFAULT_SERIES_DAYS - 1));
  const start = query.start_date ?? addDays(end, -(DEFAULT_SERIES_DAYS - 1));
  checkDateRange(start, end);
  return { start, end };
}
