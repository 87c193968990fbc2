import { z } from 'zod';

/** The import resource (API and `chyme import --json`). */
const isoDateTime = z.string().meta({ format: 'date-time' });

export const ImportWarningSchema = z
  .object({ file: z.string(), line: z.number().int().nullable(), message: z.string() })
  .meta({ id: 'ImportWarning' });

export const ImportSchema = z
  .object({
    object: z.literal('import'),
    id: z.string().nullable().meta({ description: 'imp_…; null for a dry run, which writes nothing.' }),
    status: z.enum(['completed', 'undone', 'dry_run']),
    source: z.string().meta({ description: 'apple_health, cronometer, myfitnesspal, oura, fitbit, chyme (its own export), or mixed.' }),
    files: z.array(z.string()).meta({ description: 'Files read (zip entries as archive.zip:path).' }),
    timezone: z.string().meta({ description: 'The IANA zone used for times the files wrote without an offset.' }),
    zone_assumed: z.boolean().optional().meta({ description: 'True when some times had no offset and were read in `timezone` (travel cannot be recovered from those).' }),
    meals_added: z.number().int(),
    sleep_added: z.number().int(),
    duplicates_skipped: z.number().int().meta({ description: 'Records already imported, nights another record of the same night won, or nights already logged.' }),
    warnings: z.array(ImportWarningSchema),
    first_day: z.string().nullable().meta({ format: 'date' }),
    last_day: z.string().nullable().meta({ format: 'date' }),
    created_at: isoDateTime,
    undo: z
      .object({
        undone_at: isoDateTime,
        meals_removed: z.number().int(),
        sleep_removed: z.number().int(),
        kept: z.array(z.object({ id: z.string(), object: z.enum(['nutrition.meal', 'sleep.session']), reason: z.enum(['edited', 'already_deleted']) })),
      })
      .nullable(),
    samples: z
      .object({ meals: z.array(z.record(z.string(), z.unknown())), sleep_sessions: z.array(z.record(z.string(), z.unknown())) })
      .optional()
      .meta({ description: 'Dry run only: the first few meals and sessions that would be added, as Meal and SleepSession resources.' }),
  })
  .meta({ id: 'Import' });
