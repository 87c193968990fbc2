import { z } from 'zod';

type Json = Record<string, unknown>;

/**
 * A tool's schema as MCP lists it: JSON Schema generated from the zod schema (as the OpenAPI
 * document is), self-contained. Named schemas (a meta id such as Meal) come back from zod under
 * $defs and are inlined here, since not every MCP client follows $ref; `$schema` is left out
 * (MCP's default dialect is 2020-12, which is what zod writes).
 */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  const defs = (generated.$defs ?? {}) as Record<string, Json>;
  const inline = (value: unknown, seen: ReadonlySet<string>): unknown => {
    if (Array.isArray(value)) return value.map((v) => inline(v, seen));
    if (!value || typeof value !== 'object') return value;
    const obj = value as Json;
    const ref = obj.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
      const id = ref.slice('#/$defs/'.length);
      // The resources here are not recursive; a cycle would be left as the reference it is.
      if (!seen.has(id) && defs[id]) {
        const { $ref: _ref, $defs: _defs, $schema: _schema, ...rest } = obj;
        return { ...(inline(defs[id], new Set([...seen, id])) as Json), ...(inline(rest, seen) as Json) };
      }
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(obj)) {
      if (k === '$defs' || k === '$schema') continue;
      out[k] = inline(v, seen);
    }
    return out;
  };
  return inline(generated, new Set()) as Json;
}
