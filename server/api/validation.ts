import { z } from 'zod';
import { describeIssue, firstIssue, type InputIssue } from '../fields.js';
import { ApiError, errors } from './errors.js';
import type { RouteDef } from './route.js';

/**
 * Request validation. Route schemas are zod schemas: they validate input, give handlers their
 * types, and (through z.toJSONSchema) become the OpenAPI document, so the three cannot drift.
 * The field schemas features share are in ../fields.ts; what is here is about requests.
 */

/** Turns the first zod issue into the API error for it, naming the offending parameter. */
export function toApiError(err: z.ZodError, input: unknown, prefix = ''): ApiError {
  return issueError(firstIssue(err, input), prefix);
}

/**
 * The API error for one schema issue (also one found where the input is not at hand: a document
 * checked in a worker thread).
 */
export function issueError(issue: InputIssue, prefix = ''): ApiError {
  const d = describeIssue(issue, prefix);
  if (d.code === 'parameter_unknown') return errors.parameterUnknown(d.param);
  if (d.code === 'parameter_missing') return errors.parameterMissing(d.param);
  return errors.parameterInvalid(d.param, d.message);
}

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toApiError(result.error, input, prefix);
  return result.data;
}

/**
 * A request's input as its route declares it, the same for every transport (the HTTP pipeline and
 * the phone's local one): path parameters, query (the first value of each name) and body, each
 * through the route's schema when it has one.
 */
export function validParams(route: RouteDef, params: Readonly<Record<string, unknown>>): unknown {
  return route.params ? parseWith(route.params, { ...params }) : { ...params };
}

export function validQuery(route: RouteDef, query: unknown): unknown {
  return route.query ? parseWith(route.query, query) : {};
}

/** The parsed JSON body through the route's body schema (a route without one ignores its body). */
export function validBody(route: RouteDef, body: unknown): unknown {
  return route.body ? parseWith(route.body, body) : undefined;
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

// Date ranges and cursors are rules the MCP tools share: they live below the HTTP layer.
export { checkDateOrder, checkDateRange, cursorPosition, MAX_RANGE_DAYS } from '../date-ranges.js';
