import { z } from 'zod';
import { buildSnapshot, SECTION_SCOPE, SNAPSHOT_DEFAULT_DAYS, SNAPSHOT_MAX_DAYS, SNAPSHOT_SECTIONS, SnapshotSchema, type SnapshotSection } from '../../digestion/snapshot.js';
import { defineRoute } from '../route.js';
import { ErrorSchema } from '../schemas.js';
import { queryInt } from '../validation.js';

export { SNAPSHOT_SECTIONS, SnapshotSchema };

const SECTION_NAME = `(${SNAPSHOT_SECTIONS.join('|')})`;
/** Section names separated by commas (spaces and empty items are tolerated). */
const INCLUDE_PATTERN = new RegExp(`^[ ,]*${SECTION_NAME}( *,[ ,]*${SECTION_NAME})*[ ,]*$`);

const includeList = z
  .string()
  .regex(INCLUDE_PATTERN, { message: `must be a comma-separated list of ${SNAPSHOT_SECTIONS.join(', ')}` })
  .transform((s, ctx) => {
    const parts = s.split(',').map((p) => p.trim()).filter(Boolean);
    if (parts.length === 0) {
      ctx.addIssue({ code: 'custom', message: `must list at least one of ${SNAPSHOT_SECTIONS.join(', ')}` });
      return z.NEVER;
    }
    for (const p of parts) {
      if (!(SNAPSHOT_SECTIONS as readonly string[]).includes(p)) {
        ctx.addIssue({ code: 'custom', message: `unknown section "${p}"; known: ${SNAPSHOT_SECTIONS.join(', ')}` });
        return z.NEVER;
      }
    }
    return [...new Set(parts)] as SnapshotSection[];
  })
  .meta({ description: `Comma-separated sections: ${SNAPSHOT_SECTIONS.join(', ')} (default: all).`, example: 'meals,state' });

export const snapshotRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/snapshot',
    operationId: 'getSnapshot',
    summary: 'Everything in one call',
    description:
      'The last `days` days (today and the days before it): meals (newest first) under nutrition.meals; daily scores under digestion.scores.daily and overnight scores under digestion.scores.overnight (ascending); state, windows, timeline (newest first) and insights under digestion. A section not included is absent. Each section needs its read scope: meals → nutrition:read, the others → digestion:read.',
    tag: 'Snapshot',
    access: 'authenticated',
    query: z.object({ days: queryInt(1, SNAPSHOT_MAX_DAYS).optional(), include: includeList.optional() }),
    responses: { 200: { description: 'The snapshot', schema: SnapshotSchema }, 400: { description: 'Invalid parameters', schema: ErrorSchema }, 403: { description: 'A section needs a scope the key lacks', schema: ErrorSchema } },
    async handler({ app, query, requireScope }) {
      const include = new Set<SnapshotSection>(query.include ?? SNAPSHOT_SECTIONS);
      for (const section of include) requireScope(SECTION_SCOPE[section]);
      return { body: await buildSnapshot(app, query.days ?? SNAPSHOT_DEFAULT_DAYS, include) };
    },
  }),
];
