import { z } from 'zod';
import { isValidDate, isValidTimeZone } from './time/tz.js';

/**
 * Field schemas the features' input and resource schemas share. Each validates a value, types
 * it, and (through z.toJSONSchema) documents it in the OpenAPI document.
 */

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

/** How far past the service's now an instant may lie: as an ISO 8601 duration, in ms, in words. */
export interface FutureBound {
  iso: string;
  ms: number;
  words: string;
}

/**
 * A date-time within bounds: not before `earliest` (checked here, and documented as
 * `formatMinimum`, the keyword of ajv-formats) and at most `maxFuture` after the service's now
 * (documented as `x-max-future`, an ISO 8601 duration; the feature checks it, because only it
 * knows the service clock).
 */
export function boundedDateTime(bounds: { earliest?: string; maxFuture: FutureBound }) {
  const { earliest, maxFuture } = bounds;
  const earliestMs = earliest === undefined ? undefined : Date.parse(earliest);
  const schema =
    earliestMs === undefined ? dateTimeString : dateTimeString.refine((s) => Date.parse(s) >= earliestMs, { message: `must not be before ${earliest}` });
  return schema.meta({
    ...(earliest !== undefined ? { formatMinimum: earliest } : {}),
    'x-max-future': maxFuture.iso,
    description: `${earliest !== undefined ? `On or after ${earliest} and a` : 'A'}t most ${maxFuture.words} after the service's current time.`,
  } as Record<string, unknown>);
}

/** Text that must not be blank: trimmed, then at least one character (the pattern tells the OpenAPI document). */
export function nonBlankText(max: number) {
  return z
    .string()
    .trim()
    .min(1, { message: 'must not be empty' })
    .max(max, { message: `must be at most ${max} characters` })
    .regex(/\S/, { message: 'must not be blank' });
}

/**
 * An absolute file-system path on this OS family, exactly as node:path's isAbsolute decides it
 * (POSIX: starts with /; Windows: \\ or / or a drive letter followed by one of them), without the
 * NUL character no file system accepts. Whether the folder can be created and written is a fact of
 * the machine, checked by the feature.
 */
export function absolutePath(max: number) {
  const pattern = process.platform === 'win32' ? /^(?:[A-Za-z]:)?[\\/][^\u0000]*$/ : /^\/[^\u0000]*$/;
  const example = process.platform === 'win32' ? 'D:\\Chyme backups' : '/media/usb/chyme-backups';
  return z
    .string()
    .max(max, { message: `must be at most ${max} characters` })
    .regex(pattern, { message: `must be an absolute path such as ${example}` })
    .meta({ example });
}

let ianaZones: string[] | undefined;

/**
 * Canonical IANA zone names (Intl lists UTC under Etc/UTC only, but accepts it). Listed on first
 * use, for the OpenAPI document: asking ICU for them took ~5 ms of a cold start.
 */
export function ianaTimeZones(): string[] {
  return (ianaZones ??= ['UTC', ...Intl.supportedValuesOf('timeZone')]);
}

export const IANA_TIME_ZONE_DESCRIPTION =
  'An IANA time zone. The list is the canonical names this runtime knows; their aliases (e.g. US/Eastern) are accepted too.';

/** An IANA time zone; the OpenAPI document lists the canonical names (aliases are accepted too). */
export const ianaTimeZone = z.lazy(() =>
  z
    .string()
    .refine(isValidTimeZone, { message: 'must be an IANA time zone such as Europe/Berlin' })
    .meta({ description: IANA_TIME_ZONE_DESCRIPTION, enum: ianaTimeZones() } as Record<string, unknown>),
);

/** Parses a validated date-time: its instant and, when written with an offset, that offset. */
export function parseDateTime(s: string): { ms: number; offsetMin: number | null } {
  const ms = Date.parse(s);
  const m = /([+-])(\d{2}):(\d{2})$/.exec(s);
  const offsetMin = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : null;
  return { ms, offsetMin };
}

/**
 * What follows the prefix: a random base62 id (ids.ts), and for foods also the shipped USDA
 * table's `usda_` + NDB number (foods/table.ts), ids people's meals already hold.
 */
const ID_BODY: Partial<Record<string, string>> = { food: '(?:usda_[0-9]{5}|[0-9A-Za-z]{1,60})' };

/** The documented shape of an id with this prefix. */
export function idPattern(prefix: string): string {
  return `^${prefix}_${ID_BODY[prefix] ?? '[0-9A-Za-z]{1,60}'}$`;
}

/**
 * Object ids as they appear in paths and cursors. The pattern documents their shape; it is not
 * enforced, because an id of any other shape simply names nothing (404, or 400 invalid_cursor).
 */
export function idString(prefix: string) {
  return z
    .string()
    .max(64)
    .meta({ example: `${prefix}_3kT9xQ2pLm8vR1sN4wZc`, pattern: idPattern(prefix) });
}

/**
 * A food id in a body (a meal's or saved meal's entry): its shape is enforced, since an entry
 * stores it; whether it names a food is the feature's check (foods/entries.ts).
 */
export const foodIdField = z
  .string({ message: 'must be a string' })
  .regex(new RegExp(idPattern('food')), { message: 'must be a food id (food_…)' })
  .meta({ example: 'food_usda_09003' });

/** An instant in a resource, as the API writes it (ISO 8601 UTC). */
export const isoDateTime = z.string().meta({ format: 'date-time' });

/**
 * A schema's first complaint about an input, as plain data (it may cross a thread boundary: an
 * import's document is checked in its worker). The API turns it into its 400 (api/validation.ts).
 */
export interface InputIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  /** invalid_type: the type the schema expected. */
  expected?: string;
  /** unrecognized_keys: the keys it did not know. */
  keys?: string[];
  /** The input has a value at `path`: an invalid value, not a missing one. */
  present: boolean;
}

export function firstIssue(err: z.ZodError, input: unknown): InputIssue {
  const issue = err.issues[0]!;
  let value: unknown = input;
  for (const key of issue.path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return {
    code: issue.code,
    path: [...issue.path],
    message: issue.message,
    ...('expected' in issue ? { expected: String(issue.expected) } : {}),
    ...('keys' in issue ? { keys: issue.keys.map(String) } : {}),
    present: value !== undefined,
  };
}

/** What an input issue means to a client: its code, the parameter it names and a sentence. */
export interface IssueDescription {
  code: 'parameter_unknown' | 'parameter_missing' | 'parameter_invalid';
  param: string;
  message: string;
}

/**
 * The one wording of a schema issue, naming the parameter by its path (`foods.0.quantity`) after
 * an optional prefix: the API's 400s (api/validation.ts) and the MCP tools' errors say the same.
 */
export function describeIssue(issue: InputIssue, prefix = ''): IssueDescription {
  const name = (path: readonly PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.');
  if (issue.code === 'unrecognized_keys') {
    const param = name([...issue.path, issue.keys?.[0] ?? '']);
    return { code: 'parameter_unknown', param, message: `Received unknown parameter: ${param}.` };
  }
  const param = name(issue.path) || prefix || 'body';
  if (!issue.present) return { code: 'parameter_missing', param, message: `Missing required parameter: ${param}.` };
  const detail = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.message;
  return { code: 'parameter_invalid', param, message: `Invalid ${param}: ${detail}.` };
}
