import { InvalidCursorError, InvalidInputError } from './domain-errors.js';
import { daysBetween } from './time/tz.js';

/**
 * The rules of date ranges and paging cursors that every reader of days shares: the REST routes
 * and the MCP tools. A broken rule is a domain error; the API answers it as 400 parameter_invalid
 * or invalid_cursor naming the parameter, an MCP tool as a tool error naming the field.
 */

export const MAX_RANGE_DAYS = 366;

/** Checks that an inclusive date range does not end before it starts. */
export function checkDateOrder(start: string, end: string): void {
  if (end < start) throw new InvalidInputError('end_date', 'end_date must not be before start_date.');
}

/** Checks an inclusive date range: end not before start and at most MAX_RANGE_DAYS long. */
export function checkDateRange(start: string, end: string): void {
  checkDateOrder(start, end);
  if (daysBetween(start, end) + 1 > MAX_RANGE_DAYS) {
    throw new InvalidInputError('end_date', `A range may cover at most ${MAX_RANGE_DAYS} days; page through longer spans.`);
  }
}

/**
 * The sort position a `starting_after` cursor names, looked up now (so paging survives edits of
 * the cursor item); an id that does not exist is invalid_cursor.
 */
export function cursorPosition<P>(lookup: (id: string) => P | undefined, cursor: string | undefined): P | undefined {
  if (cursor === undefined) return undefined;
  const position = lookup(cursor);
  if (position === undefined) throw new InvalidCursorError('starting_after', cursor);
  return position;
}
