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

// Lists and deletions are shared with the MCP tools.
export { DeletedSchema, listOf } from '../envelopes.js';
