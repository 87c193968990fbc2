import { z } from 'zod';
import { isValidDate } from './time/tz.js';

/**
 * Field schemas the features' input and resource schemas share. Each validates a value, types
 * it, and (through z.toJSONSchema) documents it in the OpenAPI document.
 */

/** A calendar date in YYYY-MM-DD. */
export const dateString = z
  .string()
  .refine(isValidDate, { message: 'must be a real date written YYYY-MM-DD' })
  .meta({ format: 'date', example: '2026-11-22' });

/** An ISO 8601 date-time with a Z or an explicit offset. */
export const dateTimeString = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/, {
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

/** Parses a validated date-time: its instant and, when written with an offset, that offset. */
export function parseDateTime(s: string): { ms: number; offsetMin: number | null } {
  const ms = Date.parse(s);
  const m = /([+-])(\d{2}):(\d{2})$/.exec(s);
  const offsetMin = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : null;
  return { ms, offsetMin };
}

/** Object ids as they appear in paths and cursors. */
export function idString(prefix: string) {
  return z
    .string()
    .max(64)
    .meta({ example: `${prefix}_3kT9xQ2pLm8vR1sN4wZc` });
}

/** An instant in a resource, as the API writes it (ISO 8601 UTC). */
export const isoDateTime = z.string().meta({ format: 'date-time' });
