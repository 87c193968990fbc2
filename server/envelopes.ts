import { z } from 'zod';

/**
 * The envelopes every reader shares: a list and a deletion, as the REST API returns them and the
 * MCP tools give them as structured content.
 */

export function listOf(item: z.ZodType, id: string) {
  return z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() }).meta({ id });
}

export const DeletedSchema = z.object({ id: z.string(), object: z.string(), deleted: z.literal(true) }).meta({ id: 'Deleted' });
