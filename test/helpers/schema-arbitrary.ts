import fc from 'fast-check';

/**
 * fast-check arbitraries for the values a JSON Schema (as it appears in Chyme's OpenAPI document)
 * calls valid. Only what the document uses is supported; anything else throws, so a new keyword
 * is noticed rather than silently ignored.
 *
 * Besides the standard keywords it reads:
 * - `formatMinimum` (ajv-formats) on date-time: the earliest instant;
 * - `x-max-future` (ISO 8601 duration, e.g. "P1D", "PT5M") on date-time: the latest instant,
 *   relative to the server's now;
 * - `format: uri`: an absolute web URL (fast-check's webUrl), which must also match `pattern`.
 *
 * On an object, `oneOf` of alternatives that only list `required` properties (exactly one of
 * them is sent) and `not: {required}` (never all of them together) are understood.
 */

export type JsonSchema = Record<string, any>;

export interface SchemaContext {
  /** components.schemas of the document, for $ref. */
  components: Record<string, JsonSchema>;
  /** The server's now (ms), for x-max-future. */
  nowMs: number;
}

const DAY_MS = 24 * 3600_000;
/** Instants without a documented bound are drawn from 1970 to 2100. */
const DEFAULT_MIN_MS = Date.UTC(1970, 0, 1);
const DEFAULT_MAX_MS = Date.UTC(2100, 0, 1);

/** An ISO 8601 duration of days, hours, minutes, seconds ("P1D", "PT5M") in ms. */
export function durationMs(iso: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(iso);
  if (!m) throw new Error(`unsupported duration ${iso}`);
  return ((Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 60_000 + Number(m[4] ?? 0) * 1000;
}

export function resolve(schema: JsonSchema, ctx: SchemaContext): JsonSchema {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = ctx.components[name];
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
    return resolve(target, ctx);
  }
  return schema;
}

/**
 * RFC 3986's URI grammar (section 3 and appendix A), written out on its own: what `format: uri`
 * means, checked against the server rather than against the server's own pattern.
 */
const PCT = '%[0-9A-Fa-f]{2}';
const SUB_DELIMS = "!$&'()*+,;=";
const PCHAR = `(?:[A-Za-z0-9\\-._~${SUB_DELIMS}:@]|${PCT})`;
const USERINFO = `(?:[A-Za-z0-9\\-._~${SUB_DELIMS}:]|${PCT})*`;
const IP_LITERAL = `\\[(?:[0-9A-Fa-f:.]+|v[0-9A-Fa-f]+\\.[A-Za-z0-9\\-._~${SUB_DELIMS}:]+)\\]`;
const REG_NAME = `(?:[A-Za-z0-9\\-._~${SUB_DELIMS}]|${PCT})*`;
const HIER_PART = `(?://(?:${USERINFO}@)?(?:${IP_LITERAL}|${REG_NAME})(?::[0-9]*)?(?:/${PCHAR}*)*|/(?:${PCHAR}+(?:/${PCHAR}*)*)?|${PCHAR}+(?:/${PCHAR}*)*|)`;
const URI = new RegExp(`^[A-Za-z][A-Za-z0-9+.\\-]*:${HIER_PART}(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?$`);

/** True for a URI as RFC 3986 defines it (ASCII only: an IRI is not one). */
export function isUri(s: string): boolean {
  return URI.test(s);
}

function pad(n: number, width = 2): string {
  return String(Math.abs(n)).padStart(width, '0');
}

/** A date-time in [min, max] written with Z or an offset (and with or without seconds/fraction). */
function dateTime(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<string> {
  const minMs = schema.formatMinimum ? Date.parse(schema.formatMinimum) : DEFAULT_MIN_MS;
  const maxMs = schema['x-max-future'] ? ctx.nowMs + durationMs(schema['x-max-future']) : DEFAULT_MAX_MS;
  return fc
    .record({
      ms: fc.integer({ min: minMs, max: maxMs }),
      offsetMin: fc.oneof(fc.constant(null), fc.integer({ min: -14 * 60, max: 14 * 60 })),
      precision: fc.constantFrom('minutes', 'seconds', 'millis'),
    })
    .map(({ ms, offsetMin, precision }) => {
      const local = new Date(ms + (offsetMin ?? 0) * 60_000).toISOString(); // wall time at that offset
      const body = precision === 'minutes' ? local.slice(0, 16) : precision === 'seconds' ? local.slice(0, 19) : local.slice(0, 23);
      if (offsetMin === null) return `${body}Z`;
      return `${body}${offsetMin < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(offsetMin) / 60))}:${pad(Math.abs(offsetMin) % 60)}`;
    })
    .filter((s) => {
      // A value written to the minute may round below the minimum: keep only what the range allows.
      const ms = Date.parse(s);
      return ms >= minMs && ms <= maxMs && (!schema.pattern || new RegExp(schema.pattern).test(s));
    });
}

function date(): fc.Arbitrary<string> {
  return fc.integer({ min: Date.UTC(2000, 0, 1) / DAY_MS, max: Date.UTC(2060, 0, 1) / DAY_MS }).map((d) => new Date(d * DAY_MS).toISOString().slice(0, 10));
}

function stringArb(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = schema.maxLength ?? 300;
  const withinLength = (s: string) => s.length >= minLength && s.length <= maxLength;
  if (schema.format === 'date-time') return dateTime(schema, ctx);
  if (schema.format === 'date') return date();
  if (schema.format === 'uri') {
    const pattern = schema.pattern ? new RegExp(schema.pattern) : undefined;
    return fc
      .webUrl({ validSchemes: ['http', 'https', 'ftp', 'ws'], withQueryParameters: true })
      .filter((s) => withinLength(s) && isUri(s) && (!pattern || pattern.test(s)));
  }
  if (schema.format) throw new Error(`unsupported string format ${schema.format}`);
  if (schema.pattern) {
    // stringMatching picks lengths freely: a value shorter than minLength is repeated until long
    // enough, and kept only if it still matches (filters that reject most values never end).
    const pattern = new RegExp(schema.pattern);
    return fc
      .stringMatching(pattern)
      .map((v) => (v.length > 0 && v.length < minLength ? v.repeat(Math.ceil(minLength / v.length)) : v))
      .map((v) => (v.length > maxLength ? v.slice(0, maxLength) : v))
      .filter((v) => withinLength(v) && pattern.test(v));
  }
  return fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 40) });
}

function numberArb(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum : -1e9);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum : 1e9);
  const ok = (n: number) =>
    (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) && (schema.exclusiveMaximum === undefined || n < schema.exclusiveMaximum);
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) }).filter(ok);
  return fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), fc.double({ min, max, noNaN: true, noDefaultInfinity: true })).filter(ok);
}

type RequiredOnly = { required: string[] };

function requiredOnly(s: JsonSchema): s is RequiredOnly {
  return Array.isArray(s.required) && Object.keys(s).length === 1;
}

/**
 * An object whose `oneOf` alternatives name which properties it has (one alternative's are
 * required, those only other alternatives require are left out, so exactly one alternative
 * holds), and whose `not: {required}` forbids sending all those properties together.
 */
function objectWithRequiredAlternatives(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const { oneOf, not, ...rest } = schema;
  if (schema.anyOf || (oneOf && !oneOf.every(requiredOnly)) || (not && !requiredOnly(not))) {
    throw new Error(`unsupported object alternatives ${JSON.stringify({ anyOf: schema.anyOf, oneOf, not }).slice(0, 200)}`);
  }
  const forbidden = (obj: unknown) => not !== undefined && (not as RequiredOnly).required.every((k) => k in (obj as object));
  const branches: JsonSchema[] = oneOf
    ? (oneOf as RequiredOnly[]).map((chosen) => {
        const others = new Set((oneOf as RequiredOnly[]).flatMap((a) => (a === chosen ? [] : a.required)).filter((k) => !chosen.required.includes(k)));
        const properties = Object.fromEntries(Object.entries(rest.properties ?? {}).filter(([k]) => !others.has(k)));
        return { ...rest, properties, required: [...new Set([...(rest.required ?? []), ...chosen.required])] };
      })
    : [rest];
  return fc.oneof(...branches.map((b) => arbitraryFor(b, ctx))).filter((obj) => !forbidden(obj));
}

/** An arbitrary of the values `schema` calls valid. */
export function arbitraryFor(input: JsonSchema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const schema = resolve(input, ctx);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (schema.type === 'object' && (alternatives || schema.not)) return objectWithRequiredAlternatives(schema, ctx);
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: JsonSchema) => arbitraryFor(s, ctx)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => arbitraryFor({ ...schema, type }, ctx)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'string':
      return stringArb(schema, ctx);
    case 'integer':
      return numberArb(schema, true);
    case 'number':
      return numberArb(schema, false);
    case 'array': {
      const items = arbitraryFor(schema.items ?? {}, ctx);
      return fc.array(items, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set<string>(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries(properties)) record[name] = arbitraryFor(prop, ctx);
      const requiredKeys = Object.keys(properties).filter((k) => required.has(k));
      return fc.record(record, { requiredKeys });
    }
    default:
      throw new Error(`unsupported schema ${JSON.stringify(schema).slice(0, 200)}`);
  }
}
