import { z } from 'zod';
import { daysBetween, isValidDate, isValidTimeZone } from '../time/tz.js';
import { ApiError, errors } from './errors.js';

/**
 * The validation layer. Route schemas are zod schemas: they validate input, give handlers their
 * types, and (through z.toJSONSchema) become the OpenAPI document, so the three cannot drift.
 */

function issueParam(prefix: string, path: readonly PropertyKey[]): string {
  const parts = path.map(String);
  return [prefix, ...parts].filter(Boolean).join('.');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** Turns the first zod issue into the API error for it, naming the offending parameter. */
export function toApiError(err: z.ZodError, input: unknown, prefix = ''): ApiError {
  const issue = err.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    return errors.parameterUnknown(issueParam(prefix, [...issue.path, issue.keys[0] ?? '']));
  }
  const param = issueParam(prefix, issue.path) || prefix || 'body';
  if (valueAt(input, issue.path) === undefined) return errors.parameterMissing(param);
  const message = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.message;
  return errors.parameterInvalid(param, `Invalid ${param}: ${message}.`);
}

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toApiError(result.error, input, prefix);
  return result.data;
}

// ---- Reusable field schemas -------------------------------------------------------------------

/** Text that must not be blank: trimmed, then at least one character (the pattern tells the OpenAPI document). */
export function nonBlankText(max: number) {
  return z
    .string()
    .trim()
    .min(1, { message: 'must not be empty' })
    .max(max, { message: `must be at most ${max} characters` })
    .regex(/\S/, { message: 'must not be blank' });
}

/** Canonical IANA zone names (Intl lists UTC under Etc/UTC only, but accepts it). */
const IANA_TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone')];

/** An IANA time zone; the OpenAPI document lists the canonical names (aliases are accepted too). */
export const ianaTimeZone = z
  .string()
  .refine(isValidTimeZone, { message: 'must be an IANA time zone such as Europe/Berlin' })
  .meta({
    description: 'An IANA time zone. The list is the canonical names this runtime knows; their aliases (e.g. US/Eastern) are accepted too.',
    enum: IANA_TIME_ZONES,
  } as Record<string, unknown>);

/** A calendar date in YYYY-MM-DD. */
export const dateString = z
  .string()
  .refine(isValidDate, { message: 'must be a real date written YYYY-MM-DD' })
  .meta({ format: 'date', example: '2026-11-22' });

/**
 * An ISO 8601 date-time with a Z or an explicit offset. The pattern holds the clock ranges
 * (hours 00–23, offsets up to ±14:59) so the OpenAPI document says what is refused.
 */
export const dateTimeString = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-](0\d|1[0-4]):[0-5]\d)$/, {
    message: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-11-22T08:30:00Z or 2026-11-22T09:30:00+01:00',
  })
  .refine(isRealDateTime, { message: 'is not a real date-time' })
  .meta({ format: 'date-time', example: '2026-11-22T08:30:00Z' });

function isRealDateTime(s: string): boolean {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(s);
  if (!m || !isValidDate(m[1]!)) return false;
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return false;
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(s);
  if (offset && (Number(offset[2]) > 14 || Number(offset[3]) > 59)) return false;
  return !Number.isNaN(Date.parse(s));
}

/**
 * A date-time within bounds: not before `earliest` (checked here, and documented as
 * `formatMinimum`, the keyword of ajv-formats) and at most `maxFuture` after the service's now
 * (documented as `x-max-future`, an ISO 8601 duration; the handler checks it with checkNotTooFarAhead,
 * because only it knows the service clock).
 */
export function boundedDateTime(bounds: { earliest?: string; maxFuture: { iso: string; ms: number; words: string } }) {
  const { earliest, maxFuture } = bounds;
  const earliestMs = earliest === undefined ? undefined : Date.parse(earliest);
  const schema = earliestMs === undefined ? dateTimeString : dateTimeString.refine((s) => Date.parse(s) >= earliestMs, { message: `must not be before ${earliest}` });
  return schema.meta({
    ...(earliest !== undefined ? { formatMinimum: earliest } : {}),
    'x-max-future': maxFuture.iso,
    description: `${earliest !== undefined ? `On or after ${earliest} and a` : 'A'}t most ${maxFuture.words} after the service's current time.`,
  } as Record<string, unknown>);
}

/** The upper bound of a boundedDateTime, against the service clock. */
export function checkNotTooFarAhead(param: string, ms: number, nowMs: number, maxFuture: { ms: number; words: string }, rule: string): void {
  if (ms > nowMs + maxFuture.ms) throw errors.parameterInvalid(param, `Invalid ${param}: ${rule}`);
}

/** Parses a validated date-time: its instant and, when written with an offset, that offset. */
export function parseDateTime(s: string): { ms: number; offsetMin: number | null } {
  const ms = Date.parse(s);
  const m = /([+-])(\d{2}):(\d{2})$/.exec(s);
  const offsetMin = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : null;
  return { ms, offsetMin };
}

/** A query-string integer within bounds (query values arrive as strings). */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^-?\d+$/, { message: `must be an integer from ${min} to ${max}` })
    .transform(Number)
    .pipe(z.number().int().min(min, { message: `must be at least ${min}` }).max(max, { message: `must be at most ${max}` }))
    .meta({ type: 'integer', minimum: min, maximum: max } as Record<string, unknown>);
}

/**
 * Object ids as they appear in paths and cursors. The pattern documents their shape; it is not
 * enforced, because an id of any other shape simply names nothing (404, or 400 invalid_cursor).
 */
export function idString(prefix: string) {
  return z
    .string()
    .max(64)
    .meta({ example: `${prefix}_3kT9xQ2pLm8vR1sN4wZc`, pattern: `^${prefix}_[0-9A-Za-z]{1,60}$` });
}

export const MAX_RANGE_DAYS = 366;

/** Checks that an inclusive date range does not end before it starts. */
export function checkDateOrder(start: string, end: string): void {
  if (end < start) throw errors.parameterInvalid('end_date', 'end_date must not be before start_date.');
}

/** Checks an inclusive date range: end not before start and at most MAX_RANGE_DAYS long. */
export function checkDateRange(start: string, end: string): void {
  checkDateOrder(start, end);
  if (daysBetween(start, end) + 1 > MAX_RANGE_DAYS) {
    throw errors.parameterInvalid('end_date', `A range may cover at most ${MAX_RANGE_DAYS} days; page through longer spans.`);
  }
}

/**
 * The sort position a `starting_after` cursor names, looked up now (so paging survives edits of
 * the cursor item); an id that does not exist is 400 invalid_cursor.
 */
export function cursorPosition<P>(lookup: (id: string) => P | undefined, cursor: string | undefined): P | undefined {
  if (cursor === undefined) return undefined;
  const position = lookup(cursor);
  if (position === undefined) throw errors.invalidCursor('starting_after', cursor);
  return position;
}
