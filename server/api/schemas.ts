import { z } from 'zod';

/**
 * The API's own envelopes: the error body, lists and deletions. Each resource's schema lives with
 * its feature, beside the mapper that produces it.
 */

export const ErrorSchema = z
  .object({
    error: z.object({
      type: z.enum(['invalid_request_error', 'authentication_error', 'permission_error', 'rate_limit_error', 'api_error']),
      code: z.string(),
      message: z.string(),
      param: z.string().optional(),
      request_id: z.string(),
    }),
  })
  .meta({ id: 'Error' });

export function listOf(item: z.ZodType, id: string) {
  return z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() }).meta({ id });
}

export const DeletedSchema = z.object({ id: z.string(), object: z.string(), deleted: z.literal(true) }).meta({ id: 'Deleted' });
